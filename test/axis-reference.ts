// Plain JS references for test/axis.test.ts: reductions, scans, permutes,
// slices, gathers and scatters over one axis of a small C-order array, and
// the shapes of what the cases expect (one array, several, named fields).

export interface Arr {
  shape: number[];
  values: number[];
}

// --- references -------------------------------------------------------------------

export const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
export const wrap = (a: number, n: number): number => (a < 0 ? a + n : a);

/** Row-major strides of a contiguous shape. */
export function strides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/** The multi-index of flat index i. */
export function unravel(i: number, shape: readonly number[]): number[] {
  const st = strides(shape);
  return shape.map((_, d) => Math.floor(i / st[d]) % shape[d]);
}

/** Each line over `axes` (kept axes in row-major order) reduced to one value by f. */
export function reduceRef(x: Arr, axes: readonly number[], f: (line: number[]) => number): Arr {
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
export function alongRef(x: Arr, axis: number, f: (line: number[]) => number[]): Arr {
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
export function permuteRef(x: Arr, perm: readonly number[]): Arr {
  const p = perm.map((a) => wrap(a, x.shape.length));
  const shape = p.map((d) => x.shape[d]);
  const st = strides(x.shape);
  const values = Array.from({ length: numel(shape) }, (_, i) => x.values[unravel(i, shape).reduce((acc, v, k) => acc + v * st[p[k]], 0)]);
  return { shape, values };
}

/** x's elements at `start, start + step, ...` (count of them) along `axis`. */
export function takeRef(x: Arr, axis: number, start: number, count: number, step = 1): Arr {
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

export function catRef(xs: readonly Arr[], axis: number): Arr {
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

export const reshaped = (x: Arr, shape: number[]): Arr => ({ shape, values: x.values });
export const sum = (l: number[]): number => l.reduce((a, b) => a + b, 0);
export const mean = (l: number[]): number => sum(l) / l.length;
export const variance = (l: number[]): number => sum(l.map((v) => (v - mean(l)) ** 2)) / (l.length - 1);
export const lse = (l: number[]): number => Math.max(...l) + Math.log(sum(l.map((v) => Math.exp(v - Math.max(...l)))));
export const argOf = (l: number[], better: (a: number, b: number) => boolean): number => l.reduce((best, v, i) => (better(v, l[best]) ? i : best), 0);
export const listAxes = (a: unknown): number[] => (typeof a === 'number' ? [a] : (a as number[]));

/** The vector p-norm of a line (torch.linalg.vector_norm's orders). */
export const pnorm = (p: number) => (l: number[]): number => {
  const a = l.map(Math.abs);
  if (p === Infinity) return Math.max(...a);
  if (p === -Infinity) return Math.min(...a);
  if (p === 0) return a.filter((v) => v !== 0).length;
  return sum(a.map((v) => v ** p)) ** (1 / p);
};

/** A matrix norm over axes [r, c] (ord 1, -1, Infinity, -Infinity or 'fro'), the other axes kept in order. */
export function matrixNormRef(x: Arr, ord: number | string, r: number, c: number): Arr {
  if (ord === 'fro') return reduceRef(x, [r, c], pnorm(2));
  const [inner, outer] = ord === 1 || ord === -1 ? [r, c] : [c, r];
  const sums = reduceRef(x, [inner], (l) => sum(l.map(Math.abs)));
  // The outer axis, renumbered in the reduced tensor (the inner one is gone).
  const o = wrap(outer, x.shape.length), i = wrap(inner, x.shape.length);
  return reduceRef(sums, [o > i ? o - 1 : o], (l) => ((ord as number) > 0 ? Math.max(...l) : Math.min(...l)));
}

/** The cross product of a and b (one shape) along `axis`. */
export function crossRef(a: Arr, b: Arr, axis: number): Arr {
  const ax = wrap(axis, a.shape.length);
  const st = strides(a.shape);
  const values = a.values.slice();
  for (let i = 0; i < a.values.length; i++) {
    const p = unravel(i, a.shape);
    const k = p[ax];
    const at = (j: number): number => i + (j - k) * st[ax];
    const [u, v] = [(k + 1) % 3, (k + 2) % 3];
    values[i] = a.values[at(u)] * b.values[at(v)] - a.values[at(v)] * b.values[at(u)];
  }
  return { shape: a.shape.slice(), values };
}

/** The diagonal `offset` of x over axes a1, a2: those removed, the diagonal last. */
export function diagonalRef(x: Arr, offset: number, axis1: number, axis2: number): Arr {
  const d1 = wrap(axis1, x.shape.length), d2 = wrap(axis2, x.shape.length);
  const n1 = x.shape[d1], n2 = x.shape[d2];
  const len = Math.max(0, offset >= 0 ? Math.min(n1, n2 - offset) : Math.min(n1 + offset, n2));
  const rest = x.shape.map((_, d) => d).filter((d) => d !== d1 && d !== d2);
  const shape = [...rest.map((d) => x.shape[d]), len];
  return pickRef(x, shape, (p) => {
    const q = new Array<number>(x.shape.length).fill(0);
    rest.forEach((d, i) => { q[d] = p[i]; });
    const k = p[p.length - 1];
    q[d1] = offset >= 0 ? k : k - offset;
    q[d2] = offset >= 0 ? k + offset : k;
    return q;
  });
}

/** Named results (sort's { values, indices }): each field against its reference. */
export class Fields {
  constructor(readonly fields: Readonly<Record<string, Arr>>) {}
}

/** What a case's reference gives: a tensor, a list of them, named tensors, or a number. */
export type Want = Arr | Arr[] | Fields | number;

/** An index tensor argument: int64, made on the test's device. */
export class Idx {
  constructor(readonly shape: number[], readonly values: number[]) {}
}

/**
 * An index of `shape` with values in [0, n) along `axis`: within each line
 * along the axis the values are distinct (a rotation of 0, 1, ...), so
 * scatter's writes never collide.
 */
export function lineIndex(shape: number[], axis: number, n: number): Idx {
  const a = wrap(axis, shape.length);
  const values = Array.from({ length: numel(shape) }, (_, i) => {
    const p = unravel(i, shape);
    const base = p.reduce((acc, v, d) => (d === a ? acc : acc * 3 + v), 1);
    return (base + p[a]) % n;
  });
  return new Idx(shape, values);
}

/** The second input tensor, as an argument (scatter's src). */
export const OTHER = Symbol('the second input');

/** The flat offset of multi-index p in a contiguous tensor of `shape`. */
export const offset = (p: readonly number[], shape: readonly number[]): number => {
  const st = strides(shape);
  return p.reduce((acc, v, d) => acc + v * st[d], 0);
};

/** Each element of `shape` from x at the multi-index `from(p)`. */
export function pickRef(x: Arr, shape: number[], from: (p: number[]) => number[]): Arr {
  return { shape, values: Array.from({ length: numel(shape) }, (_, i) => x.values[offset(from(unravel(i, shape)), x.shape)]) };
}

/** x with src's elements at index's positions written (or added) along `axis`. */
export function scatterRef(x: Arr, axis: number, index: Idx, src: Arr, add: boolean): Arr {
  const a = wrap(axis, x.shape.length);
  const values = x.values.slice();
  index.values.forEach((v, i) => {
    const p = unravel(i, index.shape);
    const at = offset(p.map((e, d) => (d === a ? v : e)), x.shape);
    values[at] = (add ? values[at] : 0) + src.values[offset(p, src.shape)];
  });
  return { shape: x.shape.slice(), values };
}

/** scatterReduce's reference: src's elements combined into x's at index's positions along `axis`. */
export function scatterReduceRef(x: Arr, axis: number, index: Idx, src: Arr, reduce: string, opts: { includeSelf?: boolean } = {}): Arr {
  const a = wrap(axis, x.shape.length);
  const includeSelf = opts.includeSelf ?? true;
  const values = x.values.slice();
  const count = values.map(() => (includeSelf ? 1 : 0));
  const start = reduce === 'prod' ? 1 : reduce === 'amax' ? -Infinity : reduce === 'amin' ? Infinity : 0;
  index.values.forEach((v, i) => {
    const p = unravel(i, index.shape);
    const at = offset(p.map((e, d) => (d === a ? v : e)), x.shape);
    const e = src.values[offset(p, src.shape)];
    if (count[at] === 0) values[at] = start;
    count[at]++;
    const o = values[at];
    values[at] = reduce === 'prod' ? o * e : reduce === 'amax' ? Math.max(o, e) : reduce === 'amin' ? Math.min(o, e) : o + e;
  });
  return { shape: x.shape.slice(), values: reduce === 'mean' ? values.map((v, i) => v / Math.max(count[i], 1)) : values };
}

/** indexAdd's reference: alpha * src's slices added at index along `axis`. */
export function indexAddRef(x: Arr, axis: number, index: Idx, src: Arr, opts: { alpha?: number } = {}): Arr {
  const a = wrap(axis, x.shape.length);
  const values = x.values.slice();
  src.values.forEach((e, i) => {
    const p = unravel(i, src.shape);
    values[offset(p.map((c, d) => (d === a ? index.values[c] : c)), x.shape)] += (opts.alpha ?? 1) * e;
  });
  return { shape: x.shape.slice(), values };
}

/** repeatInterleave's reference: each element `r` times along `axis`. */
export function interleaveRef(x: Arr, r: number, axis: number): Arr {
  const a = wrap(axis, x.shape.length);
  const shape = x.shape.slice();
  shape[a] *= r;
  return pickRef(x, shape, (p) => p.map((v, d) => (d === a ? Math.floor(v / r) : v)));
}

/** Pieces of `sizes` along `axis`. */
export const piecesRef = (x: Arr, axis: number, sizes: number[]): Arr[] =>
  sizes.map((n, k) => takeRef(x, axis, sizes.slice(0, k).reduce((acc, v) => acc + v, 0), n));
export const evenSizes = (n: number, size: number): number[] => Array.from({ length: Math.ceil(n / size) }, (_, i) => Math.min(size, n - i * size));
export const rollLine = (s: number) => (l: number[]): number[] => l.map((_, i) => l[(((i - s) % l.length) + l.length) % l.length]);

/** Each line along `axis` replaced by f(line), which may change its length to `len`. */
export function resizedRef(x: Arr, axis: number, len: number, f: (line: number[]) => number[]): Arr {
  const a = wrap(axis, x.shape.length);
  const n = x.shape[a], outer = numel(x.shape.slice(0, a)), inner = numel(x.shape.slice(a + 1));
  const shape = x.shape.slice();
  shape[a] = len;
  const values = new Array<number>(numel(shape)).fill(0);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const line = Array.from({ length: n }, (_, k) => x.values[(o * n + k) * inner + i]);
      f(line).forEach((v, k) => { values[(o * len + k) * inner + i] = v; });
    }
  }
  return { shape, values };
}
/** The stable order of a line (its indices), ascending or descending. */
export const orderOf = (l: number[], descending: boolean): number[] => l.map((_, i) => i).sort((i, j) => (descending ? l[j] - l[i] : l[i] - l[j]));
/** sort's and topk's { values, indices }: the first k of each line's stable order. */
export const sortedRef = (x: Arr, axis: number, k: number, descending: boolean): Fields => new Fields({
  values: resizedRef(x, axis, k, (l) => orderOf(l, descending).slice(0, k).map((i) => l[i])),
  indices: resizedRef(x, axis, k, (l) => orderOf(l, descending).slice(0, k)),
});
/** kthvalue's: the k-th smallest of each line and its index, the axis dropped. */
export const kthRef = (x: Arr, axis: number, k: number): Fields => new Fields({
  values: reduceRef(x, [axis], (l) => l[orderOf(l, false)[k - 1]]),
  indices: reduceRef(x, [axis], (l) => orderOf(l, false)[k - 1]),
});
