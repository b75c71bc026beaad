// One word for an axis (issue 19): every exported op and Tensor method that
// takes an axis is called in each of its forms (NOTE [ Axis forms ] in
// lib/ops/axes.ts) on a random tensor, and each form must give what a plain
// JS reference gives; `{ dim }`, the old spelling, must still work (with one
// DeprecationWarning per process, checked first, before the cases). The walk at the bottom finds the axis-taking functions
// from the exports themselves (a parameter named axis/axes), namespaces'
// functions included (gx.linalg.vectorNorm as 'linalg.vectorNorm'), so a new
// one fails until it has a case here, and no export may name a parameter dim.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, type TestDevice } from './helpers';
import {
  alongRef, argOf, type Arr, catRef, crossRef, diagonalRef, evenSizes, Fields, Idx, indexAddRef, interleaveRef, kthRef,
  lineIndex, listAxes, lse, matrixNormRef, mean, numel, offset, orderOf, OTHER, permuteRef, pickRef, piecesRef, pnorm,
  reduceRef, reshaped, resizedRef, rollLine, scatterReduceRef, scatterRef, sortedRef, sum, takeRef, variance,
  type Want, unravel, wrap,
} from './axis-reference';
import { close, make, randomIn } from './ops-reference';

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
  /** Maps the random input values (any and all want zeros among them). */
  values?: (v: number) => number;
  /** A Tensor method with no gx function of the same name (size, scatter_). */
  methodOnly?: boolean;
  /** A gx function (a namespace's: 'linalg.vectorNorm') with no Tensor method of the same name. */
  functionOnly?: boolean;
  /** The method writes into its tensor: it is called on a clone. */
  inPlace?: boolean;
  ref: (xs: Arr[], ...args: never[]) => Want;
}

const reduction = (f: (l: number[]) => number, tries: unknown[][] = [[1], [-1], [[0, 2]]]): Case =>
  ({ form: 'many', tries, ref: (xs, axis: number | number[]) => reduceRef(xs[0], listAxes(axis), f) });
const alongAxis = (f: (l: number[]) => number[]): Case =>
  ({ form: 'one', tries: [[0], [-1]], ref: (xs, axis: number) => alongRef(xs[0], axis, f) });

/** The lower of the two middle values (torch.median's). */
const lowerMedian = (l: number[]): number => [...l].sort((a, b) => a - b)[(l.length - 1) >> 1];

/** cummax / cummin: the running extremum and its index (later index on ties) along one axis. */
const runningCase = (largest: boolean): Case => ({
  form: 'one', tries: [[0], [-1]],
  ref: (xs, axis: number) => {
    const best = (l: number[], i: number): number => {
      let k = 0;
      for (let j = 1; j <= i; j++) if (largest ? l[j] >= l[k] : l[j] <= l[k]) k = j;
      return k;
    };
    return new Fields({ values: alongRef(xs[0], axis, (l) => l.map((_, i) => l[best(l, i)])), indices: alongRef(xs[0], axis, (l) => l.map((_, i) => best(l, i))) });
  },
});

/** max / min: `{ values, indices }` (the first extremum) along one axis; the reduction over a list of axes (NOTE [ The forms of max and min ]). */
const extremumCase = (largest: boolean): Case => {
  const f = (l: number[]): number => (largest ? Math.max(...l) : Math.min(...l));
  return {
    form: 'many', tries: [[1], [-1], [[0, 2]]],
    ref: (xs, axis: number | number[]) => (typeof axis === 'number'
      ? new Fields({ values: reduceRef(xs[0], [axis], f), indices: reduceRef(xs[0], [axis], (l) => l.indexOf(f(l))) })
      : reduceRef(xs[0], listAxes(axis), f)),
  };
};

