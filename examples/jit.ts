// Kernels written in TypeScript (`node dist/examples/jit.js`; the tests call
// each against a CPU reference): every kernel of the CuPy course and of the
// Numba CUDA notebook, with gx.jit.rawkernel, gx.jit.device, gx.vectorize
// and gx.fuse. On CUDA tensors they compile to CUDA; on CPU tensors the
// vectorized functions run per element and the raw kernels on the simulator.
import * as gx from '../lib';

const { jit } = gx;

// --- The CuPy course ----------------------------------------------------------

/** @cupyx.jit.rawkernel elementwise_square: a grid-stride loop. */
export const elementwiseSquare = jit.rawkernel(function elementwise_square(x: gx.jit.Array, y: gx.jit.Array, size: number) {
  const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
  const ntid = jit.gridDim.x * jit.blockDim.x;
  for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
});

/** @cp.fuse elementwise_computation: sin(x) + cos(y) / sqrt(z) in one kernel. */
export const elementwiseComputation = gx.fuse(function elementwise_computation(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) {
  return gx.add(gx.sin(x), gx.div(gx.cos(y), gx.sqrt(z)));
});

/** @cp.fuse(kernel_name='squared_diff'), as methods; and with a final reduction (cupy.fuse allows one). */
export const squaredDiff = gx.fuse((x: gx.Tensor, y: gx.Tensor) => x.sub(y).mul(x.sub(y)), { name: 'squared_diff' });
export const sumSquaredDiff = gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.sum(gx.mul(gx.sub(x, y), gx.sub(x, y))), { name: 'sum_squared_diff' });

// --- The Numba CUDA notebook --------------------------------------------------

/** @vectorize(['int64(int64, int64)', 'float32(float32, float32)'], target='cuda') add_ufunc. */
export const addUfunc = gx.vectorize(['int64(int64, int64)', 'float32(float32, float32)'], function add_ufunc(x, y) {
  return x + y;
});

const SQRT_2PI = Math.sqrt(2 * Math.PI);
/** gaussian_pdf, closing over SQRT_2PI (inlined when compiled). */
export const gaussianPdf = gx.vectorize(['float32(float32, float32, float32)'], function gaussian_pdf(x, mean, sigma) {
  return Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI);
});

/** polar_to_cartesian, a device function returning a tuple, called by polar_distance. */
export const polarToCartesian = jit.device(function polar_to_cartesian(rho: number, theta: number) {
  const x = rho * Math.cos(theta);
  const y = rho * Math.sin(theta);
  return [x, y];
});
export const polarDistance = gx.vectorize(['float32(float32, float32, float32, float32)'], function polar_distance(rho1, theta1, rho2, theta2) {
  const [x1, y1] = polarToCartesian(rho1, theta1);
  const [x2, y2] = polarToCartesian(rho2, theta2);
  return ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5;
});

/** add_kernel with thread and block indices, and the same with grid(1) / gridsize(1). */
export const addKernel = jit.rawkernel(function add_kernel(x: gx.jit.Array, y: gx.jit.Array, out: gx.jit.Array) {
  const tx = jit.threadIdx.x;
  const ty = jit.blockIdx.x;
  const blockSize = jit.blockDim.x;
  const gridSize = jit.gridDim.x;
  const start = tx + ty * blockSize;
  const stride = blockSize * gridSize;
  for (let i = start; i < x.shape[0]; i += stride) out[i] = x[i] + y[i];
});
export const addKernelGrid = jit.rawkernel(function add_kernel_grid(x: gx.jit.Array, y: gx.jit.Array, out: gx.jit.Array) {
  const start = jit.grid(1);
  const stride = jit.gridsize(1);
  for (let i = start; i < x.shape[0]; i += stride) out[i] = x[i] + y[i];
});

/** thread_counter_race_condition and thread_counter_safe: every thread adds 1. */
export const threadCounterRace = jit.rawkernel(function thread_counter_race_condition(counter: gx.jit.Array) {
  counter[0] += 1;  // This is bad (threads overwrite each other's updates on a GPU)
});
export const threadCounterSafe = jit.rawkernel(function thread_counter_safe(counter: gx.jit.Array) {
  jit.atomic.add(counter, 0, 1);
});

/** The notebook's histogram (the debug example), with atomics. */
export const histogram = jit.rawkernel(function histogram(x: gx.jit.Array, xmin: number, xmax: number, histogramOut: gx.jit.Array) {
  const nbins = histogramOut.shape[0];
  const binWidth = (xmax - xmin) / nbins;
  const start = jit.grid(1);
  const stride = jit.gridsize(1);
  for (let i = start; i < x.shape[0]; i += stride) {
    const bin = Math.floor((x[i] - xmin) / binWidth);
    if (bin >= 0 && bin < nbins) jit.atomic.add(histogramOut, bin, 1);
  }
});

