// What gx.linalg's decompositions share (qr.ts, lu.ts,
// symmetric.ts): checking their matrix arguments, handing a batch of
// matrices to the ops as the contiguous [count, rows, cols] tensor they take
// (ops/linalg/decomp.h), reading the factorizations' info, and disposing of
// the outputs made so far when a call fails.
import { type DType } from '../../generated/dtypes';
import { formatShape, numelOf } from '../../core/shape';
import { type Tensor } from '../../core/tensor';
import { checkTensor } from '../common';
import { namedForCaller } from '../library';

/** A batch of matrices [...batch, rows, cols]; count = the number of matrices. */
export interface Matrices {
  batch: readonly number[];
  count: number;
  rows: number;
  cols: number;
}

/** Checks that argument `name` of `fn` is a float32/float64 tensor of at least 2 dims, and returns its matrices. */
export function checkMatrices(t: unknown, fn: string, name: string): Matrices {
  const a = checkTensor(t, fn, name);
  if (a.ndim < 2) {
    throw new RangeError(`${fn}: argument '${name}' must be a matrix or a batch of matrices (at least 2 dimensions), got ${formatShape(a.shape)}`);
  }
  if (a.dtype !== 'float32' && a.dtype !== 'float64') {
    throw new TypeError(`${fn}: argument '${name}' has dtype ${a.dtype}; expected float32 or float64`);
  }
  const batch = a.shape.slice(0, -2);
  return { batch, count: numelOf(batch), rows: a.shape[a.ndim - 2], cols: a.shape[a.ndim - 1] };
}

/** checkMatrices for square matrices [..., n, n]. */
export function checkSquare(t: unknown, fn: string, name: string): Matrices {
  const m = checkMatrices(t, fn, name);
  if (m.rows !== m.cols) {
    throw new RangeError(`${fn}: argument '${name}' must be a square matrix or a batch of them [..., n, n], got ${formatShape((t as Tensor).shape)}`);
  }
  return m;
}

/**
 * `t` as the contiguous [count, rows, cols] tensor the ops take: a view when
 * `t` is contiguous and the op only reads it, else a copy (`overwritten`: the
 * op writes into it, so never `t`'s own memory).
 */
export function asBatch<D extends DType>(t: Tensor<D>, m: Matrices, overwritten: boolean): Tensor<D> {
  const shape = [m.count, m.rows, m.cols];
  if (!overwritten && t.isContiguous()) return t.reshape(shape);
  using c = t.clone();
  return c.reshape(shape);
}

/**
 * The first matrix whose factorization reported trouble in the op's int32
 * info [count] (0: fine), with its code; undefined when none did. Reading it
 * waits for the op on CUDA, as torch's checks of these errors do.
 */
export function firstFailure(info: Tensor): { index: number; code: number } | undefined {
  const codes = info.toArraySync() as Int32Array;
  const index = codes.findIndex((c) => c !== 0);
  return index < 0 ? undefined : { index, code: codes[index] };
}

/** ' (batch element i)' for the i-th matrix of a batch; '' for a lone matrix. */
export function batchElement(m: Matrices, index: number): string {
  return m.batch.length > 0 ? ` (batch element ${index})` : '';
}

/**
 * Runs `body`, giving it `keep` to register each output it allocates: when
 * `body` throws, the outputs kept so far are disposed and the error names `fn`.
 */
export function withOutputs<R>(fn: string, body: (keep: <T extends Tensor>(t: T) => T) => R): R {
  const made: Tensor[] = [];
  try {
    return body((t) => {
      made.push(t);
      return t;
    });
  } catch (e) {
    for (const t of made) if (!t.isDisposed) t.dispose();
    throw namedForCaller(e, fn);
  }
}
