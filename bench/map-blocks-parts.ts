// Where gx.mapBlocks' host time per block goes, on cuda:0 (one GPU is
// enough): the same eight launches of Dask's add_broadcast kernel (8192 x
// 8192 float32 blocks) issued directly, staged and checked, against
// mapBlocks with a launch plan, with the example's function, with a function
// that stages its own launch, and with a function that launches nothing.
// Every case is warmed up (300 calls each) and then timed one call (or four
// back to back) at a time in rotation over 61 rounds, so neither V8's warm-up
// nor a noisy spell of the host falls on one case. Prints µs per block.
//
//   npx tsc -p tsconfig.json && node dist/bench/map-blocks-parts.js
//
// bench:dist's host time per block is the mapBlocks rows of this with four
// calls; the direct rows are what the launches themselves cost here.
import * as gx from '../lib';
import { STAGED_ARGS, stagingArea } from '../lib/core/staging';
import { addBroadcastKernel as kernel, addBroadcastPlan, dispatchAddBroadcast } from '../examples/distributed';
import { median } from './util';

function main(): void {
  if (!gx.cuda.isAvailable()) {
    console.log('map-blocks-parts: skipped (no CUDA device)');
    return;
  }
  const rows = 65536, cols = 8192, chunk: [number, number] = [8192, 8192];
  const devices = ['cuda:0'];
  const x = gx.rand([rows, cols], { device: 'cuda:0' }), y = gx.rand([cols], { device: 'cuda:0' });
  const dx = gx.chunked(x, { chunks: chunk, devices }), dy = gx.chunked(y, { chunks: [cols], devices });
  const dz = gx.chunked(gx.empty([rows, cols], { device: 'cuda:0' }), { chunks: chunk, devices });
  x.dispose();
  const device = dx.blocks[0].device;
  const dims = new Float64Array([cols / 32, chunk[0] / 32, 1, 32, 32, 1, 0]);
  const yb = dy.blocks[0];
  // What a launch plan's later blocks do (NOTE [ Block launch plans ]), written out.
  const staged = (a: gx.Tensor, b: gx.Tensor, c: gx.Tensor): gx.Tensor => {
    const st = stagingArea();
    st[STAGED_ARGS] = a.address('map-blocks-parts');
    st[STAGED_ARGS + 1] = b.address('map-blocks-parts');
    st[STAGED_ARGS + 2] = c.address('map-blocks-parts');
    st[STAGED_ARGS + 3] = cols;
    kernel.launchStaged(device, dims);
    return c;
  };
  const cases: Record<string, () => void> = {
    'direct, staged': () => { for (let i = 0; i < 8; i++) staged(dx.blocks[i], yb, dz.blocks[i]); },
    'direct, kernel.launch': () => { for (let i = 0; i < 8; i++) kernel.launch([cols / 32, chunk[0] / 32], [32, 32], [dx.blocks[i], yb, dz.blocks[i], cols]); },
    'mapBlocks, launch plan': () => { gx.mapBlocks(addBroadcastPlan, dx, dy, dz, { dtype: 'float32' }); },
    'mapBlocks, the example\'s function': () => { gx.mapBlocks(dispatchAddBroadcast, dx, dy, dz, { dtype: 'float32' }); },
    'mapBlocks, a function staging its launch': () => { gx.mapBlocks(staged, dx, dy, dz, { dtype: 'float32' }); },
    'mapBlocks, no launch': () => { gx.mapBlocks((a: gx.Tensor, b: gx.Tensor, c: gx.Tensor) => c, dx, dy, dz, { dtype: 'float32' }); },
  };
  const names = Object.keys(cases);
  for (let w = 0; w < 300; w++) {
    for (const n of names) {
      gx.cuda.synchronize('cuda:0');
      cases[n]();
    }
  }
  const blocks = dx.blocks.length;
  for (const calls of [1, 4]) {
    const samples = new Map(names.map((n) => [n, [] as number[]]));
    for (let r = 0; r < 61; r++) {
      for (let j = 0; j < names.length; j++) {
        const n = names[(j + r) % names.length];
        gx.cuda.synchronize('cuda:0');
        const t0 = process.hrtime.bigint();
        for (let c = 0; c < calls; c++) cases[n]();
        samples.get(n)?.push(Number(process.hrtime.bigint() - t0) / 1e3 / (blocks * calls));
      }
    }
    gx.cuda.synchronize('cuda:0');
    console.log(`== ${calls} call(s) after each synchronize, host µs per block (median of 61 rotated rounds)`);
    for (const n of names) console.log(`  ${n.padEnd(42)} ${median(samples.get(n) ?? []).toFixed(2)}`);
  }
  dx.dispose();
  dy.dispose();
  dz.dispose();
}

main();
