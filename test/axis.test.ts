// One word for an axis (issue 19): every exported op and Tensor method that
// takes an axis is called in each of its forms (NOTE [ Axis forms ] in
// lib/ops/axes.ts) on a random tensor, and each form must give what a plain
// JS reference gives; `{ dim }`, the old spelling, must still work (with one
// DeprecationWarning per process, checked first, before the cases). The walk at the bottom finds the axis-taking functions
// from the exports themselves (a parameter named axis/axes), so a new one
// fails until it has a case here, and no export may name a parameter dim.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, type TestDevice } from './helpers';
import { close, make, randomIn } from './ops-reference';

interface Arr {
  shape: number[];
  values: number[];
}

// --- references -------------------------------------------------------------------

const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
const wrap = (a: number, n: number): number => (a < 0 ? a + n : a);

/** Row-major strides of a contiguous shape. */
function strides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/** The multi-index of flat index i. */
function unravel(i: number, shape: readonly number[]): number[] {
  const st = strides(shape);
  return shape.map((_, d) => Math.floor(i / st[d]) % shape[d]);
}

/** Each line over `axes` (kept axes in row-major order) reduced to one value by f. */
function reduceRef(x: Arr, axes: readonly number[], f: (line: number[]) => number): Arr {
  const ax = axes.map((a) => wrap(a, x.shape.length));
  const kept = x.shape.map((_, d) => d).filter((d) => !ax.includes(d));
  const outShape = kept.map((d) => x.shape[d]);
  const lines: number[][] = Array.from({ length: numel(outShape) }, () => []);
  const ost = strides(outShape);
  x.values.forEach((v, i) => {
    const idx = unravel(i, x.shape);
    lines[kept.reduce((acc, d, k) => acc + idx[d] * ost[k], 0)].push(v);
  });
  return { shape: outShape, values: lines.map(f) };
}

/** Each line along `axis` replaced by f(line). */
function alongRef(x: Arr, axis: number, f: (line: number[]) => number[]): Arr {
  const a = wrap(axis, x.shape.length);
  const st = strides(x.shape);
  const out = x.values.slice();
  for (let i = 0; i < x.values.length; i++) {
    if (unravel(i, x.shape)[a] !== 0) continue;
    const at = Array.from({ length: x.shape[a] }, (_, k) => i + k * st[a]);
    f(at.map((j) => x.values[j])).forEach((v, k) => { out[at[k]] = v; });
  }
  return { shape: x.shape.slice(), values: out };
}

/** out[i0, i1, ...] = x[i at perm]: the result's axis k is x's axis perm[k]. */
function permuteRef(x: Arr, perm: readonly number[]): Arr {
  const p = perm.map((a) => wrap(a, x.shape.length));
  const shape = p.map((d) => x.shape[d]);
  const st = strides(x.shape);
  const values = Array.from({ length: numel(shape) }, (_, i) => x.values[unravel(i, shape).reduce((acc, v, k) => acc + v * st[p[k]], 0)]);
  return { shape, values };
}

/** x's elements at `start, start + step, ...` (count of them) along `axis`. */
function takeRef(x: Arr, axis: number, start: number, count: number, step = 1): Arr {
  const a = wrap(axis, x.shape.length);
  const shape = x.shape.slice();
  shape[a] = count;
  const st = strides(x.shape);
  const values = Array.from({ length: numel(shape) }, (_, i) => {
    const idx = unravel(i, shape);
    idx[a] = start + idx[a] * step;
    return x.values[idx.reduce((acc, v, k) => acc + v * st[k], 0)];
  });
  return { shape, values };
}

function catRef(xs: readonly Arr[], axis: number): Arr {
  const a = wrap(axis, xs[0].shape.length);
  const outer = numel(xs[0].shape.slice(0, a));
  const values: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (const x of xs) {
      const inner = numel(x.shape.slice(a));
      values.push(...x.values.slice(o * inner, (o + 1) * inner));
    }
  }
  const shape = xs[0].shape.slice();
  shape[a] = xs.reduce((acc, x) => acc + x.shape[a], 0);
  return { shape, values };
}

const reshaped = (x: Arr, shape: number[]): Arr => ({ shape, values: x.values });
const sum = (l: number[]): number => l.reduce((a, b) => a + b, 0);
const mean = (l: number[]): number => sum(l) / l.length;
const variance = (l: number[]): number => sum(l.map((v) => (v - mean(l)) ** 2)) / (l.length - 1);
const lse = (l: number[]): number => Math.max(...l) + Math.log(sum(l.map((v) => Math.exp(v - Math.max(...l)))));
const argOf = (l: number[], better: (a: number, b: number) => boolean): number => l.reduce((best, v, i) => (better(v, l[best]) ? i : best), 0);
const listAxes = (a: unknown): number[] => (typeof a === 'number' ? [a] : (a as number[]));

