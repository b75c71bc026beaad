// gx.linalg.solve, inv, det and slogdet, torch.linalg's semantics, from the
// LU factorization with partial pivoting (./lu-kernels.ts computes
// them), recorded for autograd with the derivatives of
// ./lu-backward.ts. The computation itself runs under gx.noGrad: its
// copies and views of A are not part of the user's graph, the op is.
import { type DType } from '../../generated/dtypes';
import { record, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import { type Tensor } from '../../core/tensor';
import { detBackward, invBackward, slogdetBackward, solveBackward } from './lu-backward';
import { named } from '../named';
import { optionsOf } from '../common';
import { booleanOption, optionKeys, tooManyArguments } from '../../core/options';
import { detUnrecorded, invUnrecorded, isVectorRhs, slogdetUnrecorded, solveUnrecorded, type SlogdetResult } from './lu-kernels';

export type { SlogdetResult } from './lu-kernels';

/**
 * The solution X of A X = B for square A, like torch.linalg.solve: A
 * [..., n, n]; B [..., n, k] gives X [..., n, k], and a vector B ([n], or A's
 * batch dims + [n]) gives a vector X. Batch dims broadcast. A singular A is an
 * Error. LU with partial pivoting: cuSOLVER on CUDA; on the CPU LAPACK when
 * installed, else a built-in LU. Differentiable in A and B (gB = A^-T gX,
 * gA = -gB X^T). `{ left: false }` solves X A = B instead (torch's left=False):
 * B [..., k, n] gives X [..., k, n], a vector B the vector x of x A = b.
 * @example
 * const x = gx.linalg.solve(a, b);  // a [3, 3], b [3] -> x [3]
 */
export function solve<D extends DType>(a: Tensor<D>, b: Tensor<D>, opts?: SolveOptions): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.linalg.solve', '(a, b, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.linalg.solve';
  const left = booleanOption(fn, 'left', optionsOf<SolveOptions>(opts, fn, SOLVE_KEYS).left, true);
  // X A = B is A^T X^T = B^T (an option that was ignored: X came back as A^-1 B).
  if (!left) return isVectorRhs(a, b) ? solve(a.mT, b) : solve(a.mT, b.mT).mT;
  const x = noGrad(() => solveUnrecorded(a, b, fn));
  if (shouldRecord(a, b)) {
    const vector = isVectorRhs(a, b);
    const needA = shouldRecord(a), needB = shouldRecord(b);
    record('linalg.solve', [a, b], x, [a, x], (g, [sa, sx]) => solveBackward(g, sa, sx, vector, needA, needB, `${fn} (backward)`));
  }
  return x;
}

export interface SolveOptions {
  /** false: solve X A = B (default true: A X = B). */
  left?: boolean;
}
const SOLVE_KEYS = optionKeys<SolveOptions>({ left: true });

/**
 * The inverse of a square matrix or batch of them [..., n, n], like
 * torch.linalg.inv; a singular matrix is an Error. LU with partial pivoting:
 * cuSOLVER on CUDA; on the CPU LAPACK when installed, else a built-in LU.
 * Differentiable (gA = -Y^T gY Y^T for Y = A^-1).
 * @example
 * const ai = gx.linalg.inv(a);
 */
export function inv<D extends DType>(a: Tensor<D>): Tensor<D> {
  if (arguments.length > 1) tooManyArguments('gx.linalg.inv', '(a)', arguments.length - 1, arguments[1]);
  const y = noGrad(() => invUnrecorded(a, 'gx.linalg.inv'));
  if (shouldRecord(a)) record('linalg.inv', [a], y, [y], (g, [sy]) => [invBackward(g, sy)]);
  return y;
}

/**
 * The determinant of a square matrix or batch of them [..., n, n] -> [...],
 * like torch.linalg.det (0 for a singular matrix, 1 for a 0 x 0 one), from the
 * LU factorization: the product of U's diagonal and the pivots' sign.
 * Differentiable: gA = g det(A) A^-T, and for a singular A torch's SVD form
 * (finite where A has rank n - 1).
 * @example
 * const d = gx.linalg.det(a).item();
 */
export function det<D extends DType>(a: Tensor<D>): Tensor<D> {
  if (arguments.length > 1) tooManyArguments('gx.linalg.det', '(a)', arguments.length - 1, arguments[1]);
  const fn = 'gx.linalg.det';
  const d = noGrad(() => detUnrecorded(a, fn));
  if (shouldRecord(a)) record('linalg.det', [a], d, [a, d], (g, [sa, sd]) => [detBackward(g, sa, sd, `${fn} (backward)`)]);
  return d;
}

/**
 * The sign and the natural log of the absolute value of the determinant of a
 * square matrix or batch of them [..., n, n] -> { sign, logabsdet } [...],
 * like torch.linalg.slogdet: log |det A| without det's overflow or underflow
 * (a singular matrix: sign 0, logabsdet -Infinity). Differentiable in
 * logabsdet (gA = g A^-T; the sign has no gradient, as in torch); the
 * gradient of a singular matrix is an Error.
 * @example
 * const { sign, logabsdet } = gx.linalg.slogdet(a);
 */
export function slogdet<D extends DType>(a: Tensor<D>): SlogdetResult<D> {
  if (arguments.length > 1) tooManyArguments('gx.linalg.slogdet', '(a)', arguments.length - 1, arguments[1]);
  const fn = 'gx.linalg.slogdet';
  const r = noGrad(() => slogdetUnrecorded(a, fn));
  if (shouldRecord(a)) record('linalg.slogdet', [a], r.logabsdet, [a], (g, [sa]) => [slogdetBackward(g, sa, `${fn} (backward)`)]);
  return named(r, ['sign', 'logabsdet']);
}