/** Every op (gx function, and Tensor method of the same name unless `list`) that takes an axis. */
const CASES: Record<string, Case> = {
  sum: reduction(sum),
  prod: reduction((l) => l.reduce((a, b) => a * b, 1)),
  mean: reduction(mean),
  max: extremumCase(true),
  min: extremumCase(false),
  argmax: reduction((l) => argOf(l, (a, b) => a > b), [[1], [-1]]),
  argmin: reduction((l) => argOf(l, (a, b) => a < b), [[0], [2]]),
  logsumexp: reduction(lse),
  var: reduction(variance),
  std: reduction((l) => Math.sqrt(variance(l))),
  softmax: alongAxis((l) => l.map((v) => Math.exp(v - lse(l)))),
  logSoftmax: alongAxis((l) => l.map((v) => v - lse(l))),
  cumsum: alongAxis((l) => l.map((_, i) => sum(l.slice(0, i + 1)))),
  cumprod: alongAxis((l) => l.map((_, i) => l.slice(0, i + 1).reduce((a, b) => a * b, 1))),
  cummax: runningCase(true),
  cummin: runningCase(false),
  nansum: reduction(sum),
  nanmean: reduction(mean),
  countNonzero: reduction((l) => l.filter((v) => v !== 0).length),
  amax: reduction((l) => Math.max(...l)),
  amin: reduction((l) => Math.min(...l)),
  aminmax: {
    form: 'many', tries: [[1], [-1], [[0, 2]]],
    ref: (xs, axis: number | number[]) => new Fields({
      min: reduceRef(xs[0], listAxes(axis), (l) => Math.min(...l)), max: reduceRef(xs[0], listAxes(axis), (l) => Math.max(...l)),
    }),
  },
  median: {
    form: 'one', tries: [[0], [1], [-1]],
    ref: (xs, axis: number) => new Fields({
      values: reduceRef(xs[0], [axis], lowerMedian), indices: reduceRef(xs[0], [axis], (l) => l.indexOf(lowerMedian(l))),
    }),
  },
  quantile: {
    form: 'positional', tries: [[0.3, 1], [0.75, -1], [0.5, 0]],
    ref: (xs, q: number, axis: number) => reduceRef(xs[0], [axis], (l) => {
      const s = [...l].sort((a, b) => a - b), r = q * (s.length - 1), lo = Math.floor(r);
      return s[lo] + (r - lo) * (s[Math.ceil(r)] - s[lo]);
    }),
  },
  // The random inputs have no ties, so mode is the smallest element (each counts once) and nanmedian is median.
  mode: {
    form: 'one', tries: [[0], [-1]],
    ref: (xs, axis: number) => new Fields({
      values: reduceRef(xs[0], [axis], (l) => Math.min(...l)), indices: reduceRef(xs[0], [axis], (l) => l.indexOf(Math.min(...l))),
    }),
  },
  nanmedian: {
    form: 'one', tries: [[0], [1], [-1]],
    ref: (xs, axis: number) => new Fields({
      values: reduceRef(xs[0], [axis], lowerMedian), indices: reduceRef(xs[0], [axis], (l) => l.indexOf(lowerMedian(l))),
    }),
  },
  nanquantile: {
    form: 'positional', tries: [[0.3, 1], [0.75, -1], [0.5, 0]],
    ref: (xs, q: number, axis: number) => reduceRef(xs[0], [axis], (l) => {
      const s = [...l].sort((a, b) => a - b), r = q * (s.length - 1), lo = Math.floor(r);
      return s[lo] + (r - lo) * (s[Math.ceil(r)] - s[lo]);
    }),
  },
  tensordot: {
    form: 'positional', functionOnly: true, tries: [[OTHER, [[0, 1], [0, 1]]], [OTHER, [[-1, 0], [-1, 0]]]],
    ref: (xs, _other: unknown, axes: [number[], number[]]) => {
      // Contract a and b (both [2, 3, 4]) over the listed axes: out[free of a, free of b].
      const [a, b] = xs, nd = 3;
      const ca = axes[0].map((d) => wrap(d, nd)), cb = axes[1].map((d) => wrap(d, nd));
      const fa = [0, 1, 2].filter((d) => !ca.includes(d)), fb = [0, 1, 2].filter((d) => !cb.includes(d));
      const shape = [...fa.map((d) => a.shape[d]), ...fb.map((d) => b.shape[d])];
      const values = new Array<number>(numel(shape)).fill(0);
      a.values.forEach((va, i) => {
        const ia = unravel(i, a.shape);
        b.values.forEach((vb, j) => {
          const ib = unravel(j, b.shape);
          if (ca.every((d, k) => ia[d] === ib[cb[k]])) {
            const o = [...fa.map((d) => ia[d]), ...fb.map((d) => ib[d])];
            values[o.reduce((acc, v, k) => acc * shape[k] + v, 0)] += va * vb;
          }
        });
      });
      return { shape, values };
    },
  },
  diff: {
    form: 'positional', tries: [[1, 0], [2, -1], [1, 1]],
    ref: (xs, n: number, axis: number) => {
      const d = (l: number[]): number[] => l.slice(1).map((v, i) => v - l[i]);
      return resizedRef(xs[0], axis, xs[0].shape[wrap(axis, 3)] - n, (l) => (n === 2 ? d(d(l)) : d(l)));
    },
  },
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
  split: {
    form: 'positional', tries: [[2], [3, -1], [[1, 2], 1]],
    ref: (xs, s: number | number[], axis = 0) => {
      const n = xs[0].shape[wrap(axis, 3)];
      return piecesRef(xs[0], axis, typeof s === 'number' ? evenSizes(n, s) : s);
    },
  },
  chunk: {
    form: 'positional', tries: [[2], [3, -1], [2, 1]],
    ref: (xs, chunks: number, axis = 0) => {
      const n = xs[0].shape[wrap(axis, 3)];
      return piecesRef(xs[0], axis, evenSizes(n, Math.ceil(n / chunks)));
    },
  },
  unbind: {
    form: 'positional', tries: [[], [1], [-1]],
    ref: (xs, axis = 0) => {
      const a = wrap(axis, 3);
      return Array.from({ length: xs[0].shape[a] }, (_, k) => reshaped(takeRef(xs[0], a, k, 1), xs[0].shape.filter((_s, d) => d !== a)));
    },
  },
  flip: {
    form: 'positional', tries: [[0], [-1], [[0, 2]]],
    ref: (xs, axes: number | number[]) => listAxes(axes).reduce((x, a) => alongRef(x, a, (l) => l.slice().reverse()), xs[0]),
  },
  roll: {
    form: 'positional', tries: [[1, 1], [-5, -1], [[1, -2], [0, 2]], [3]],
    ref: (xs, shifts: number | number[], axes?: number | number[]) => {
      if (axes === undefined) return reshaped(alongRef(reshaped(xs[0], [numel(xs[0].shape)]), 0, rollLine(shifts as number)), xs[0].shape);
      const s = listAxes(shifts);
      return listAxes(axes).reduce((x, a, i) => alongRef(x, a, rollLine(s[i])), xs[0]);
    },
  },
  repeatInterleave: {
    form: 'positional', tries: [[2, 1], [3, -1], [2]],
    ref: (xs, r: number, axis?: number) =>
      (axis === undefined ? interleaveRef(reshaped(xs[0], [numel(xs[0].shape)]), r, 0) : interleaveRef(xs[0], r, axis)),
  },
  any: { ...reduction((l) => Number(l.some((v) => v !== 0))), values: (v) => (v > 1 ? 1 : 0) },
  all: { ...reduction((l) => Number(l.every((v) => v !== 0))), values: (v) => (v > -1.5 ? 1 : 0) },
  gather: {
    form: 'positional', tries: [[1, lineIndex([2, 2, 4], 1, 3)], [-1, lineIndex([2, 3, 6], -1, 4)], [0, lineIndex([1, 3, 4], 0, 2)]],
    ref: (xs, axis: number, index: Idx) =>
      pickRef(xs[0], index.shape, (p) => p.map((v, d) => (d === wrap(axis, 3) ? index.values[offset(p, index.shape)] : v))),
  },
  indexSelect: {
    form: 'positional', tries: [[1, new Idx([4], [2, 0, 2, 1])], [-1, new Idx([2], [3, 0])], [0, new Idx([0], [])]],
    ref: (xs, axis: number, index: Idx) => {
      const a = wrap(axis, 3);
      const shape = xs[0].shape.slice();
      shape[a] = index.values.length;
      return pickRef(xs[0], shape, (p) => p.map((v, d) => (d === a ? index.values[v] : v)));
    },
  },
  scatter: {
    form: 'positional', tries: [[1, lineIndex([2, 2, 4], 1, 3), OTHER], [-1, lineIndex([2, 3, 3], -1, 4), OTHER]],
    ref: (xs, axis: number, index: Idx) => scatterRef(xs[0], axis, index, xs[1], false),
  },
  scatterAdd: {
    form: 'positional', tries: [[1, new Idx([2, 3, 4], Array.from({ length: 24 }, (_, i) => (i * 5) % 3)), OTHER], [0, lineIndex([2, 2, 4], 0, 2), OTHER]],
    ref: (xs, axis: number, index: Idx) => scatterRef(xs[0], axis, index, xs[1], true),
  },
  scatter_: {
    form: 'positional', methodOnly: true, inPlace: true, tries: [[2, lineIndex([2, 3, 2], 2, 4), OTHER]],
    ref: (xs, axis: number, index: Idx) => scatterRef(xs[0], axis, index, xs[1], false),
  },
  scatterAdd_: {
    form: 'positional', methodOnly: true, inPlace: true, tries: [[-2, new Idx([2, 3, 4], Array.from({ length: 24 }, (_, i) => (i * 7) % 3)), OTHER]],
    ref: (xs, axis: number, index: Idx) => scatterRef(xs[0], axis, index, xs[1], true),
  },
  scatterReduce: {
    form: 'positional',
    tries: [[1, new Idx([2, 3, 4], Array.from({ length: 24 }, (_, i) => (i * 5) % 3)), OTHER, 'amax'],
      [-1, lineIndex([2, 2, 3], -1, 4), OTHER, 'mean', { includeSelf: false }], [0, new Idx([2, 3, 4], Array.from({ length: 24 }, (_, i) => i % 2)), OTHER, 'prod']],
    ref: (xs, axis: number, index: Idx, _src: unknown, reduce: string, opts?: { includeSelf?: boolean }) => scatterReduceRef(xs[0], axis, index, xs[1], reduce, opts),
  },
  scatterReduce_: {
    form: 'positional', methodOnly: true, inPlace: true, tries: [[2, new Idx([2, 3, 4], Array.from({ length: 24 }, (_, i) => (i * 3) % 4)), OTHER, 'sum', { includeSelf: false }]],
    ref: (xs, axis: number, index: Idx, _src: unknown, reduce: string, opts?: { includeSelf?: boolean }) => scatterReduceRef(xs[0], axis, index, xs[1], reduce, opts),
  },
  indexAdd: {
    form: 'positional', tries: [[1, new Idx([3], [2, 0, 2]), OTHER], [0, new Idx([2], [1, 1]), OTHER, { alpha: -2 }]],
    ref: (xs, axis: number, index: Idx, _src: unknown, opts?: { alpha?: number }) => indexAddRef(xs[0], axis, index, xs[1], opts),
  },
  indexAdd_: {
    form: 'positional', methodOnly: true, inPlace: true, tries: [[-1, new Idx([4], [1, 1, 0, 3]), OTHER]],
    ref: (xs, axis: number, index: Idx, _src: unknown, opts?: { alpha?: number }) => indexAddRef(xs[0], axis, index, xs[1], opts),
  },
  size: { form: 'positional', methodOnly: true, tries: [[0], [2], [-2]], ref: (xs, axis: number) => xs[0].shape[wrap(axis, 3)] },
  sort: { form: 'one', tries: [[0], [1], [-1]], ref: (xs, axis: number) => sortedRef(xs[0], axis, xs[0].shape[wrap(axis, 3)], false) },
  argsort: { form: 'one', tries: [[0], [-1]], ref: (xs, axis: number) => resizedRef(xs[0], axis, xs[0].shape[wrap(axis, 3)], (l) => orderOf(l, false)) },
  topk: {
    form: 'positional', tries: [[2], [2, 0], [3, -2], [1, 1, { largest: false }]],
    ref: (xs, k: number, axis = -1, opts?: { largest?: boolean }) => sortedRef(xs[0], axis, k, opts?.largest !== false),
  },
  kthvalue: { form: 'positional', tries: [[1], [2, 0], [3, -2]], ref: (xs, k: number, axis = -1) => kthRef(xs[0], axis, k) },
  cross: {
    form: 'positional', shape: [3, 2, 3], tries: [[OTHER], [OTHER, 0], [OTHER, -3], [OTHER, 2]],
    ref: (xs, _other: unknown, axis = -1) => crossRef(xs[0], xs[1], axis),
  },
  'linalg.cross': {
    form: 'positional', functionOnly: true, shape: [3, 1, 3], tries: [[OTHER], [OTHER, 0]],
    ref: (xs, _other: unknown, axis = -1) => crossRef(xs[0], xs[1], axis),
  },
  diagonal: {
    form: 'positional', tries: [[], [0, 0, 2], [1, -1, 0], [-1, 1, 2], [{ offset: 1, axis1: 2, axis2: -2 }], [{ axis2: 2 }]],
    ref: (xs, offset: number | { offset?: number; axis1?: number; axis2?: number } = 0, axis1 = 0, axis2 = 1) =>
      (typeof offset === 'object' ? diagonalRef(xs[0], offset.offset ?? 0, offset.axis1 ?? 0, offset.axis2 ?? 1) : diagonalRef(xs[0], offset, axis1, axis2)),
  },
  norm: {
    form: 'positional', methodOnly: true, tries: [[], [2, 1], [1, [0, 2]], ['fro', [-1, 0]], [Infinity, -1], [3, null], [0.5, 2]],
    ref: (xs, p: number | string = 'fro', axis: number | number[] | null = null) =>
      reduceRef(xs[0], axis === null ? [0, 1, 2] : listAxes(axis), pnorm(p === 'fro' ? 2 : p as number)),
  },
  'linalg.vectorNorm': {
    form: 'positional', functionOnly: true, tries: [[], [2, 1], [1, [0, 2]], [-Infinity, -1], [0, [1]], [-1.5, 0], [{ ord: 3, axis: [2, 0] }]],
    ref: (xs, ord: number | { ord: number; axis: number[] } = 2, axis: number | number[] | null = null) => {
      if (typeof ord === 'object') return reduceRef(xs[0], ord.axis, pnorm(ord.ord));
      return reduceRef(xs[0], axis === null ? [0, 1, 2] : listAxes(axis), pnorm(ord));
    },
  },
  'linalg.matrixNorm': {
    form: 'positional', functionOnly: true, tries: [[], [1, [0, 2]], [-1, [2, 1]], [Infinity, [-1, 0]], [-Infinity, [1, 2]], ['fro', [0, -1]], [{ ord: 1, axis: [1, 0] }]],
    ref: (xs, ord: number | string | { ord: number; axis: number[] } = 'fro', axis: number[] = [-2, -1]) => {
      if (typeof ord === 'object') return matrixNormRef(xs[0], ord.ord, ord.axis[0], ord.axis[1]);
      return matrixNormRef(xs[0], ord, axis[0], axis[1]);
    },
  },
  'linalg.norm': {
    form: 'positional', functionOnly: true, tries: [[], [2, 1], [1, [-1]], [null, [0, 2]], [Infinity, [2, 1]], [-1, -2]],
    ref: (xs, ord: number | null = null, axis: number | number[] | null = null) => {
      if (axis === null) return reduceRef(xs[0], [0, 1, 2], pnorm(2));
      const list = listAxes(axis);
      if (list.length === 1) return reduceRef(xs[0], list, pnorm(ord ?? 2));
      return matrixNormRef(xs[0], ord ?? 'fro', list[0], list[1]);
    },
  },
};

