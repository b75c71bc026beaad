// gx.linalg.solve, inv and det, torch.linalg's semantics, from the LU
// factorization with partial pivoting (LAPACK's getrf / getrs; cuSOLVER's on
// CUDA). The ops (ops/linalg/decomp.h) overwrite the copy of A they get with
// its factors; solve and inv report a singular matrix through info, which is
// read here (a synchronization on CUDA, as torch's check) and raised as an
// Error naming the batch element.
import { allocate } from '../creation';
import { type DType } from '../generated/dtypes';
import * as ops from '../generated/ops';
import { broadcastShapes, equalShapes, formatShape, numelOf } from '../shape';
import { type Tensor } from '../tensor';
import { checkTensor } from './common';
import { expand } from './layout';
import { asBatch, batchElement, checkSquare, firstFailure, type Matrices, withOutputs } from './linalg-common';

/** The Error for a singular A: U(i, i) of its LU factorization (getrf's info i + 1) is exactly zero. */
function singular(fn: string, what: string, m: Matrices, failure: { index: number; code: number }): Error {
  const i = failure.code - 1;
  return new Error(`${fn}: ${what} because argument 'a'${batchElement(m, failure.index)} is singular ` +
    `(U[${i}, ${i}] of its LU factorization is exactly zero)`);
}

/**
 * The solution X of A X = B for square A, like torch.linalg.solve: A
 * [..., n, n]; B [..., n, k] gives X [..., n, k], and a vector B ([n], or A's
 * batch dims + [n]) gives a vector X. Batch dims broadcast. A singular A is an
 * Error. LU with partial pivoting: cuSOLVER on CUDA; on the CPU LAPACK when
 * installed, else a built-in LU.
 * @example
 * const x = gx.linalg.solve(a, b);  // a [3, 3], b [3] -> x [3]
 */
export function solve<D extends DType>(a: Tensor<D>, b: Tensor<D>): Tensor<D> {
  const fn = 'gx.linalg.solve';
  const am = checkSquare(a, fn, 'a');
  checkTensor(b, fn, 'b');
  if (b.dtype !== a.dtype) {
    throw new TypeError(`${fn}: arguments 'a' and 'b' must have one dtype, got ${a.dtype} and ${b.dtype}`);
  }
  if (!a.device.equals(b.device)) throw new Error(`${fn}: 'a' is on ${a.device} and 'b' on ${b.device}; move them to one device`);
  const n = am.rows;
  // torch's rule: b is a vector (or a batch of them) when it is 1-d or has exactly A's shape without its last dim.
  const vector = b.ndim === 1 || (b.ndim === a.ndim - 1 && equalShapes(b.shape, a.shape.slice(0, -1)));
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

/**
 * The inverse of a square matrix or batch of them [..., n, n], like
 * torch.linalg.inv; a singular matrix is an Error. LU with partial pivoting:
 * cuSOLVER on CUDA; on the CPU LAPACK when installed, else a built-in LU.
 * @example
 * const ai = gx.linalg.inv(a);
 */
export function inv<D extends DType>(a: Tensor<D>): Tensor<D> {
  const fn = 'gx.linalg.inv';
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

/**
 * The determinant of a square matrix or batch of them [..., n, n] -> [...],
 * like torch.linalg.det (0 for a singular matrix, 1 for a 0 x 0 one), from the
 * LU factorization: the product of U's diagonal and the pivots' sign.
 * @example
 * const d = gx.linalg.det(a).item();
 */
export function det<D extends DType>(a: Tensor<D>): Tensor<D> {
  const fn = 'gx.linalg.det';
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
