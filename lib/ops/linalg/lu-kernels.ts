// The LU-based computations behind gx.linalg.solve, inv, det and slogdet
// (torch.linalg's semantics), unrecorded: the public ops (./lu.ts)
// record them for autograd, and the derivative formulas
// (./lu-backward.ts, ./symmetric-backward.ts,
// ./qr-backward.ts) call them (under gx.noGrad, as every backward runs).
// LU with partial pivoting (LAPACK's getrf / getrs; cuSOLVER's on CUDA). The
// ops (ops/linalg/decomp.h) overwrite the copy of A they get with its
// factors; solve and inv report a singular matrix through info, which is read
// here (a synchronization on CUDA, as torch's check) and raised as an Error
// naming the batch element.
import { allocate, full, tensor } from '../creation/creation';
import { type DType } from '../../generated/dtypes';
import * as E from '../../generated/elementwise';
import * as ops from '../../generated/ops';
import { broadcastShapes, equalShapes, formatShape, numelOf } from '../../core/shape';
import { type Tensor } from '../../core/tensor';
import { checkTensor } from '../common';
import type { Named } from '../named';
import { expand } from '../layout/layout';
import { REDUCE, reduceOp } from '../reduce/reduction';
import { asBatch, batchElement, checkSquare, firstFailure, type Matrices, withOutputs } from './common';

/** The Error for a singular A: U(i, i) of its LU factorization (getrf's info i + 1) is exactly zero. */
function singular(fn: string, what: string, m: Matrices, failure: { index: number; code: number }): Error {
  const i = failure.code - 1;
  return new Error(`${fn}: ${what} because argument 'a'${batchElement(m, failure.index)} is singular ` +
    `(U[${i}, ${i}] of its LU factorization is exactly zero)`);
}

/** torch's rule: solve's b is a vector (or a batch of them) when it is 1-d or has exactly A's shape without its last dim. */
export function isVectorRhs(a: Tensor, b: Tensor): boolean {
  return b.ndim === 1 || (b.ndim === a.ndim - 1 && equalShapes(b.shape, a.shape.slice(0, -1)));
}

/** @internal gx.linalg.solve's computation (checks included), not recorded: `fn` names the caller in errors. */
export function solveUnrecorded<D extends DType>(a: Tensor<D>, b: Tensor<D>, fn: string): Tensor<D> {
  const am = checkSquare(a, fn, 'a');
  checkTensor(b, fn, 'b');
  if (b.dtype !== a.dtype) {
    throw new TypeError(`${fn}: arguments 'a' and 'b' must have one dtype, got ${a.dtype} and ${b.dtype}`);
  }
  if (!a.device.equals(b.device)) throw new Error(`${fn}: 'a' is on ${a.device} and 'b' on ${b.device}; move them to one device`);
  const n = am.rows;
  const vector = isVectorRhs(a, b);
  if (!vector && b.ndim < 2) throw new RangeError(`${fn}: argument 'b' must be a vector or a matrix, got ${formatShape(b.shape)}`);
  const rows = vector ? b.shape[b.ndim - 1] : b.shape[b.ndim - 2];
  if (rows !== n) {
    throw new RangeError(`${fn}: argument 'b' must have ${n} rows to match 'a' ${formatShape(a.shape)}, got ${formatShape(b.shape)}`);
  }
  const k = vector ? 1 : b.shape[b.ndim - 1];
  const bBatch = b.shape.slice(0, vector ? -1 : -2);
  let batch: number[];
  try {
    batch = broadcastShapes([am.batch, bBatch], fn);
  } catch {
    throw new RangeError(`${fn}: the batch dimensions of 'a' ${formatShape(a.shape)} and 'b' ${formatShape(b.shape)} do not broadcast`);
  }
  const count = numelOf(batch);
  const mats: Matrices = { batch, count, rows: n, cols: n };
  return withOutputs(fn, (keep) => {
    const x = keep(allocate(vector ? [...batch, n] : [...batch, n, k], a.dtype, a.device, undefined, fn));
    if (count === 0 || n === 0 || k === 0) return x;
    using ae = expand(a, [...batch, n, n]);
    using bv = vector ? b.reshape([...bBatch, n, 1]) : undefined;
    using be = expand(bv ?? b, [...batch, n, k]);
    using a3 = asBatch(ae, mats, true);
    using b3 = asBatch(be, { batch, count, rows: n, cols: k }, false);
    using x3 = x.reshape([count, n, k]);
    using info = allocate([count], 'int32', a.device, undefined, fn);
    ops.solve(fn, { a: a3.handle(fn), b: b3.handle(fn), out: x3.handle(fn), info: info.handle(fn) });
    const bad = firstFailure(info);
    if (bad !== undefined) throw singular(fn, 'the system could not be solved', mats, bad);
    return x;
  });
}