// --- the walk -------------------------------------------------------------------------

type AnyFn = (...args: unknown[]) => unknown;

/** The parameter list of a function as its source writes it. */
function params(f: unknown): string {
  const src = Function.prototype.toString.call(f);
  return /^[^(]*\(([^)]*)\)/.exec(src)?.[1] ?? '';
}

/** Exported functions (a namespace's as 'ns.name') and Tensor methods, as 'name' and 'Tensor#name'. */
function functions(): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const [key, value] of Object.entries(gx)) {
    if (typeof value === 'function' && key !== 'Tensor') found.set(key, value);
    // Namespaces (gx.linalg, gx.memory, ...): their functions, not classes (a class's constructor takes no axis).
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [member, v] of Object.entries(value)) {
        if (typeof v === 'function' && !/^class\b/.test(Function.prototype.toString.call(v))) found.set(`${key}.${member}`, v);
      }
    }
  }
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
    t.is(all.has(name), !c.methodOnly, `${name}: exported unless the case says it is a method only`);
    t.is(all.has(`Tensor#${name}`), !c.list && !c.functionOnly, `Tensor#${name}: a method exactly where the op takes one tensor`);
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

/** A random float64 input (values of both signs, small enough for exp and prod), mapped by `map`. */
function input(shape: readonly number[], seed: number, device: TestDevice, map = (v: number): number => v): { t: gx.Tensor; arr: Arr } {
  const values = randomIn('float64', numel(shape), seed, { lo: -2, hi: 2 }).map((v) => map(Number(v)));
  return { t: make(values, 'float64', shape, device), arr: { shape: shape.slice(), values } };
}

