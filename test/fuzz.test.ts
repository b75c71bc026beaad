// The bounded fuzz run of `npm test`: every property in test/fuzz/ on every
// device (cuda skipped without a GPU, a failure with GPUEXT_REQUIRE_CUDA=1),
// the kept regression cases first. A random seed each run unless
// GPUEXT_FUZZ_SEED is set; a failure prints its seed, path, shrunk
// counterexample and replay command. GPUEXT_FUZZ_RUNS sizes it; `npm run fuzz`
// is the long run (test/fuzz/main.ts). Serial: the properties count live tensors.
import * as gx from '../lib';
import { fuzzConfig } from './fuzz/config';
import { PROPERTIES } from './fuzz/properties';
import { examplesFor, REGRESSIONS } from './fuzz/regressions';
import { deviceTestSerial } from './helpers';

const cfg = fuzzConfig();
const props = PROPERTIES.filter((p) => cfg.only === undefined || cfg.only.includes(p.name));
/** Live tensors per device before the first property ran there. */
const baseline = new Map<string, number>();

for (const p of props) {
  deviceTestSerial(`fuzz ${p.name}: ${p.about}`, (t, device) => {
    if (!baseline.has(device)) baseline.set(device, gx.memory.stats(device).liveTensors);
    const r = p.run(device, {
      numRuns: p.runsOn(device, cfg.runs), seed: cfg.seed, path: cfg.path, strict: cfg.strict, examples: examplesFor(p.name),
    });
    const known = r.stats.knownLine();
    t.log(`${r.numRuns} runs, ${r.stats.calls} calls (${r.stats.errors} threw), ${(r.ms / 1000).toFixed(1)} s, seed ${r.seed}` +
      `${known ? `; known bugs hit: ${known}` : ''}`);
    if (r.failed) t.fail(r.message);
    else t.pass();
  });
}

// Failures kept as { seed, path }: each replays its one case.
for (const reg of REGRESSIONS.filter((x) => x.seed !== undefined && x.path !== undefined)) {
  const p = PROPERTIES.find((x) => x.name === reg.property);
  deviceTestSerial(`fuzz regression (${reg.property}, seed ${reg.seed}): ${reg.note}`, (t, device) => {
    if (p === undefined) {
      t.fail(`no fuzz property named ${reg.property}`);
      return;
    }
    const r = p.run(device, { numRuns: 1, seed: reg.seed as number, path: reg.path, strict: cfg.strict, examples: examplesFor(p.name) });
    if (r.failed) t.fail(r.message);
    else t.pass();
  });
}

deviceTestSerial('fuzz: the whole run leaves no live tensors behind', (t, device) => {
  // Each property checks its runs one by one; this catches what a property as a whole might keep.
  t.is(gx.memory.stats(device).liveTensors, baseline.get(device) ?? gx.memory.stats(device).liveTensors);
});
