// gx.linalg.svd, torch.linalg.svd's semantics for one matrix: cuSOLVER's
// gesvdj on CUDA, LAPACK's gesdd or a one-sided Jacobi SVD on the CPU (the op:
// ops/linalg/svd.h), recorded for autograd with the derivative of
// ./svd-backward.ts (torch's svd_backward).
import { allocate, tensor } from '../creation/creation';
import { type DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { recordMulti, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import { formatShape } from '../../core/shape';
import { copyValues, type Tensor } from '../../core/tensor';
import { booleanOption, optionKeys } from '../../core/options';
import { checkTensor, optionsOf } from '../common';
import { named, type Named } from '../named';
import { BINARY, binaryOp, UNARY, unaryOp } from '../elementwise/elementwise';
import { namedForCaller } from '../library';
import { svdBackward } from './svd-backward';
import { REDUCE, reduceOp } from '../reduce/reduction';
import { tooManyArguments } from '../../core/options';

/**
 * Checks a before the SVD and returns the power of two to divide it by (0:
 * none), from one max-abs reduction (found by the fuzz suite, on the H100):
 * - a NaN or an infinity is an Error, as in torch: cuSOLVER's gesvdj reports
 *   non-convergence for some such inputs and never returns for others (a 6 x 3
 *   float64 matrix holding both);
 * - cuSOLVER squares entries unscaled (S was inf for entries near 1e300, 0 near
 *   1e-300), so a CUDA matrix whose largest entry is extreme is scaled first.
 *   The CPU SVD scales on its own (ops/linalg/svd_cpu.cpp).
 */
function checkedScale(a: Tensor, fn: string): number {
  using mags = unaryOp(UNARY.abs, a, fn);
  using top = reduceOp(REDUCE.max, mags, undefined, undefined, fn);
  const m = Number(top.item());
  if (!Number.isFinite(m)) {
    throw new Error(`${fn}: the input holds non-finite values (NaN or infinity); the SVD is not defined for them`);
  }
  if (a.device.type !== 'cuda') return 0;
  const safe = a.dtype === 'float64' ? 2 ** 200 : 2 ** 30;
  return m > 0 && (m > safe || m < 1 / safe) ? Math.floor(Math.log2(m)) : 0;
}

/** t *= 2^e in place, exactly, in two halves so neither factor leaves the float range. */
function scaleBy(t: Tensor, e: number): void {
  const h = Math.trunc(e / 2);
  mulInPlace(t, 2 ** h);
  mulInPlace(t, 2 ** (e - h));
}

function mulInPlace(t: Tensor, f: number): void {
  binaryOp(BINARY.mul, t, f, 'gx.linalg.svd', undefined, true);
}

export interface SvdOptions {
  /** U [m, m] and Vh [n, n] (default true); false: the reduced U [m, k] and Vh [k, n], k = min(m, n). */
  fullMatrices?: boolean;
}

const SVD_KEYS = optionKeys<SvdOptions>({ fullMatrices: true });

export interface SvdFields<D extends DType = DType> {
  /** Left singular vectors: [m, m], or [m, k] with fullMatrices false (k = min(m, n)). */
  U: Tensor<D>;
  /** Singular values, descending: [k]. */
  S: Tensor<D>;
  /** Right singular vectors, transposed: [n, n], or [k, n] with fullMatrices false. */
  Vh: Tensor<D>;
}

/** `{ U, S, Vh }` that also destructures as `[U, S, Vh]` (NOTE [ Named results ]). */
export type SvdResult<D extends DType = DType> = Named<SvdFields<D>, [Tensor<D>, Tensor<D>, Tensor<D>]>;

/**
 * Singular value decomposition A = U diag(S) Vh of a 2-d float32/float64
 * matrix, like torch.linalg.svd: cuSOLVER's gesvdj on CUDA; on the CPU LAPACK's
 * gesdd when a LAPACK is installed (gx.backends().cpu.lapack), else a one-sided
 * Jacobi SVD. Signs of singular vector pairs are not unique and may differ
 * between devices. Differentiable as torch's: S always; U and Vh only where
 * the singular values are distinct (and nonzero, for a non-square A), and for
 * a loss that does not depend on the pairs' signs; with fullMatrices, the
 * gradient of U's (Vh's) columns (rows) past min(m, n) is ignored.
 * @example
 * const { U, S, Vh } = gx.linalg.svd(a, { fullMatrices: false });  // a: [10000, 1000] -> U [10000, 1000]
 */
export function svd<D extends DType>(a: Tensor<D>, options?: SvdOptions | null): SvdResult<D> {
  if (arguments.length > 2) tooManyArguments('gx.linalg.svd', '(a, options?)', arguments.length - 2, arguments[2]);
  const r = noGrad(() => svdCompute(a, options));
  if (shouldRecord(a)) {
    recordMulti('linalg.svd', [a], [r.U, r.S, r.Vh], [r.U, r.S, r.Vh], ([gU, gS, gVh], [U, S, Vh]) => [svdBackward(gU, gS, gVh, U, S, Vh)]);
  }
  return named(r, ['U', 'S', 'Vh']);
}

/** gx.linalg.svd's computation (checks included), not recorded. */
function svdCompute<D extends DType>(a: Tensor<D>, options: SvdOptions | null | undefined): SvdFields<D> {
  const fn = 'gx.linalg.svd';
  const opts = optionsOf<SvdOptions>(options, fn, SVD_KEYS);
  checkTensor(a, fn, 'a');
  if (a.ndim !== 2) throw new RangeError(`${fn}: expected a 2-d matrix, got ${formatShape(a.shape)} (batched SVD is not supported yet)`);
  if (a.dtype !== 'float32' && a.dtype !== 'float64') throw new TypeError(`${fn}: dtype ${a.dtype} is not supported; expected float32 or float64`);
  const full = booleanOption(fn, 'fullMatrices', opts.fullMatrices, true);
  const [m, n] = a.shape;
  const dtype = a.dtype;
  const device = a.device;
  // LAPACK's terms: the column-major matrix C (rows >= cols) is A when m >= n
  // (its column-major copy is A^T's row-major one), else A^T (whose
  // column-major form is A's own row-major memory). See ops/linalg/svd.h.
  const tall = m >= n;
  const rows = tall ? m : n;
  const k = Math.min(m, n);
  const scale = k > 0 ? checkedScale(a, fn) : 0;  // before the copy: it may throw
  // gesvd overwrites its input: always a fresh copy, column-major C.
  let work: Tensor;
  if (tall) {
    using at = a.asStrided([n, m], [a.strides[1], a.strides[0]], a.storageOffset);
    work = at.isContiguous() ? at.clone() : at.contiguous();
  } else {
    work = a.clone();
  }
  if (scale !== 0) scaleBy(work, -scale);
  const outs: Tensor[] = [];
  try {
    const s = allocate([k], dtype, device, undefined, fn);
    outs.push(s);
    const u = allocate(full ? [rows, rows] : [k, rows], dtype, device, undefined, fn);
    outs.push(u);
    const v = allocate([k, k], dtype, device, undefined, fn);
    outs.push(v);
    if (k > 0) {
      ops.svd(fn, { a: work.handle(fn), full, s: s.handle(fn), u: u.handle(fn), v: v.handle(fn) });
      if (scale !== 0) scaleBy(s, scale);
    } else if (full) {
      // No singular values: the full U (or Vh) is any orthonormal basis, the identity as torch gives
      // (cuSOLVER leaves it unwritten for an empty matrix; found by the fuzz suite).
      const eye = new Float64Array(rows * rows);
      for (let i = 0; i < rows; i++) eye[i * rows + i] = 1;
      using host = tensor(eye, { dtype, device, shape: [rows, rows] });
      copyValues(u, host, fn);
    }
    // A column-major matrix read row-major is its transpose. Tall: u holds U
    // (so U is its transpose) and v holds V (so read as is it is Vh). Wide:
    // C = A^T = U' S V'^T, so A = V' S U'^T: U = V' is v's transpose, and
    // Vh = U'^T is u read as is.
    const [colMajorU, asIsVh] = tall ? [u, v] : [v, u];
    using view = colMajorU.asStrided([colMajorU.shape[1], colMajorU.shape[0]], [1, colMajorU.shape[1]], 0);
    const U = view.contiguous();
    outs.push(U);
    colMajorU.dispose();
    return { U: U as Tensor<D>, S: s as Tensor<D>, Vh: asIsVh as Tensor<D> };
  } catch (e) {
    for (const t of outs) if (!t.isDisposed) t.dispose();
    throw namedForCaller(e, fn);
  } finally {
    work.dispose();
  }
}