// --- the cases ----------------------------------------------------------------------

/**
 * How an op takes its axis: 'one' (its only argument: positional or { axis },
 * a number), 'many' (the same, a number or an array), 'positional' (several
 * axis arguments in fixed places: positional only).
 */
type Form = 'one' | 'many' | 'positional';

interface Case {
  form: Form;
  /** The argument lists to try: [axis] for 'one' and 'many'. */
  tries: unknown[][];
  /** The input's shape (default [2, 3, 4]). */
  shape?: number[];
  /** cat and stack: the input is a list of two tensors (no Tensor method). */
  list?: boolean;
  ref: (xs: Arr[], ...args: never[]) => Arr;
}

const reduction = (f: (l: number[]) => number, tries: unknown[][] = [[1], [-1], [[0, 2]]]): Case =>
  ({ form: 'many', tries, ref: (xs, axis: number | number[]) => reduceRef(xs[0], listAxes(axis), f) });
const alongAxis = (f: (l: number[]) => number[]): Case =>
  ({ form: 'one', tries: [[0], [-1]], ref: (xs, axis: number) => alongRef(xs[0], axis, f) });

/** Every op (gx function, and Tensor method of the same name unless `list`) that takes an axis. */
const CASES: Record<string, Case> = {
  sum: reduction(sum),
  prod: reduction((l) => l.reduce((a, b) => a * b, 1)),
  mean: reduction(mean),
  max: reduction((l) => Math.max(...l)),
  min: reduction((l) => Math.min(...l)),
  argmax: reduction((l) => argOf(l, (a, b) => a > b), [[1], [-1]]),
  argmin: reduction((l) => argOf(l, (a, b) => a < b), [[0], [2]]),
  logsumexp: reduction(lse),
  var: reduction(variance),
  std: reduction((l) => Math.sqrt(variance(l))),
  softmax: alongAxis((l) => l.map((v) => Math.exp(v - lse(l)))),
  logSoftmax: alongAxis((l) => l.map((v) => v - lse(l))),
  cumsum: alongAxis((l) => l.map((_, i) => sum(l.slice(0, i + 1)))),
  squeeze: {
    form: 'many', shape: [2, 1, 3, 1], tries: [[1], [-1], [[1, 3]], [0]],
    ref: (xs, axis: number | number[]) => {
      const drop = listAxes(axis).map((a) => wrap(a, 4));
      return reshaped(xs[0], xs[0].shape.filter((s, d) => s !== 1 || !drop.includes(d)));
    },
  },
  unsqueeze: {
    form: 'one', tries: [[0], [3], [-1]],
    ref: (xs, axis: number) => {
      const shape = xs[0].shape.slice();
      shape.splice(wrap(axis, shape.length + 1), 0, 1);
      return reshaped(xs[0], shape);
    },
  },
  cat: { form: 'one', list: true, tries: [[0], [1], [-1]], ref: (xs, axis: number) => catRef(xs, axis) },
  stack: {
    form: 'one', list: true, tries: [[0], [2], [-1]],
    ref: (xs, axis: number) => {
      const a = wrap(axis, xs[0].shape.length + 1);
      return catRef(xs.map((x) => { const s = x.shape.slice(); s.splice(a, 0, 1); return reshaped(x, s); }), a);
    },
  },
  transpose: {
    form: 'positional', tries: [[0, 2], [-1, 1]],
    ref: (xs, a: number, b: number) => {
      const perm = [0, 1, 2];
      [perm[wrap(a, 3)], perm[wrap(b, 3)]] = [perm[wrap(b, 3)], perm[wrap(a, 3)]];
      return permuteRef(xs[0], perm);
    },
  },
  permute: { form: 'positional', tries: [[[2, 0, 1]], [[-1, -3, 1]]], ref: (xs, perm: number[]) => permuteRef(xs[0], perm) },
  movedim: {
    form: 'positional', tries: [[0, -1], [[0, 1], [2, 0]]],
    ref: (xs, source: number | number[], destination: number | number[]) => {
      const src = listAxes(source).map((a) => wrap(a, 3)), dst = listAxes(destination).map((a) => wrap(a, 3));
      const order = new Array<number>(3).fill(-1);
      src.forEach((s, i) => { order[dst[i]] = s; });
      const rest = [0, 1, 2].filter((d) => !src.includes(d));
      return permuteRef(xs[0], order.map((o) => (o >= 0 ? o : rest.shift() as number)));
    },
  },
  flatten: {
    form: 'positional', tries: [[1], [0, 1], [-2, -1]],
    ref: (xs, start: number, end = -1) => {
      const s = wrap(start, 3), e = wrap(end, 3);
      const shape = xs[0].shape;
      return reshaped(xs[0], [...shape.slice(0, s), numel(shape.slice(s, e + 1)), ...shape.slice(e + 1)]);
    },
  },
  slice: {
    form: 'positional', tries: [[1, 1, 3], [-1, 0, 4, 2]],
    ref: (xs, axis: number, start: number, end: number, step = 1) => takeRef(xs[0], axis, start, Math.ceil((end - start) / step), step),
  },
  narrow: { form: 'positional', tries: [[2, 1, 2], [-3, 1, 1]], ref: (xs, axis: number, start: number, length: number) => takeRef(xs[0], axis, start, length) },
};

