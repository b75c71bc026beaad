// gx.mapBlocks with a kernel launch plan (lib/distributed/block-launch.ts,
// NOTE [ Block launch plans ]): on the GPU the plan's result equals the
// function form's (the article's add_broadcast kernel, poisoned outputs),
// a scalar that changes between blocks takes the checked launch (and a bad
// one is refused there), a tensor on another device too; on the CPU a plan
// is refused naming the block's device; the plan's keys are checked. A plan
// passed again keeps its checks only while it names the same parts, and a
// later call with a different scalar or kernel is checked again. A call
// that repeats the last one's launches goes out as a graph per device (NOTE
// [ Block graphs ]), compared bit for bit; a device whose graphs do not pay
// off waits for a fourth call alike; a call within a capture launches into
// it, and one from the plan's own args sends the outer call's waiting
// launches out first.
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

// Every GPU present: on two, the blocks alternate between them and each device's launches go out as its own graph.
const gpus = (): string[] => Array.from({ length: gx.cuda.deviceCount() }, (_, i) => `cuda:${i}`);

cudaTest('a plan called again goes out as a graph of the same launches, and what changed is launched again', (t) => {
  gx.tidy(() => {
    const devices = gpus();
    const { x, y } = inputs('cuda:0');
    const p = plan();
    const dx = gx.chunked(x, { chunks: CHUNKS, devices }), dy = gx.chunked(y, { chunks: [CHUNKS[1]], devices });
    const dz = gx.chunked(gx.zerosLike(x), { chunks: CHUNKS, devices });
    const launcher = launcherFor(p, 'gx.mapBlocks');
    const run = (z: gx.ChunkedTensor, what: string, want: gx.Tensor): void => {
      for (const b of z.blocks) b.fill_(-7);
      const got = gx.mapBlocks(p, dx, dy, z).compute('cuda:0');
      t.deepEqual(Array.from(got.toArraySync() as Float32Array), Array.from(gx.add(x, want).toArraySync() as Float32Array), what);
    };
    // The first call checks, the second records, the third repeats the second and captures it.
    for (let call = 0; call < 3; call++) run(dz, `call ${call}`, y);
    t.is(launcher.graphReplays, devices.length, 'the third call went out as one graph per device');
    // New values at the same addresses: the graph reads them.
    const y2 = gx.mul(y, 3);
    dy.blocks.forEach((b, j) => b.copy_(y2.narrow(0, j * CHUNKS[1], CHUNKS[1])));
    run(dz, 'the graph again, new values of y', y2);
    t.is(launcher.graphReplays, 2 * devices.length);
    // Other output blocks are other addresses: launched one by one, not replayed.
    const other = gx.chunked(gx.zerosLike(x), { chunks: CHUNKS, devices });
    run(other, 'another output', y2);
    t.is(launcher.graphReplays, 2 * devices.length, 'a call with other addresses is not replayed');
    run(dz, 'the first output again', y2);
    t.is(launcher.graphReplays, 3 * devices.length, 'the graph still holds the first output\'s launches');
  });
});

cudaTest('a device whose graphs are dropped before paying off waits for a fourth call alike before capturing', (t) => {
  gx.tidy(() => {
    const { x, y } = inputs('cuda:0');
    const p = plan();
    const dx = gx.chunked(x, { chunks: CHUNKS }), dy = gx.chunked(y, { chunks: [CHUNKS[1]] });
    const launcher = launcherFor(p, 'gx.mapBlocks');
    const want = Array.from(gx.add(x, y).toArraySync() as Float32Array);
    const output = (): gx.ChunkedTensor => gx.chunked(gx.full([ROWS, COLS], -7, { device: 'cuda:0' }), { chunks: CHUNKS });  // kept: new addresses each
    gx.mapBlocks(p, dx, dy, output());  // the checked first call
    const base = launcher.graphReplays;
    // Ten outputs, each made exactly twice: the second call captures while at most two more graphs than paid off were dropped
    // unused; the fifth output drops the first's graph (four are kept), so the pairs from the seventh on stop capturing.
    for (let k = 0; k < 10; k++) {
      const z = output();
      for (let call = 0; call < 2; call++) t.deepEqual(Array.from(gx.mapBlocks(p, dx, dy, z).compute().toArraySync() as Float32Array), want, `output ${k}, call ${call}`);
    }
    t.is(launcher.graphReplays - base, 6, 'six pairs captured, four did not');
    const z = output();
    for (let call = 0; call < 5; call++) t.deepEqual(Array.from(gx.mapBlocks(p, dx, dy, z).compute().toArraySync() as Float32Array), want, `the last output, call ${call}`);
    t.is(launcher.graphReplays - base, 8, 'the fourth call alike captured, the fifth replayed');
  });
});

