// What the linalg decomposition tests share: pathTest (a test on every path:
// the CPU's LAPACK and built-in code, CUDA), inputs, and plain-JS references
// over row-major flat arrays.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { setCpuBlasEnabled } from '../lib/ops/backends';
import { REQUIRE_CUDA, rng } from './helpers';

export type Device = 'cpu' | 'cuda';
export type FloatDType = 'float32' | 'float64';
export const DTYPES: readonly FloatDType[] = ['float64', 'float32'];
export const EPS: Record<FloatDType, number> = { float64: 2 ** -52, float32: 2 ** -23 };

export const HAVE_LAPACK = !gx.backends().cpu.lapack.startsWith('built-in');
export const PATHS = [...(HAVE_LAPACK ? ['cpu lapack'] : []), 'cpu builtin', 'cuda'] as const;
export type Path = (typeof PATHS)[number];

/**
 * A test run on every path: the CPU with its LAPACK on (when loaded) and off,
 * and CUDA; it fails when it leaves more live tensors than it found.
 */
export function pathTest(title: string, body: (t: ExecutionContext, device: Device, path: Path) => void): void {
  for (const path of PATHS) {
    const name = `${title} [${path}]`;
    if (path === 'cuda' && !gx.cuda.isAvailable()) {
      const reason = gx.cuda.unavailableReason();
      if (REQUIRE_CUDA) test(name, (t) => t.fail(`GPUEXT_REQUIRE_CUDA=1 but CUDA is unavailable: ${reason}`));
      else test.skip(`${name} (skipped: ${reason})`, () => undefined);
      continue;
    }
    test(name, (t) => {
      const device: Device = path === 'cuda' ? 'cuda' : 'cpu';
      const live = (): number => gx.memory.stats('cpu').liveTensors + (device === 'cuda' ? gx.memory.stats('cuda').liveTensors : 0);
      const before = live();
      const was = setCpuBlasEnabled(path !== 'cpu builtin');
      try {
        body(t, device, path);
      } finally {
        setCpuBlasEnabled(was);
      }
      t.is(live(), before, 'no tensor leaked');
    });
  }
}

// --- inputs and plain-JS references (row-major flat arrays) ------------------------------------------------------

/** n values uniform in [-1, 1), reproducible from `seed`. */
export function uniform(n: number, seed: number): Float64Array {
  const r = rng(seed);
  return Float64Array.from({ length: n }, () => 2 * r() - 1);
}

/** A tensor of `values`, and the values as it holds them (rounded to float32 for float32). */
export function input(values: ArrayLike<number>, shape: number[], dtype: FloatDType, device: Device): [gx.Tensor, number[]] {
  const t = gx.tensor(dtype === 'float32' ? Float32Array.from(values) : Float64Array.from(values), { shape, device });
  return [t, read(t)];
}

/** A tensor's values in row-major order (through its strides). */
export function read(t: gx.Tensor): number[] {
  using c = t.contiguous();
  return Array.from(c.toArraySync() as ArrayLike<number>);
}

/** The m x k matrix a times the k x n matrix b. */
export function mm(a: ArrayLike<number>, b: ArrayLike<number>, m: number, k: number, n: number): number[] {
  const c = new Array<number>(m * n).fill(0);
  for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

export function transposed(a: ArrayLike<number>, rows: number, cols: number): number[] {
  return Array.from({ length: rows * cols }, (_, x) => a[(x % rows) * cols + Math.floor(x / rows)]);
}

export const maxAbs = (a: ArrayLike<number>): number => Array.from(a).reduce((m, x) => Math.max(m, Math.abs(x)), 0);
export const frobenius = (a: ArrayLike<number>): number => Math.sqrt(Array.from(a).reduce((s, x) => s + x * x, 0));
export const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return a.length === b.length ? d : Infinity;
};

/** max |Q^T Q - I| for the m x c matrix q. */
export function orthoError(q: ArrayLike<number>, m: number, c: number): number {
  let e = 0;
  for (let x = 0; x < c; x++) {
    for (let y = 0; y < c; y++) {
      let d = 0;
      for (let i = 0; i < m; i++) d += q[i * c + x] * q[i * c + y];
      e = Math.max(e, Math.abs(d - (x === y ? 1 : 0)));
    }
  }
  return e;
}

/** The matrices of a batch [count * rows * cols], one by one. */
export function matrices(v: readonly number[], rows: number, cols: number): number[][] {
  const out: number[][] = [];
  for (let o = 0; o < v.length; o += rows * cols) out.push(v.slice(o, o + rows * cols));
  return out;
}

