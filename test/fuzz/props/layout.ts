// The layout ops (gx.transpose ... gx.sliceDims and their methods, view,
// reshape, contiguous, clone) against a plain-JS model of strides: a view
// must hold the model's values and reach the very storage elements the model
// says (it shares memory); arguments of the wrong kind or out of range must
// be Errors naming the op.
import fc from 'fast-check';

import * as gx from '../../../lib';
import { errorVerdict, type Plan } from '../calls';
import type { Expect } from '../harness';
import { gather, numel, offsetsOf, resolveArg, type BaseSpec, type Layout, type TensorArg } from '../model';
import { argArb, baseArb } from '../arbitraries';
import type { FuzzProperty } from '../property';

export const LAYOUT_OPS = [
  'transpose', 'permute', 'movedim', 'squeeze', 'unsqueeze', 'expand', 'broadcastTo', 'flatten', 'slice', 'narrow',
  'sliceDims', 'view', 'reshape', 'contiguous', 'clone',
] as const;
type LayoutName = (typeof LAYOUT_OPS)[number];

/** An integer argument: mostly small, sometimes far out of range, sometimes not an integer at all. */
const intArg: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: -3, max: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: -20, max: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(1.5, Number.NaN, '1', null, undefined, 2 ** 53, Infinity) },
);

export interface LayoutInput {
  op: LayoutName;
  method: boolean;
  bases: BaseSpec[];
  x: TensorArg;
  args: unknown[];
  /** Seeds for the list arguments (permute's dims, expand's and view's shapes). */
  seeds: number[];
}

export const layoutArb: fc.Arbitrary<LayoutInput> = fc.record({
  op: fc.constantFrom(...LAYOUT_OPS),
  method: fc.boolean(),
  bases: fc.tuple(baseArb()).map((b) => [...b]),
  x: argArb(fc.constant(0)),
  args: fc.array(intArg, { minLength: 4, maxLength: 4 }),
  seeds: fc.array(fc.nat(1000), { minLength: 4, maxLength: 4 }),
});

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** dim in [-n, n) wrapped, or why not (lib/layout.ts wrapDim; n = 0 has no dims). */
function wrap(dim: unknown, n: number): number | string {
  if (!isInt(dim)) return 'a dim that is not an integer';
  if (n === 0 || dim < -n || dim >= n) return 'a dim out of range';
  return dim < 0 ? dim + n : dim;
}

/** An existing dim: a 0-d tensor takes 0 and -1. */
function existing(dim: unknown, ndim: number): number | string {
  return wrap(dim, Math.max(ndim, 1));
}

function dimList(v: unknown, ndim: number): number[] | string {
  const list = typeof v === 'number' ? [v] : v;
  if (!Array.isArray(list)) return 'dims of the wrong kind';
  const out: number[] = [];
  for (const d of list as unknown[]) {
    const w = existing(d, ndim);
    if (typeof w === 'string') return w;
    if (out.includes(w)) return 'a dim named twice';
    out.push(w);
  }
  return out;
}

