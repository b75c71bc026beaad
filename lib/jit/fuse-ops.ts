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
//   ops; a dtype outside the set is not fusable (the eager op refuses it);
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
// NVRTC compiles the functor headers (NOTE [ Functor headers under NVRTC ] in
// ops/common/hd_math.h) from the package's ops/ (package.json ships
// ops/**/*.h), found through an -I of the package root; the kernel cache
// hashes them like any included header, so an edited functor recompiles.
import * as path from 'path';

import * as ops from '../generated/ops';
import { packageRoot } from '../platform/paths';
import type { OpCalls } from './translate';
import { cast, C_TYPE, floatOf, isFloat, promote, strong, type ScalarDType, type Ty, type Val } from './types';

/** The C++ compute types of the functors (NOTE [ Compute types ] in ops/common/hd.h). */
type Compute = 'float' | 'double' | 'long long' | 'bool';

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

/** The compiler options gx.fuse's kernels need: the package root on the include path (for <ops/...>), C++17 (the functors' if constexpr). */
export function fuseCompileOptions(): string[] {
  return ['-std=c++17', `-I${path.resolve(packageRoot())}`];
}

/** with_compute (ops/common/dispatch.h): the compute type of `common` for an op of `set`, or undefined when the op refuses it. */
export function computeOf(common: ScalarDType, set: ops.Computes): Compute | undefined {
  if (set.bool) return 'bool';
  if (common === 'float32') return set.float ? 'float' : undefined;
  if (common === 'float64') return set.double ? 'double' : undefined;
  if (common === 'bool' && set.noBool) return undefined;
  return set.int ? 'long long' : undefined;
}

/** An operand as the op reads it: a tensor's value through the common dtype, a JS number's straight. */
function operand(v: Val, common: ScalarDType, c: Compute): string {
  const through = v.ty.weak ? v.code : cast(v, common);
  return `((${c})(${through}))`;
}

/** `functor{members}(args...)` in `c`, stored as `res` (the eager op's result dtype). */
function apply(functor: string, args: string[], c: Compute, res: Ty, members = ''): Val {
  let code = `gx::ops::${functor}{${members}}(${args.join(', ')})`;
  if ((c === 'float' || c === 'double') && res.dtype !== 'bool') code = `gx_fuse_keep(${code})`;  // comparisons give bool
  return { code: `((${C_TYPE[res.dtype]})(${code}))`, ty: res };
}

function binary(spec: ops.BinaryOp, a: Val, b: Val): Val | undefined {
  let t = promote(a.ty, b.ty);
  if (spec.kind === 'div' && !isFloat(t.dtype)) t = floatOf(t);
  const c = computeOf(t.dtype, spec.computes);
  if (c === undefined) return undefined;
  const res = spec.kind === 'compare' || spec.kind === 'logical' ? strong('bool') : t;
  return apply(spec.functor, [operand(a, t.dtype, c), operand(b, t.dtype, c)], c, res);
}

/**
 * The functor's members from a call's number parameters (NOTE [ Functors with parameters ] in
 * ops/unary/functors.h): none given, '' (F{}: the defaults); else JS numbers only, positional
 * parameters only; undefined when not fusable.
 */
function members(spec: ops.UnaryOp, params: readonly Val[]): string | undefined {
  if (params.length === 0) return '';
  if (spec.paramStyle !== 'positional' || params.length > spec.params.length || params.some((p) => !p.ty.weak)) return undefined;
  return spec.params.map((p, i) => {
    const v = i < params.length ? `(double)(${params[i].code})` : String(p.default);
    return p.default === null ? `${i < params.length}, ${i < params.length ? v : '0.0'}` : v;
  }).join(', ');
}

function unary(spec: ops.UnaryOp, a: Val, params: readonly Val[]): Val | undefined {
  // float: integer and bool inputs give float32 (a JS number float64); keep: the input's dtype.
  let t = a.ty;
  if (spec.kind === 'float' && !isFloat(t.dtype)) t = t.weak ? { dtype: 'float64', weak: true } : strong('float32');
  const c = computeOf(t.dtype, spec.computes);
  const m = members(spec, params);
  if (c === undefined || m === undefined) return undefined;
  return apply(spec.functor, [operand(a, t.dtype, c)], c, t, m);
}

/** lerp(self, end, weight): LerpOp in the common floating dtype (ops/unary/unary.h: lerp_impl); integers are refused as the eager op does. */
function lerp(a: Val, b: Val, w: Val): Val | undefined {
  // The eager op takes floating tensors for self and end (lib/ops/elementwise/lerp.ts).
  if (!isFloat(promote(a.ty, b.ty).dtype) || a.ty.weak || b.ty.weak) return undefined;
  const t = promote(promote(a.ty, b.ty), w.ty);
  const c = computeOf(t.dtype, { float: true, double: true, int: false, bool: false, noBool: false });
  if (c === undefined) return undefined;
  return apply('LerpOp', [operand(a, t.dtype, c), operand(b, t.dtype, c), operand(w, t.dtype, c)], c, t);
}

/** where(condition, a, b): WhereOp in the compute type of a's and b's common dtype (ops/unary/unary.h: where_impl). */
function where(cond: Val, a: Val, b: Val): Val | undefined {
  if (cond.ty.dtype !== 'bool') return undefined;  // the eager op takes a bool condition only
  const t = promote(a.ty, b.ty);
  const c = computeOf(t.dtype, { float: true, double: true, int: true, bool: false, noBool: false });
  if (c === undefined) return undefined;
  return apply('WhereOp', [`((${c})(${cond.code}))`, operand(a, t.dtype, c), operand(b, t.dtype, c)], c, t);
}

const BINARY: Readonly<Record<string, ops.BinaryOp>> = ops.BINARY;
const UNARY: Readonly<Record<string, ops.UnaryOp>> = ops.UNARY;

/** The ops gx.fuse can fuse, by gx name: every binary and unary op of the op list, where and lerp. */
export const FUSABLE_OPS: readonly string[] = [...Object.keys(BINARY), ...Object.keys(UNARY), 'where', 'lerp'];

/** The elementwise ops on elements for translate.ts; `nameOf` tells gx functions by value. */
export function fuseOpCalls(nameOf: (value: unknown) => string | undefined): OpCalls {
  return {
    nameOf,
    call(name, args): Val | undefined {
      if (Object.hasOwn(BINARY, name)) {
        if (args.length !== 2) throw new TypeError(`${name} takes two operands here`);
        return binary(BINARY[name], args[0], args[1]);
      }
      if (Object.hasOwn(UNARY, name)) return args.length >= 1 ? unary(UNARY[name], args[0], args.slice(1)) : undefined;
      if (name === 'where' && args.length === 3) return where(args[0], args[1], args[2]);
      if (name === 'lerp' && args.length === 3) return lerp(args[0], args[1], args[2]);
      return undefined;
    },
  };
}
