// gx.vectorize's elementwise kernel as PTX (NOTE [ PTX path ] in
// emit-ptx.ts), so a vectorized function's first call skips NVRTC as a
// jit.rawkernel's does.
//
// NOTE [ Elementwise PTX ]
// The kernel is the one elementwise-codegen.ts prints as CUDA for the same
// call, instruction for instruction where it matters: the same parameter
// list (elementwiseParams), the same two shapes (tiled: UNROLL vectors of
// 16 bytes per operand per thread where every pointer is aligned, one
// element per thread per step in the last partial tile and at odd offsets;
// strided: a grid-stride loop computing each strided operand's offset from
// the linear index), the same launch geometry (the launcher's geometryOf
// reads the same constants), and the scalar function inlined at every
// element as NVRTC inlines the __device__ function (a call per element ran
// a grid-stride gaussian at 0.44x, NOTE [ PTX path ]). Unlike NVRTC's fully
// unrolled tile, the UNROLL vectors, all loaded first, are computed one per
// turn of a loop, so the function is inlined VEC times plus once for the
// element path, not VEC x UNROLL + 1: the driver's JIT time grows with the
// copies (a 9-copy gaussian took 45-75 ms to load on an H200's host, against
// 8-11 ms for a one-line kernel), and the loop ran at the unrolled kernel's
// speed (0.133 vs 0.134-0.136 ms over 2^26 float32). Inputs load through
// the read-only path (ld.global.nc), as NVRTC loads `const __restrict__`
// pointers. A number operand is converted as the CUDA source's C cast
// converts it (`(T)x_value`). Kernels of bool operands only (16-element
// vectors) go through NVRTC.
import { dtypeInfo } from '../generated/dtypes';
import { elementwiseParams, isTiled, THREADS, UNROLL, vectorWidth, type ElementwiseParam, type ElementwiseSourceIn, type Layout } from '../rtc/elementwise-codegen';
import { ptxEntry, type PtxBody, type PtxParam } from './emit-ptx';
import type { FnIR } from './ir';
import { classOf, convert, elementType, PTX_TYPE, unsupported, type RegClass } from './ptx-isa';
import { ptxCoordinate } from './ptx-intrinsics';
import { SCALAR_DTYPES, type ScalarDType } from './types';

/** One operand of the kernel: its parameter names, layout, dtype and element size. */
interface Operand {
  name: string;
  layout: Layout;
  dtype: ScalarDType;
  size: number;
  out: boolean;
}

/** The register class an element is held in between memory and the function: its own, but a bool's byte in 32 bits (as loadElement holds it). */
const memClass = (d: ScalarDType): RegClass => classOf(d === 'bool' ? 'int32' : d);

/**
 * The elementwise kernel `g` (one output; inputs contiguous, strided or
 * numbers) running the scalar function `fn` at each element, as PTX.
 * Throws PtxUnsupported where the CUDA route must take it.
 */
export function emitElementwisePtx(fn: FnIR, g: ElementwiseSourceIn): string {
  const ops = g.all.map((p, k): Operand => {
    const d = g.types[k];
    if (!(SCALAR_DTYPES as readonly string[]).includes(d)) unsupported(`an operand of ${d}`);
    if (g.layouts[k] === 'r') unsupported('a raw operand');
    return { name: p.name, layout: g.layouts[k], dtype: d as ScalarDType, size: dtypeInfo(d).itemsize, out: k >= g.nIn };
  });
  if (ops.length - g.nIn !== 1) unsupported('several outputs');
  const list = elementwiseParams(g).map(paramOf);
  const tiled = isTiled(g.layouts, g.body);
  return ptxEntry(fn, g.name, undefined, (f) => {
    const values = new Map(ops.filter((o) => o.layout === 'v').map((o) => [o, valueOperand(f, o)] as const));
    if (tiled) tiledBody(f, ops, values, vectorWidth(g.layouts, g.types));
    else stridedBody(f, ops, values, g.ndim);
  }, () => list, `.maxntid ${THREADS}, 1, 1`);
}

/** A parameter of elementwiseParams as the entry's: its C type (a pointer's unqualified) and register. */
const paramOf = (p: ElementwiseParam): PtxParam => ({ type: p.kind === 'pointer' ? `${p.base}*` : p.base, reg: `%${p.name}` });

/** A number operand in its dtype, converted from the double it is passed as, as the CUDA source's numberLocal does. */
function valueOperand(f: PtxBody, o: Operand): string {
  const x = `%${o.name}_value`;
  if (o.dtype === 'float64') return x;
  // Integers by the language's rule (cvt.rzi alone gives INT_MIN for NaN).
  if (o.dtype !== 'bool' && o.dtype !== 'float32') return convert(f, x, 'float64', o.dtype);
  const r = f.reg(o.dtype === 'bool' ? 'pred' : memClass(o.dtype));
  if (o.dtype === 'bool') f.ins(`setp.neu.f64 ${r}, ${x}, 0d0000000000000000;`);  // (bool)x: x != 0, NaN true
  else f.ins(`cvt.rn.f32.f64 ${r}, ${x};`);
  return r;
}

