// What elementwise and reduction kernels share: their 'type name' parameter
// lists, the headers the C types of dtypes need (the types themselves are
// the dtype list's KERNEL_C_TYPES), scalar operands,
// and operands' strides seen at a broadcast shape.
import { isDType, type DType } from '../core/dtype';
import type { Tensor } from '../core/tensor';
import { INTEGER_RANGE, KERNEL_C_TYPES } from '../generated/dtypes';


/**
 * The #includes a kernel using `dtypes` needs first (float16/bfloat16 come
 * from the toolkit's cuda_fp16.h / cuda_bf16.h, whose arithmetic operators
 * work on sm_53+ and sm_80+ respectively; below that, convert to float).
 */
export function typeHeaders(dtypes: Iterable<DType>): string {
  let half = false;
  let bf16 = false;
  for (const d of dtypes) {
    if (d === 'float16') half = true;
    else if (d === 'bfloat16') bf16 = true;
  }
  return `${half ? '#include <cuda_fp16.h>\n' : ''}${bf16 ? '#include <cuda_bf16.h>\n' : ''}`;
}

const [I32_MIN, I32_MAX] = INTEGER_RANGE.int32;
const [I64_MIN, I64_MAX] = INTEGER_RANGE.int64;

/**
 * Float to integer by the kernels' rule (lib/jit/LANGUAGE.md "Conversions"):
 * toward zero, saturating at the type's bounds, NaN 0. C's cast is undefined
 * out of range and for NaN, and the GPU's cvt.rzi gives the most negative
 * integer for NaN (measured on an H200: a vectorize int32 argument of NaN
 * read -2147483648). Guarded: a source that gets it twice still compiles;
 * with its qualifiers defined away it is host C++ too.
 */
export const FLOAT_TO_INTEGER_HELPER = `#ifndef GX_JIT_F2I
#define GX_JIT_F2I
__device__ __forceinline__ int gx_jit_f2i(double x) {
  return x != x ? 0 : x >= ${I32_MAX}. ? ${I32_MAX} : x <= ${I32_MIN}. ? (${I32_MIN + 1n} - 1) : (int)x;
}
__device__ __forceinline__ long long gx_jit_f2l(double x) {
  return x != x ? 0 : x >= ${I64_MAX}. ? ${I64_MAX}LL : x <= ${I64_MIN}. ? (${I64_MIN + 1n}LL - 1) : (long long)x;
}
__device__ __forceinline__ int gx_jit_f2i(float x) { return gx_jit_f2i((double)x); }
__device__ __forceinline__ long long gx_jit_f2l(float x) { return gx_jit_f2l((double)x); }
#endif
`;

const isIntegerDType = (d: DType): d is keyof typeof INTEGER_RANGE => d in INTEGER_RANGE;

/**
 * The C local of number operand `name` of dtype d, from the double it is
 * passed as (`${name}_value`): integers by FLOAT_TO_INTEGER_HELPER (int8,
 * int16 and uint8 keep the low bits of the saturated int32, as a typed
 * array's store wraps), floats and bool by C's cast.
 */
export function numberLocal(d: DType, name: string): string {
  const c = KERNEL_C_TYPES[d];
  const value = `${name}_value`;
  const converted = !isIntegerDType(d) ? `(${c})${value}` : d === 'int64' ? `gx_jit_f2l(${value})` : d === 'int32' ? `gx_jit_f2i(${value})` : `(${c})gx_jit_f2i(${value})`;
  return `const ${c} ${name} = ${converted};`;
}

/** What a kernel with number operands of `dtypes` needs before them: the conversion helper where one is an integer. */
export const numberHelpers = (dtypes: readonly DType[]): string => (dtypes.some(isIntegerDType) ? FLOAT_TO_INTEGER_HELPER : '');

export interface Param {
  name: string;
  /** A dtype name, or a placeholder such as 'T'. */
  type: string;
  placeholder: boolean;
  /** `raw T x`: the body sees the whole array (`x[j]`, any j < x_size), not the element at i. */
  raw: boolean;
}

const IDENT = /^[A-Za-z_]\w*$/;

/** Parses 'float32 x, T y, raw T z'; errors name `fn` and `what` (inParams/outParams). */
export function parseParams(spec: string, fn: string, what: string): Param[] {
  if (typeof spec !== 'string') throw new TypeError(`${fn}: ${what} must be a string like 'float32 x, T y'`);
  if (spec.trim() === '') return [];
  return spec.split(',').map((part) => {
    const words = part.trim().split(/\s+/);
    const raw = words[0] === 'raw';
    if (raw) words.shift();
    if (words.length !== 2 || !IDENT.test(words[0]) || !IDENT.test(words[1])) {
      throw new TypeError(`${fn}: ${what}: '${part.trim()}' is not 'type name' (or 'raw type name')`);
    }
    const [type, name] = words;
    return { name, type, placeholder: !isDType(type), raw };
  });
}

/** Element strides of `t` seen at the broadcast `shape` (0 where it broadcasts). */
export function broadcastStrides(t: Tensor, shape: readonly number[]): number[] {
  const lead = shape.length - t.ndim;
  return shape.map((_, d) => (d < lead || t.shape[d - lead] === 1 ? 0 : t.strides[d - lead]));
}