/** @internal gx.linalg.inv's computation, not recorded. */
export function invUnrecorded<D extends DType>(a: Tensor<D>, fn: string): Tensor<D> {
  const m = checkSquare(a, fn, 'a');
  return withOutputs(fn, (keep) => {
    const out = keep(allocate(a.shape, a.dtype, a.device, undefined, fn));
    if (m.count === 0 || m.rows === 0) return out;
    using a3 = asBatch(a, m, true);
    using o3 = out.reshape([m.count, m.rows, m.rows]);
    using info = allocate([m.count], 'int32', a.device, undefined, fn);
    ops.inv(fn, { a: a3.handle(fn), out: o3.handle(fn), info: info.handle(fn) });
    const bad = firstFailure(info);
    if (bad !== undefined) throw singular(fn, 'the inverse could not be computed', m, bad);
    return out;
  });
}

/** @internal gx.linalg.det's computation, not recorded (0 for a singular matrix). */
export function detUnrecorded<D extends DType>(a: Tensor<D>, fn: string): Tensor<D> {
  const m = checkSquare(a, fn, 'a');
  return withOutputs(fn, (keep) => {
    const out = keep(allocate(m.batch, a.dtype, a.device, undefined, fn));
    if (m.count === 0) return out;
    using a3 = asBatch(a, m, true);
    using o1 = out.reshape([m.count]);
    ops.det(fn, { a: a3.handle(fn), out: o1.handle(fn) });
    return out;
  });
}

export interface SlogdetFields<D extends DType = DType> {
  /** The determinant's sign: 1, -1, or 0 for a singular matrix: [...]. */
  sign: Tensor<D>;
  /** The natural log of |det A| (-Infinity for a singular matrix): [...]. */
  logabsdet: Tensor<D>;
}

/** `{ sign, logabsdet }` that also destructures as `[sign, logabsdet]` (NOTE [ Named results ]). */
export type SlogdetResult<D extends DType = DType> = Named<SlogdetFields<D>, [Tensor<D>, Tensor<D>]>;

/**
 * @internal gx.linalg.slogdet's computation, not recorded. The det op leaves
 * the LU factors in its copy of A: log |det A| is the sum of log |U(i, i)|
 * (pivoting changes only the sign), so it neither overflows nor underflows
 * where det itself does. The sign is det's, except where det's product left
 * the float range (0 or infinite while log |det| is finite): there it is the
 * sign of det(2^-k A) with 2^k about |det A|^(1/n), a second LU (positive
 * scaling keeps the sign; powers of two are exact). Finding those reads both
 * results back (a synchronization on CUDA, as solve's check of info).
 */
export function slogdetUnrecorded<D extends DType>(a: Tensor<D>, fn: string): SlogdetFields<D> {
  const m = checkSquare(a, fn, 'a');
  const n = m.rows;
  return withOutputs(fn, (keep) => {
    if (m.count === 0 || n === 0) {  // det of a 0 x 0 matrix is 1
      return { sign: keep(full(m.batch, 1, { dtype: a.dtype, device: a.device })), logabsdet: keep(full(m.batch, 0, { dtype: a.dtype, device: a.device })) };
    }
    using a3 = asBatch(a, m, true);
    using det = allocate([m.count], a.dtype, a.device, undefined, fn);
    ops.det(fn, { a: a3.handle(fn), out: det.handle(fn) });
    using diag = a3.asStrided([m.count, n], [n * n, n + 1], a3.storageOffset);  // U's diagonal in the factors
    using mags = E.abs(diag);
    using logs = E.log(mags);
    using logabsdet = reduceOp(REDUCE.sum, logs, -1, undefined, fn);
    using sign = rangeSafeSign(a, m, det, logabsdet, fn);
    return { sign: keep(sign.reshape(m.batch)), logabsdet: keep(logabsdet.reshape(m.batch) as Tensor<D>) };
  });
}

/** The sign of each det (a [count] tensor), recomputed on scaled matrices where det's product left the float range. */
function rangeSafeSign<D extends DType>(a: Tensor<D>, m: Matrices, det: Tensor, logabsdet: Tensor, fn: string): Tensor<D> {
  const dets = det.toArraySync() as ArrayLike<number>, logs = logabsdet.toArraySync() as ArrayLike<number>;
  let outOfRange = false;
  for (let i = 0; i < m.count; i++) if ((dets[i] === 0 || !Number.isFinite(dets[i])) && Number.isFinite(logs[i])) outOfRange = true;
  if (!outOfRange) return E.sign(det) as Tensor<D>;
  const scales = Float64Array.from(logs, (l) => (Number.isFinite(l) ? 2 ** -Math.round(l / (m.rows * Math.LN2)) : 1));
  using s = tensor(scales, { dtype: a.dtype, device: a.device, shape: [m.count, 1, 1] });
  using a3 = asBatch(a, m, false);
  using scaled = E.mul(a3, s);
  using det2 = allocate([m.count], a.dtype, a.device, undefined, fn);
  ops.det(fn, { a: scaled.handle(fn), out: det2.handle(fn) });
  return E.sign(det2) as Tensor<D>;
}
