// Every kind of op on the last GPU present (cuda:1 on a two-GPU machine)
// while cuda:0 stays the runtime's current device, against the CPU: the
// library handles (cuBLAS, cuSOLVER), random, reductions, run-time and jit
// kernels each pick the tensors' device, not the current one; so do the
// everyday API's (CUB sorts, atomics, compaction, cuSOLVER's decompositions,
// einsum, a file read straight to the device). With several
// GPUs, copies between them and ops alternating between devices too. On one
// GPU the same cases run on cuda:0 (the code path, not the second device);
// `npm run test:multi-gpu` (GPUEXT_REQUIRE_MULTI_GPU=1) fails without two.
import test from 'ava';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { cudaTest, occupyStream } from './helpers';

const COUNT = gx.cuda.isAvailable() ? gx.cuda.deviceCount() : 0;
const LAST = `cuda:${Math.max(0, COUNT - 1)}`;

if (process.env.GPUEXT_REQUIRE_MULTI_GPU === '1' && COUNT < 2) {
  test('GPUEXT_REQUIRE_MULTI_GPU=1 needs two GPUs', (t) => t.fail(`found ${COUNT} GPU(s)`));
}

const close = (a: gx.Tensor, b: gx.Tensor, tol: number): number =>
  gx.tidy(() => {
    const d = gx.max(gx.abs(gx.sub(a.cpu().astype('float64'), b.cpu().astype('float64')))).item() as number;
    return d <= tol ? 0 : d;
  });

cudaTest(`every kind of op on ${LAST} (cuda:0 current) matches the CPU`, (t) => {
  gx.tidy(() => {
    gx.manualSeed(3);
    const a = gx.randn([64, 48], { dtype: 'float32' });
    const b = gx.randn([48, 32], { dtype: 'float32' });
    const ad = a.to(LAST);
    const bd = b.to(LAST);
    t.is(String(ad.device), LAST);
    const cases: [string, gx.Tensor, gx.Tensor, number][] = [
      ['add + exp', gx.exp(gx.add(ad, 1)), gx.exp(gx.add(a, 1)), 1e-4],
      ['sum along 1', ad.sum(1), a.sum(1), 1e-4],
      ['softmax', gx.softmax(ad, -1), gx.softmax(a, -1), 1e-6],
      ['cumsum', gx.cumsum(ad, 0), gx.cumsum(a, 0), 1e-4],
      ['matmul float32 (cuBLAS)', gx.matmul(ad, bd), gx.matmul(a, b), 1e-3],
      ['matmul float64 (cuBLAS)', gx.matmul(ad.astype('float64'), bd.astype('float64')), gx.matmul(a.astype('float64'), b.astype('float64')), 1e-9],
    ];
    for (const [what, got, want, tol] of cases) {
      t.is(String(got.device), LAST, `${what} stays on ${LAST}`);
      t.is(close(got, want, tol), 0, what);
    }
    const s = gx.linalg.svd(ad.astype('float64'), { fullMatrices: false });
    const sc = gx.linalg.svd(a.astype('float64'), { fullMatrices: false });
    t.is(close(s.S, sc.S, 1e-9), 0, 'svd (cuSOLVER) singular values');
    const r = gx.rand([1000], { device: LAST });
    const rv = r.toArraySync() as Float32Array;
    t.true(rv.every((v) => v >= 0 && v < 1) && new Set(rv).size > 990, 'rand on the device');
    const k = new gx.RawKernel('extern "C" __global__ void twice(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.f * x[i]; }', 'twice');
    const y = gx.full([64 * 48], -1, { device: LAST });
    k.launch([12], [256], [ad.reshape(-1), y, 64 * 48]);
    t.is(close(y, a.reshape(-1).mul(2), 0), 0, 'RawKernel');
    const ew = gx.elementwiseKernel('float32 x', 'float32 y', 'y = x * x');
    t.is(close(ew(ad) as gx.Tensor, a.mul(a), 1e-5), 0, 'elementwiseKernel');
    const sq = gx.jit.rawkernel((x: gx.jit.Array, o: gx.jit.Array) => { const i = gx.jit.grid(1); if (i < x.length) o[i] = x[i] * 3; });
    const o = gx.full([48], -1, { device: LAST });
    sq(1, 64, [bd.narrow(1, 0, 1).reshape(-1).contiguous(), o]);
    t.is(close(o, b.narrow(1, 0, 1).reshape(-1).mul(3), 1e-6), 0, 'jit.rawkernel');
    const f = gx.fuse((u: gx.Tensor) => gx.sum(gx.mul(u, u)));
    t.is(close(f(ad), a.mul(a).sum(), 1e-2), 0, 'fuse with a reduction');
  });
});

