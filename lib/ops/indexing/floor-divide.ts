// Exact floor division of integer tensors by positive-or-negative integer
// divisors, made of the elementwise ops (so both devices run the same
// algorithm, with the same bits): scatterReduce's integer 'mean', which torch
// computes as sum.div_(count, rounding_mode='floor') in the integer dtype.
//
// NOTE [ Exact integer floor division ]
// gx has no integer division op, and float64 holds integers exactly only up to
// 2^53: rounding int64 sums through float64 loses their low bits (2^60 + 1
// gave 2^60, 2^63 - 1 gave -2^63). So the quotient is estimated in float64 and
// corrected in int64:
//   q0   = floor(float64(s) / float64(c)), clamped into int64's range
//   rest = s - q0 * c                      (int64; wrapping, but the true value is small)
//   q    = q0 + floor(float64(rest) / float64(c))
// float64(s) is within 2^10 of s and the division rounds by at most 2^10 more
// (|s / c| <= 2^63), so |q0 - floor(s / c)| <= 2^11 + 2 and |rest| <= (2^11 + 3) |c|:
// exact in float64, as the second quotient is for |c| < 2^40 (a rounded
// quotient of two exact integers then never crosses an integer). q0 * c and
// s - q0 * c wrap in int64, identically on every device, and the wrapped
// result is the true one since it fits. Narrower integer dtypes widen to int64
// first and wrap back on the way out, as torch's division in their dtype does.
import type { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { astypeOp, BINARY, binaryOp, clampOp, UNARY, unaryOp } from '../elementwise/elementwise';

/** The largest float64 below 2^63: float64 values in [-2^63, this] convert to int64 exactly. */
const BELOW_2_63 = 2 ** 63 - 1024;

/** floor(s / c) of integer tensors (c nonzero, |c| < 2^40), exact (NOTE [ Exact integer floor division ]), in int64. */
export function floorDivideIntegers(s: Tensor, c: Tensor, fn: string): Tensor {
  return tidy(() => {
    const num = astypeOp(s, 'int64', fn), den = astypeOp(c, 'int64', fn);
    const denF = astypeOp(den, 'float64', fn);
    const estimate = unaryOp(UNARY.floor, binaryOp(BINARY.div, astypeOp(num, 'float64', fn), denF, fn), fn);
    const q0 = astypeOp(clampOp(estimate, -(2 ** 63), BELOW_2_63, fn), 'int64', fn);
    const rest = binaryOp(BINARY.sub, num, binaryOp(BINARY.mul, q0, den, fn), fn);
    const step = unaryOp(UNARY.floor, binaryOp(BINARY.div, astypeOp(rest, 'float64', fn), denF, fn), fn);
    return binaryOp(BINARY.add, q0, astypeOp(step, 'int64', fn), fn);
  });
}
