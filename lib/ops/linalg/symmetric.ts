// gx.linalg.cholesky and eigh, torch.linalg's semantics, for symmetric
// matrices of which only one triangle is read (LAPACK's potrf / syevd;
// cuSOLVER's on CUDA). The ops (ops/linalg/decomp.h) work in place on a copy
// of A; their info is read here (a synchronization on CUDA, as torch's check)
// and a failure raised as an Error naming the batch element. Both record
// for autograd with the derivatives of ./symmetric-backward.ts (the
// computation itself under gx.noGrad: the copy of A is not in the graph).
import { allocate } from '../creation/creation';
import { type DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { booleanOption, optionKeys } from '../../core/options';
import { describeValue } from '../../core/shape';
import { record, recordMulti, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import { type Tensor } from '../../core/tensor';
import { optionsOf } from '../common';
import { named, type Named } from '../named';
import { asBatch, batchElement, checkSquare, firstFailure, withOutputs } from './common';
import { choleskyBackward, eighBackward } from './symmetric-backward';
import { tooManyArguments } from '../../core/options';

export interface CholeskyOptions {
  /** Return U with A = U^T U, from A's upper triangle (default false: L with A = L L^T, from the lower one). */
  upper?: boolean;
}

const CHOLESKY_KEYS = optionKeys<CholeskyOptions>({ upper: true });

/**
 * The Cholesky factor of a symmetric positive-definite matrix or batch of
 * them [..., n, n], like torch.linalg.cholesky: lower triangular L with A =
 * L L^T (only A's lower triangle is read), or with { upper: true } upper
 * triangular U with A = U^T U (only the upper triangle read). A matrix that
 * is not positive-definite is an Error naming the leading minor that fails.
 * Differentiable (torch's formula): the gradient is that of the symmetric
 * matrix A stands for, symmetric and spread over both triangles.
 * @example
 * const L = gx.linalg.cholesky(a);
 */
export function cholesky<D extends DType>(a: Tensor<D>, options?: CholeskyOptions | null): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.linalg.cholesky', '(a, options?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.linalg.cholesky';
  const opts = optionsOf<CholeskyOptions>(options, fn, CHOLESKY_KEYS);
  const upper = booleanOption(fn, 'upper', opts.upper, false);
  const factor = noGrad(() => choleskyCompute(a, upper, fn));
  if (shouldRecord(a)) record('linalg.cholesky', [a], factor, [factor], (g, [f]) => [choleskyBackward(g, f, upper, `${fn} (backward)`)]);
  return factor;
}

/** cholesky's computation, not recorded. */
function choleskyCompute<D extends DType>(a: Tensor<D>, upper: boolean, fn: string): Tensor<D> {
  const m = checkSquare(a, fn, 'a');
  return withOutputs(fn, (keep) => {
    const factor = keep(a.clone());  // the op factors it in place
    if (m.count === 0 || m.rows === 0) return factor;
    using f3 = factor.reshape([m.count, m.rows, m.rows]);
    using info = allocate([m.count], 'int32', a.device, undefined, fn);
    ops.cholesky(fn, { a: f3.handle(fn), upper, info: info.handle(fn) });
    const bad = firstFailure(info);
    if (bad !== undefined) {
      throw new Error(`${fn}: the factorization could not be completed because argument 'a'${batchElement(m, bad.index)} ` +
        `is not positive-definite (its leading minor of order ${bad.code} is not positive-definite)`);
    }
    return factor;
  });
}

export interface EighOptions {
  /** Which triangle of A is read: 'L' (the lower, default) or 'U', as torch.linalg.eigh's UPLO. */
  UPLO?: 'L' | 'U';
}

const EIGH_KEYS = optionKeys<EighOptions>({ UPLO: true });

export interface EighFields<D extends DType = DType> {
  /** The eigenvalues in ascending order: [..., n]. */
  eigenvalues: Tensor<D>;
  /** The orthonormal eigenvectors as columns: [..., n, n], A V = V diag(eigenvalues). */
  eigenvectors: Tensor<D>;
}

/** `{ eigenvalues, eigenvectors }` that also destructures as `[eigenvalues, eigenvectors]` (NOTE [ Named results ]). */
export type EighResult<D extends DType = DType> = Named<EighFields<D>, [Tensor<D>, Tensor<D>]>;

/**
 * Eigenvalues and eigenvectors of a symmetric matrix or batch of them [..., n,
 * n], like torch.linalg.eigh: only the triangle UPLO names is read. The
 * eigenvectors' signs are not unique and may differ between devices. cuSOLVER's
 * syevd on CUDA; on the CPU LAPACK's syevd when installed, else built-in Jacobi
 * rotations. Differentiable, as torch's: the eigenvalues' gradient is always
 * defined; the eigenvectors' only where the eigenvalues are distinct (it is
 * +-Infinity where they repeat, and unstable where they nearly do), and only
 * for a loss that does not depend on each eigenvector's sign.
 * @example
 * const { eigenvalues, eigenvectors } = gx.linalg.eigh(cov);
 */
export function eigh<D extends DType>(a: Tensor<D>, options?: EighOptions | null): EighResult<D> {
  if (arguments.length > 2) tooManyArguments('gx.linalg.eigh', '(a, options?)', arguments.length - 2, arguments[2]);
  return eighImpl(a, options, 'gx.linalg.eigh');
}

/** @internal gx.linalg.eigh, with errors naming `fn` (gx.linalg.eigvalsh calls it too). */
export function eighImpl<D extends DType>(a: Tensor<D>, options: unknown, fn: string): EighResult<D> {
  const opts = optionsOf<EighOptions>(options, fn, EIGH_KEYS);
  const uplo = opts.UPLO ?? 'L';
  if (uplo !== 'L' && uplo !== 'U') throw new TypeError(`${fn}: UPLO must be 'L' or 'U', got ${describeValue(uplo)}`);
  const r = noGrad(() => eighCompute(a, uplo, fn));
  if (shouldRecord(a)) {
    const outs = [r.eigenvalues, r.eigenvectors];
    recordMulti('linalg.eigh', [a], outs, outs, ([gw, gv], [w, v]) => [eighBackward(gw, gv, w, v)]);
  }
  return named(r, ['eigenvalues', 'eigenvectors']);
}

/** eigh's computation, not recorded. */
function eighCompute<D extends DType>(a: Tensor<D>, uplo: 'L' | 'U', fn: string): EighFields<D> {
  const m = checkSquare(a, fn, 'a');
  const n = m.rows;
  return withOutputs(fn, (keep) => {
    const eigenvalues = keep(allocate([...m.batch, n], a.dtype, a.device, undefined, fn));
    const eigenvectors = keep(allocate(a.shape, a.dtype, a.device, undefined, fn));
    if (m.count > 0 && n > 0) {
      using a3 = asBatch(a, m, true);
      using w2 = eigenvalues.reshape([m.count, n]);
      using v3 = eigenvectors.reshape([m.count, n, n]);
      using info = allocate([m.count], 'int32', a.device, undefined, fn);
      ops.eigh(fn, { a: a3.handle(fn), upper: uplo === 'U', w: w2.handle(fn), v: v3.handle(fn), info: info.handle(fn) });
      const bad = firstFailure(info);
      if (bad !== undefined) {
        throw new Error(`${fn}: the eigensolver did not converge for argument 'a'${batchElement(m, bad.index)} ` +
          `(info ${bad.code}): it is ill-conditioned or has too many repeated eigenvalues`);
      }
    }
    return { eigenvalues, eigenvectors };
  });
}