cudaTest(`the everyday ops on ${LAST} (cuda:0 current): CUB sorts, atomics, compaction, cuSOLVER, einsum, file reads to the device`, async (t) => {
  gx.manualSeed(5);
  const v = gx.randn([4, 300], { dtype: 'float32' });
  try {
    gx.tidy(() => {
      for (const [what, got, want, tol] of everydayCases(v)) {
        t.is(String(got.device), LAST, `${what} stays on ${LAST}`);
        t.deepEqual(got.shape, want.shape, what);
        t.is(close(got, want, tol), 0, what);
      }
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-multi-gpu-'));
    try {
      const file = path.join(dir, 'v.safetensors');
      await gx.save(file, { v });
      const back = await gx.loadTensors(file, { device: LAST });
      t.is(String(back.v.device), LAST, 'loaded straight to the device');
      t.is(close(back.v, v, 0), 0, 'the file read to the device');
      // The async readback's event is made on the source's device too (small and staged sizes).
      const big = gx.arange(1 << 22, { dtype: 'float32', device: LAST });
      const [small, large] = await Promise.all([back.v.toArray(), big.toArray()]);
      t.deepEqual(Array.from(small as Float32Array), Array.from(v.toArraySync() as Float32Array), 'toArray from the device');
      t.is((large as Float32Array)[(1 << 22) - 1], (1 << 22) - 1, 'a staged toArray from the device');
      big.dispose();
      back.v.dispose();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    v.dispose();
  }
});

/** [what, on LAST, on the CPU, tolerance] for the ops of the everyday API that reach CUB, atomics and cuSOLVER. */
function everydayCases(v: gx.Tensor, on = LAST): [string, gx.Tensor, gx.Tensor, number][] {
  const vd = v.to(on);
  const idx = gx.randint(0, 300, [4, 50], { dtype: 'int64' });
  const bins = gx.randint(0, 16, [5000], { dtype: 'int64' });
  const m = gx.randn([24, 24], { dtype: 'float64' });
  const spd = gx.add(gx.matmul(m, m.mT), gx.eye(24, { dtype: 'float64' }).mul(24));
  const sd = spd.to(on);
  const rhs = gx.randn([24, 3], { dtype: 'float64' });
  const bm = gx.randn([3, 8, 5], { dtype: 'float32' }), cm = gx.randn([3, 5, 6], { dtype: 'float32' });
  const rows = gx.tensor([3, 0, 3], { dtype: 'int64' });
  const long = gx.randn([20000], { dtype: 'float32' });
  return [
    ['sort values', gx.sort(vd, -1).values, gx.sort(v, -1).values, 0],
    ['sort of one row beyond a block (DeviceRadixSort)', gx.sort(long.to(on), 0, { descending: true }).values, gx.sort(long, 0, { descending: true }).values, 0],
    ['topk', gx.topk(vd, 5, -1).values, gx.topk(v, 5, -1).values, 0],
    ['unique counts', gx.unique(bins.to(on), { returnCounts: true }).counts as gx.Tensor, gx.unique(bins, { returnCounts: true }).counts as gx.Tensor, 0],
    ['gather', gx.gather(vd, 1, idx.to(on)), gx.gather(v, 1, idx), 0],
    ['scatterAdd (atomics)', gx.scatterAdd(gx.zeros([16], { device: on }), 0, bins.to(on), gx.ones([5000], { device: on })),
      gx.scatterAdd(gx.zeros([16]), 0, bins, gx.ones([5000])), 0],
    ['histc', gx.histc(vd, { bins: 20, min: -3, max: 3 }), gx.histc(v, { bins: 20, min: -3, max: 3 }), 0],
    ['maskedSelect (count, sync, compact)', gx.maskedSelect(vd, vd.gt(0.5)), gx.maskedSelect(v, v.gt(0.5)), 0],
    ['nonzero', gx.nonzero(vd.gt(1)), gx.nonzero(v.gt(1)), 0],
    ['advanced index', vd.index(rows.to(on)), v.index(rows), 0],
    ['cholesky (cuSOLVER)', gx.linalg.cholesky(sd), gx.linalg.cholesky(spd), 1e-9],
    ['solve', gx.linalg.solve(sd, rhs.to(on)), gx.linalg.solve(spd, rhs), 1e-9],
    ['inv', gx.linalg.inv(sd), gx.linalg.inv(spd), 1e-9],
    ['det, relative to the CPU\'s', gx.linalg.det(sd).div(gx.linalg.det(spd).item() as number), gx.ones([], { dtype: 'float64' }), 1e-9],
    ['eigh eigenvalues', gx.linalg.eigh(sd).eigenvalues, gx.linalg.eigh(spd).eigenvalues, 1e-8],
    ['qr R (up to signs)', gx.abs(gx.linalg.qr(sd).R), gx.abs(gx.linalg.qr(spd).R), 1e-9],
    ['einsum', gx.einsum('bij,bjk->bik', bm.to(on), cm.to(on)), gx.einsum('bij,bjk->bik', bm, cm), 1e-4],
    ['vectorNorm', gx.linalg.vectorNorm(vd, 2, -1), gx.linalg.vectorNorm(v, 2, -1), 1e-4],
  ];
}

const twoGpus = COUNT >= 2 ? test : test.skip;
twoGpus('copies between GPUs go device to device; ops alternate between cuda:0 and cuda:1', (t) => {
  gx.tidy(() => {
    const a0 = gx.randn([256, 256], { device: 'cuda:0' });
    const a1 = a0.to('cuda:1');
    t.is(close(a0, a1, 0), 0, 'the copy');
    for (let i = 0; i < 4; i++) {
      const p0 = gx.matmul(a0, a0);
      const p1 = gx.matmul(a1, a1);
      t.is(close(p0, p1, 1e-2), 0, `round ${i}`);
    }
  });
});

// NOTE [ Peer access ] (csrc/cuda/runtime.cpp): the first copy between two GPUs turns on the direct path for the pair;
// whatever the layout on either side, every element arrives, in both directions.
twoGpus('copies between GPUs are exact both ways: large, transposed, offset, into a strided destination', (t) => {
  gx.tidy(() => {
    gx.manualSeed(3);
    const big = gx.randn([4096, 4096], { device: 'cuda:1' });  // 64 MiB
    const host = big.cpu();
    t.is(close(big.to('cuda:0').cpu(), host, 0), 0, 'cuda:1 to cuda:0, 64 MiB');
    t.is(close(big.to('cuda:0').to('cuda:1').cpu(), host, 0), 0, 'and back');
    t.is(close(big.T.to('cuda:0').cpu(), host.T, 0), 0, 'a transposed source');
    t.is(close(big.narrow(0, 100, 7).narrow(1, 3, 500).to('cuda:0').cpu(), host.narrow(0, 100, 7).narrow(1, 3, 500), 0), 0, 'an offset window');
    const into = gx.zeros([4096, 4096], { device: 'cuda:0' });
    into.T.copy_(big);
    t.is(close(into.cpu(), host.T, 0), 0, 'into a transposed destination');
    const ints = gx.arange(1 << 20, { dtype: 'int64', device: 'cuda:0' });
    t.deepEqual(Array.from(ints.to('cuda:1').narrow(0, (1 << 20) - 3, 3).toArraySync() as BigInt64Array), [BigInt((1 << 20) - 3), BigInt((1 << 20) - 2), BigInt((1 << 20) - 1)], 'int64, the last elements');
  });
});

// NOTE [ Copies between GPUs ] (csrc/core/tensor_ops.cpp): ordered on the streams, with no host wait.
twoGpus('a copy between GPUs waits for the source\'s producer, and the source\'s memory is not reused before the copy has read it', (t) => {
  const n = 1 << 20;
  gx.tidy(() => {
    // The producer: cuda:0 busy for 300 ms, then fills the source; the copy must see the fill.
    const src = gx.empty([n], { device: 'cuda:0' });
    occupyStream(300, gx.cuda.currentStream('cuda:0'));
    src.fill_(3);
    const started = Date.now();
    const dst = src.to('cuda:1');
    t.true(Date.now() - started < 150, `the copy was queued without waiting for cuda:0 (${Date.now() - started} ms)`);
    t.is(gx.min(dst).item(), 3, 'the copy waited for the producer');
    // The reader: cuda:1 busy for 300 ms, so the copy waits there; the source is freed at once and its block
    // taken by a new tensor on cuda:0, filled with 9: that fill must come after the copy has read the 3s.
    const x = gx.full([n], 3, { device: 'cuda:0' });
    occupyStream(300, gx.cuda.currentStream('cuda:1'));
    const y = x.to('cuda:1');
    x.dispose();
    const reuse = gx.empty([n], { device: 'cuda:0' });
    reuse.fill_(9);
    t.deepEqual([gx.min(y).item(), gx.max(y).item()], [3, 3], 'the copy read the source before its memory was reused');
    t.is(gx.min(reuse).item(), 9);
  });
});

// NOTE [ One device per capture ] (csrc/cuda/runtime.cpp): work on cuda:1 inside a capture of cuda:0 would run at once
// and never be replayed, so each way of queuing it is refused, naming the capture; the capture is then over, and
// each GPU's own graph still captures and replays.
twoGpus('inside a capture of cuda:0, work on cuda:1 is refused (ops, allocations, copies, launches, joins, mapBlocks)', (t) => {
  gx.tidy(() => {
    const a0 = gx.full([256], 2, { device: 'cuda:0' });
    const a1 = gx.full([256], 3, { device: 'cuda:1' });
    const s1 = new gx.Stream({ device: 'cuda:1' });
    const twice = new gx.RawKernel('extern "C" __global__ void twice(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= 2.f; }', 'twice');
    const both = gx.chunked(gx.ones([8, 256]), { chunks: [4, 256], devices: ['cuda:0', 'cuda:1'] });
    const idle1 = gx.cuda.graph(() => { a1.add_(0); }, { device: 'cuda:1' });
    const ev1 = new gx.Event({ device: 'cuda:1' });
    const refusals: [string, () => unknown][] = [
      ['an op', () => gx.mul(a1, 2)],
      ['an allocation', () => gx.empty([16], { device: 'cuda:1' })],
      ['a copy to cuda:1', () => a0.to('cuda:1')],
      ['a copy from cuda:1', () => a1.to('cuda:0')],
      ['a launch on the current stream', () => twice.launch([1], [256], [a1, 256])],
      ['a launch on a stream given', () => twice.launch([1], [256], [a1, 256], { stream: s1 })],
      ['a join of the streams', () => s1.waitStream(gx.cuda.currentStream('cuda:0'))],
      ['a replay of a cuda:1 graph', () => idle1.replay()],
      ['an event of cuda:1 recorded on its current stream', () => ev1.record()],
      ['an event of cuda:1 recorded on a stream given', () => ev1.record(s1)],
      ['mapBlocks over both GPUs', () => gx.mapBlocks((b: gx.Tensor) => gx.mul(b, 2), both).compute()],
    ];
    for (const [what, work] of refusals) {
      const err = t.throws(() => gx.cuda.graph(() => { gx.mul(a0, 2); work(); }, { device: 'cuda:0' }), undefined, what);
      t.regex(err?.message ?? '', /gx\.cuda\.graph: .* on cuda:1 inside a capture of cuda:0 .*in its own gx\.cuda\.graph/, what);
    }
    t.deepEqual(Array.from(a1.toArraySync() as Float32Array).slice(0, 2), [3, 3], 'no refused work ran on cuda:1');
    // The capture is over: work on cuda:1 runs, and each GPU's graph captures and replays its own work.
    t.is(gx.mul(a1, 2).sum().item(), 6 * 256);
    const g0 = gx.cuda.graph(() => { a0.mul_(2); }, { device: 'cuda:0' });
    const g1 = gx.cuda.graph(() => { twice.launch([1], [256], [a1, 256]); }, { device: 'cuda:1' });
    g0.replay();
    g1.replay();
    g1.replay();
    t.deepEqual([gx.min(a0).item(), gx.min(a1).item()], [4, 12], 'cuda:0 replayed once, cuda:1 twice');
    for (const g of [g0, g1, idle1]) g.dispose();
  });
});