/** Asserts `fn` throws `cls` with a message matching `re`. */
export function throwsLike(t: ExecutionContext, fn: () => unknown, cls: typeof Error, re: RegExp, what: string): void {
  const err = t.throws(fn, undefined, what);
  t.true(err instanceof cls, `${what}: expected ${cls.name}, got ${err?.constructor.name}: ${err?.message}`);
  t.regex(err?.message ?? '', re, what);
}

// --- shared by the square-matrix ops -----------------------------------------------------------------------------

/** A well-conditioned n x n matrix: uniform entries plus n on the diagonal. */
export function wellConditioned(n: number, seed: number): Float64Array {
  const a = uniform(n * n, seed);
  for (let i = 0; i < n; i++) a[i * n + i] += n;
  return a;
}

/** A symmetric positive-definite n x n matrix: M M^T + n I. */
export function spd(n: number, seed: number): Float64Array {
  const m = uniform(n * n, seed);
  const a = Float64Array.from(mm(m, transposed(m, n, n), n, n, n));
  for (let i = 0; i < n; i++) a[i * n + i] += n;
  return a;
}

/** A symmetric n x n matrix. */
export function symmetric(n: number, seed: number): Float64Array {
  const m = uniform(n * n, seed);
  return Float64Array.from({ length: n * n }, (_, x) => (m[x] + m[(x % n) * n + Math.floor(x / n)]) / 2);
}

/** `a` with the triangle strictly above (or below) the diagonal replaced by large junk: what must not be read. */
export function junkTriangle(a: ArrayLike<number>, n: number, above: boolean, seed: number): Float64Array {
  const junk = uniform(n * n, seed);
  return Float64Array.from({ length: n * n }, (_, x) => {
    const i = Math.floor(x / n), j = x % n;
    return (above ? j > i : j < i) ? 1000 * junk[x] : a[x];
  });
}

/** det by LU with partial pivoting in double precision. */
export function detReference(a: ArrayLike<number>, n: number): number {
  const w = Array.from(a);
  let det = 1;
  for (let j = 0; j < n; j++) {
    let p = j;
    for (let i = j + 1; i < n; i++) if (Math.abs(w[i * n + j]) > Math.abs(w[p * n + j])) p = i;
    if (w[p * n + j] === 0) return 0;
    if (p !== j) {
      for (let c = 0; c < n; c++) [w[j * n + c], w[p * n + c]] = [w[p * n + c], w[j * n + c]];
      det = -det;
    }
    det *= w[j * n + j];
    for (let i = j + 1; i < n; i++) {
      const f = w[i * n + j] / w[j * n + j];
      for (let c = j; c < n; c++) w[i * n + c] -= f * w[j * n + c];
    }
  }
  return det;
}

/** An n x n orthogonal matrix (Gram-Schmidt of random columns), row-major. */
export function orthogonal(n: number, seed: number): number[] {
  const cols: number[][] = [];
  const r = uniform(n * n * 2, seed);
  for (let j = 0; cols.length < n; j++) {
    const v = Array.from({ length: n }, (_, i) => r[(j * n + i) % r.length]);
    for (const q of cols) {
      const d = q.reduce((s, x, i) => s + x * v[i], 0);
      for (let i = 0; i < n; i++) v[i] -= d * q[i];
    }
    const norm = Math.hypot(...v);
    if (norm > 1e-8) cols.push(v.map((x) => x / norm));
  }
  return Array.from({ length: n * n }, (_, x) => cols[x % n][Math.floor(x / n)]);
}

export function identity(n: number): number[] {
  return Array.from({ length: n * n }, (_, x) => (x % (n + 1) === 0 ? 1 : 0));
}

/** max |A X - B| for the n x n a and the n x k x and b, against a bound for its rounding. */
export function residual(a: readonly number[], x: readonly number[], b: readonly number[], n: number, k: number, dtype: FloatDType): [number, number] {
  const err = maxDiff(mm(a, x, n, n, k), b);
  return [err, 1000 * EPS[dtype] * n * (maxAbs(a) * maxAbs(x) + maxAbs(b))];
}

/** Checks eigenvalues w (ascending) and eigenvectors v (columns) of the symmetric n x n a. */
export function checkEigh(t: ExecutionContext, what: string, a: readonly number[], w: readonly number[], v: readonly number[], n: number, dtype: FloatDType): void {
  const tol = 200 * EPS[dtype] * n;
  t.true(w.every((x, i) => i === 0 || x >= w[i - 1]), `${what}: ascending ${w}`);
  t.true(orthoError(v, n, n) <= tol, `${what}: V^T V = I (${orthoError(v, n, n)})`);
  const av = mm(a, v, n, n, n);
  const vw = v.map((x, k) => x * w[k % n]);
  t.true(maxDiff(av, vw) <= tol * Math.max(maxAbs(a), 1e-300), `${what}: |A V - V diag(w)| = ${maxDiff(av, vw)}`);
}
