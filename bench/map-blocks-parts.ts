// Where gx.mapBlocks' host time per block goes: the same eight launches of
// Dask's add_broadcast kernel (8192 x 8192 float32 blocks) issued directly
// (staged, and checked by kernel.launch), against mapBlocks with a launch
// plan (NOTE [ Block launch plans ], replayed as a graph per device: NOTE
// [ Block graphs ]), with the example's function, with a function that
// stages its own launch, and with a function that launches nothing; on
// cuda:0, and with two GPUs present over both, where the one-block y is
// copied to the other GPU on every call (its own row gives that copy). Every
// case is warmed up (200 calls each) and then timed one call (or four back
// to back) at a time in rotation over 41 rounds, so neither V8's warm-up nor
// a noisy spell of the host falls on one case. Prints µs per block.
//
//   npx tsc -p tsconfig.json && node dist/bench/map-blocks-parts.js
//
// bench:dist's host time per block is the mapBlocks rows of this with four
// calls; the direct rows are what the launches themselves cost here.
import * as gx from '../lib';
import { STAGED_ARGS, stagingArea } from '../lib/core/staging';
import { addBroadcastKernel as kernel, addBroadcastPlan, dispatchAddBroadcast } from '../examples/distributed';
import { median } from './util';

const rows = 65536, cols = 8192, chunk: [number, number] = [8192, 8192];
const dims = new Float64Array([cols / 32, chunk[0] / 32, 1, 32, 32, 1, 0]);

/** What a launch plan's later blocks stage (NOTE [ Block launch plans ]), written out and launched at once. */
function staged(a: gx.Tensor, b: gx.Tensor, c: gx.Tensor): gx.Tensor {
  const st = stagingArea();
  st[STAGED_ARGS] = a.address('map-blocks-parts');
  st[STAGED_ARGS + 1] = b.address('map-blocks-parts');
  st[STAGED_ARGS + 2] = c.address('map-blocks-parts');
  st[STAGED_ARGS + 3] = cols;
  kernel.launchStaged(a.device, dims);
  return c;
}

/** The cases over `devices`: x, y and z chunked over them, and y copied to each GPU for the direct launches. */
function casesOver(devices: string[], label: string, x: gx.Tensor, y: gx.Tensor): { cases: Record<string, () => void>; dispose: () => void } {
  const dx = gx.chunked(x, { chunks: chunk, devices }), dy = gx.chunked(y, { chunks: [cols], devices });
  const dz = gx.chunked(gx.empty([rows, cols], { device: 'cuda:0' }), { chunks: chunk, devices });
  const yOn = new Map(devices.map((d) => [d, y.to(d)]));
  const yOf = (b: gx.Tensor): gx.Tensor => yOn.get(String(b.device)) as gx.Tensor;
  const n = dx.blocks.length;
  const cases: Record<string, () => void> = {
    [`${label}: direct, staged`]: () => { for (let i = 0; i < n; i++) staged(dx.blocks[i], yOf(dx.blocks[i]), dz.blocks[i]); },
    [`${label}: direct, kernel.launch`]: () => {
      for (let i = 0; i < n; i++) kernel.launch([cols / 32, chunk[0] / 32], [32, 32], [dx.blocks[i], yOf(dx.blocks[i]), dz.blocks[i], cols]);
    },
    [`${label}: mapBlocks, launch plan`]: () => { gx.mapBlocks(addBroadcastPlan, dx, dy, dz, { dtype: 'float32' }); },
    [`${label}: mapBlocks, the example's function`]: () => { gx.mapBlocks(dispatchAddBroadcast, dx, dy, dz, { dtype: 'float32' }); },
    [`${label}: mapBlocks, a function staging its launch`]: () => { gx.mapBlocks(staged, dx, dy, dz, { dtype: 'float32' }); },
    [`${label}: mapBlocks, no launch`]: () => { gx.mapBlocks((a: gx.Tensor, b: gx.Tensor, c: gx.Tensor) => c, dx, dy, dz, { dtype: 'float32' }); },
  };
  // The copy mapBlocks makes per call for the blocks on another GPU than y's one block (per block of the call).
  if (devices.length > 1) cases[`${label}: copy of y to ${devices[1]} alone`] = () => { y.to(devices[1]).dispose(); };
  return { cases, dispose: () => { dx.dispose(); dy.dispose(); dz.dispose(); yOn.forEach((t) => t.dispose()); } };
}

function main(): void {
  if (!gx.cuda.isAvailable()) {
    console.log('map-blocks-parts: skipped (no CUDA device)');
    return;
  }
  const all = Array.from({ length: gx.cuda.deviceCount() }, (_, i) => `cuda:${i}`);
  const x = gx.rand([rows, cols], { device: 'cuda:0' }), y = gx.rand([cols], { device: 'cuda:0' });
  const sets = [casesOver(['cuda:0'], 'cuda:0', x, y), ...(all.length > 1 ? [casesOver(all, `${all.length} GPUs`, x, y)] : [])];
  x.dispose();
  const cases: Record<string, () => void> = Object.assign({}, ...sets.map((s) => s.cases));
  const names = Object.keys(cases);
  const syncAll = (): void => all.forEach((d) => gx.cuda.synchronize(d));
  for (let w = 0; w < 200; w++) {
    for (const n of names) {
      syncAll();
      cases[n]();
    }
  }
  const blocks = (rows / chunk[0]) * (cols / chunk[1]);
  for (const calls of [1, 4]) {
    const samples = new Map(names.map((n) => [n, [] as number[]]));
    for (let r = 0; r < 41; r++) {
      for (let j = 0; j < names.length; j++) {
        const n = names[(j + r) % names.length];
        syncAll();
        const t0 = process.hrtime.bigint();
        for (let c = 0; c < calls; c++) cases[n]();
        samples.get(n)?.push(Number(process.hrtime.bigint() - t0) / 1e3 / (blocks * calls));
      }
    }
    syncAll();
    console.log(`== ${calls} call(s) after each synchronize, host µs per block (median of 41 rotated rounds)`);
    for (const n of names) console.log(`  ${n.padEnd(48)} ${median(samples.get(n) ?? []).toFixed(2)}`);
  }
  y.dispose();
  sets.forEach((s) => s.dispose());
}

main();
