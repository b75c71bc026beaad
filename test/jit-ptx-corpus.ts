// Kernels that reach every PTX face of the jit (NOTE [ PTX path ] in
// lib/jit/emit-ptx.ts): every element dtype loaded and stored, strided
// tensors, control flow, shared and local arrays, atomics of each op and
// dtype, warp operations, the Math functions with a PTX face, device
// functions, integer arithmetic's edge cases. Each case builds fresh
// arguments (seeded random values, edge values among them) for a device, so
// test/jit-ptx.test.ts can run it on the simulator and on CUDA and compare.
import * as gx from '../lib';
import { rng } from './rng';

const { jit } = gx;
type Arg = gx.Tensor | number | boolean;

export interface PtxCase {
  name: string;
  kernel: gx.jit.JitKernel;
  grid: number;
  block: number;
  args(device: 'cpu' | 'cuda'): Arg[];
  /** Library math (CUDA's expf, sin ...): within its documented ulps of the simulator's JS Math, not bit for bit (LANGUAGE.md). */
  library: boolean;
}

const N = 64;

function values(dtype: gx.DType, seed: number, device: 'cpu' | 'cuda', n = N): gx.Tensor {
  const r = rng(seed);
  const edge = [0, -0, 1, -1, 0.5, -2.5, 1e30, -1e-30, NaN, Infinity, -Infinity, 65504, 3.4e38];
  const xs = Array.from({ length: n }, (_, i) => (i < edge.length ? edge[i] : (r() - 0.5) * 200));
  switch (dtype) {
    case 'bool': return gx.tensor(Uint8Array.from(xs, (v) => (v > 0 ? 1 : 0)), { dtype, device });
    case 'int8': case 'int16': case 'int32': case 'uint8': {
      const lim = dtype === 'int8' ? 128 : dtype === 'uint8' ? 256 : dtype === 'int16' ? 32768 : 2 ** 31;
      const ints = xs.map((v, i) => (i < 4 ? [lim - 1, dtype === 'uint8' ? 0 : -lim, 7, -7][i] : Math.trunc(Number.isFinite(v) ? v : 3)));
      return gx.tensor(Int32Array.from(ints), { device }).astype(dtype);
    }
    case 'int64': return gx.tensor(BigInt64Array.from(xs, (v, i) => (i === 0 ? 2n ** 63n - 1n : i === 1 ? -(2n ** 63n) : BigInt(Math.trunc(Number.isFinite(v) ? v : 5)))), { device });
    default: return gx.tensor(Float64Array.from(xs), { dtype: 'float64', device }).astype(dtype);
  }
}

const ELEMENT_DTYPES: gx.DType[] = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'];

const scale = jit.device((v: number, flip: number): number => (flip > 0 ? -v : v * 2));
// A device function taking a bool, written as plain JS (gx.jit.device's TypeScript face takes numbers).
// eslint-disable-next-line no-new-func
const pick = jit.device(new Function('v', 'on', 'return on ? v + 1 : v - 1;') as (...a: number[]) => number);

