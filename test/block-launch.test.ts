// gx.mapBlocks with a kernel launch plan (lib/distributed/block-launch.ts,
// NOTE [ Block launch plans ]): on the GPU the plan's result equals the
// function form's (the article's add_broadcast kernel, poisoned outputs),
// a scalar that changes between blocks takes the checked launch (and a bad
// one is refused there), a tensor on another device too; on the CPU a plan
// is refused naming the block's device; the plan's keys are checked. A plan
// passed again keeps its checks only while it names the same parts, and a
// later call with a different scalar or kernel is checked again.
import test from 'ava';

import * as gx from '../lib';
import { launcherFor } from '../lib/distributed/block-launch';
import { addBroadcastPlan, dispatchAddBroadcast } from '../examples/distributed';
import { cudaTest } from './helpers';

const ROWS = 256, COLS = 128, CHUNKS: [number, number] = [64, 32];

function inputs(device: string): { x: gx.Tensor; y: gx.Tensor } {
  const g = new gx.Generator(9);
  return { x: gx.randn([ROWS, COLS], { generator: g, device }), y: gx.randn([COLS], { generator: g, device }) };
}

// The example's plan with its scalar argument from `dim0`.
const plan = (dim0: (xb: gx.Tensor) => number = (xb) => xb.strides[0]): gx.BlockLaunch => ({
  ...addBroadcastPlan,
  args: (xb: gx.Tensor, yb: gx.Tensor, zb: gx.Tensor) => [xb, yb, zb, dim0(xb)],
});

cudaTest('a launch plan gives the function form\'s blocks, checked once', (t) => {
  gx.tidy(() => {
    const { x, y } = inputs('cuda');
    const dx = gx.chunked(x, { chunks: CHUNKS }), dy = gx.chunked(y, { chunks: [CHUNKS[1]] });
    const z1 = gx.chunked(gx.full([ROWS, COLS], -7, { device: 'cuda' }), { chunks: CHUNKS });
    const z2 = gx.chunked(gx.full([ROWS, COLS], -7, { device: 'cuda' }), { chunks: CHUNKS });
    const viaFn = gx.mapBlocks(dispatchAddBroadcast, dx, dy, z1).compute();
    const viaPlan = gx.mapBlocks(addBroadcastPlan, dx, dy, z2).compute();
    t.deepEqual(Array.from(viaPlan.toArraySync() as Float32Array), Array.from(viaFn.toArraySync() as Float32Array));
    t.deepEqual(Array.from(viaPlan.toArraySync() as Float32Array), Array.from(gx.add(x, y).toArraySync() as Float32Array));
    // A scalar that differs from the first block's takes the checked launch: a bad one is refused there.
    let k = 0;
    t.throws(() => gx.mapBlocks(plan(() => (k++ === 0 ? COLS : 2 ** 40)), dx, dy, z2), { message: /dim0/ });
  });
});

cudaTest('a launch plan passed again keeps its checks for the same values, and checks again what changed', (t) => {
  gx.tidy(() => {
    const { x, y } = inputs('cuda');
    let dim0: number | undefined;
    const again = plan((xb) => dim0 ?? xb.strides[0]);
    const dx = gx.chunked(x, { chunks: CHUNKS }), dy = gx.chunked(y, { chunks: [CHUNKS[1]] });
    const want = Array.from(gx.add(x, y).toArraySync() as Float32Array);
    for (let call = 0; call < 3; call++) {
      const dz = gx.chunked(gx.full([ROWS, COLS], -7, { device: 'cuda' }), { chunks: CHUNKS });
      t.deepEqual(Array.from(gx.mapBlocks(again, dx, dy, dz).compute().toArraySync() as Float32Array), want, `call ${call}`);
    }
    // A scalar the earlier calls did not check takes the checked launch on the first block, which refuses it.
    dim0 = 2 ** 40;
    t.throws(() => gx.mapBlocks(again, dx, dy, gx.chunked(gx.zerosLike(x), { chunks: CHUNKS })), { message: /dim0/ });
    dim0 = undefined;
    // Another kernel in the same plan object is checked from scratch: its three parameters against four arguments.
    again.kernel = new gx.RawKernel('extern "C" __global__ void three(const float* x, float* z, int n) {}', 'three');
    t.throws(() => gx.mapBlocks(again, dx, dy, gx.chunked(gx.zerosLike(x), { chunks: CHUNKS })), { message: /takes 3 arguments .* but 4 were given/ });
  });
});

test('a plan\'s launcher is kept while the plan names the same parts', (t) => {
  const p = plan();
  const first = launcherFor(p, 'gx.mapBlocks');
  t.is(launcherFor(p, 'gx.mapBlocks'), first, 'the same plan again');
  t.not(launcherFor({ ...p }, 'gx.mapBlocks'), first, 'another plan object');
  p.block = [16, 16];
  const second = launcherFor(p, 'gx.mapBlocks');
  t.not(second, first, 'a new block extent');
  p.args = (xb: gx.Tensor, yb: gx.Tensor, zb: gx.Tensor) => [xb, yb, zb, 1];
  t.not(launcherFor(p, 'gx.mapBlocks'), second, 'new arguments');
});

test('a launch plan refuses CPU blocks and unknown keys, naming gx.mapBlocks', (t) => {
  gx.tidy(() => {
    const { x, y } = inputs('cpu');
    const dx = gx.chunked(x, { chunks: CHUNKS }), dy = gx.chunked(y, { chunks: [CHUNKS[1]] });
    const dz = gx.chunked(gx.zerosLike(x), { chunks: CHUNKS });
    t.throws(() => gx.mapBlocks(plan(), dx, dy, dz), { instanceOf: TypeError, message: 'gx.mapBlocks: a launch plan runs RawKernels on CUDA blocks; a block is on cpu' });
    t.throws(() => gx.mapBlocks({ ...plan(), grdi: 1 } as gx.BlockLaunch, dx, dy, dz), { message: /gx\.mapBlocks: .*grdi/ });
    t.throws(() => gx.mapBlocks({ ...plan(), out: 5 }, dx, dy, dz), { instanceOf: TypeError, message: /the launch plan's out \(5\) must name a tensor argument/ });
    t.throws(() => gx.mapBlocks(7 as unknown as gx.BlockLaunch, dx), { instanceOf: TypeError, message: /gx\.mapBlocks: the first argument must be the function to call on each block, or a kernel launch plan/ });
  });
});
