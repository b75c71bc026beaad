// What one host read of a device scalar costs, part by part, beside torch
// (bench/torch_sync_latency.py): L-BFGS reads a few scalars per iteration
// (dot products, max |g|, the loss), and each read waits for the GPU. Each
// case is one call closed by a synchronize (median of 400 after 50 warm-ups).
//   node dist/bench/sync-latency.js
import * as path from 'path';

import * as gx from '../lib';
import { fmt, perCallNs, REPO, runPythonJson, section } from './util';

function main(): void {
  if (!gx.cuda.isAvailable()) { console.log('sync-latency: skipped (no CUDA device)'); return; }
  const sync = (): void => gx.cuda.synchronize();
  const one = gx.randn([1], { device: 'cuda' });
  const b = gx.randn([101, 1], { device: 'cuda' });
  const big = gx.randn([1_000_000, 1], { device: 'cuda' });
  const us = (f: () => void): number => perCallNs(f, 400, 1, { warmup: 50, sync }) / 1e3;
  const cases: Record<string, number> = {
    'synchronize': us(() => undefined),
    'item of a 1-element tensor': us(() => { one.item(); }),
    'sum of 101 (launch)': us(() => { gx.sum(b).dispose(); }),
    'sum of 101 + item': us(() => gx.tidy(() => { gx.sum(b).item(); })),
    'sum(mul) of 101 + item': us(() => gx.tidy(() => { gx.sum(gx.mul(b, b)).item(); })),
    'max(abs) of 101 + item': us(() => gx.tidy(() => { gx.max(gx.abs(b)).item(); })),
    'sum of 10^6 + item': us(() => gx.tidy(() => { gx.sum(big).item(); })),
    'mul 101 (launch)': us(() => { gx.mul(b, b).dispose(); }),
  };
  const py = runPythonJson(path.join(REPO, 'bench', 'torch_sync_latency.py'), [], 300_000);
  const t = (py.ok ? py.o : {}) as Record<string, number>;
  section('summary');
  for (const [k, v] of Object.entries(cases)) console.log(`  ${k.padEnd(28)} gpuext ${fmt(v, 1)} us   torch ${fmt(t[k], 1)} us`);
  if (!py.ok) console.log(`  (python: ${py.error})`);
  for (const x of [one, b, big]) x.dispose();
}

main();