/** A thread coordinate's x as a 64-bit integer. */
const coordinate = (f: PtxBody, what: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim'): string => ptxCoordinate(f, what, 'x', 'int64');

/** The byte address of element `index` (an s64 register) of operand o. */
function addressOf(f: PtxBody, o: Operand, index: string): string {
  const a = f.reg('s64');
  f.ins(`mad.lo.s64 ${a}, ${index}, ${o.size}, %${o.name}_ptr;`);
  return a;
}

/** The function's value at one element: its arguments (elements held as memClass, numbers as computed), the result as memClass. */
function apply(f: PtxBody, ops: readonly Operand[], values: ReadonlyMap<Operand, string>, elements: ReadonlyMap<Operand, string>, out: Operand): string {
  const args = ops.filter((o) => !o.out).map((o) => {
    const v = values.get(o);
    if (v !== undefined) return v;
    const e = elements.get(o);
    if (e === undefined) throw new Error('gx.vectorize: internal: an operand without a value');
    return o.dtype === 'bool' ? convert(f, e, 'int32', 'bool') : e;
  });
  const r = f.inline(args);
  return out.dtype === 'bool' ? convert(f, r, 'bool', 'int32') : r;
}

/** One element of each tensor operand at `index` (contiguous operands) or their own offsets (strided ones), run and stored. */
function oneElement(f: PtxBody, ops: readonly Operand[], values: ReadonlyMap<Operand, string>, at: (o: Operand) => string): void {
  const elements = new Map<Operand, string>();
  for (const o of ops) {
    if (o.out || o.layout === 'v') continue;
    const r = f.reg(memClass(o.dtype));
    f.ins(`ld.global.nc.${elementType(o.dtype)} ${r}, [${addressOf(f, o, at(o))}];`);
    elements.set(o, r);
  }
  const out = ops[ops.length - 1];
  const r = apply(f, ops, values, elements, out);
  f.ins(`st.global.${elementType(out.dtype)} [${addressOf(f, out, at(out))}], ${r};`);
}

/** NOTE [ Vectorized elementwise kernels ] in elementwise-codegen.ts, as PTX. */
function tiledBody(f: PtxBody, ops: readonly Operand[], values: ReadonlyMap<Operand, string>, vec: number): void {
  if (vec > 4) unsupported(`vectors of ${vec} elements (a kernel of bools only)`);
  const tile = THREADS * vec * UNROLL;
  const tensors = ops.filter((o) => o.layout === 'c');
  const out = ops[ops.length - 1];
  const tid = coordinate(f, 'threadIdx'), block = coordinate(f, 'blockIdx'), grid = coordinate(f, 'gridDim');
  // Every contiguous pointer aligned to its vector: tested once, as the CUDA kernel does.
  const aligned = f.reg('pred');
  f.ins(`setp.eq.u32 ${aligned}, 0, 0;`);
  for (const o of tensors) {
    const t = f.reg('s64'), p = f.reg('pred');
    f.ins(`and.b64 ${t}, %${o.name}_ptr, ${vec * o.size - 1};`);
    f.ins(`setp.eq.s64 ${p}, ${t}, 0;`);
    f.ins(`and.pred ${aligned}, ${aligned}, ${p};`);
  }
  const base = f.reg('s64'), step = f.reg('s64'), lane = f.reg('s64');
  f.ins(`mul.lo.s64 ${base}, ${block}, ${tile};`);
  f.ins(`mul.lo.s64 ${step}, ${grid}, ${tile};`);
  f.ins(`mul.lo.s64 ${lane}, ${tid}, ${vec};`);
  const top = f.label(), slow = f.label(), next = f.label(), end = f.label();
  f.place(top);
  const done = f.reg('pred'), partial = f.reg('pred'), last = f.reg('s64');
  f.ins(`setp.ge.s64 ${done}, ${base}, %n;`);
  f.ins(`@${done} bra ${end};`);
  f.ins(`@!${aligned} bra ${slow};`);
  f.ins(`add.s64 ${last}, ${base}, ${tile};`);
  f.ins(`setp.gt.s64 ${partial}, ${last}, %n;`);
  f.ins(`@${partial} bra ${slow};`);
  // Whole vectors: UNROLL per operand, loaded, computed element by element, stored.
  const starts = Array.from({ length: UNROLL }, (_, u) => {
    const at = f.reg('s64');
    f.ins(`add.s64 ${at}, ${base}, ${lane};`);
    if (u > 0) f.ins(`add.s64 ${at}, ${at}, ${u * THREADS * vec};`);
    return at;
  });
  const vecOp = vec === 1 ? '' : `.v${vec}`;
  const group = (rs: readonly string[]): string => (vec === 1 ? rs[0] : `{${rs.join(', ')}}`);
  const loaded = new Map<Operand, string[][]>();
  for (const o of tensors) {
    if (o.out) continue;
    loaded.set(o, starts.map((at) => {
      const rs = Array.from({ length: vec }, () => f.reg(memClass(o.dtype)));
      f.ins(`ld.global.nc${vecOp}.${elementType(o.dtype)} ${group(rs)}, [${addressOf(f, o, at)}];`);
      return rs;
    }));
  }
  // The vectors are computed one per turn of a loop, each turn moving the next vector's registers (and start) into
  // the first's: the function is inlined vec times, not vec x UNROLL (NOTE [ Elementwise PTX ]: the driver's JIT).
  const turn = f.reg('s32'), more = f.reg('pred');
  f.ins(`mov.u32 ${turn}, 0;`);
  const again = f.label();
  f.place(again);
  const results = Array.from({ length: vec }, (_, j) => apply(f, ops, values, new Map([...loaded].map(([o, rs]) => [o, rs[0][j]] as const)), out));
  f.ins(`st.global${vecOp}.${elementType(out.dtype)} [${addressOf(f, out, starts[0])}], ${group(results)};`);
  for (let u = 0; u + 1 < UNROLL; u++) {
    for (const [o, rs] of loaded) rs[u].forEach((r, j) => f.ins(`mov.b${o.size > 4 ? 64 : 32} ${r}, ${rs[u + 1][j]};`));
    f.ins(`mov.b64 ${starts[u]}, ${starts[u + 1]};`);
  }
  f.ins(`add.u32 ${turn}, ${turn}, 1;`);
  f.ins(`setp.lt.u32 ${more}, ${turn}, ${UNROLL};`);
  f.ins(`@${more} bra ${again};`);
  f.ins(`bra.uni ${next};`);
  // The last partial tile, and pointers at odd offsets: one element per thread per step, THREADS apart.
  f.place(slow);
  const i = f.reg('s64'), stop = f.reg('s64'), past = f.reg('pred');
  f.ins(`add.s64 ${i}, ${base}, ${tid};`);
  f.ins(`add.s64 ${stop}, ${base}, ${tile};`);
  f.ins(`min.s64 ${stop}, ${stop}, %n;`);
  const each = f.label();
  f.place(each);
  f.ins(`setp.ge.s64 ${past}, ${i}, ${stop};`);
  f.ins(`@${past} bra ${next};`);
  oneElement(f, ops, values, () => i);
  f.ins(`add.s64 ${i}, ${i}, ${THREADS};`);
  f.ins(`bra.uni ${each};`);
  f.place(next);
  f.ins(`add.s64 ${base}, ${base}, ${step};`);
  f.ins(`bra.uni ${top};`);
  f.place(end);
}

/** The grid-stride kernel: one element per thread per step, each strided operand's offset from the linear index. */
function stridedBody(f: PtxBody, ops: readonly Operand[], values: ReadonlyMap<Operand, string>, ndim: number): void {
  const tid = coordinate(f, 'threadIdx'), block = coordinate(f, 'blockIdx'), grid = coordinate(f, 'gridDim'), threads = coordinate(f, 'blockDim');
  const i = f.reg('s64'), step = f.reg('s64');
  f.ins(`mad.lo.s64 ${i}, ${block}, ${threads}, ${tid};`);
  f.ins(`mul.lo.s64 ${step}, ${grid}, ${threads};`);
  const top = f.label(), end = f.label();
  f.place(top);
  const done = f.reg('pred');
  f.ins(`setp.ge.s64 ${done}, ${i}, %n;`);
  f.ins(`@${done} bra ${end};`);
  const strided = ops.filter((o) => o.layout === 's');
  const offsets = new Map<Operand, string>();
  if (strided.length > 0) {
    const rem = f.reg('s64'), idx = f.reg('s64');
    f.ins(`mov.b64 ${rem}, ${i};`);
    for (const o of strided) {
      const r = f.reg('s64');
      f.ins(`mov.b64 ${r}, 0;`);
      offsets.set(o, r);
    }
    for (let d = ndim - 1; d >= 0; d--) {
      f.ins(`rem.s64 ${idx}, ${rem}, %shape${d};`);
      f.ins(`div.s64 ${rem}, ${rem}, %shape${d};`);
      for (const o of strided) f.ins(`mad.lo.s64 ${offsets.get(o)}, ${idx}, %${o.name}_stride${d}, ${offsets.get(o)};`);
    }
  }
  oneElement(f, ops, values, (o) => offsets.get(o) ?? i);
  f.ins(`add.s64 ${i}, ${i}, ${step};`);
  f.ins(`bra.uni ${top};`);
  f.place(end);
}