function shuffle(n: number, seed: number): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  let s = seed + 7;
  for (let i = n - 1; i > 0; i--) {
    s = (s * 48271) % 2147483647;
    const j = s % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

/** A permutation of the dims (as negative dims now and then), or now and then a bad one. */
function dimsFrom(ndim: number, seed: number): number[] {
  const p = shuffle(ndim, seed).map((d, i) => (((seed >> i) & 1) === 1 ? d - ndim : d));
  if (seed % 23 === 0) return p.slice(1);
  if (seed % 29 === 0 && ndim > 1) return [p[0], ...p.slice(0, -1)];
  return p;
}

/** A target for expand/broadcastTo from the input's shape: size-1 dims grown, dims kept with -1, new leading dims, now and then a misfit. */
function expandShape(shape: readonly number[], seed: number): number[] {
  const t = shape.map((s, i) => (s === 1 && ((seed >> i) & 1) === 1 ? 2 + (seed % 2) : ((seed >> (i + 3)) & 1) === 1 ? -1 : s));
  const lead = seed % 5 === 0 ? [1 + (seed % 3)] : seed % 7 === 0 ? [2, 1] : [];
  const out = [...lead, ...t];
  if (seed % 17 === 0 && out.length > 0) out[out.length - 1] = out[out.length - 1] + 2;
  if (seed % 31 === 0) out.unshift(-1);
  return out;
}

/** A target for view/reshape with the same element count (mostly), one -1 now and then. */
function viewShape(shape: readonly number[], seed: number): number[] {
  const n = numel(shape);
  const pick = seed % 8;
  let t: number[];
  if (pick === 0) t = [n];
  else if (pick === 1) t = [-1];
  else if (pick === 2) t = shape.slice().reverse();
  else if (pick === 3) t = [...shape, 1];
  else if (pick === 4 && n % 2 === 0 && n > 0) t = [2, n / 2];
  else if (pick === 5 && shape.length >= 2) t = [shape[0] * shape[1], ...shape.slice(2)];
  else if (pick === 6) t = [n + 1];
  else t = shape.map((s, i) => (i === seed % Math.max(shape.length, 1) ? -1 : s));
  if (seed % 37 === 0) t = [...t, -1, -1];
  return t;
}

function inferShape(req: readonly number[], n: number): number[] | string {
  let infer = -1, known = 1;
  for (let i = 0; i < req.length; i++) {
    const d = req[i];
    if (d === -1) {
      if (infer >= 0) return 'two -1 dims';
      infer = i;
    } else if (d < 0) return 'a negative size';
    else known *= d;
  }
  if (req.length > 16) return 'more than 16 dims';
  const out = req.slice();
  if (infer >= 0) {
    if (known === 0 || n % known !== 0) return 'a shape that does not fit';
    out[infer] = n / known;
  } else if (known !== n) return 'a shape that does not fit';
  return out;
}

/** Python's start:end:step over a dim of `size`; undefined when an argument is refused. */
function range(size: number, start: unknown, end: unknown, step: unknown): { first: number; count: number; step: number } | string {
  const st = step === null || step === undefined ? 1 : step;
  if (!isInt(st)) return 'a step that is not an integer';
  if (st < 1) return 'a step below 1';
  const bound = (v: unknown, dflt: number): number | string => {
    if (v === null || v === undefined) return dflt;
    if (!isInt(v)) return 'a bound that is not an integer';
    return Math.min(Math.max(v < 0 ? v + size : v, 0), size);
  };
  const first = bound(start, 0), last = bound(end, size);
  if (typeof first === 'string') return first;
  if (typeof last === 'string') return last;
  return { first, count: last > first ? Math.ceil((last - first) / st) : 0, step: st };
}

type Outcome = { error: string } | { view: Layout } | { copy: number[] };

/** What the op gives for an input of layout l (a view of the base) and these arguments. */
function layoutModel(op: LayoutName, l: Layout, a: readonly unknown[], seeds: readonly number[]): Outcome {
  const n = l.shape.length;
  const shape = l.shape.slice(), strides = l.strides.slice();
  const err = (e: string | number | number[]): e is string => typeof e === 'string';
  switch (op) {
    case 'transpose': {
      const d0 = existing(a[0], n), d1 = existing(a[1], n);
      if (err(d0)) return { error: d0 };
      if (err(d1)) return { error: d1 };
      if (n > 0) {
        [shape[d0], shape[d1]] = [shape[d1], shape[d0]];
        [strides[d0], strides[d1]] = [strides[d1], strides[d0]];
      }
      return { view: { shape, strides, offset: l.offset } };
    }
    case 'permute': {
      const dims = dimsFrom(n, seeds[0]);
      if (dims.length !== n) return { error: 'dims of another length' };
      const p = dimList(dims, n);
      if (err(p)) return { error: p };
      return { view: { shape: p.map((d) => shape[d]), strides: p.map((d) => strides[d]), offset: l.offset } };
    }
    case 'movedim': {
      const src = dimList(a[0], n), dst = dimList(a[1], n);
      if (err(src)) return { error: src };
      if (err(dst)) return { error: dst };
      if (src.length !== dst.length) return { error: 'source and destination of different lengths' };
      if (n === 0) return { view: l };
      const order = new Array<number>(n).fill(-1);
      src.forEach((s, i) => { order[dst[i]] = s; });
      const rest = shape.map((_, d) => d).filter((d) => !src.includes(d));
      for (let i = 0, k = 0; i < n; i++) if (order[i] < 0) order[i] = rest[k++];
      return { view: { shape: order.map((d) => shape[d]), strides: order.map((d) => strides[d]), offset: l.offset } };
    }
    case 'squeeze': {
      const drop = a[0] === undefined ? shape.map((_, d) => d) : dimList(a[0], n);
      if (err(drop)) return { error: drop };
      const keep = shape.map((s, d) => s !== 1 || !drop.includes(d));
      return { view: { shape: shape.filter((_, d) => keep[d]), strides: strides.filter((_, d) => keep[d]), offset: l.offset } };
    }
    case 'unsqueeze': {
      const d = wrap(a[0], n + 1);
      if (err(d)) return { error: d };
      if (n + 1 > 16) return { error: 'more than 16 dims' };
      shape.splice(d, 0, 1);
      strides.splice(d, 0, 0);
      return { view: { shape, strides, offset: l.offset } };
    }
    case 'expand':
    case 'broadcastTo': {
      const t = expandShape(shape, seeds[0]);
      if (t.some((s) => s < -1)) return { error: 'a size below -1' };
      const lead = t.length - n;
      if (lead < 0) return { error: 'fewer dims than the tensor' };
      if (t.length > 16) return { error: 'more than 16 dims' };
      const os: number[] = [], ost: number[] = [];
      for (let i = 0; i < t.length; i++) {
        const k = i - lead;
        if (k < 0) {
          if (t[i] === -1) return { error: '-1 for a new dim' };
          os.push(t[i]);
          ost.push(0);
          continue;
        }
        const want = t[i] === -1 ? shape[k] : t[i];
        if (want === shape[k]) {
          os.push(want);
          ost.push(strides[k]);
        } else if (shape[k] === 1) {
          os.push(want);
          ost.push(0);
        } else return { error: 'a dim that is not 1 cannot grow' };
      }
      return { view: { shape: os, strides: ost, offset: l.offset } };
    }
    case 'flatten': {
      const s = existing(a[0] ?? 0, n), e = existing(a[1] ?? -1, n);
      if (err(s)) return { error: s };
      if (err(e)) return { error: e };
      if (s > e) return { error: 'startDim after endDim' };
      if (n === 0) return { view: { shape: [1], strides: [1], offset: l.offset } };
      const merged = numel(shape.slice(s, e + 1));
      return { copy: [...shape.slice(0, s), merged, ...shape.slice(e + 1)] };
    }
    case 'slice': {
      const d = wrap(a[0], n);
      if (err(d)) return { error: d };
      const r = range(shape[d], a[1], a[2], a[3]);
      if (typeof r === 'string') return { error: r };
      const off = l.offset + r.first * strides[d];
      shape[d] = r.count;
      strides[d] *= r.step;
      return { view: { shape, strides, offset: off } };
    }
    case 'narrow': {
      const d = wrap(a[0], n);
      if (err(d)) return { error: d };
      if (!isInt(a[1]) || !isInt(a[2])) return { error: 'start or length not an integer' };
      const size = shape[d];
      let s = a[1];
      const len = a[2];
      if (s < -size || s > size) return { error: 'start out of range' };
      if (s < 0) s += size;
      if (len < 0 || s + len > size) return { error: 'length out of range' };
      shape[d] = len;
      return { view: { shape, strides, offset: l.offset + s * strides[d] } };
    }
    case 'sliceDims': {
      const specs = sliceSpecs(a, seeds[1]);
      if (specs.length > n) return { error: 'more indices than dims' };
      const out: Layout = { shape: [], strides: [], offset: l.offset };
      for (let d = 0; d < n; d++) {
        const sp = specs[d];
        if (sp === null || sp === undefined) {
          out.shape.push(shape[d]);
          out.strides.push(strides[d]);
        } else if (typeof sp === 'number') {
          if (!isInt(sp)) return { error: 'an index that is not an integer' };
          if (sp < -shape[d] || sp >= shape[d]) return { error: 'an index out of range' };
          out.offset += (sp < 0 ? sp + shape[d] : sp) * strides[d];
        } else if (Array.isArray(sp) && sp.length <= 3) {
          const r = range(shape[d], sp[0], sp[1], sp[2]);
          if (typeof r === 'string') return { error: r };
          out.offset += r.first * strides[d];
          out.shape.push(r.count);
          out.strides.push(strides[d] * r.step);
        } else return { error: 'an index of the wrong kind' };
      }
      return { view: out };
    }
    case 'view':
    case 'reshape': {
      const t = viewShape(shape, seeds[2]);
      const s = inferShape(t, numel(shape));
      if (err(s)) return { error: s };
      return { copy: s };
    }
    case 'contiguous':
    case 'clone':
      return { copy: shape };
  }
}

/** sliceDims' specs: from the int arguments, as indices, full dims and [start, end, step] ranges. */
function sliceSpecs(a: readonly unknown[], seed: number): unknown[] {
  return a.slice(0, 1 + (seed % 4)).map((v, i) => {
    const kind = (seed >> (2 * i + 2)) & 3;
    if (kind === 0) return v;
    if (kind === 1) return null;
    if (kind === 2) return [v, a[(i + 1) % a.length]];
    return [null, null, v];
  });
}

type Call = (x: gx.Tensor) => unknown;

function callOf(op: LayoutName, method: boolean, a: readonly unknown[], seeds: readonly number[], ndim: number, shape: readonly number[]): Call {
  const i = (k: number): number => a[k] as number;
  switch (op) {
    case 'transpose': return method ? (x) => x.transpose(i(0), i(1)) : (x) => gx.transpose(x, i(0), i(1));
    case 'permute': {
      const d = dimsFrom(ndim, seeds[0]);
      return method ? (x) => x.permute(...d) : (x) => gx.permute(x, d);
    }
    case 'movedim': return method ? (x) => x.movedim(i(0), i(1)) : (x) => gx.movedim(x, i(0), i(1));
    case 'squeeze': return method ? (x) => x.squeeze(a[0] as number | undefined) : (x) => gx.squeeze(x, a[0] as number | undefined);
    case 'unsqueeze': return method ? (x) => x.unsqueeze(i(0)) : (x) => gx.unsqueeze(x, i(0));
    case 'expand': {
      const t = expandShape(shape, seeds[0]);
      return method ? (x) => x.expand(...t) : (x) => gx.expand(x, t);
    }
    case 'broadcastTo': {
      const t = expandShape(shape, seeds[0]);
      return method ? (x) => x.broadcastTo(t) : (x) => gx.broadcastTo(x, t);
    }
    case 'flatten': {
      const s = a[0] ?? undefined, e = a[1] ?? undefined;
      return method ? (x) => x.flatten(s as number, e as number) : (x) => gx.flatten(x, s as number, e as number);
    }
    case 'slice': return method ? (x) => x.slice(i(0), i(1), i(2), a[3] as number) : (x) => gx.slice(x, i(0), i(1), i(2), a[3] as number);
    case 'narrow': return method ? (x) => x.narrow(i(0), i(1), i(2)) : (x) => gx.narrow(x, i(0), i(1), i(2));
    case 'sliceDims': {
      const s = sliceSpecs(a, seeds[1]) as gx.DimSlice[];
      return method ? (x) => x.sliceDims(...s) : (x) => gx.sliceDims(x, ...s);
    }
    case 'view': {
      const t = viewShape(shape, seeds[2]);
      return (x) => (t.length === 0 ? x.view(t) : x.view(...t));  // view() with no size at all is refused, as torch's
    }
    case 'reshape': {
      const t = viewShape(shape, seeds[2]);
      return (x) => x.reshape(t);
    }
    case 'contiguous': return (x) => x.contiguous();
    case 'clone': return (x) => x.clone();
  }
}

/** The layout of a result tensor as the model reads it. */
function layoutOf(t: gx.Tensor): Layout {
  return { shape: t.shape.slice(), strides: t.strides.slice(), offset: t.storageOffset };
}

/**
 * Whether view() must succeed: for a contiguous input (or an empty one). Other
 * layouts may allow it or not (PyTorch's stride rule); the model then takes a
 * view or an Error naming Tensor.view.
 */
function mustView(l: Layout): boolean {
  let s = 1;
  for (let d = l.shape.length - 1; d >= 0; d--) {
    if (l.shape[d] !== 1 && l.strides[d] !== s) return l.shape.includes(0);
    s *= l.shape[d];
  }
  return true;
}

function layoutPlan(inp: LayoutInput): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveArg(inp.x, bases);
  const methodOnly = ['view', 'reshape', 'contiguous', 'clone'].includes(inp.op);
  const fnName = methodOnly ? `Tensor.${inp.op}` : `gx.${inp.op}`;
  const names = [fnName];
  const verdict = ((): Plan['verdict'] => {
    if (x.disposed) return errorVerdict('a disposed input');
    const o = layoutModel(inp.op, x.layout, inp.args, inp.seeds);
    if ('error' in o) return errorVerdict(o.error);
    const base = bases[x.base].data;
    if ('view' in o) {
      const want = offsetsOf(o.view);
      const expect: Expect = {
        dtype: x.dtype, shape: o.view.shape, values: gather(base, o.view),
        check: (r) => {
          const got = offsetsOf(layoutOf(r));
          return got.every((g, i) => g === want[i]) ? undefined : `a view of storage elements [${got.slice(0, 12)}], the model says [${want.slice(0, 12)}]`;
        },
      };
      return { kind: 'ok', expect };
    }
    // Copies (or views where the strides allow): the input's values in C order, reshaped. view, reshape and
    // flatten of a contiguous input are views: the same storage elements in the same order.
    const shares = ['view', 'reshape', 'flatten'].includes(inp.op) && mustView(x.layout);
    const want = offsetsOf(x.layout);
    const expect: Expect = {
      dtype: x.dtype, shape: o.copy, values: x.values,
      check: shares ? (r) => (offsetsOf(layoutOf(r)).every((g, i) => g === want[i]) ? undefined : 'a copy where a view was due') : undefined,
    };
    if (inp.op === 'view' && !mustView(x.layout)) return { kind: 'ok', expect, mayThrow: 'a view the strides may not allow' };
    return { kind: 'ok', expect };
  })();
  return {
    bases,
    plan: {
      names,
      verdict,
      prepare: (pool) => {
        const t = pool.tensor(x);
        const f = callOf(inp.op, inp.method, inp.args, inp.seeds, x.layout.shape.length, x.layout.shape);
        return { call: () => f(t) };
      },
    },
  };
}

export const layoutProperty: FuzzProperty<LayoutInput> = {
  name: 'layout',
  about: 'gx.transpose ... gx.sliceDims and their methods, view, reshape, contiguous, clone',
  arb: layoutArb,
  plan: layoutPlan,
};
