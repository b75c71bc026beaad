// The elementwise ops gx.fuse calls on elements: each one the C++ functor the
// built-in CPU and CUDA kernels run (ops/unary/functors.h,
// ops/binary/functors.h), called in the compute type the eager op would pick,
// on operands converted as the eager op converts them. Which ops there are,
// their functors, dtype rules and compute-type sets come from the op list
// (ops/op-list.js, through the generated BINARY / UNARY tables): a new
// elementwise op in the list fuses with nothing written here.
//
// NOTE [ Fused ops are the ops' functors ]
// A fused function is exact against the unfused one, op by op:
// - the result dtype of each op is the eager op's (NOTE [ Types in jit
//   functions ] in translate.ts follows lib/ops/promotion.ts), and every op's
//   value is converted to it, as the eager op stores its result;
// - the compute type is dispatch.h's with_compute of that dtype and the op's
//   compute-type set: float for float32, double for float64, long long for
//   the integers and bool (unless the set refuses bool), bool for the logical
//   ops; float16 and bfloat16 compute in float (NOTE [ Fused ops round where
//   the eager ops store ]); a dtype outside the set is not fusable (the eager op refuses it);
// - a tensor operand is converted to the common dtype before the compute
//   type (NOTE [ Operands converted to the common dtype ] in ops/common/hd.h),
//   a JS number straight to the compute type (scalar_as in ops/common/iter.h);
// - each floating result passes through gx_fuse_keep, which keeps the
//   compilers from contracting one op's multiply (MulOp, or the last multiply
//   of a math function) and the next op's add into an FMA, which the eager
//   ops (two kernels) never do. An empty asm is not enough: NVVM stops there,
//   but PTX's mul.f32 / add.f32 without a rounding modifier may still be
//   fused by ptxas. So the value's bits are ORed with a zero no compiler can
//   prove zero (the launch's dynamic shared memory size shifted right by 31:
//   always 0), an integer op between the two: bit-exact (NaN payloads and
//   -0 kept), two integer instructions per op, nothing in a memory-bound kernel.
//
// NOTE [ Fused ops round where the eager ops store ]
// The project's rule is bit-exactness with the eager ops, not torch.compile's
// (which keeps a chain's intermediates in float32). An eager op stores its
// result in its dtype, so a fused chain rounds at each op's result as well:
// a float16 or bfloat16 value is held in a float (its compute type) but
// passes through __half / __nv_bfloat16 (round to nearest even) after every
// op; an int8, int16 or uint8 value is held in an int and wraps to its width
// (the C++ cast the eager store makes). The value's type says which (Ty.store
// in types.ts). An operand of another dtype than the op's common dtype is
// converted to it first, as hd.h's load_operand does: to the common dtype's
// held type, then rounded or wrapped to it (int16 -> float16 rounds; a
// logical op tests "nonzero" after that). The kernel's output takes the last
// op's dtype; its stores are exact (the value is already rounded).
// NVRTC compiles the functor headers (NOTE [ Functor headers under NVRTC ] in
// ops/common/hd_math.h) from the package's ops/ (package.json ships
// ops/**/*.h), found through an -I of the package root; the kernel cache
// hashes them like any included header, so an edited functor recompiles.
import * as path from 'path';

import { COMPUTE_DTYPE, KERNEL_C_TYPES, type DType } from '../generated/dtypes';
import * as ops from '../generated/ops';
import { isFloating, isIntegral, promoteTypes } from '../ops/promotion';
import { hasParamFacts, negativeIntegerPower, numberOperandFault, unaryParamsFault } from '../ops/elementwise/elementwise';
import { packageRoot } from '../platform/paths';
import type { FactValue, OpCalls, OperandFact, OpOptions } from './translate';
import { computeDType, C_TYPE, promote, type NarrowDType, type Ty, type Val } from './types';

/** The C++ compute types of the functors (NOTE [ Compute types ] in ops/common/hd.h). */
type Compute = 'float' | 'double' | 'long long' | 'bool';

/** A value's type as the eager ops see it: a dtype (any of the list's), weak for JS numbers. */
interface Eager {
  dtype: DType;
  weak: boolean;
}

