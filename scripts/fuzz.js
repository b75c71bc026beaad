#!/usr/bin/env node
// The long fuzz run (test/fuzz/): every fast-check property on every
// available device, outside ava (no per-test timeout).
//   npm run fuzz -- [--runs N] [--seed S] [--path P] [--only NAME[,NAME]] [--device cpu|cuda] [--strict] [--verbose]
// --runs: runs per property (times its weight; default GPUEXT_FUZZ_RUNS or the
// bounded run's); --seed and --path replay a failure as printed; --strict fails
// on the known bugs of test/fuzz/known.ts too. GPUEXT_REQUIRE_CUDA=1 makes a
// missing GPU a failure. Exits 1 when a property failed.
'use strict';
const path = require('path');

// --expose-gc: the properties count live tensors, and collect first (test/fuzz/property.ts).
if (typeof globalThis.gc !== 'function') {
  const { spawnSync } = require('child_process');
  const r = spawnSync(process.execPath, ['--expose-gc', __filename, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
require(path.join(__dirname, '..', 'dist', 'test', 'fuzz', 'main.js'));
