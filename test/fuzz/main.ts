// The long fuzz run: `npm run fuzz -- [--runs N] [--seed S] [--path P] [--only NAME[,NAME]] [--device cpu|cuda] [--strict]`.
// Runs every property on every available device (cuda too with
// GPUEXT_REQUIRE_CUDA=1, where a missing GPU is a failure), prints one line
// per property, the known bugs counted, and any failure with its replay command.
import * as gx from '../../lib';
import { fuzzConfig, parseArgs } from './config';
import { PROPERTIES } from './properties';
import { examplesFor } from './regressions';

function main(argv: readonly string[]): number {
  const cfg = fuzzConfig(parseArgs(argv));
  const devices = cfg.devices;
  if (devices.includes('cuda') && !gx.cuda.isAvailable()) {
    const why = gx.cuda.unavailableReason();
    if (cfg.requireCuda) {
      console.error(`fuzz: GPUEXT_REQUIRE_CUDA=1 but CUDA is unavailable: ${why}`);
      return 1;
    }
    console.log(`fuzz: cuda skipped (${why})`);
  }
  const run = devices.filter((d) => d === 'cpu' || gx.cuda.isAvailable());
  const props = PROPERTIES.filter((p) => cfg.only === undefined || cfg.only.includes(p.name));
  if (props.length === 0) {
    console.error(`fuzz: no property named ${cfg.only?.join(', ')}; there are ${PROPERTIES.map((p) => p.name).join(', ')}`);
    return 2;
  }
  console.log(`fuzz: seed ${cfg.seed}, ${cfg.runs} runs per property (x its weight)${cfg.strict ? ', strict' : ''}`);
  let failed = 0, calls = 0;
  const t0 = performance.now();
  for (const device of run) {
    for (const p of props) {
      const r = p.run(device, { numRuns: p.runsOn(device, cfg.runs), seed: cfg.seed, path: cfg.path, strict: cfg.strict,
        examples: examplesFor(p.name) });
      calls += r.stats.calls;
      const known = r.stats.knownLine();
      console.log(`fuzz ${p.name} [${device}]: ${r.failed ? 'FAILED' : 'ok'}, ${r.numRuns} runs, ${r.stats.calls} calls ` +
        `(${r.stats.errors} threw), ${(r.ms / 1000).toFixed(1)} s${known ? `; known bugs hit: ${known}` : ''}`);
      if (cfg.verbose) {
        const errs = [...r.stats.expectedErrors].sort((a, b) => b[1] - a[1]);
        for (const [why, n] of errs) console.log(`    expected Error x${n}: ${why}`);
      }
      if (r.failed) {
        failed++;
        console.log(r.message);
      }
    }
  }
  console.log(`fuzz: ${calls} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${failed} propert${failed === 1 ? 'y' : 'ies'} failed`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