/** What gx.fuse's kernels put first: the functor headers and the contraction barrier. */
export const FUSE_PREAMBLE = `#include <ops/unary/functors.h>
#include <ops/binary/functors.h>
__device__ __forceinline__ unsigned gx_fuse_zero() {
  unsigned s = 0;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(s));
  return s & (s >> 31);
}
__device__ __forceinline__ float gx_fuse_keep(float v) { return __int_as_float(__float_as_int(v) | (int)gx_fuse_zero()); }
__device__ __forceinline__ double gx_fuse_keep(double v) {
  return __longlong_as_double(__double_as_longlong(v) | (long long)gx_fuse_zero());
}
`;

/** The headers a fused kernel over tensors of `dtypes` needs before FUSE_PREAMBLE (the 16-bit floats' conversions). */
export function fuseHeaders(dtypes: readonly DType[]): string {
  return `${dtypes.includes('float16') ? '#include <cuda_fp16.h>\n' : ''}${dtypes.includes('bfloat16') ? '#include <cuda_bf16.h>\n' : ''}`;
}

/** The compiler options gx.fuse's kernels need: the package root on the include path (for <ops/...>), C++17 (the functors' if constexpr). */
export function fuseCompileOptions(): string[] {
  return ['-std=c++17', `-I${path.resolve(packageRoot())}`];
}

/** with_compute (ops/common/dispatch.h): the compute type of `common` for an op of `set`, or undefined when the op refuses it. */
export function computeOf(common: DType, set: ops.Computes): Compute | undefined {
  if (set.bool) return 'bool';
  const c = COMPUTE_DTYPE[common];
  if (c === 'float32') return set.float ? 'float' : undefined;
  if (c === 'float64') return set.double ? 'double' : undefined;
  if (common === 'bool' && set.noBool) return undefined;
  return set.int ? 'long long' : undefined;
}

const eagerOf = (t: Ty): Eager => ({ dtype: t.store ?? t.dtype, weak: t.weak });

/** The jit type holding a value of eager type `e`: its compute dtype, marked with the narrow dtype it is rounded to. */
function tyOf(e: Eager): Ty {
  const d = computeDType(e.dtype);
  if (d === e.dtype) return { dtype: d, weak: e.weak };
  return { dtype: d, weak: false, store: e.dtype as NarrowDType };
}

/** An eager tensor of dtype `d` as a fused function's parameter type. */
export const paramTy = (d: DType): Ty => tyOf({ dtype: d, weak: false });

/** `code` (in the held type of `d`) rounded or wrapped to `d`, as the eager op's store does; the identity for the jit's own dtypes. */
function narrowTo(d: DType, code: string): string {
  const held = computeDType(d);
  return held === d ? code : `((${C_TYPE[held]})(${KERNEL_C_TYPES[d]})(${code}))`;
}

/** torch.result_type of two operands (lib/ops/promotion.ts): a weak JS number only counts when it raises the category. */
function promoteEager(a: Ty, b: Ty): Eager {
  if (a.weak && b.weak) return promote(a, b);
  const ea = eagerOf(a), eb = eagerOf(b);
  if (!a.weak && !b.weak) return { dtype: promoteTypes(ea.dtype, eb.dtype), weak: false };
  const [w, s] = a.weak ? [ea, eb] : [eb, ea];
  if (isFloating(s.dtype)) return s;
  if (s.dtype === 'bool' || isFloating(w.dtype)) return { dtype: promoteTypes(s.dtype, w.dtype === 'float64' ? 'float32' : w.dtype), weak: false };
  return s;
}

/** An operand as the op reads it: a tensor's value through the common dtype (hd.h's load_operand), a JS number's straight (scalar_as). */
function operand(v: Val, common: DType, c: Compute): string {
  if (v.ty.weak || eagerOf(v.ty).dtype === common) return `((${c})(${v.code}))`;
  const through = narrowTo(common, `((${C_TYPE[computeDType(common)]})(${v.code}))`);
  return c === 'bool' ? `(${through} != 0)` : `((${c})(${through}))`;
}

/** `functor{members}(args...)` in `c`, stored as the eager op stores its result (of eager type `res`). */
function apply(functor: string, args: string[], c: Compute, res: Eager, members = ''): Val {
  let code = `gx::ops::${functor}{${members}}(${args.join(', ')})`;
  if ((c === 'float' || c === 'double') && res.dtype !== 'bool') code = `gx_fuse_keep(${code})`;  // comparisons give bool
  const ty = tyOf(res);
  return { code: `((${C_TYPE[ty.dtype]})(${narrowTo(res.dtype, code)}))`, ty };
}

