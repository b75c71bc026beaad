// The fuzz suite's model of tensors: a base (dtype, shape, values in C order)
// and a chain of view steps over it, resolved into a layout (shape, strides,
// offset) in plain JS, so the values a view holds, the memory it touches and
// whether two operands overlap are known without asking lib/. A Pool turns
// the same descriptions into gx tensors on a device and frees them all after
// the call.
import * as gx from '../../lib';
import { VALUE_ARRAY } from '../../lib/generated/dtypes';
import type { DType } from '../../lib';
import type { V } from './semantics';

export interface Layout {
  shape: number[];
  strides: number[];
  offset: number;
}

export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

export function contiguousStrides(shape: readonly number[]): number[] {
  const st = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    st[d] = s;
    s *= Math.max(shape[d], 1);
  }
  return st;
}

export function contiguousLayout(shape: readonly number[]): Layout {
  return { shape: shape.slice(), strides: contiguousStrides(shape), offset: 0 };
}

/** The storage offsets of a layout's elements, in C order. */
export function offsetsOf(l: Layout): number[] {
  const n = numel(l.shape);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    let rest = i, off = l.offset;
    for (let d = l.shape.length - 1; d >= 0; d--) {
      const idx = rest % l.shape[d];
      rest = Math.floor(rest / l.shape[d]);
      off += idx * l.strides[d];
    }
    out[i] = off;
  }
  return out;
}

export function gather<T>(data: readonly T[], l: Layout): T[] {
  return offsetsOf(l).map((o) => data[o]);
}

/**
 * Several elements at one address: a dim of size > 1 with stride 0, what
 * expand makes (the only way the view steps make it; an empty tensor counts
 * too, as lib/ops/common.ts and PyTorch count it).
 */
export function overlapsItself(l: Layout): boolean {
  return l.shape.some((s, i) => s > 1 && l.strides[i] === 0);
}

/** How two layouts over one storage relate: none, the very same elements in the same order, or partly. */
export function overlap(a: Layout, b: Layout): 'none' | 'same' | 'partial' {
  const oa = offsetsOf(a), ob = offsetsOf(b);
  const sb = new Set(ob);
  if (!oa.some((o) => sb.has(o))) return 'none';
  if (oa.length === ob.length && oa.every((o, i) => o === ob[i])) return 'same';
  return 'partial';
}

// The broadcast index map is the ops tests' own (one definition).
export { broadcastIndex } from '../ops-reference';

/** NumPy broadcasting; undefined when the shapes do not broadcast. */
export function broadcast(shapes: readonly (readonly number[])[]): number[] | undefined {
  const n = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(n).fill(1);
  for (const s of shapes) {
    for (let k = 0; k < s.length; k++) {
      const i = n - s.length + k;
      if (out[i] === 1) out[i] = s[k];
      else if (s[k] !== 1 && s[k] !== out[i]) return undefined;
    }
  }
  return out;
}

// --- view steps -----------------------------------------------------------------

export const VIEW_OPS = ['transpose', 'narrow', 'slice', 'expand', 'unsqueeze', 'permute', 'squeeze'] as const;
export type ViewOp = (typeof VIEW_OPS)[number];

/** One view step as generated: an op and three small numbers it reads its arguments from. */
export interface ViewStep {
  op: ViewOp;
  a: number;
  b: number;
  c: number;
}

/** A step made concrete for a layout: the gx call and the layout it gives. */
interface Resolved {
  call: (t: gx.Tensor) => gx.Tensor;
  layout: Layout;
}

/** Elements a view may reach through expand (keeps the fuzz inputs small). */
const MAX_VIEW_NUMEL = 256;

