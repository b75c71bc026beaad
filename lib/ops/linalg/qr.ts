// gx.linalg.qr, torch.linalg.qr's semantics: A = Q R for a matrix or a batch
// of them, Householder QR (LAPACK's geqrf then orgqr; cuSOLVER's on CUDA,
// without synchronizing, so a tall-skinny QR of row blocks stays
// asynchronous). The op (ops/linalg/decomp.h) reads A row-major and writes Q
// and R row-major; its column-major workspace is its own. Recorded for
// autograd with ./qr-backward.ts (torch's formula) in the reduced
// form; the modes whose factors have no derivative refuse an input that
// requires grad at the call (torch refuses them in backward).
import { allocate } from '../creation/creation';
import { type DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { optionKeys } from '../../core/options';
import { describeValue } from '../../core/shape';
import { recordMulti, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import { type Tensor } from '../../core/tensor';
import { optionsOf } from '../common';
import { named, type Named } from '../named';
import { asBatch, checkMatrices, type Matrices, withOutputs } from './common';
import { qrBackward } from './qr-backward';
import { tooManyArguments } from '../../core/options';

/** 'reduced': Q [m, k], R [k, n] (k = min(m, n)); 'complete': Q [m, m], R [m, n]; 'r': R [k, n] only, Q empty. */
export type QrMode = 'reduced' | 'complete' | 'r';

const QR_MODES: readonly QrMode[] = ['reduced', 'complete', 'r'];

export interface QrOptions {
  /** Which factors and how large (default 'reduced'), as torch.linalg.qr's mode. */
  mode?: QrMode;
}

const QR_KEYS = optionKeys<QrOptions>({ mode: true });

export interface QrFields<D extends DType = DType> {
  /** Orthonormal columns: [..., m, k], or [..., m, m] in 'complete' mode; an empty [0] tensor in mode 'r'. */
  Q: Tensor<D>;
  /** Upper triangular: [..., k, n], or [..., m, n] in 'complete' mode. */
  R: Tensor<D>;
}

/** `{ Q, R }` that also destructures as `[Q, R]` (NOTE [ Named results ]). */
export type QrResult<D extends DType = DType> = Named<QrFields<D>, [Tensor<D>, Tensor<D>]>;

/**
 * QR decomposition A = Q R of a float32/float64 matrix or batch of matrices
 * [..., m, n], like torch.linalg.qr: Q has orthonormal columns, R is upper
 * triangular (signs as LAPACK's Householder QR gives them: R's diagonal may
 * be negative). cuSOLVER's geqrf + orgqr on CUDA; on the CPU LAPACK's when
 * installed (gx.backends().cpu.lapack), else a built-in Householder QR.
 * Differentiable as torch's (A of full rank) in mode 'reduced', and in
 * 'complete' when m <= n; an input that requires grad is refused in mode 'r'
 * and in 'complete' with m > n, where Q has no derivative.
 * @example
 * const { Q, R } = gx.linalg.qr(a);                        // a: [100000, 1000] -> Q [100000, 1000], R [1000, 1000]
 * const { R: r } = gx.linalg.qr(a, { mode: 'r' });         // R only
 */
export function qr<D extends DType>(a: Tensor<D>, options?: QrOptions | null): QrResult<D> {
  if (arguments.length > 2) tooManyArguments('gx.linalg.qr', '(a, options?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.linalg.qr';
  const opts = optionsOf<QrOptions>(options, fn, QR_KEYS);
  const mode = opts.mode ?? 'reduced';
  if (!QR_MODES.includes(mode)) {
    throw new TypeError(`${fn}: mode must be 'reduced', 'complete' or 'r', got ${describeValue(mode)}`);
  }
  const mats = checkMatrices(a, fn, 'a');
  const grad = shouldRecord(a);
  if (grad) refuseUndifferentiable(mode, mats, fn);
  const r = noGrad(() => qrCompute(a, mats, mode, fn));
  if (grad) {
    const outs = [r.Q, r.R];
    recordMulti('linalg.qr', [a], outs, outs, ([gQ, gR], [Q, R]) => [qrBackward(gQ, gR, Q, R, `${fn} (backward)`)]);
  }
  return named(r, ['Q', 'R']);
}

/**
 * Modes without a derivative, as torch's: 'r' (the derivative reads Q, not
 * computed) and 'complete' of a tall A (Q's last m - n columns are any
 * orthonormal completion). Refused at the call, naming the mode.
 */
function refuseUndifferentiable(mode: QrMode, mats: Matrices, fn: string): void {
  const fix = "use mode 'reduced' to differentiate, or detach() the input or call it under gx.noGrad";
  if (mode === 'r') {
    throw new Error(`${fn}: the derivative is not implemented for mode 'r' (it depends on Q, which mode 'r' does not compute); ${fix}`);
  }
  if (mode === 'complete' && mats.rows > mats.cols) {
    throw new Error(`${fn}: the derivative is not defined for mode 'complete' when A has more rows than columns ` +
      `(${mats.rows} > ${mats.cols}: Q's last columns are any orthonormal completion); ${fix}`);
  }
}

/** qr's computation, not recorded. */
function qrCompute<D extends DType>(a: Tensor<D>, mats: Matrices, mode: QrMode, fn: string): QrFields<D> {
  const { batch, count, rows: m, cols: n } = mats;
  const k = Math.min(m, n);
  const rk = mode === 'complete' ? m : k;
  const kq = mode === 'complete' ? m : k;
  return withOutputs(fn, (keep) => {
    const R = keep(allocate([...batch, rk, n], a.dtype, a.device, undefined, fn));
    const Q = keep(allocate(mode === 'r' ? [0] : [...batch, m, kq], a.dtype, a.device, undefined, fn));
    if (count > 0) {
      using a3 = asBatch(a, mats, false);
      using r3 = R.reshape([count, rk, n]);
      using q3 = mode === 'r' ? undefined : Q.reshape([count, m, kq]);
      ops.qr(fn, { a: a3.handle(fn), q: q3 === undefined ? null : q3.handle(fn), r: r3.handle(fn) });
    }
    return { Q, R };
  });
}