/** A floating type for an op of integer or bool operands: float32 (a JS number's float64). */
const floatOf = (e: Eager): Eager => (isFloating(e.dtype) ? e : e.weak ? { dtype: 'float64', weak: true } : { dtype: 'float32', weak: false });

/** A fused op's value with the facts of its number operands (NOTE [ Argument facts in fused functions ] in fuse-facts.ts). */
type Fused = Val & { facts?: readonly OperandFact[] };

/** A number of an integer-typed expression, as the eager op receives it (a JS number). */
const numberOf = (v: FactValue): number | bigint => (typeof v === 'boolean' ? Number(v) : v);

/**
 * The eager op's range check of its number operands (scalarArgs in
 * lib/ops/elementwise/elementwise.ts): each JS number among `args` computed in
 * the integer dtype `common` must fit it. Bool numbers are taken as they are.
 */
function rangeFacts(name: string, args: readonly Val[], common: DType): OperandFact[] {
  if (!isIntegral(common) && common !== 'bool') return [];
  return args.flatMap((v, k) => (!v.ty.weak || v.ty.dtype === 'bool' ? [] : [{
    op: `gx.${name}`, operands: [k], fault: ([x]: readonly FactValue[]): string | undefined => numberOperandFault(numberOf(x), common),
  }]));
}

function binary(name: string, spec: ops.BinaryOp, a: Val, b: Val): Fused | undefined {
  let t = promoteEager(a.ty, b.ty);
  if (spec.kind === 'div') t = floatOf(t);
  const c = computeOf(t.dtype, spec.computes);
  if (c === undefined) return undefined;
  const res = spec.kind === 'compare' || spec.kind === 'logical' ? { dtype: 'bool' as const, weak: false } : t;
  // The logical ops read numbers as nonzero (no range); pow refuses an integer to a negative number.
  const facts = spec.kind === 'logical' ? [] : rangeFacts(name, [a, b], t.dtype);
  if (b.ty.weak && b.ty.dtype !== 'bool' && negativeIntegerPower(spec, t.dtype, -1)) {  // some exponent may be refused: pow in an integer dtype
    const common = t.dtype;
    facts.push({
      op: `gx.${name}`, operands: [1],
      fault: ([x]) => (negativeIntegerPower(spec, common, numberOf(x)) ? `integers to negative integer powers are not allowed (got ${String(x)})` : undefined),
    });
  }
  return { ...apply(spec.functor, [operand(a, t.dtype, c), operand(b, t.dtype, c)], c, res), facts };
}

/**
 * The functor's members from a call's number parameters (NOTE [ Functors with parameters ] in
 * ops/unary/functors.h): none given, '' (F{}: the defaults); else JS numbers only, positional
 * parameters only; undefined when not fusable.
 */
function members(spec: ops.UnaryOp, params: readonly Val[]): string | undefined {
  if (params.length === 0) return '';
  // A JS boolean is no number parameter: the eager op refuses it.
  if (spec.paramStyle !== 'positional' || params.length > spec.params.length || params.some((p) => !p.ty.weak || p.ty.dtype === 'bool')) return undefined;
  return spec.params.map((p, i) => {
    const v = i < params.length ? `(double)(${params[i].code})` : String(p.default);
    return p.default === null ? `${i < params.length}, ${i < params.length ? v : '0.0'}` : v;
  }).join(', ');
}

function unary(name: string, spec: ops.UnaryOp, a: Val, params: readonly Val[]): Fused | undefined {
  // float: integer and bool inputs give float32 (a JS number float64); keep: the input's dtype.
  const t = spec.kind === 'float' ? floatOf(eagerOf(a.ty)) : eagerOf(a.ty);
  const c = computeOf(t.dtype, spec.computes);
  const m = members(spec, params);
  if (c === undefined || m === undefined) return undefined;
  // The op list's facts of its parameters (`ordered`), the ones not given at their defaults, as the eager op checks them.
  const facts: OperandFact[] = !hasParamFacts(spec) ? [] : [{
    op: `gx.${name}`, operands: params.map((_, k) => k + 1), fault: (vs) => unaryParamsFault(spec, vs.map((v) => Number(v))),
  }];
  return { ...apply(spec.functor, [operand(a, t.dtype, c)], c, t, m), facts };
}

