// Chunked tensors and mapBlocks on every device: the chunk rules (with the
// errors Dask gives), mapBlocks against the unchunked op (a 1-d input lined
// up with the last dimension, plain tensors and numbers passed whole),
// rechunk, reductions across blocks, compute(), the tall-skinny SVD, the
// examples (Dask's add_broadcast kernel, the chunked SVD) and the
// data-parallel training launched with gpuext run; chunked tensors spread
// over the ranks of a process group (3 ranks in this process, CPU tensors):
// mapBlocks on each rank's own blocks, gather, reduceAll and the TSQR SVD
// against the whole tensor; no tensor left behind.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as path from 'path';

import * as gx from '../lib';
import { smallSvd } from '../lib/distributed/chunked-svd';
import * as ex from '../examples/distributed';
import { deviceTestSerial } from './helpers';
import { freePort } from '../lib/cli/run';
import { createProcessGroup } from '../lib/distributed/group';

const maxAbsDiff = (a: gx.Tensor, b: gx.Tensor): number => gx.tidy(() => gx.max(gx.abs(gx.sub(a, b.toDevice(a.device, false, 'test')))).item() as number);

deviceTestSerial('chunk rules: sizes per dimension, explicit chunks, errors naming the dimension', (t, device) => {
  gx.tidy(() => {
    const x = gx.randn([10, 7], { device });
    using c = gx.chunked(x, { chunks: [4, 3] });
    t.deepEqual(c.chunks, [[4, 4, 2], [3, 3, 1]]);
    t.deepEqual(c.grid, [3, 3]);
    t.deepEqual(c.block(2, 2).shape, [2, 1]);
    t.is(maxAbsDiff(c.compute(), x), 0);
    using e = gx.chunked(x, { chunks: [[5, 5], [7]] });
    t.deepEqual(e.grid, [2, 1]);
    t.throws(() => gx.chunked(x, { chunks: [[5, 4], [7]] }), { message: /the chunks of dimension 0 must be non-negative integers summing to its extent 10, got \[5, 4\]/ });
    t.throws(() => gx.chunked(x, { chunks: [0, 3] }), { message: /the block size of dimension 0 must be a positive integer, got 0/ });
    t.throws(() => gx.chunked(x, { chunks: [3] }), { message: /one entry per dimension \(2\)/ });
    t.throws(() => c.block(3, 0), { message: /outside the block grid \[3, 3\]/ });
  });
});