cudaTest('a plan called again from its own args: the outer call\'s waiting launches go out first, and both results are whole', (t) => {
  gx.tidy(() => {
    const { x, y } = inputs('cuda:0');
    const dx = gx.chunked(x, { chunks: CHUNKS }), dy = gx.chunked(y, { chunks: [CHUNKS[1]] });
    const outer = gx.chunked(gx.zerosLike(x), { chunks: CHUNKS }), inner = gx.chunked(gx.zerosLike(x), { chunks: CHUNKS });
    let block = 0, nestAt = -1;
    const p = plan();
    const args = p.args as (xb: gx.Tensor, yb: gx.Tensor, zb: gx.Tensor) => unknown[];
    p.args = (xb: gx.Tensor, yb: gx.Tensor, zb: gx.Tensor) => {
      if (block++ === nestAt) gx.mapBlocks(p, dx, dy, inner);
      return args(xb, yb, zb);
    };
    const want = Array.from(gx.add(x, y).toArraySync() as Float32Array);
    for (let call = 0; call < 4; call++) gx.mapBlocks(p, dx, dy, outer);  // checked, recorded, captured, replayed
    for (const z of [outer, inner]) for (const b of z.blocks) b.fill_(-7);
    block = 0;
    nestAt = 2;  // two of the outer call's blocks are waiting when the inner call starts
    gx.mapBlocks(p, dx, dy, outer);
    t.deepEqual(Array.from(outer.compute().toArraySync() as Float32Array), want, 'the outer call');
    t.deepEqual(Array.from(inner.compute().toArraySync() as Float32Array), want, 'the inner call');
    nestAt = -1;
    for (const b of outer.blocks) b.fill_(-7);
    gx.mapBlocks(p, dx, dy, outer);
    t.deepEqual(Array.from(outer.compute().toArraySync() as Float32Array), want, 'a call after it');
  });
});

cudaTest('a plan\'s graph is compared bit for bit: a -0 scalar is not the 0 it captured', (t) => {
  gx.tidy(() => {
    const scale = new gx.RawKernel('extern "C" __global__ void scale(const float* x, float* z, float s) { z[threadIdx.x] = x[threadIdx.x] * s; }', 'scale');
    let s = 0;
    const p: gx.BlockLaunch = { kernel: scale, grid: 1, block: 32, out: 1, args: (xb: gx.Tensor, zb: gx.Tensor) => [xb, zb, s] };
    const dx = gx.chunked(gx.rand([128], { device: 'cuda:0' }).add(1), { chunks: [32] });
    const dz = gx.chunked(gx.zeros([128], { device: 'cuda:0' }), { chunks: [32] });
    const launcher = launcherFor(p, 'gx.mapBlocks');
    for (let call = 0; call < 4; call++) gx.mapBlocks(p, dx, dz);
    t.is(launcher.graphReplays, 2, 'the third and fourth calls replayed');
    s = -0;
    const z = gx.mapBlocks(p, dx, dz).compute();
    t.is(launcher.graphReplays, 2, 'a -0 scalar is another launch');
    t.true(Array.from(z.toArraySync() as Float32Array).every((v) => Object.is(v, -0)), 'x * -0 is -0 for positive x');
  });
});

cudaTest('a plan called inside a capture launches its blocks into the capture', (t) => {
  gx.tidy(() => {
    const { x, y } = inputs('cuda:0');
    const p = plan();
    const dx = gx.chunked(x, { chunks: CHUNKS }), dy = gx.chunked(y, { chunks: [CHUNKS[1]] });
    const dz = gx.chunked(gx.zerosLike(x), { chunks: CHUNKS });
    for (let call = 0; call < 3; call++) gx.mapBlocks(p, dx, dy, dz);  // checked, recorded, replayed
    for (const b of dz.blocks) b.fill_(-7);
    gx.cuda.synchronize();
    using g = gx.cuda.graph(() => { gx.mapBlocks(p, dx, dy, dz); });
    t.true(g.nodes >= dz.blocks.length, `the capture holds every block's launch (${g.nodes} nodes)`);
    g.replay();
    t.deepEqual(Array.from(dz.compute().toArraySync() as Float32Array), Array.from(gx.add(x, y).toArraySync() as Float32Array));
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