function check(t: ExecutionContext, got: gx.Tensor, want: Arr, what: string): void {
  t.deepEqual(got.shape, want.shape, `${what}: shape`);
  close(t, Array.from(got.toArraySync() as ArrayLike<number | bigint>, Number), want.values, what, 1e-12, 1e-12);
}

/** A result (a tensor, a list of them, named tensors, or a number) against its reference; the tensors are disposed. */
function checkResult(t: ExecutionContext, got: unknown, want: Want, what: string): void {
  if (typeof want === 'number') {
    t.is(got, want, what);
  } else if (want instanceof Fields) {
    const fields = got as Record<string, gx.Tensor>;
    try {
      // Named results are tuples with names (NOTE [ Named results ]): each field the reference names is there.
      t.deepEqual(Object.keys(want.fields).filter((k) => !(fields[k] instanceof gx.Tensor)), [], `${what}: the result's fields`);
      for (const [key, w] of Object.entries(want.fields)) if (fields[key] instanceof gx.Tensor) check(t, fields[key], w, `${what}.${key}`);
    } finally {
      for (const r of Object.values(fields)) if (r instanceof gx.Tensor) r.dispose();
    }
  } else if (Array.isArray(want)) {
    const list = got as gx.Tensor[];
    try {
      t.is(list.length, want.length, `${what}: how many pieces`);
      want.forEach((w, i) => { if (i < list.length) check(t, list[i], w, `${what}[${i}]`); });
    } finally {
      for (const r of list) r.dispose();
    }
  } else {
    const r = got as gx.Tensor;
    try {
      check(t, r, want, what);
    } finally {
      r.dispose();
    }
  }
}