export const TILE_DIM = 32;
export const BLOCK_ROWS = 8;
const TILE_DIM_PADDED = TILE_DIM + 1;
/** The naive transpose, and the tile transpose through shared memory with syncthreads(). */
export const transpose = jit.rawkernel(function transpose(aIn: gx.jit.Array2d, aOut: gx.jit.Array2d) {
  const x = jit.blockIdx.x * TILE_DIM + jit.threadIdx.x;
  const y = jit.blockIdx.y * TILE_DIM + jit.threadIdx.y;
  for (let j = 0; j < TILE_DIM; j += BLOCK_ROWS) aOut[x][y + j] = aIn[y + j][x];
});
export const tileTranspose = jit.rawkernel(function tile_transpose(aIn: gx.jit.Array2d, aOut: gx.jit.Array2d) {
  const tile = jit.sharedArray([TILE_DIM, TILE_DIM_PADDED], 'int32');
  let x = jit.blockIdx.x * TILE_DIM + jit.threadIdx.x;
  let y = jit.blockIdx.y * TILE_DIM + jit.threadIdx.y;
  for (let j = 0; j < TILE_DIM; j += BLOCK_ROWS) tile[jit.threadIdx.y + j][jit.threadIdx.x] = aIn[y + j][x];
  jit.syncthreads();  // wait for all threads in the block to finish updating shared memory
  x = jit.blockIdx.y * TILE_DIM + jit.threadIdx.x;
  y = jit.blockIdx.x * TILE_DIM + jit.threadIdx.y;
  for (let j = 0; j < TILE_DIM; j += BLOCK_ROWS) aOut[y + j][x] = tile[jit.threadIdx.x][jit.threadIdx.y + j];
});

// --- Runs against references --------------------------------------------------

/** One example's result: the largest difference from its reference (0 for exact ones). */
export interface ExampleResult {
  name: string;
  maxError: number;
}

function maxDiff(got: ArrayLike<number | bigint>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Infinity;
  let m = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(Number(got[i]) - want[i]);
    m = Math.max(m, Number.isNaN(d) ? Infinity : d);
  }
  return m;
}

const read = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint>, Number);

