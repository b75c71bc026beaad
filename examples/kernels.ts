// Run-time kernels, from the reference material (CuPy course, Numba CUDA
// notebook, Dask + CuPy kernels): each example builds its kernel, runs it on
// the GPU, and checks the result against a CPU reference. `npm run tour:kernels`
// (or node dist/examples/kernels.js) runs them all; test/rtc.test.ts calls them.
import * as gx from '../lib';

export interface Check {
  name: string;
  maxError: number;
  detail?: string;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return a.length === b.length ? m : Infinity;
}

function rand(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + ((hi - lo) * s) / 2 ** 32;
  });
}

/** A 2-D matrix plus a 1-D row vector, broadcast by hand with a 2-D grid (CuPy course). */
export function broadcastAdd(rows = 300, cols = 500): Check {
  const k = new gx.RawKernel(`
extern "C" __global__ void add_rows(const float* m, const float* v, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[r * cols + c] = m[r * cols + c] + v[c];
}`, 'add_rows');
  const m = rand(rows * cols, 1), v = rand(cols, 2);
  using tm = gx.tensor(m, { device: 'cuda', shape: [rows, cols] });
  using tv = gx.tensor(v, { device: 'cuda' });
  using out = gx.full([rows, cols], Number.NaN, { device: 'cuda' });
  k.launch([Math.ceil(cols / 32), Math.ceil(rows / 8)], [32, 8], [tm, tv, out, rows, cols]);
  const want = Float32Array.from(m, (x, i) => x + v[i % cols]);
  return { name: '2-D + 1-D broadcast add (RawKernel, 2-D grid)', maxError: maxAbsDiff(out.toArraySync() as Float32Array, want) };
}

/** Squares in place with a grid-stride loop: any grid covers any n (Numba notebook). */
export function gridStrideSquare(n = 1_000_003): Check {
  const k = new gx.RawKernel(`
extern "C" __global__ void square(float* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    x[i] = x[i] * x[i];
}`, 'square');
  const data = rand(n, 3, -4, 4);
  using x = gx.tensor(data, { device: 'cuda' });
  k.launch([64], [256], [x, n]);  // 16384 threads for a million elements
  return { name: 'grid-stride square (RawKernel)', maxError: maxAbsDiff(x.toArraySync() as Float32Array, data.map((v) => Math.fround(v * v))) };
}

/** squared_diff and sin(x) + cos(y) / sqrt(z) as elementwise kernels, with broadcasting (CuPy course). */
export function elementwiseExamples(): Check[] {
  const squaredDiff = gx.elementwiseKernel('T x, T y', 'T z', 'z = (x - y) * (x - y)', { name: 'squared_diff' });
  const trig = gx.elementwiseKernel('float32 x, float32 y, float32 z', 'float32 out', 'out = sinf(x) + cosf(y) / sqrtf(z)', { name: 'trig' });
  const rows = 200, cols = 300;
  const a = rand(rows * cols, 4), b = rand(cols, 5);
  using ta = gx.tensor(a, { device: 'cuda', shape: [rows, cols] });
  using tb = gx.tensor(b, { device: 'cuda' });  // broadcast over rows
  using d = squaredDiff(ta, tb) as gx.Tensor;
  const wantD = Float32Array.from(a, (x, i) => Math.fround(Math.fround(x - b[i % cols]) ** 2));
  const x = rand(1000, 6), y = rand(1000, 7), z = rand(1000, 8, 0.5, 2);
  using tx = gx.tensor(x, { device: 'cuda' });
  using ty = gx.tensor(y, { device: 'cuda' });
  using tz = gx.tensor(z, { device: 'cuda' });
  using o = trig(tx, ty, tz) as gx.Tensor;
  const wantO = Float32Array.from(x, (v, i) => Math.sin(v) + Math.cos(y[i]) / Math.sqrt(z[i]));
  // float64 through the same T placeholder: a second compiled variant.
  using a64 = gx.tensor(new Float64Array([1, 2, 3]), { device: 'cuda' });
  using b64 = gx.tensor(new Float64Array([0.5, 0.5, 0.5]), { device: 'cuda' });
  using d64 = squaredDiff(a64, b64) as gx.Tensor;
  return [
    { name: 'squared_diff, float32, broadcast (elementwiseKernel)', maxError: maxAbsDiff(d.toArraySync() as Float32Array, wantD) },
    { name: 'sin(x) + cos(y) / sqrt(z) (elementwiseKernel)', maxError: maxAbsDiff(o.toArraySync() as Float32Array, wantO) },
    { name: 'squared_diff, float64 (same kernel, T = double)', maxError: maxAbsDiff(d64.toArraySync() as Float64Array, [0.25, 2.25, 6.25]) },
  ];
}

