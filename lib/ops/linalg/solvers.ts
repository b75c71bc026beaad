// gx.linalg.pinv, lstsq, matrixRank and eigvalsh, as torch.linalg has them,
// made of gx.linalg.svd and eigh (so both devices and autograd come with
// them: pinv's and lstsq's gradients are the SVD's, exact where the singular
// values kept are distinct; eigvalsh's is eigh's for the eigenvalues alone).
// Batches of matrices run one matrix at a time, as svd takes one.
//
// NOTE [ Singular value cut-off ]
// pinv, lstsq and matrixRank drop the singular values at or below
// max(atol, rtol * S_max), torch's rule: without atol and rtol, rtol is
// max(m, n) * eps of the dtype (lstsq's rcond is its rtol, as torch's gelsd
// driver reads it). Below the cut-off a direction counts as null, so pinv
// gives the minimum-norm least-squares solution of a rank-deficient system.
import { tensor } from '../creation/creation';
import type { DType } from '../../generated/dtypes';
import { optionKeys } from '../../core/options';
import { describeValue, formatShape } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { checkTensor, optionsOf } from '../common';
import { BINARY, binaryOp, whereOp } from '../elementwise/elementwise';
import { stack } from '../layout/layout';
import { matmul } from './matmul';
import { checkMatrices } from './common';
import { svd } from './svd';
import { eighImpl, type EighOptions } from './symmetric';
import { named, type Named } from '../named';
import { REDUCE, reduceOp } from '../reduce/reduction';
import { tooManyArguments } from '../../core/options';

export interface RankToleranceOptions {
  /** Absolute cut-off for the singular values (default 0). */
  atol?: number;
  /** Cut-off relative to the largest singular value (default max(m, n) * eps when atol is not given, else 0). */
  rtol?: number;
}

export interface LstsqOptions {
  /** The relative cut-off of the singular values (torch's rcond; default max(m, n) * eps). */
  rcond?: number;
}

const TOL_KEYS = optionKeys<RankToleranceOptions>({ atol: true, rtol: true });
const LSTSQ_KEYS = optionKeys<LstsqOptions>({ rcond: true });

/** The machine epsilon of a floating dtype (float32 and float64 are the dtypes svd takes). */
const epsOf = (dtype: DType): number => (dtype === 'float64' ? 2 ** -52 : 2 ** -23);

/** The options' cut-off parts, checked: [atol, rtol] (NOTE [ Singular value cut-off ]). */
function tolerance(opts: unknown, a: Tensor, fn: string): [number, number] {
  const o = optionsOf<RankToleranceOptions>(opts, fn, TOL_KEYS);
  for (const k of ['atol', 'rtol'] as const) {
    const v = o[k];
    if (v !== undefined && !(typeof v === 'number' && v >= 0)) throw new TypeError(`${fn}: ${k} must be a number >= 0, got ${describeValue(v)}`);
  }
  const [m, n] = a.shape.slice(-2);
  const rtol = o.rtol ?? (o.atol === undefined || o.atol === 0 ? Math.max(m, n) * epsOf(a.dtype) : 0);
  return [o.atol ?? 0, rtol];
}

/** f on each matrix of a batch (or the one matrix), the results stacked back into the batch's shape. */
function perMatrix(a: Tensor, f: (m: Tensor) => Tensor): Tensor {
  if (a.ndim === 2) return f(a);
  const batch = a.shape.slice(0, -2);
  const flat = a.reshape([-1, ...a.shape.slice(-2)]);
  const outs = Array.from({ length: flat.shape[0] }, (_, i) => f(flat.index(i)));
  const r = stack(outs, 0);
  return r.reshape([...batch, ...r.shape.slice(1)]);
}

/** The SVD of a matrix and the mask of its singular values above the cut-off. */
function thinSvd(m: Tensor, atol: number, rtol: number, fn: string): { U: Tensor; S: Tensor; Vh: Tensor; keep: Tensor } {
  const { U, S, Vh } = svd(m, { fullMatrices: false });
  const top = S.shape[0] > 0 ? reduceOp(REDUCE.max, S, undefined, undefined, fn) : tensor(0, { dtype: m.dtype, device: m.device });
  const cut = binaryOp(BINARY.maximum, binaryOp(BINARY.mul, top, rtol, fn), atol, fn);
  return { U, S, Vh, keep: binaryOp(BINARY.gt, S, cut, fn) };
}

/** pinv of one matrix: Vh^T diag(1/S where kept) U^T. */
function pinvOne(m: Tensor, atol: number, rtol: number, fn: string): Tensor {
  const { U, S, Vh, keep } = thinSvd(m, atol, rtol, fn);
  // 1/S where kept, else 0 (the reciprocal of a dropped value is never formed: no inf times 0 in the gradient).
  const safe = whereOp(keep, S, 1, fn);
  const inv = whereOp(keep, binaryOp(BINARY.div, 1, safe, fn), 0, fn);
  return matmul(binaryOp(BINARY.mul, Vh.mT, inv.unsqueeze(0), fn), U.mT);
}

/**
 * The Moore-Penrose pseudo-inverse of a matrix or batch [..., m, n] -> [..., n, m],
 * as torch.linalg.pinv: by the SVD, dropping singular values at or below
 * max(atol, rtol * S_max) (NOTE [ Singular value cut-off ]). float32/float64.
 * @example gx.linalg.pinv(a); gx.linalg.pinv(a, { rtol: 1e-6 })
 */
export function pinv<D extends DType>(a: Tensor<D>, options?: RankToleranceOptions | null): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.linalg.pinv', '(a, options?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.linalg.pinv';
  checkMatrices(a, fn, 'a');
  const [atol, rtol] = tolerance(options, a, fn);
  return tidy(() => perMatrix(a, (m) => pinvOne(m, atol, rtol, fn))) as Tensor<D>;
}

