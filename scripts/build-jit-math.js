// CUDA's math library as PTX for the jit's PTX path (NOTE [ PTX path ] in
// lib/jit/emit-ptx.ts): the source lib/jit/ptx-library.ts generates (one
// function per library Math function and dtype) compiled by the toolkit's
// nvcc with the jit's options (--fmad=false) into jit-math.ptx beside the
// ops' binary. Called by build-ops.js after a build with CUDA.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

/**
 * Writes `<outDir>/jit-math.ptx` with `nvcc`, and its index jit-math.json
 * (NOTE [ The library's index ] in lib/jit/ptx-library.ts); returns an error
 * message, or '' on success.
 */
function buildJitMath(outDir, nvcc) {
  const { librarySource, libraryIndex } = require(path.join(__dirname, '..', 'dist', 'lib', 'jit', 'ptx-library.js'));
  const { PTX_MIN_CAPABILITY } = require(path.join(__dirname, '..', 'dist', 'lib', 'jit', 'emit-ptx.js'));
  const ptx = path.join(outDir, 'jit-math.ptx');
  fs.mkdirSync(outDir, { recursive: true });
  // The source goes to a directory of its own: under ops/ a later build of the ops would take it for one of theirs.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-jit-math-'));
  try {
    const cu = path.join(tmp, 'jit-math.cu');
    fs.writeFileSync(cu, librarySource());
    // The PTX path's target; -rdc keeps every extern function.
    const r = spawnSync(nvcc, ['-ptx', `-arch=compute_${PTX_MIN_CAPABILITY}`, '-rdc=true', '--fmad=false', '-o', `${ptx}.tmp`, cu], { encoding: 'utf8' });
    if (r.status !== 0) return `nvcc failed on the jit's math library: ${(r.stderr || r.stdout || '').trim().split('\n').slice(0, 5).join('\n')}`;
    const index = path.join(outDir, 'jit-math.json');
    fs.writeFileSync(`${index}.tmp`, libraryIndex(fs.readFileSync(`${ptx}.tmp`, 'utf8')));
    fs.renameSync(`${ptx}.tmp`, ptx);
    fs.renameSync(`${index}.tmp`, index);
    return '';
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

module.exports = { buildJitMath };