for (const [name, c] of Object.entries(CASES)) {
  const faces = c.list || c.functionOnly ? '' : c.methodOnly ? ', as a method' : ', as a function and as a method';
  deviceTest(`${name}: every axis form agrees with the reference${faces}`, (t, device) => {
    const shape = c.shape ?? [2, 3, 4];
    const a = input(shape, 7, device, c.values), b = input(shape, 8, device, c.values);
    const made: gx.Tensor[] = [];
    /** The call's arguments: index tensors made on the device, OTHER as the second input. */
    const argsOf = (args: unknown[]): unknown[] => args.map((v) => {
      if (v === OTHER) return b.t;
      if (!(v instanceof Idx)) return v;
      const i = make(v.values, 'int64', v.shape, device);
      made.push(i);
      return i;
    });
    try {
      const method = (self: gx.Tensor, args: unknown[]): unknown => (Reflect.get(self, name) as AnyFn).apply(self, args);
      const callers: [string, (...args: unknown[]) => unknown][] = [];
      const fnOf = (): AnyFn => name.split('.').reduce((o: unknown, k) => Reflect.get(o as object, k), gx) as AnyFn;
      if (c.list) callers.push([`gx.${name}`, (...args) => fnOf()([a.t, b.t], ...args)]);
      else if (!c.methodOnly) callers.push([`gx.${name}`, (...args) => fnOf()(a.t, ...args)]);
      if (!c.list && !c.functionOnly) callers.push([`Tensor.${name}`, (...args) => method(c.inPlace ? a.t.clone() : a.t, args)]);
      for (const args of c.tries) {
        const want = (c.ref as (xs: Arr[], ...rest: unknown[]) => Want)([a.arr, b.arr], ...args);
        const label = JSON.stringify(args, (_k, v: unknown) => (v instanceof Idx ? `index of shape [${v.shape.join(', ')}]` : v)).slice(1, -1);
        for (const [who, call] of callers) {
          const forms: [string, unknown[]][] = [[`${who}(${label})`, argsOf(args)]];
          if (c.form !== 'positional') {
            forms.push([`${who}({ axis: ${label} })`, [{ axis: args[0] }]], [`${who}({ dim: ${label} }) (deprecated)`, [{ dim: args[0] }]]);
          }
          for (const [what, callArgs] of forms) checkResult(t, call(...callArgs), want, what);
        }
      }
    } finally {
      a.t.dispose();
      b.t.dispose();
      for (const i of made) i.dispose();
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