/** Runs every example on `device` (sizes kept small enough for the CPU simulator with `small`). */
export function runExamples(device: gx.DeviceLike, small = false): ExampleResult[] {
  return gx.tidy(() => {
    gx.manualSeed(7);
    const out: ExampleResult[] = [];
    const n = small ? 3000 : 1 << 22;
    const x = gx.arange(n, { dtype: 'float32', device }).mul(1 / n);
    const xs = read(x);

    const y = gx.full([n], -1, { dtype: 'float32', device });  // poisoned first
    elementwiseSquare([small ? 3 : 128], [small ? 64 : 1024], [x, y, n]);
    out.push({ name: 'elementwise_square (RawKernel style)', maxError: maxDiff(read(y), xs.map((v) => Math.fround(v * v))) });
    y.fill_(-1);
    elementwiseSquare.configure(small ? 3 : 128, small ? 64 : 1024)(x, y, n);
    out.push({ name: 'elementwise_square (Numba style)', maxError: maxDiff(read(y), xs.map((v) => Math.fround(v * v))) });

    const a = gx.rand([n], { device }).add(0.5);
    const b = gx.rand([n], { device });
    const c = gx.rand([n], { device }).add(0.1);
    const [as, bs, cs] = [read(a), read(b), read(c)];
    out.push({ name: 'fuse elementwise_computation', maxError: maxDiff(read(elementwiseComputation(a, b, c)), as.map((v, i) => Math.sin(v) + Math.cos(bs[i]) / Math.sqrt(cs[i]))) });
    out.push({ name: 'fuse squared_diff', maxError: maxDiff(read(squaredDiff(a, b)), as.map((v, i) => (v - bs[i]) ** 2)) });
    const ssd = as.reduce((s, v, i) => s + (v - bs[i]) ** 2, 0);
    out.push({ name: 'fuse sum of squared_diff (relative)', maxError: Math.abs(read(sumSquaredDiff(a, b))[0] - ssd) / ssd });

    const ia = gx.randint(-1000, 1000, [1000], { device, dtype: 'int64' });
    const ib = gx.randint(-1000, 1000, [1000], { device, dtype: 'int64' });
    const [ias, ibs] = [read(ia), read(ib)];
    out.push({ name: 'add_ufunc int64', maxError: maxDiff(read(addUfunc(ia, ib)), ias.map((v, i) => v + ibs[i])) });
    out.push({ name: 'add_ufunc float32 broadcast', maxError: maxDiff(read(addUfunc(a.reshape(-1, 1).narrow(0, 0, 8), b.narrow(0, 0, 4))),
      Array.from({ length: 32 }, (_, k) => Math.fround(as[Math.floor(k / 4)] + bs[k % 4]))) });

    const g = gx.randn([n], { device });
    const gs = read(g);
    out.push({ name: 'gaussian_pdf (relative)', maxError: maxDiff(read(gaussianPdf(g, 0, 1)).map((v, i) => v / (Math.exp(-0.5 * gs[i] ** 2) / SQRT_2PI)), new Array(n).fill(1)) });

    const rho1 = gx.rand([n], { device }).add(0.5);
    const theta1 = gx.rand([n], { device }).mul(2 * Math.PI).sub(Math.PI);
    const rho2 = gx.rand([n], { device }).add(0.5);
    const theta2 = gx.rand([n], { device }).mul(2 * Math.PI).sub(Math.PI);
    const [r1, t1, r2, t2] = [rho1, theta1, rho2, theta2].map(read);
    out.push({ name: 'polar_distance (device function with a tuple)', maxError: maxDiff(read(polarDistance(rho1, theta1, rho2, theta2)),
      r1.map((r, i) => Math.hypot(r * Math.cos(t1[i]) - r2[i] * Math.cos(t2[i]), r * Math.sin(t1[i]) - r2[i] * Math.sin(t2[i])))) });

    const ax = gx.arange(n, { dtype: 'float32', device });
    const ay = ax.mul(2);
    const aout = gx.full([n], -1, { device });
    addKernel.configure(small ? 5 : 30, 128)(ax, ay, aout);
    out.push({ name: 'add_kernel', maxError: maxDiff(read(aout), read(ax).map((v) => 3 * v)) });
    aout.fill_(-1);
    addKernelGrid.configure(small ? 5 : 30, 128)(ax, ay, aout);
    out.push({ name: 'add_kernel with grid(1) / gridsize(1)', maxError: maxDiff(read(aout), read(ax).map((v) => 3 * v)) });

    const counter = gx.zeros([1], { dtype: 'int32', device });
    threadCounterSafe.configure(64, 64)(counter);
    out.push({ name: 'thread_counter_safe (atomics)', maxError: maxDiff(read(counter), [64 * 64]) });
    const raced = gx.zeros([1], { dtype: 'int32', device });
    threadCounterRace.configure(64, 64)(raced);
    const racedCount = read(raced)[0];
    out.push({ name: 'thread_counter_race_condition counts at most 4096', maxError: racedCount >= 1 && racedCount <= 4096 ? 0 : Infinity });

    const hx = gx.rand([n], { device });
    const hist = gx.zeros([10], { dtype: 'int32', device });
    histogram.configure(small ? 4 : 64, 128)(hx, 0, 1, hist);
    const want = new Array(10).fill(0);
    for (const v of read(hx)) {
      const bin = Math.floor(v / 0.1);
      if (bin >= 0 && bin < 10) want[bin]++;
    }
    out.push({ name: 'histogram (atomics)', maxError: maxDiff(read(hist), want) });

    const size = small ? 64 : 1024;
    const m = gx.arange(size * size, { dtype: 'int32', device }).reshape(size, size);
    const mt = read(m.transpose(0, 1).contiguous());
    const grid: [number, number] = [size / TILE_DIM, size / TILE_DIM];
    const t1out = gx.full([size, size], -1, { dtype: 'int32', device });
    transpose.configure(grid, [TILE_DIM, BLOCK_ROWS])(m, t1out);
    out.push({ name: 'transpose', maxError: maxDiff(read(t1out), mt) });
    const t2out = gx.full([size, size], -1, { dtype: 'int32', device });
    tileTranspose.configure(grid, [TILE_DIM, BLOCK_ROWS])(m, t2out);
    out.push({ name: 'tile_transpose (shared memory, syncthreads)', maxError: maxDiff(read(t2out), mt) });
    return out;
  });
}

if (require.main === module) {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  for (const r of runExamples(device, device === 'cpu')) console.log(`${r.maxError <= 1e-5 ? 'ok ' : 'BAD'} ${r.name}: max error ${r.maxError} [${device}]`);
}
