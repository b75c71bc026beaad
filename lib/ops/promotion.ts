// Type promotion: the one table every built-in op takes its dtypes from
// (PyTorch's rules; the kernels only obey what this decides).
//
// NOTE [ Type promotion ] (the pairwise table is generated: scripts/gen/dtypes.js writes it from the dtype list)
// Categories: bool < integer < floating. promoteTypes(a, b) of two dtypes is
// the smallest dtype holding both: the other one for bool; the larger within a
// category (uint8 with int8 -> int16); the floating one across categories
// (int32 with float16 -> float16); float16 with bfloat16 -> float32.
// resultType(operands) ranks operands as PyTorch does (torch.result_type):
// tensors with dimensions, then 0-d tensors, then JS scalars. A lower rank
// only counts when it raises the category: int8 tensor + 1000 stays int8,
// float16 tensor + 2.5 stays float16, int32 tensor + 2.5 becomes float32 (the
// default float for a JS number), int32 tensor + 0-d float64 tensor becomes
// float64. JS scalars: a number with an integral value counts as an integer
// (as Python's 2, not 2.0), other numbers as floating, a bigint as int64, a
// boolean as bool.
import { dtypeInfo, PROMOTION, type DType } from '../generated/dtypes';
import { DEFAULT_FLOAT, parseDType } from '../core/dtype';
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import { tooManyArguments } from '../core/options';

/** A JS value that can stand for a scalar operand. */
export type ScalarOperand = number | bigint | boolean;
/** What elementwise ops take: a tensor or a JS scalar. */
export type Operand = Tensor | ScalarOperand;

export type Category = 0 | 1 | 2;
/** 0 bool, 1 integer, 2 floating. */
export function category(d: DType): Category {
  const k = dtypeInfo(d).kind;
  return k === 'b' ? 0 : k === 'f' ? 2 : 1;
}

export function isFloating(d: DType): boolean {
  return dtypeInfo(d).kind === 'f';
}

/** Integer dtypes, bool excluded. */
export function isIntegral(d: DType): boolean {
  const k = dtypeInfo(d).kind;
  return k === 'i' || k === 'u';
}

// The pairs are generated from the dtype list (NOTE [ Type promotion ] in scripts/gen/dtypes.js), one table for
// this face and the extensions' C++ one.
const TABLE = PROMOTION;

/** The smallest dtype both a and b convert to without leaving their categories (torch.promote_types). */
export function promoteTypes(a: DType, b: DType): DType {
  if (arguments.length > 2) tooManyArguments('gx.promoteTypes', '(a, b)', arguments.length - 2, arguments[2]);
  const ia = dtypeInfo(a), ib = dtypeInfo(b);
  if (ia === undefined || ib === undefined) parseDType(ia === undefined ? a : b, 'gx.promoteTypes');  // throws, naming it
  return TABLE[ia.code][ib.code];
}

/** The dtype a JS scalar stands for on its own. */
export function scalarDType(v: ScalarOperand): DType {
  if (typeof v === 'bigint') return 'int64';
  if (typeof v === 'boolean') return 'bool';
  return Number.isInteger(v) ? 'int64' : DEFAULT_FLOAT;
}

/** PyTorch's combine_categories: `lower` only counts when it raises the category. */
function combine(higher: DType | undefined, lower: DType | undefined): DType | undefined {
  if (higher === undefined) return lower;
  if (lower === undefined) return higher;
  if (isFloating(higher)) return higher;
  if (higher === 'bool' || isFloating(lower)) return promoteTypes(higher, lower);
  return higher;
}

/**
 * The dtype an op over these operands computes in (torch.result_type):
 * NOTE [ Type promotion ]. Throws when there is no tensor among them.
 */
export function resultType(...operands: readonly Operand[]): DType {
  let dim: DType | undefined, zero: DType | undefined, wrapped: DType | undefined;
  for (const x of operands) {
    if (x instanceof Tensor) {
      const d = x.dtype;
      if (x.ndim > 0) dim = dim === undefined ? d : promoteTypes(dim, d);
      else zero = zero === undefined ? d : promoteTypes(zero, d);
    } else {
      if (typeof x !== 'number' && typeof x !== 'bigint' && typeof x !== 'boolean') {
        throw new TypeError(`gx.resultType: operands must be Tensors, numbers, bigints or booleans, got ${describeValue(x)}`);
      }
      const d = scalarDType(x);
      wrapped = wrapped === undefined ? d : promoteTypes(wrapped, d);
    }
  }
  const r = combine(dim, combine(zero, wrapped));
  if (r === undefined) throw new TypeError('gx.resultType: needs at least one operand');
  return r;
}

/**
 * Whether a result of dtype `from` may be written into a tensor of dtype `to`
 * (an `out` or an in-place op's self), as torch.can_cast: not floating into
 * integer, not anything but bool into bool.
 */
export function canCast(from: DType, to: DType): boolean {
  if (arguments.length > 2) tooManyArguments('gx.canCast', '(from, to)', arguments.length - 2, arguments[2]);
  parseDType(from, 'gx.canCast');
  parseDType(to, 'gx.canCast');
  if (isFloating(from) && isIntegral(to)) return false;
  if (from !== 'bool' && to === 'bool') return false;
  return true;
}
