// The scalar types jit code computes in and the rules between them
// (NOTE [ Types in jit functions ] in typer.ts): promotion, and the C
// text of casts that gx.fuse's op table writes.
import { COMPUTE_DTYPE, KERNEL_C_TYPES, type DType } from '../generated/dtypes';

/** The dtypes jit functions compute in. */
export type ScalarDType = 'bool' | 'int32' | 'int64' | 'float32' | 'float64';
export const SCALAR_DTYPES: readonly ScalarDType[] = ['bool', 'int32', 'int64', 'float32', 'float64'];

/** A type: a dtype, and whether it is "weak" (a JS number's, taking the other operand's type). */
export interface Ty {
  dtype: ScalarDType;
  weak: boolean;
  /**
   * gx.fuse only: the eager tensor's dtype when it is narrower than `dtype`
   * (float16 and bfloat16 held in float32; int8, int16, uint8 in int32), the
   * value already rounded to it (NOTE [ Fused ops round where the eager ops
   * store ] in fuse-ops.ts). JS operators drop it (plain()).
   */
  store?: NarrowDType;
}

/** The dtypes a jit value can stand for but not compute in. */
export type NarrowDType = Exclude<DType, ScalarDType>;

/** `t` without a narrow eager dtype: what JS arithmetic on a value gives (its result is not rounded to one). */
export const plain = (t: Ty): Ty => (t.store === undefined ? t : { dtype: t.dtype, weak: t.weak });

export const C_TYPE: Record<ScalarDType, string> = {
  bool: 'bool', int32: 'int', int64: 'long long', float32: 'float', float64: 'double',
};
const RANK: Record<ScalarDType, number> = { bool: 0, int32: 1, int64: 2, float32: 3, float64: 4 };
export const isFloat = (d: ScalarDType): boolean => d === 'float32' || d === 'float64';
export const isInteger = (d: ScalarDType): boolean => d === 'int32' || d === 'int64';
export const strong = (dtype: ScalarDType): Ty => ({ dtype, weak: false });

const scalarDType = (d: DType): ScalarDType => {
  const s = SCALAR_DTYPES.find((x) => x === d);
  if (s === undefined) throw new Error(`gpuext internal error: jit code has no ${d} type`);
  return s;
};

/** The type an element of a tensor of `d` is computed in: small integers as int32, half types as float32. */
export function computeDType(d: DType): ScalarDType {
  switch (d) {
    case 'bool': case 'int32': case 'int64': return d;
    // The floating dtypes compute as the dtype list says (float32 for the 16-bit ones).
    case 'float16': case 'bfloat16': case 'float32': case 'float64': return scalarDType(COMPUTE_DTYPE[d]);
    default: return 'int32';
  }
}

/** The C type of an element of a tensor of `d` (the run-time kernels' own). */
export const elementCType = (d: DType): string => KERNEL_C_TYPES[d];

/** An expression: its C text and its type. */
export interface Val {
  code: string;
  ty: Ty;
  /** A float known to hold an integer (Math.floor and its kin): usable as an index. */
  integral?: boolean;
}

/** A JS number or boolean as a weak literal in C text (for gx.fuse's op table; the typer's literals are typing.ts's lit); `float` marks a number written with a point (0.0 is a float). */
export function literal(v: number | boolean, float = false): Val {
  if (typeof v === 'boolean') return { code: v ? 'true' : 'false', ty: { dtype: 'bool', weak: true } };
  if (!float && Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER) {
    return { code: Object.is(v, -0) ? '0LL' : `${v}LL`, ty: { dtype: 'int64', weak: true } };
  }
  if (Number.isNaN(v)) return { code: '(0.0 / 0.0)', ty: { dtype: 'float64', weak: true } };
  if (!Number.isFinite(v)) return { code: v > 0 ? '(1.0 / 0.0)' : '(-1.0 / 0.0)', ty: { dtype: 'float64', weak: true } };
  const s = String(v);
  return { code: /[.e]/.test(s) ? s : `${s}.0`, ty: { dtype: 'float64', weak: true } };
}

/** The type two operands compute in (NOTE [ Types in jit functions ]). */
export function promote(a: Ty, b: Ty): Ty {
  if (a.weak && b.weak) return { dtype: RANK[a.dtype] >= RANK[b.dtype] ? a.dtype : b.dtype, weak: true };
  if (a.weak || b.weak) {
    const [w, s] = a.weak ? [a, b] : [b, a];
    if (isFloat(w.dtype) && !isFloat(s.dtype)) return { dtype: 'float32', weak: false };
    if (s.dtype === 'bool' && w.dtype !== 'bool') return { dtype: w.dtype === 'int64' ? 'int64' : 'float32', weak: false };
    return s;
  }
  const w = RANK[a.dtype] >= RANK[b.dtype] ? a : b;
  // A narrow dtype holds for the join only when both sides have it.
  return a.dtype === b.dtype && a.store === b.store ? w : plain(w);
}

export const sameTy = (a: Ty, b: Ty): boolean => a.dtype === b.dtype && a.weak === b.weak && a.store === b.store;

export function cast(v: Val, to: ScalarDType): string {
  return v.ty.dtype === to ? v.code : `((${C_TYPE[to]})(${v.code}))`;
}

/** A floating type for math of `t`: floats keep theirs; integers and bool give float32 (weak ones double). */
export function floatOf(t: Ty): Ty {
  if (isFloat(t.dtype)) return t;
  return t.weak ? { dtype: 'float64', weak: true } : { dtype: 'float32', weak: false };
}

/** A gx.vectorize signature ('float32(float32, float32)'): its text, output dtype and input dtypes. */
export interface Signature {
  text: string;
  out: ScalarDType;
  ins: ScalarDType[];
}
