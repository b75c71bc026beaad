// im2col and col2im over two spatial dims (ops/conv/unfold.h, NOTE [ unfold
// and fold ]): the calls lib/nn's unfold, fold, convolutions and average
// pools make. Both are linear and each is the other's adjoint, so each
// records the other as its derivative (a padding value is a constant: it adds
// nothing to the gradient). Arguments arrive checked by the nn layer; the
// native side checks the shapes again.
import type { DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { record, shouldRecord } from '../../tape/graph';
import type { Tensor } from '../../core/tensor';
import { allocate } from '../creation/creation';
import { namedForCaller } from '../library';

/** A window geometry over (height, width): each entry [h, w]. */
export interface Im2colGeometry {
  kernelSize: readonly [number, number];
  dilation: readonly [number, number];
  padding: readonly [number, number];
  stride: readonly [number, number];
  /** The grid of windows [OH, OW]: L = OH * OW columns. */
  grid: readonly [number, number];
}

/**
 * x (N, C, H, W), floating, into its columns (N, C*KH*KW, OH*OW); positions
 * outside x read 0 (the convolutions' and average pooling's padding). Records
 * col2im as its derivative.
 */
export function im2col<D extends DType>(x: Tensor<D>, g: Im2colGeometry, fn: string): Tensor<D> {
  const [n, c, h, w] = x.shape;
  const rows = c * g.kernelSize[0] * g.kernelSize[1];
  const out = allocate([n, rows, g.grid[0] * g.grid[1]], x.dtype, x.device, undefined, fn);
  try {
    ops.unfold(fn, { self: x.handle(fn), ...g, out: out.handle(fn) });
  } catch (e) {
    out.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(x)) record('unfold', [x], out, [], (grad) => [col2im(grad, [h, w], g, fn)]);
  return out;
}

/**
 * Columns (N, C*KH*KW, OH*OW), floating, summed back into an image (N, C,
 * H, W) = imageSize: each element the sum of the windows covering it.
 * Records im2col as its derivative.
 */
export function col2im<D extends DType>(cols: Tensor<D>, imageSize: readonly [number, number], g: Im2colGeometry, fn: string): Tensor<D> {
  const [n, rows] = cols.shape;
  const c = rows / (g.kernelSize[0] * g.kernelSize[1]);
  const out = allocate([n, c, imageSize[0], imageSize[1]], cols.dtype, cols.device, undefined, fn);
  try {
    ops.fold(fn, { self: cols.handle(fn), ...g, out: out.handle(fn) });
  } catch (e) {
    out.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(cols)) record('fold', [cols], out, [], (grad) => [im2col(grad, g, fn)]);
  return out;
}