/**
 * The numerical rank of a matrix or batch (int64 [...]), as
 * torch.linalg.matrix_rank: the count of singular values above
 * max(atol, rtol * S_max) (NOTE [ Singular value cut-off ]).
 * @example gx.linalg.matrixRank(gx.outer(u, v)).item() // 1
 */
export function matrixRank(a: Tensor, options?: RankToleranceOptions | null): Tensor<'int64'> {
  if (arguments.length > 2) tooManyArguments('gx.linalg.matrixRank', '(a, options?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.linalg.matrixRank';
  checkMatrices(a, fn, 'a');
  const [atol, rtol] = tolerance(options, a, fn);
  return tidy(() => perMatrix(a.detach(), (m) => reduceOp(REDUCE.sum, thinSvd(m, atol, rtol, fn).keep, undefined, undefined, fn))) as Tensor<'int64'>;
}

/** lstsq's results, as torch.linalg.lstsq's. */
export interface LstsqFields<D extends DType = DType> {
  /** The minimum-norm least-squares solution X of A X = B: [..., n, k] (or [..., n] for a vector B). */
  solution: Tensor<D>;
  /** The squared residual norms of each column, [..., k], when m > n and A has full rank; else an empty [0] tensor (torch's rule). */
  residuals: Tensor<D>;
  /** The numerical rank of A (int64 [...]). */
  rank: Tensor<'int64'>;
  /** A's singular values, descending: [..., min(m, n)]. */
  singularValues: Tensor<D>;
}

/** `{ solution, residuals, rank, singularValues }` that also destructures in that order (NOTE [ Named results ]). */
export type LstsqResult<D extends DType = DType> = Named<LstsqFields<D>, [Tensor<D>, Tensor<D>, Tensor<'int64'>, Tensor<D>]>;

/**
 * The least-squares solution of A X = B for A [..., m, n] and B [..., m, k]
 * (or [..., m]), as torch.linalg.lstsq with its gelsd driver: the
 * minimum-norm X minimizing ||A X - B||, by the SVD with singular values at
 * or below rcond * S_max dropped (NOTE [ Singular value cut-off ]); any m, n
 * and rank. `{ solution, residuals, rank, singularValues }`, also in that order as a tuple.
 * @example const { solution } = gx.linalg.lstsq(A, b); const [x] = gx.linalg.lstsq(A, b)
 */
export function lstsq<D extends DType>(a: Tensor<D>, b: Tensor, options?: LstsqOptions | null): LstsqResult<D> {
  if (arguments.length > 3) tooManyArguments('gx.linalg.lstsq', '(a, b, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.linalg.lstsq';
  const mats = checkMatrices(a, fn, 'a');
  const rhs = checkTensor(b, fn, 'b');
  const o = optionsOf<LstsqOptions>(options, fn, LSTSQ_KEYS);
  if (o.rcond !== undefined && !(typeof o.rcond === 'number' && o.rcond >= 0)) throw new TypeError(`${fn}: rcond must be a number >= 0, got ${describeValue(o.rcond)}`);
  const vector = rhs.ndim === a.ndim - 1;
  if ((rhs.ndim !== a.ndim && !vector) || rhs.shape[vector ? rhs.ndim - 1 : rhs.ndim - 2] !== mats.rows) {
    throw new RangeError(`${fn}: b must be [..., ${mats.rows}, k] or [..., ${mats.rows}] for a of shape ${formatShape(a.shape)}, got ${formatShape(rhs.shape)}`);
  }
  const [atol, rtol] = tolerance(o.rcond === undefined ? undefined : { rtol: o.rcond }, a, fn);
  const r = tidy(() => {
    const b3 = vector ? rhs.unsqueeze(-1) : rhs;
    const x = matmul(perMatrix(a, (m) => pinvOne(m, atol, rtol, fn)), b3);
    const solution = vector ? x.squeeze(-1) : x;
    const singularValues = perMatrix(a.detach(), (m) => svd(m, { fullMatrices: false }).S);
    const rank = perMatrix(a.detach(), (m) => reduceOp(REDUCE.sum, thinSvd(m, atol, rtol, fn).keep, undefined, undefined, fn));
    const fullRank = mats.rows > mats.cols && (rank.reshape([-1]).toArraySync() as BigInt64Array).every((v) => Number(v) === mats.cols);
    let residuals: Tensor;
    if (fullRank) {
      const e = binaryOp(BINARY.sub, matmul(a, x), b3, fn);
      residuals = reduceOp(REDUCE.sum, binaryOp(BINARY.mul, e, e, fn), -2, undefined, fn);
      if (vector) residuals = residuals.squeeze(-1);
    } else {
      residuals = tensor([], { dtype: a.dtype, device: a.device });
    }
    return { solution, residuals, rank: rank as Tensor<'int64'>, singularValues };
  });
  return named(r as LstsqFields<D>, ['solution', 'residuals', 'rank', 'singularValues']);
}

/**
 * The eigenvalues of a symmetric matrix or batch, ascending, as
 * torch.linalg.eigvalsh: gx.linalg.eigh's, reading only the triangle UPLO
 * names. Gradients: gA = V diag(g) V^T.
 * @example gx.linalg.eigvalsh(cov)
 */
export function eigvalsh<D extends DType>(a: Tensor<D>, options?: EighOptions | null): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.linalg.eigvalsh', '(a, options?)', arguments.length - 2, arguments[2]);
  const r = eighImpl(a, options, 'gx.linalg.eigvalsh');
  r.eigenvectors.dispose();  // saved by the recorded eigh when a requires grad: the graph keeps its own alias
  return r.eigenvalues;
}
