// How a source build chooses its CUDA code (scripts/find-cuda.js cudaPlan) and
// which native binary loading picks (lib/platform/binaries.ts): a binary built here,
// else the prebuilt one. The package as a whole is checked by
// scripts/check-package.js (CI).
import test from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { cpuOnlyReason } from '../lib/core/gpus';
import { binaryCandidates, findBinary, prebuildTag } from '../lib/platform/binaries';

const root = path.resolve(__dirname, '../..');

interface Plan { cuda: boolean; arch?: string; why: string }

/** cudaPlan() in a fresh process with `env` (and PATH holding a fake nvidia-smi printing `smi`, when given). */
function plan(env: Record<string, string>, smi?: string): Plan {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-plan-'));
  if (smi !== undefined) {
    fs.writeFileSync(path.join(bin, 'nvidia-smi'), `#!/bin/sh\nprintf '${smi}'\n`, { mode: 0o755 });
  }
  const clean = { ...process.env };
  for (const k of ['GPUEXT_NO_CUDA', 'GPUEXT_CUDA_ARCH', 'GPUEXT_PREBUILD']) delete clean[k];
  // The fake comes first; a real nvidia-smi elsewhere on PATH still answers when no fake is given.
  const r = spawnSync(process.execPath, ['-e', `console.log(JSON.stringify(require('./scripts/find-cuda').cudaPlan()))`],
    { cwd: root, encoding: 'utf8', env: { ...clean, ...env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` } });
  fs.rmSync(bin, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Plan;
}

const hasToolkit = (): boolean => plan({ GPUEXT_CUDA_ARCH: 'sm_90' }).cuda;

test('GPUEXT_NO_CUDA=1 gives a CPU-only build and says the variable did it', (t) => {
  const p = plan({ GPUEXT_NO_CUDA: '1', GPUEXT_CUDA_ARCH: 'all' }, '9.0\\n');
  t.false(p.cuda);
  t.is(p.why, 'CUDA disabled by GPUEXT_NO_CUDA=1');
});

test('with a toolkit: the GPUs present, CPU only without one, every arch for packing or GPUEXT_CUDA_ARCH=all', (t) => {
  if (!hasToolkit()) {
    t.pass('no CUDA toolkit here: every plan is CPU-only');
    return;
  }
  const present = plan({}, '9.0\\n8.0\\n9.0\\n');
  t.true(present.cuda);
  t.is(present.arch, 'sm_80,sm_90', 'each arch once, sorted');
  t.is(present.why, 'the GPUs present (nvidia-smi)');
  const none = plan({}, '');
  t.false(none.cuda);
  t.regex(none.why, /no GPU found \(nvidia-smi lists none\); to build the CUDA code anyway, set GPUEXT_CUDA_ARCH=sm_90 .* or GPUEXT_CUDA_ARCH=all/);
  t.is(plan({ GPUEXT_CUDA_ARCH: 'all' }, '').arch, 'sm_75,sm_80,sm_86,sm_89,sm_90');
  t.is(plan({ GPUEXT_PREBUILD: '1' }, '9.0\\n').arch, 'sm_75,sm_80,sm_86,sm_89,sm_90', 'a build for packing ignores the local GPUs');
  t.is(plan({ GPUEXT_PREBUILD: '1', GPUEXT_CUDA_ARCH: 'sm_75' }).arch, 'sm_75', 'GPUEXT_CUDA_ARCH narrows a packing build');
});

test('loading picks a binary built here first, else the prebuilt one for this platform', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-binaries-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const [builtCore, prebuiltCore] = binaryCandidates('core', dir);
  const [builtOps, prebuiltOps] = binaryCandidates('ops', dir);
  t.is(builtCore, path.join(dir, 'build', 'Release', 'gpuext_core.node'));
  t.is(prebuiltCore, path.join(dir, 'prebuilds', `${process.platform}-${process.arch}`, 'gpuext_core.node'));
  t.is(builtOps, path.join(dir, 'ops', 'build', 'gx_ops.node'));
  t.is(prebuiltOps, path.join(dir, 'prebuilds', prebuildTag(), 'gx_ops.node'));
  t.is(findBinary('core', dir), undefined);
  const touch = (f: string): void => {
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, '');
  };
  touch(prebuiltCore);
  touch(prebuiltOps);
  t.is(findBinary('core', dir), prebuiltCore);
  t.is(findBinary('ops', dir), prebuiltOps);
  touch(builtCore);
  t.is(findBinary('core', dir), builtCore);
  t.is(findBinary('ops', dir), prebuiltOps);
});

test('a core without CUDA says why: a CPU-only prebuilt one (linux-arm64\'s) that CUDA needs a source build', (t) => {
  const prebuilt = cpuOnlyReason('prebuilt', 'linux-arm64');
  t.regex(prebuilt, /prebuilt binaries for linux-arm64 are for the CPU only/);
  t.regex(prebuilt, /npm rebuild gpuext --build-from-source/);
  const built = cpuOnlyReason('built here', 'linux-arm64');
  t.notRegex(built, /prebuilt|rebuild/);
  t.regex(built, /built for the CPU only/);
});