function shuffled(n: number, seed: number): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  let s = seed + 1;
  for (let i = n - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

/** The step applied to `l` (PyTorch's semantics), or undefined where it does not apply. */
export function resolveStep(step: ViewStep, l: Layout): Resolved | undefined {
  const r = l.shape.length;
  const { a, b, c } = step;
  const shape = l.shape.slice(), strides = l.strides.slice();
  switch (step.op) {
    case 'transpose': {
      const n = Math.max(r, 1);
      const d0 = a % n, d1 = b % n;
      if (r > 0) {
        [shape[d0], shape[d1]] = [shape[d1], shape[d0]];
        [strides[d0], strides[d1]] = [strides[d1], strides[d0]];
      }
      const neg = c % 2 === 1 ? -n : 0;  // sometimes as a negative dim
      return { call: (t) => gx.transpose(t, d0 + neg, d1), layout: { shape, strides, offset: l.offset } };
    }
    case 'permute': {
      const p = shuffled(r, a);
      return {
        call: (t) => gx.permute(t, p),
        layout: { shape: p.map((d) => l.shape[d]), strides: p.map((d) => l.strides[d]), offset: l.offset },
      };
    }
    case 'narrow': {
      if (r === 0) return undefined;
      const dim = a % r, size = shape[dim];
      const start = b % (size + 1), length = c % (size - start + 1);
      shape[dim] = length;
      return { call: (t) => gx.narrow(t, dim, start, length), layout: { shape, strides, offset: l.offset + start * l.strides[dim] } };
    }
    case 'slice': {
      if (r === 0) return undefined;
      const dim = a % r, size = shape[dim];
      const start = b % (size + 1), st = 1 + (c % 3);
      shape[dim] = size > start ? Math.ceil((size - start) / st) : 0;
      strides[dim] *= st;
      return { call: (t) => gx.slice(t, dim, start, null, st), layout: { shape, strides, offset: l.offset + start * l.strides[dim] } };
    }
    case 'expand': {
      const target = shape.map((s, i) => (s === 1 && ((a >> i) & 1) === 1 ? 2 + ((b + i) % 2) : s));
      const lead = c % 3 === 1 && r < 16 ? [1 + (b % 3)] : [];
      const full = [...lead, ...target];
      if (numel(full) > MAX_VIEW_NUMEL) return undefined;
      const st = [...lead.map(() => 0), ...target.map((s, i) => (s !== shape[i] ? 0 : strides[i]))];
      const arg = full.map((s, i) => (i >= lead.length && s === shape[i - lead.length] && (a & 4) !== 0 ? -1 : s));
      return { call: (t) => gx.expand(t, arg), layout: { shape: full, strides: st, offset: l.offset } };
    }
    case 'unsqueeze': {
      if (r >= 16) return undefined;
      const d = a % (r + 1);
      shape.splice(d, 0, 1);
      strides.splice(d, 0, 1);
      return { call: (t) => gx.unsqueeze(t, d), layout: { shape, strides, offset: l.offset } };
    }
    case 'squeeze': {
      if (r === 0 || !shape.includes(1)) return undefined;
      if (b % 2 === 0) {
        const keep = shape.map((s) => s !== 1);
        return {
          call: (t) => gx.squeeze(t),
          layout: { shape: shape.filter((_, i) => keep[i]), strides: strides.filter((_, i) => keep[i]), offset: l.offset },
        };
      }
      const d = shape.indexOf(1, a % r) >= 0 ? shape.indexOf(1, a % r) : shape.indexOf(1);
      shape.splice(d, 1);
      strides.splice(d, 1);
      return { call: (t) => gx.squeeze(t, d), layout: { shape, strides, offset: l.offset } };
    }
  }
}

// --- bases, tensor arguments, and their materialization -------------------------

/** A contiguous tensor the fuzz makes with gx.tensor: values exactly representable in dtype. */
export interface BaseSpec {
  dtype: DType;
  shape: number[];
  data: V[];
  /** Kept on the CPU when the run's device is CUDA (a device mix-up). */
  cpu?: boolean;
}

/** A tensor argument: a view chain over one of the call's bases. */
export interface TensorArg {
  base: number;
  views: ViewStep[];
  disposed?: boolean;
}

/** A TensorArg resolved against its base: what the model knows of it. */
export interface ModelTensor {
  base: number;
  dtype: DType;
  layout: Layout;
  steps: Resolved[];
  disposed: boolean;
  cpu: boolean;
  /** The values it holds, C order. */
  values: V[];
}

export function resolveArg(arg: TensorArg, bases: readonly BaseSpec[]): ModelTensor {
  const bi = arg.base % bases.length;
  const base = bases[bi];
  let layout = contiguousLayout(base.shape);
  const steps: Resolved[] = [];
  for (const s of arg.views) {
    const r = resolveStep(s, layout);
    if (r === undefined) continue;
    steps.push(r);
    layout = r.layout;
  }
  return {
    base: bi, dtype: base.dtype, layout, steps, disposed: arg.disposed === true, cpu: base.cpu === true,
    values: gather(base.data, layout),
  };
}

/** A typed array holding `data` for gx.tensor (the value array toArray() gives for dtype). */
export function typedData(dtype: DType, data: readonly V[]): Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array {
  if (dtype === 'int64') return BigInt64Array.from(data, (v) => BigInt(v));
  const out = new VALUE_ARRAY[dtype](data.length);
  for (let i = 0; i < data.length; i++) out[i] = Number(data[i]);
  return out;
}

/** Makes gx tensors from model descriptions on one device and frees every one of them at the end. */
export class Pool {
  readonly made: gx.Tensor[] = [];
  readonly baseTensors: (gx.Tensor | undefined)[] = [];

  constructor(readonly bases: readonly BaseSpec[], readonly device: string) {}

  keep<T extends gx.Tensor>(t: T): T {
    this.made.push(t);
    return t;
  }

  base(i: number): gx.Tensor {
    let t = this.baseTensors[i];
    if (t === undefined) {
      const b = this.bases[i];
      const dev = b.cpu === true ? 'cpu' : this.device;
      t = this.keep(gx.tensor(typedData(b.dtype, b.data), { dtype: b.dtype, shape: b.shape, device: dev }));
      this.baseTensors[i] = t;
    }
    return t;
  }

  /** The gx tensor for a model tensor (its view chain applied; disposed when asked). */
  tensor(m: ModelTensor): gx.Tensor {
    let t = this.base(m.base);
    for (const s of m.steps) t = this.keep(s.call(t));
    if (m.disposed) {
      if (t === this.baseTensors[m.base]) t = this.keep(gx.transpose(t, 0, -1));  // dispose a view, not the base
      t.dispose();
    }
    return t;
  }

  /** The values of base i now (to see what a call wrote). */
  readBase(i: number): V[] {
    const t = this.baseTensors[i];
    return t === undefined ? this.bases[i].data.slice() : Array.from(t.toArraySync() as ArrayLike<V>);
  }

  disposeAll(): void {
    for (const t of this.made) if (!t.isDisposed) t.dispose();
    this.made.length = 0;
  }
}