/** Every case, made fresh (kernel objects keep their specializations). */
export function ptxCases(): PtxCase[] {
  const cases: PtxCase[] = [];
  const add = (name: string, fn: (...a: never[]) => void, args: PtxCase['args'], grid = 2, block = 32): void => {
    cases.push({ name, kernel: jit.rawkernel(fn as (...a: unknown[]) => void, { name: name.replace(/\W/g, '_') }), grid, block, args, library: name.startsWith('library math') });
  };
  for (const d of ELEMENT_DTYPES) {
    const body = d === 'bool'
      ? (x: gx.jit.Array, y: gx.jit.Array, n: number) => {
        const i = jit.grid(1);
        if (i < n) y[i] = !x[i] || i % 3 === 0 ? 1 : 0;
      }
      : (x: gx.jit.Array, y: gx.jit.Array, n: number) => {
        const i = jit.grid(1);
        if (i < n) y[i] = x[i] + (i % 3) - 1;
      };
    add(`copy and bump ${d}`, body, (dev) => [values(d, 1, dev), gx.zeros([N], { dtype: d, device: dev }), N]);
  }
  add('grid-stride square, float32', (x: gx.jit.Array, y: gx.jit.Array, size: number) => {
    const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
    const ntid = jit.gridDim.x * jit.blockDim.x;
    for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
  }, (dev) => [values('float32', 2, dev), gx.zeros([N], { device: dev }), N], 1, 16);
  add('a transposed (strided) 2-d tensor', (x: gx.jit.Array2d, y: gx.jit.Array2d) => {
    const [i, j] = jit.grid(2);
    if (i < y.shape[0] && j < y.shape[1]) y[i][j] = x[i][j] * 3 - y.shape[1];
  }, (dev) => [values('float64', 3, dev).reshape([8, 8]).transpose(0, 1), gx.zeros([8, 8], { dtype: 'float64', device: dev })], 1, 8);
  add('float arithmetic, comparisons, select, && and ||', (a: gx.jit.Array, b: gx.jit.Array, out: gx.jit.Array) => {
    const i = jit.grid(1);
    const x = a[i], y = b[i];
    const t = (x < y || x !== x) && !(y >= 1) ? x / y : x * y - (x + y);
    out[i] = t === t ? Math.min(t, Math.max(x, -y)) + (x == y ? 1 : 0) + (x != y ? 2 : 0) : -1;
  }, (dev) => [values('float32', 4, dev), values('float32', 5, dev), gx.zeros([N], { device: dev })]);
  add('int32 wrap, %, **, shifts and bits', (a: gx.jit.Array, b: gx.jit.Array, out: gx.jit.Array) => {
    const i = jit.grid(1);
    const x = a[i] | 0, y = b[i] | 0;
    out[i] = ((x * y + 2147483647) ^ (x % y)) + (x << y) + (x >> (y & 7)) + (x >>> 3) + ((y & 3) ** (i % 5)) + (x ** -1) + ((-1) ** y) + ~x;
  }, (dev) => [values('int32', 6, dev), values('int32', 7, dev), gx.zeros([N], { dtype: 'int32', device: dev })]);
  add('int64 wrap, %, ** and shifts', (a: gx.jit.Array, b: gx.jit.Array, out: gx.jit.Array) => {
    const i = jit.grid(1);
    const x = a[i], y = b[i];
    out[i] = x * y + (x % y) + (x << (y & 63)) + (x >> 5) + (x >>> (i % 64)) + ((y % 7) ** (i % 9)) + Math.abs(x) + Math.sign(y) + Math.min(x, y) - Math.max(x, 0);
  }, (dev) => [values('int64', 8, dev), values('int64', 9, dev), gx.zeros([N], { dtype: 'int64', device: dev })]);
  for (const d of ['float32', 'float64'] as const) {
    add(`Math with PTX faces, ${d}`, (a: gx.jit.Array, out: gx.jit.Array) => {
      const i = jit.grid(1);
      const x = a[i];
      out[i] = Math.sqrt(Math.abs(x)) + Math.floor(x) * 2 + Math.ceil(x) * 3 + Math.trunc(x) * 5 + Math.round(x) * 7 + Math.sign(x) + Math.min(x, -0) - Math.max(0, x);
    }, (dev) => [values(d, 10, dev), gx.zeros([N], { dtype: d, device: dev })]);
    add(`library math, ${d}`, (a: gx.jit.Array, b: gx.jit.Array, out: gx.jit.Array) => {
      const i = jit.grid(1);
      const x = a[i], y = b[i];
      let s = Math.exp(x) + Math.log(y) + Math.log1p(x) + Math.expm1(x) + Math.log2(y) + Math.log10(y) + Math.cbrt(x);
      s += Math.sin(x) + Math.cos(y) + Math.tan(x) + Math.asin(x / 100) + Math.acos(y / 100) + Math.atan(x);
      s += Math.sinh(x / 10) + Math.cosh(y / 10) + Math.tanh(x) + Math.asinh(x) + Math.acosh(y) + Math.atanh(x / 100);
      out[3 * i] = s;
      out[3 * i + 1] = Math.atan2(x, y) + Math.pow(Math.abs(x), y / 50) + Math.hypot(x, y);
      out[3 * i + 2] = (x % y) + Math.abs(x) ** 0.3;
    }, (dev) => [values(d, 19, dev), values(d, 20, dev), gx.zeros([3 * N], { dtype: d, device: dev })]);
    add(`float to integer conversions, ${d}`, (a: gx.jit.Array, o32: gx.jit.Array, o64: gx.jit.Array, ob: gx.jit.Array) => {
      const i = jit.grid(1);
      o32[i] = a[i] * 1e9;
      o64[i] = a[i] * 1e17;
      ob[i] = a[i] ? 1 : 0;
    }, (dev) => [values(d, 11, dev), gx.zeros([N], { dtype: 'int32', device: dev }), gx.zeros([N], { dtype: 'int64', device: dev }), gx.zeros([N], { dtype: 'uint8', device: dev })]);
  }
  add('shared memory, barriers, while / do / break / continue', (x: gx.jit.Array, out: gx.jit.Array) => {
    const s = jit.sharedArray(32, 'float32');
    const t = jit.threadIdx.x;
    s[t] = x[jit.grid(1)];
    jit.syncthreads();
    let stride = 16;
    while (stride > 0) {
      if (t < stride) s[t] += s[t + stride];
      jit.syncthreads();
      stride >>= 1;
    }
    let k = 0, acc = 0;
    do {
      k++;
      if (k % 2 === 0) continue;
      if (k > 7) break;
      acc += k;
    } while (k < 10);
    jit.threadfence();
    if (t === 0) out[jit.blockIdx.x] = s[0] + acc;
  }, (dev) => [values('float32', 12, dev).nanToNum({ nan: 0, posinf: 0, neginf: 0 }), gx.zeros([2], { device: dev })]);
  add('a local array', (x: gx.jit.Array, out: gx.jit.Array) => {
    const l = jit.localArray(4, 'float64');
    const i = jit.grid(1);
    for (let k = 0; k < 4; k++) l[k] = x[i] * k;
    out[i] = l[3] - l[1];
  }, (dev) => [values('float64', 13, dev), gx.zeros([N], { dtype: 'float64', device: dev })]);
  for (const d of ['int32', 'int64', 'float32', 'float64'] as const) {
    const bits = d === 'int32' || d === 'int64';
    add(`atomics, ${d}`, (x: gx.jit.Array, acc: gx.jit.Array, old: gx.jit.Array) => {
      const i = jit.grid(1);
      const v = x[i];
      jit.atomic.add(acc, 0, 1);
      jit.atomic.sub(acc, 1, 2);
      jit.atomic.min(acc, 2, v);
      jit.atomic.max(acc, 3, v);
      // One thread each for cas and exch: what they return depends on which thread comes first otherwise.
      if (i === 0) old[i] = jit.atomic.cas(acc, 4, 0, 7);
      if (i === 5) old[i] = jit.atomic.exch(acc, 5, v);
    }, (dev) => [values(d, 14, dev).nanToNum({ nan: 0, posinf: 0, neginf: 0 }).clamp(-1000, 1000).round(), gx.zeros([6], { dtype: d, device: dev }), gx.zeros([N], { dtype: d, device: dev })]);
    if (bits) {
      add(`bitwise atomics, ${d}`, (x: gx.jit.Array, acc: gx.jit.Array) => {
        const i = jit.grid(1);
        jit.atomic.and(acc, 0, x[i]);
        jit.atomic.or(acc, 1, x[i]);
        jit.atomic.xor(acc, 2, x[i]);
      }, (dev) => [values(d, 15, dev), gx.full([3], -1, { dtype: d, device: dev })]);
    }
  }
  add('atomics on a shared array', (x: gx.jit.Array, out: gx.jit.Array) => {
    const s = jit.sharedArray(2, 'int32');
    if (jit.threadIdx.x < 2) s[jit.threadIdx.x] = 0;
    jit.syncthreads();
    jit.atomic.add(s, 0, x[jit.grid(1)]);
    jit.atomic.max(s, 1, x[jit.grid(1)]);
    jit.syncthreads();
    if (jit.threadIdx.x === 0) out[jit.blockIdx.x] = s[0] * 1000 + s[1];
  }, (dev) => [values('int8', 16, dev).astype('int32'), gx.zeros([2], { dtype: 'int32', device: dev })]);
  add('warp operations', (x: gx.jit.Array, out: gx.jit.Array) => {
    const i = jit.grid(1);
    let v = x[i];
    for (let o = 16; o > 0; o >>= 1) v += jit.shfl.down(v, o);
    const w = jit.shfl.xor(x[i] * 1.5, 1) + jit.shfl.up(i, 3) + jit.shfl.sync(x[i], 5);
    out[4 * i] = v;
    out[4 * i + 1] = w;
    out[4 * i + 2] = jit.ballot(x[i] > 0) + jit.laneId();
    out[4 * i + 3] = jit.activemask();
  }, (dev) => [values('float64', 17, dev).nanToNum({ nan: 0, posinf: 0, neginf: 0 }).clamp(-100, 100), gx.zeros([4 * N], { dtype: 'float64', device: dev })]);
  // eslint-disable-next-line no-new-func
  const calls = new Function('jit', 'scale', 'pick', `return function device_calls(x, out) {
    const i = jit.grid(1);
    out[i] = scale(x[i], i % 2) + scale(i, 0) + pick(x[i], i % 3 === 0);
  }`) as (...a: unknown[]) => (x: gx.jit.Array, out: gx.jit.Array) => void;
  add('device functions, one with a bool parameter', calls(jit, scale, pick), (dev) => [values('float32', 18, dev), gx.zeros([N], { device: dev })]);
  add('number and bool parameters', (out: gx.jit.Array, k: number, f: number, on: boolean) => {
    const i = jit.grid(1);
    out[i] = on ? i * k + f : -f;
  }, (dev) => [gx.zeros([N], { dtype: 'float64', device: dev }), 3, 0.25, true]);
  return cases;
}
