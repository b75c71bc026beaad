#!/usr/bin/env node
// Runs the ava suite (compiled tests in dist/test) and ends with one line,
// `N passed, N failed` (plus `, N skipped` when some were skipped), which CI
// reads. Exits non-zero when anything failed, including a test file that
// crashed before reporting.
//   node scripts/run-tests.js [ava args...]
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..');
// ava's CLI entry is not in its package exports: use the installed file.
const ava = path.join(root, 'node_modules', 'ava', 'entrypoints', 'cli.mjs');
// The suite's kernels and jit translations go to a cache directory of its own,
// removed at the end, unless the caller names one: the suite translates
// thousands of generated kernels, which filled the user's cache
// (~/.cache/gpuext/jit: 12,700 files after some runs), and no test should
// find what an earlier run left there.
const ownCache = process.env.GPUEXT_CACHE_DIR ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'gx-test-cache-'));
const child = spawn(process.execPath, [ava, '--tap', ...process.argv.slice(2)], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  env: ownCache === undefined ? process.env : { ...process.env, GPUEXT_CACHE_DIR: ownCache },
});

let passed = 0, failed = 0, skipped = 0, todo = 0;
let buffered = '';
function scan(line) {
  const m = /^(not ok|ok)\b/.exec(line);
  if (!m) return;
  if (/#\s*SKIP\b/i.test(line)) skipped++;
  else if (/#\s*TODO\b/i.test(line)) todo++;
  else if (m[1] === 'ok') passed++;
  else failed++;
}
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  buffered += chunk.toString();
  const lines = buffered.split('\n');
  buffered = lines.pop();
  lines.forEach(scan);
});
child.on('close', (code) => {
  if (buffered) scan(buffered);
  // ava failing with no failed test counted means a file crashed or timed out.
  if (code !== 0 && failed === 0) failed = 1;
  const tail = skipped ? `, ${skipped} skipped` : '';
  if (ownCache !== undefined) fs.rmSync(ownCache, { recursive: true, force: true });
  process.stdout.write(`\n${passed} passed, ${failed} failed${tail}\n`);
  process.exit(failed > 0 ? 1 : 0);
});