// --- the walk -------------------------------------------------------------------------

type AnyFn = (...args: unknown[]) => unknown;

/** The parameter list of a function as its source writes it. */
function params(f: unknown): string {
  const src = Function.prototype.toString.call(f);
  return /^[^(]*\(([^)]*)\)/.exec(src)?.[1] ?? '';
}

/** Exported functions and Tensor methods, as 'name' and 'Tensor#name'. */
function functions(): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const [key, value] of Object.entries(gx)) if (typeof value === 'function' && key !== 'Tensor') found.set(key, value);
  for (const name of Object.getOwnPropertyNames(gx.Tensor.prototype)) {
    const d = Object.getOwnPropertyDescriptor(gx.Tensor.prototype, name);
    if (name !== 'constructor' && typeof d?.value === 'function') found.set(`Tensor#${name}`, d.value);
  }
  return found;
}

test('every export and method that takes an axis has a case, and none names a parameter dim', (t) => {
  const all = functions();
  const takesAxis = [...all].filter(([, f]) => /\baxis|\baxes\b|Axis\b/.test(params(f))).map(([n]) => n.replace(/^Tensor#/, ''));
  t.deepEqual([...new Set(takesAxis)].filter((n) => !(n in CASES)), [], 'an op takes an axis but has no case in CASES');
  for (const [name, c] of Object.entries(CASES)) {
    t.true(all.has(name), `${name} is not exported`);
    t.is(all.has(`Tensor#${name}`), !c.list, `Tensor#${name}: a method exactly where the op takes one tensor`);
  }
  const dims = [...all].filter(([, f]) => /\bdims?\b|Dim\b/.test(params(f))).map(([n, f]) => `${n}(${params(f)})`);
  t.deepEqual(dims, [], 'the word is axis');
  t.log(`${Object.keys(CASES).length} ops take an axis; ${takesAxis.length} functions and methods found by the walk`);
});

test.serial('{ dim } works with one DeprecationWarning (GPUEXT_DEP_DIM) naming the right call', (t) => {
  const seen: { message: string; code: string | undefined }[] = [];
  const original = process.emitWarning;
  process.emitWarning = ((message: string, opts?: { code?: string }) => { seen.push({ message, code: opts?.code }); }) as typeof process.emitWarning;
  try {
    using x = gx.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float64' });
    using s = gx.sum(x, { dim: 1 } as gx.ReduceOptions);
    t.deepEqual(s.toArraySync(), new Float64Array([6, 15]));
    using p = x.softmax({ dim: -1 } as gx.SoftmaxOptions & { axis: number });
    t.deepEqual(p.shape, [2, 3]);
  } finally {
    process.emitWarning = original;
  }
  t.deepEqual(seen, [{
    message: "gx.sum: 'dim' is deprecated and will be removed in the next version; write gx.sum(x, { axis: 1 })", code: 'GPUEXT_DEP_DIM',
  }], 'once per spelling');
});

/** A random float64 input (values of both signs, small enough for exp and prod). */
function input(shape: readonly number[], seed: number, device: TestDevice): { t: gx.Tensor; arr: Arr } {
  const values = randomIn('float64', numel(shape), seed, { lo: -2, hi: 2 }).map(Number);
  return { t: make(values, 'float64', shape, device), arr: { shape: shape.slice(), values } };
}

function check(t: ExecutionContext, got: gx.Tensor, want: Arr, what: string): void {
  t.deepEqual(got.shape, want.shape, `${what}: shape`);
  close(t, Array.from(got.toArraySync() as ArrayLike<number | bigint>, Number), want.values, what, 1e-12, 1e-12);
}

for (const [name, c] of Object.entries(CASES)) {
  deviceTest(`${name}: every axis form agrees with the reference${c.list ? '' : ', as a function and as a method'}`, (t, device) => {
    const shape = c.shape ?? [2, 3, 4];
    const a = input(shape, 7, device), b = input(shape, 8, device);
    try {
      const fn = Reflect.get(gx, name) as AnyFn;
      const callers: [string, (...args: unknown[]) => unknown][] = c.list
        ? [[`gx.${name}`, (...args) => fn([a.t, b.t], ...args)]]
        : [[`gx.${name}`, (...args) => fn(a.t, ...args)], [`Tensor.${name}`, (...args) => (Reflect.get(a.t, name) as AnyFn).apply(a.t, args)]];
      for (const args of c.tries) {
        const want = (c.ref as (xs: Arr[], ...rest: unknown[]) => Arr)([a.arr, b.arr], ...args);
        const label = JSON.stringify(args).slice(1, -1);
        for (const [who, call] of callers) {
          const forms: [string, unknown[]][] = [[`${who}(${label})`, args]];
          if (c.form !== 'positional') {
            forms.push([`${who}({ axis: ${label} })`, [{ axis: args[0] }]], [`${who}({ dim: ${label} }) (deprecated)`, [{ dim: args[0] }]]);
          }
          for (const [what, callArgs] of forms) {
            const r = call(...callArgs) as gx.Tensor;
            try {
              check(t, r, want, what);
            } finally {
              r.dispose();
            }
          }
        }
      }
    } finally {
      a.t.dispose();
      b.t.dispose();
    }
  });
}

deviceTest('the axis beside options: positional with options, { dim } as axis, and both given is an error', (t, device) => {
  const { t: x, arr } = input([2, 3, 4], 9, device);
  try {
    using k = gx.sum(x, 1, { keepdims: true });
    check(t, k, reshaped(reduceRef(arr, [1], sum), [2, 1, 4]), 'gx.sum(x, 1, { keepdims: true })');
    using m = x.max([0, 2], { keepdims: true });
    check(t, m, reshaped(reduceRef(arr, [0, 2], (l) => Math.max(...l)), [1, 3, 1]), 'x.max([0, 2], { keepdims: true })');
    using v = gx.var(x, -1, { correction: 0 });
    check(t, v, reduceRef(arr, [-1], (l) => sum(l.map((e) => (e - mean(l)) ** 2)) / l.length), 'gx.var(x, -1, { correction: 0 })');
    using c = x.cumsum(0, { dtype: 'float32' });
    t.is(c.dtype, 'float32');
    using d = gx.mean(x, { dim: [0, 1] } as gx.ReduceOptions);
    check(t, d, reduceRef(arr, [0, 1], mean), 'gx.mean(x, { dim: [0, 1] })');
    using sq = gx.stack([x, x], { dim: 1 } as gx.AxisOptions);
    t.deepEqual(sq.shape, [2, 2, 3, 4]);
    t.throws(() => gx.sum(x, 1, { axis: 1 }), { instanceOf: TypeError, message: /^gx\.sum: the axis is given twice/ });
    t.throws(() => x.cumsum({ axis: 0, dim: 0 } as gx.CumsumOptions & { axis: number }),
      { instanceOf: TypeError, message: 'Tensor.cumsum: both axis and its old spelling dim are given; pass axis only' });
    t.throws(() => gx.argmax(x, [0, 1] as unknown as number), { instanceOf: TypeError, message: /^gx\.argmax: takes one axis/ });
    t.throws(() => gx.softmax(x, [0, 1] as unknown as number), { instanceOf: TypeError, message: /^gx\.softmax: axis must be an integer, got an array/ });
    t.throws(() => Reflect.apply(gx.unsqueeze, undefined, [x, {}]), { instanceOf: TypeError, message: 'gx.unsqueeze: the axis is required, as in gx.unsqueeze(x, -1) or gx.unsqueeze(x, { axis: -1 })' });
    t.throws(() => Reflect.apply(gx.transpose, undefined, [x, 0]), { instanceOf: TypeError, message: 'gx.transpose: axis1 is required' });
    t.throws(() => gx.unsqueeze(x, { axis: 4 }), { instanceOf: RangeError, message: /^gx\.unsqueeze: axis 4 is out of range for an input of shape \[2, 3, 4\]/ });
  } finally {
    x.dispose();
  }
});