deviceTestSerial('mapBlocks matches the unchunked op: a 1-d input on the last dimension, a whole tensor, a number; mismatched chunks are an error', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const x = gx.randn([12, 10], { device });
    const y = gx.randn([10], { device });
    const w = gx.randn([1, 10], { device });
    using cx = gx.chunked(x, { chunks: [5, 4] });
    using cy = gx.chunked(y, { chunks: [4] });
    using z = gx.mapBlocks((a: gx.Tensor, b: gx.Tensor, c: gx.Tensor, k: number) => gx.add(gx.mul(a, b), c.narrow(1, 0, b.shape[0])).mul(k), cx, cy, w, 3);
    t.deepEqual(z.chunks, cx.chunks);
    // The whole w is passed to every block: each block adds w's first columns, as the function says.
    const want = gx.cat([0, 1, 2].map((j) => {
      const cols = cx.chunks[1][j];
      const off = [0, 4, 8][j];
      return gx.add(gx.mul(x.narrow(1, off, cols), y.narrow(0, off, cols)), w.narrow(1, 0, cols)).mul(3);
    }), 1);
    t.true(maxAbsDiff(z.compute(), want) <= 1e-5);
    const info: number[][] = [];
    using same = gx.mapBlocks((a: gx.Tensor, bi: gx.BlockInfo) => { info.push(bi.offset); return a.clone(); }, cx, { blockInfo: true });
    t.deepEqual(info, [[0, 0], [0, 4], [0, 8], [5, 0], [5, 4], [5, 8], [10, 0], [10, 4], [10, 8]]);
    t.throws(() => gx.mapBlocks((a: gx.Tensor, b: gx.Tensor) => gx.add(a, b), cx, gx.chunked(y, { chunks: [5] })),
      { message: /chunks of argument 2 do not line up with the output's along dimension 1: \(5, 5\) vs \(4, 4, 2\)/ });
    t.throws(() => gx.mapBlocks((a: gx.Tensor) => a.narrow(0, 0, 1), cx), { message: /block \[0, 0\] came back as \[1, 4\]; the output block is \[5, 4\]/ });
    t.throws(() => gx.mapBlocks((a: gx.Tensor) => a.astype('float64'), cx, { dtype: 'float32' }), { message: /came back float64, not float32/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('mapBlocks over several streams of a device matches the unchunked op; a failing block leaves nothing behind', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const x = gx.randn([64, 48], { device });
    const y = gx.randn([48], { device });
    using cx = gx.chunked(x, { chunks: [8, 16] });
    using cy = gx.chunked(y, { chunks: [16] });
    // Each block's result goes through several kernels on its stream; the caller's stream must see them all.
    using z = gx.mapBlocks((a: gx.Tensor, b: gx.Tensor) => gx.tanh(gx.add(gx.mul(a, b), 1)).mul(2), cx, cy, { streams: 4 });
    using one = gx.mapBlocks((a: gx.Tensor, b: gx.Tensor) => gx.tanh(gx.add(gx.mul(a, b), 1)).mul(2), cx, cy);
    const want = gx.tanh(gx.add(gx.mul(x, y), 1)).mul(2);
    t.true(maxAbsDiff(z.compute(), want) <= 1e-6);
    t.is(maxAbsDiff(z.compute(), one.compute()), 0);
    t.throws(() => gx.mapBlocks((a: gx.Tensor) => a, cx, { streams: 0 }), { message: /gx.mapBlocks: streams must be a positive integer, got 0/ });
    let calls = 0;
    t.throws(() => gx.mapBlocks((a: gx.Tensor) => {
      if (++calls === 5) throw new Error('block five fails');
      return gx.exp(a);
    }, cx, { streams: 2 }), { message: /block five fails/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('rechunk, reductions across blocks (all, along each axis), the tall-skinny SVD', (t, device) => {
  gx.tidy(() => {
    const x = gx.randn([30, 21], { device, dtype: 'float64' });
    using c = gx.chunked(x, { chunks: [7, 10] });
    using r = c.rechunk([[3, 27], 4]);
    t.deepEqual(r.chunks, [[3, 27], [4, 4, 4, 4, 4, 1]]);
    t.is(maxAbsDiff(r.compute(), x), 0);
    t.true(Math.abs((c.sum() as gx.Tensor).item() as number - (x.sum().item() as number)) <= 1e-9);
    t.is((c.max() as gx.Tensor).item(), x.max().item());
    for (const axis of [0, 1, -1]) {
      using s = c.sum(axis) as gx.ChunkedTensor;
      t.true(maxAbsDiff(s.compute(), x.sum(axis)) <= 1e-12, `sum along ${axis}`);
      using m = c.amin(axis);
      t.is(maxAbsDiff(m.compute(), x.amin(axis)), 0, `min along ${axis}`);
    }
    const r2 = ex.chunkedSvdExample([device], 400, 12, 90);
    t.true(r2.chunkedError <= 1e-12 && r2.maxSingularValueDiff <= 1e-12, JSON.stringify(r2));
    t.throws(() => c.svd(), { message: /needs a 2-d matrix chunked along its rows only/ });
    // Each block reduced by its own SVD instead of QR, a last block shorter than the matrix is wide among them.
    const a = gx.randn([61, 12], { device, dtype: 'float64' });
    using ca = gx.chunked(a, { chunks: [25, 12] });
    t.deepEqual(ca.chunks[0], [25, 25, 11]);
    for (const factor of ['qr', 'svd'] as const) {
      const { U, S, Vh } = ca.svd({ factor });
      using u = U;
      const whole = u.compute();
      t.true(maxAbsDiff(gx.matmul(whole.mul(S.reshape(1, -1)), Vh), a) <= 1e-12, `${factor}: U diag(S) Vh is the matrix`);
      t.true(maxAbsDiff(gx.matmul(whole.mT, whole), gx.eye(12, { dtype: 'float64', device })) <= 1e-12, `${factor}: U has orthonormal columns`);
      t.true(maxAbsDiff(S, gx.linalg.svd(a, { fullMatrices: false }).S) <= 1e-12, `${factor}: the singular values`);
    }
    // float32: the small SVD through the float64 Gram matrix (NOTE [ The small SVD of float32 R's ]) when M is well
    // conditioned; a rank-deficient matrix (a column repeated) takes gesvdj, and U stays orthonormal either way.
    const a32 = a.astype('float32');
    const deficient = gx.cat([a32.narrow(1, 0, 11), a32.narrow(1, 0, 1)], 1);
    const cases = [['well conditioned (the Gram path)', a32, true], ['well conditioned, { gram: false } (TSQR)', a32, false],
      ['rank-deficient (TSQR)', deficient, true]] as const;
    for (const [what, m, gram] of cases) {
      using cm = gx.chunked(m, { chunks: [25, 12] });
      const { U, S, Vh } = cm.svd({ gram });
      using u = U;
      const whole = u.compute();
      t.deepEqual([whole.dtype, S.dtype, Vh.dtype, Vh.isContiguous()], ['float32', 'float32', 'float32', true], what);
      const scale = S.max().item() as number;
      t.true(maxAbsDiff(gx.matmul(whole.mul(S.reshape(1, -1)), Vh), m) <= 2e-5 * scale, `${what}: U diag(S) Vh is the matrix`);
      t.true(maxAbsDiff(gx.matmul(whole.mT, whole), gx.eye(12, { device })) <= 2e-5, `${what}: U has orthonormal columns`);
      t.true(maxAbsDiff(gx.matmul(Vh, Vh.mT), gx.eye(12, { device })) <= 2e-5, `${what}: Vh has orthonormal rows`);
      t.true(maxAbsDiff(S, gx.linalg.svd(m.astype('float64'), { fullMatrices: false }).S.astype('float32')) <= 2e-5 * scale, `${what}: the singular values`);
    }
    const rs = gx.randn([40, 6], { device });
    const viaGram = smallSvd(rs);
    t.true(maxAbsDiff(viaGram.S, gx.linalg.svd(rs, { fullMatrices: false }).S) <= 1e-5 * (viaGram.S.max().item() as number), 'smallSvd: the singular values');
    t.throws(() => ca.svd({ factor: 'lu' as 'qr' }), { message: /ChunkedTensor.svd: factor must be 'qr' or 'svd', got lu/ });
    t.throws(() => ca.svd({ factors: 'qr' } as never), { message: /ChunkedTensor.svd/ });
  });
});

deviceTestSerial('examples: Dask\'s add_broadcast kernel by mapBlocks over every device present', (t, device) => {
  const devices = device === 'cpu' ? ['cpu'] : ex.allDevices();
  const r = device === 'cpu' ? ex.addBroadcastExample(devices, 256, 128, [64, 64]) : ex.addBroadcastExample(devices);
  t.is(r.maxError, 0);
  t.is(r.blocks, 8);
  t.deepEqual(r.devices, devices, 'blocks went to every device in turn');
});

test('chunks over the ranks of a process group: each rank maps its own blocks; gather, reduceAll and svdAsync agree with the whole tensor', async (t) => {
  const port = await freePort();
  const gs = await Promise.all([0, 1, 2].map((rank) => createProcessGroup({ rank, worldSize: 3, masterPort: port, timeoutMs: 20_000 }, 'test')));
  const live = gx.memory.stats('cpu').liveTensors;
  const x = gx.randn([40, 6], { dtype: 'float64' });
  const y = gx.randn([6], { dtype: 'float64' });
  const perRank = await Promise.all(gs.map(async (g) => {
    using cx = gx.chunked(x, { chunks: [8, 6], group: g });
    using cy = gx.chunked(y, { chunks: [6] });  // every rank holds the broadcast input whole
    const owners = [0, 1, 2, 3, 4].map((i) => cx.owner(i, 0));
    const held = cx.blocks.length;
    using z = gx.mapBlocks((a: gx.Tensor, b: gx.Tensor) => gx.add(a, b), cx, cy);
    using whole = await z.gather();
    const gatherErr = gx.tidy(() => maxAbsDiff(whole, gx.add(x, y)));
    using total = await cx.reduceAll('sum');
    using top = await cx.reduceAll('max');
    const d = await cx.svdAsync();
    using u = await d.U.gather();
    const back = gx.tidy(() => maxAbsDiff(gx.matmul(gx.mul(u, d.S), d.Vh), x));
    const orth = gx.tidy(() => maxAbsDiff(gx.matmul(u.transpose(0, 1), u), gx.tensor(Array.from({ length: 36 }, (_, i) => Number(i % 7 === 0)), { dtype: 'float64', shape: [6, 6] })));
    d.U.dispose();
    d.S.dispose();
    d.Vh.dispose();
    // float32 over ranks: the Gram matrix all-reduced (NOTE [ The float32 SVD by the float64 Gram matrix ]).
    using x32 = x.astype('float32');
    using cx32 = gx.chunked(x32, { chunks: [8, 6], group: g });
    const d32 = await cx32.svdAsync();
    using u32 = await d32.U.gather();
    const back32 = gx.tidy(() => maxAbsDiff(gx.matmul(gx.mul(u32, d32.S), d32.Vh), x32));
    const orth32 = gx.tidy(() => maxAbsDiff(gx.matmul(u32.mT, u32), gx.eye(6)));
    for (const r of [d32.U, d32.S, d32.Vh]) r.dispose();
    const errors = [
      t.throws(() => cx.compute(), { message: /ChunkedTensor.compute: this chunked tensor is spread over 3 ranks; every rank calls await x.gather\(\) instead/ }).message,
      t.throws(() => cx.sum(), { message: /await x.reduceAll\('sum'\)/ }).message,
      t.throws(() => cx.block((g.rank + 1) % 3, 0), { message: /is held by rank \d, not this one/ }).message,
      t.throws(() => gx.tidy(() => gx.mapBlocks((a: gx.Tensor) => a, gx.chunked(x, { chunks: [8, 6] }), gx.chunked(y, { chunks: [6], group: g }))),
        { message: /spread over the same process group as the output/ }).message,
    ];
    if (g.rank !== 0) {
      // The 1-d input spread over ranks has one block, rank 0's: it cannot meet this rank's output blocks.
      using spread = gx.chunked(y, { chunks: [6], group: g });
      errors.push(t.throws(() => gx.mapBlocks((a: gx.Tensor, b: gx.Tensor) => gx.add(a, b), cx, spread), { message: /block \[0\] of argument 2 is held by rank 0, but output block \[\d, 0\] by rank \d/ }).message);
    }
    return { owners, held, gatherErr, total: total.item() as number, top: top.item() as number, back, orth, back32, orth32, errors };
  }));
  const [xSum, xMax] = gx.tidy(() => [x.sum().item() as number, x.max().item() as number]);
  for (const [rank, r] of perRank.entries()) {
    t.deepEqual(r.owners, [0, 1, 2, 0, 1], 'block k belongs to rank k % 3');
    t.is(r.held, [2, 2, 1][rank]);
    t.is(r.gatherErr, 0, `rank ${rank} gathered x + y`);
    t.true(Math.abs(r.total - xSum) <= 1e-12, `rank ${rank} sum`);
    t.is(r.top, xMax);
    t.true(r.back <= 1e-12 && r.orth <= 1e-12, `rank ${rank}: U diag(S) Vh = x (${r.back}), U orthonormal (${r.orth})`);
    t.true(r.back32 <= 1e-5 && r.orth32 <= 1e-5, `rank ${rank}, float32: U diag(S) Vh = x (${r.back32}), U orthonormal (${r.orth32})`);
  }
  x.dispose();
  y.dispose();
  t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor left behind');
  await Promise.all(gs.map((g) => g.destroy()));
});

test('examples: data-parallel training with gpuext run: 2 ranks agree and recover y = 0.5 x + 1', (t) => {
  const cli = path.resolve(__dirname, '../lib/cli/main.js');
  const script = path.resolve(__dirname, '../examples/allreduce-train.js');
  const r = spawnSync(process.execPath, [cli, 'run', '--nproc-per-node', '2', script], { encoding: 'utf8', timeout: 120_000 });
  t.is(r.status, 0, r.stderr);
  const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { rank: number; slope: number; intercept: number });
  t.is(out.length, 2);
  t.is(out[0].slope, out[1].slope, 'every rank keeps the same weights');
  t.true(Math.abs(out[0].slope - 0.5) < 0.02 && Math.abs(out[0].intercept - 1) < 0.1, JSON.stringify(out));
});

// Options a chunked reduction does not take were dropped (c.sum(1, { keepdims: true }) gave [3], not [3, 1]), and
// mapBlocks read blockInfo: 1 as false: both refuse now.
test('chunked reductions refuse options they do not take; mapBlocks refuses a blockInfo that is not a boolean', (t) => {
  gx.tidy(() => {
    const c = gx.chunked(gx.arange(12, { dtype: 'float32' }).reshape(3, 4), { chunks: [2, 2] });
    for (const [fn, call] of [
      ['sum', () => (c.sum as (...a: unknown[]) => unknown)(1, { keepdims: true })],
      ['max', () => (c.max as (...a: unknown[]) => unknown)(1, { keepdims: true })],
      ['min', () => (c.min as (...a: unknown[]) => unknown)(0, {})],
      ['amax', () => (c.amax as (...a: unknown[]) => unknown)(1, { dtype: 'float64' })],
      ['amin', () => (c.amin as (...a: unknown[]) => unknown)(1, { keepdims: false })],
    ] as const) {
      t.throws(call, { instanceOf: TypeError, message: new RegExp(`^ChunkedTensor\\.${fn}: takes \\(axis\\?\\) only`) }, fn);
    }
    t.deepEqual((c.sum(1) as gx.ChunkedTensor).compute().shape, [3], 'without options, as before');
    t.throws(() => gx.mapBlocks((b: gx.Tensor) => b, c, { blockInfo: 1 as never }), { instanceOf: TypeError, message: /^gx\.mapBlocks: blockInfo must be a boolean/ });
    const tall = gx.chunked(gx.randn([8, 2]), { chunks: [4, 2] });
    t.throws(() => tall.svd({ gram: 'false' as never }), { instanceOf: TypeError, message: /^ChunkedTensor\.svd: gram must be a boolean, got a string \("false"\)/ }, "a string read as true");
    c.dispose();
    tall.dispose();
  });
});