/** The Gaussian PDF and the polar distance of two points, as elementwise kernels (Dask + CuPy kernels). */
export function gaussianAndPolar(): Check[] {
  const pdf = gx.elementwiseKernel('T x, T mean, T sigma', 'T p',
    'p = exp(-(x - mean) * (x - mean) / (2 * sigma * sigma)) / (sigma * sqrt(2 * 3.141592653589793))', { name: 'gaussian_pdf' });
  const polar = gx.elementwiseKernel('T r1, T t1, T r2, T t2', 'T d',
    'd = sqrt(r1 * r1 + r2 * r2 - 2 * r1 * r2 * cos(t1 - t2))', { name: 'polar_distance' });
  const n = 4096;
  const x = new Float64Array(rand(n, 9, -5, 5));
  using tx = gx.tensor(x, { device: 'cuda' });
  using p = pdf(tx, 1.5, 0.75) as gx.Tensor;
  const wantP = Array.from(x, (v) => Math.exp(-((v - 1.5) ** 2) / (2 * 0.75 ** 2)) / (0.75 * Math.sqrt(2 * Math.PI)));
  const r1 = new Float64Array(rand(n, 10, 0, 3)), t1 = new Float64Array(rand(n, 11, 0, 6.28));
  const r2 = new Float64Array(rand(n, 12, 0, 3)), t2 = new Float64Array(rand(n, 13, 0, 6.28));
  const ts = [r1, t1, r2, t2].map((a) => gx.tensor(a, { device: 'cuda' }));
  using d = polar(ts[0], ts[1], ts[2], ts[3]) as gx.Tensor;
  ts.forEach((t) => t.dispose());
  const wantD = Array.from(r1, (_, i) => Math.sqrt(r1[i] ** 2 + r2[i] ** 2 - 2 * r1[i] * r2[i] * Math.cos(t1[i] - t2[i])));
  return [
    { name: 'Gaussian PDF, float64, scalar parameters (elementwiseKernel)', maxError: maxAbsDiff(p.toArraySync() as Float64Array, wantP) },
    { name: 'polar distance, float64 (elementwiseKernel)', maxError: maxAbsDiff(d.toArraySync() as Float64Array, wantD) },
  ];
}

const TRANSPOSE_SRC = `
#define TILE 32
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * TILE + threadIdx.x;
  for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
    const int r = blockIdx.y * TILE + j;
    if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
  }
}
// A 32x33 shared tile: reads and writes both coalesced, and the extra column
// keeps the column reads of the tile free of shared-memory bank conflicts.
extern "C" __global__ void transpose_tiled(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int c = blockIdx.x * TILE + threadIdx.x;
  for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
    const int r = blockIdx.y * TILE + j;
    if (r < rows && c < cols) tile[j][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  c = blockIdx.y * TILE + threadIdx.x;  // now a column of the output = a row index of the input
  for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
    const int r = blockIdx.x * TILE + j;
    if (r < cols && c < rows) out[r * rows + c] = tile[threadIdx.x][j];
  }
}`;

/** Matrix transpose, naive and with a 32x33 shared tile (CuPy course); returns both checks and their times. */
export function transposes(rows = 4096, cols = 4096): { checks: Check[]; naiveMs: number; tiledMs: number } {
  const mod = new gx.RawModule(TRANSPOSE_SRC);
  const naive = mod.getFunction('transpose_naive');
  const tiled = mod.getFunction('transpose_tiled');
  const data = rand(rows * cols, 14);
  using input = gx.tensor(data, { device: 'cuda', shape: [rows, cols] });
  using out = gx.empty([cols, rows], { device: 'cuda' });
  const grid: [number, number] = [Math.ceil(cols / 32), Math.ceil(rows / 32)];
  const time = (k: gx.RawKernel): number => {
    for (let i = 0; i < 3; i++) k.launch(grid, [32, 8], [input, out, rows, cols]);
    const r = gx.benchmark(() => k.launch(grid, [32, 8], [input, out, rows, cols]), { nWarmup: 2, nRepeat: 20 });
    return r.gpu?.median ?? r.cpu.median;
  };
  const want = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) want[c * rows + r] = data[r * cols + c];
  const naiveMs = time(naive);
  const e1 = maxAbsDiff(out.toArraySync() as Float32Array, want);
  out.fill_(Number.NaN);
  const tiledMs = time(tiled);
  const e2 = maxAbsDiff(out.toArraySync() as Float32Array, want);
  return {
    checks: [
      { name: 'transpose, naive (RawModule)', maxError: e1, detail: `${naiveMs.toFixed(3)} ms` },
      { name: 'transpose, 32x33 shared tile (RawModule)', maxError: e2, detail: `${tiledMs.toFixed(3)} ms, ${(naiveMs / tiledMs).toFixed(2)}x faster than naive` },
    ],
    naiveMs,
    tiledMs,
  };
}