/** lerp(self, end, weight): LerpOp in the three operands' result type (ops/unary/unary.h: lerp_impl); integers are refused as the eager op does. */
function lerp(a: Val, b: Val, w: Val): Val | undefined {
  // The eager op takes floating tensors for self and end (lib/ops/elementwise/lerp.ts), and computes in resultType(self, end, weight);
  // a weight that is a number, not a JS boolean.
  if (a.ty.weak || b.ty.weak || (w.ty.weak && w.ty.dtype === 'bool')) return undefined;
  const ab = promoteEager(a.ty, b.ty);
  if (!isFloating(ab.dtype)) return undefined;
  const t = promoteEager(tyOf(ab), w.ty);
  const c = computeOf(t.dtype, { float: true, double: true, int: false, bool: false, noBool: false });
  if (c === undefined) return undefined;
  return apply('LerpOp', [operand(a, t.dtype, c), operand(b, t.dtype, c), operand(w, t.dtype, c)], c, t);
}

/** where(condition, a, b): WhereOp in the compute type of a's and b's common dtype (ops/unary/unary.h: where_impl). */
function where(cond: Val, a: Val, b: Val): Fused | undefined {
  if (cond.ty.dtype !== 'bool') return undefined;  // the eager op takes a bool condition only
  const t = promoteEager(a.ty, b.ty);
  const c = computeOf(t.dtype, { float: true, double: true, int: true, bool: false, noBool: false });
  if (c === undefined) return undefined;
  const facts = rangeFacts('where', [cond, a, b], t.dtype);
  return { ...apply('WhereOp', [`((${c})(${cond.code}))`, operand(a, t.dtype, c), operand(b, t.dtype, c)], c, t), facts };
}

const BINARY: Readonly<Record<string, ops.BinaryOp>> = ops.BINARY;
const UNARY: Readonly<Record<string, ops.UnaryOp>> = ops.UNARY;

/** The ops gx.fuse can fuse, by gx name: every binary and unary op of the op list, where and lerp. */
export const FUSABLE_OPS: readonly string[] = [...Object.keys(BINARY), ...Object.keys(UNARY), 'where', 'lerp'];

/**
 * A binary op's variant by its call's options: div's roundingMode ('floor', 'trunc': NOTE [ Rounding modes of
 * div ] in ops/op-list.js; null: true division); `out` and other options have no meaning in a fused function.
 */
function withOptions(name: string, options: OpOptions): ops.BinaryOp {
  const keys = Object.keys(options);
  if (name !== 'div' || keys.some((k) => k !== 'roundingMode')) {
    throw new TypeError(`${name} takes ${name === 'div' ? 'only roundingMode' : 'no options'} in a fused function, got { ${keys.join(', ')} }`);
  }
  const mode = options.roundingMode;
  if (mode === undefined || mode === null) return BINARY.div;
  if (mode === 'floor' || mode === 'trunc') return ops.DIV_ROUNDING[mode];
  throw new TypeError(`div: roundingMode must be 'floor', 'trunc' or null, got ${JSON.stringify(mode)}`);
}

/** The elementwise ops on elements for translate.ts; `nameOf` tells gx functions by value. */
export function fuseOpCalls(nameOf: (value: unknown) => string | undefined): OpCalls {
  return {
    nameOf,
    call(name, args, _node, options): Fused | undefined {
      if (Object.hasOwn(BINARY, name)) {
        if (args.length !== 2) throw new TypeError(`${name} takes two operands here`);
        return binary(name, options === undefined ? BINARY[name] : withOptions(name, options), args[0], args[1]);
      }
      if (options !== undefined) throw new TypeError(`${name} takes no options in a fused function`);
      if (Object.hasOwn(UNARY, name)) return args.length >= 1 ? unary(name, UNARY[name], args[0], args.slice(1)) : undefined;
      if (name === 'where' && args.length === 3) return where(args[0], args[1], args[2]);
      if (name === 'lerp' && args.length === 3) return lerp(args[0], args[1], args[2]);
      return undefined;
    },
  };
}