/** A counter incremented by every thread: racy `+= 1` loses updates, atomicAdd does not (Numba notebook). */
export function counters(threads = 1 << 20): { racy: number; atomic: number; expected: number } {
  const k = new gx.RawKernel(`
extern "C" __global__ void count(int* racy, int* atomic, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    racy[0] += 1;            // read-modify-write races with every other thread
    atomicAdd(atomic, 1);    // one indivisible update
  }
}`, 'count');
  using racy = gx.zeros([1], { dtype: 'int32', device: 'cuda' });
  using atomic = gx.zeros([1], { dtype: 'int32', device: 'cuda' });
  k.launch([Math.ceil(threads / 256)], [256], [racy, atomic, threads]);
  return { racy: Number(racy.item()), atomic: Number(atomic.item()), expected: threads };
}

/** Templates by name expression, and a __constant__ global written from JS. */
export function templatesAndConstants(): Check[] {
  const mod = new gx.RawModule(`
__constant__ float coeffs[4];
template <typename T>
__global__ void poly(const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(coeffs[0]) + x[i] * (T(coeffs[1]) + x[i] * (T(coeffs[2]) + x[i] * T(coeffs[3])));
}`, { nameExpressions: ['poly<float>', 'poly<double>'] });
  mod.setGlobal('coeffs', new Float32Array([1, -2, 0.5, 0.25]));
  const back = new Float32Array(mod.getGlobalBytes('coeffs'));
  const f32 = mod.getFunction('poly<float>', { params: ['const float*', 'float*', 'int'] });
  const f64 = mod.getFunction('poly<double>', { params: ['const double*', 'double*', 'int'] });
  const xs = [-1, 0, 0.5, 2];
  const want = xs.map((x) => 1 + x * (-2 + x * (0.5 + x * 0.25)));
  using x32 = gx.tensor(xs, { device: 'cuda' });
  using y32 = gx.empty([4], { device: 'cuda' });
  f32.launch([1], [32], [x32, y32, 4]);
  using x64 = gx.tensor(xs, { dtype: 'float64', device: 'cuda' });
  using y64 = gx.empty([4], { dtype: 'float64', device: 'cuda' });
  f64.launch([1], [32], [x64, y64, 4]);
  return [
    { name: '__constant__ coeffs written and read back (RawModule)', maxError: maxAbsDiff(back, [1, -2, 0.5, 0.25]) },
    { name: 'template poly<float> by name expression', maxError: maxAbsDiff(y32.toArraySync() as Float32Array, want) },
    { name: 'template poly<double> by name expression', maxError: maxAbsDiff(y64.toArraySync() as Float64Array, want) },
  ];
}

function main(): void {
  if (!gx.cuda.isAvailable()) {
    console.log(`run-time kernels need a GPU to run (${gx.cuda.unavailableReason()}); compiling works without one`);
    return;
  }
  const checks = [broadcastAdd(), gridStrideSquare(), ...elementwiseExamples(), ...gaussianAndPolar(), ...transposes().checks, ...templatesAndConstants()];
  for (const c of checks) console.log(`${c.maxError <= 1e-5 ? 'ok  ' : 'FAIL'} ${c.name}: max error ${c.maxError.toExponential(2)}${c.detail ? `; ${c.detail}` : ''}`);
  const cnt = counters();
  console.log(`counter over ${cnt.expected} threads: racy ${cnt.racy}, atomicAdd ${cnt.atomic}`);
}

if (require.main === module) main();
