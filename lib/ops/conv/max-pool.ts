// Max pooling with indices over two spatial dims (ops/conv/max_pool.h, NOTE
// [ Max pooling with indices ]): the calls lib/nn's maxPool1d / maxPool2d
// make, one native op forward and one backward.
//
// NOTE [ Derivatives of max pooling ]
// The forward's gradient is the backward op (each input element sums the
// gradients of the windows whose index is it). The backward is linear in its
// gradient and the indices are constants, so its own derivative is its
// adjoint: the gather of the incoming gradient at the indices (torch's
// max_pool2d_with_indices_backward double-backward is that gather), and the
// gather's derivative is the backward again. The two record each other, so
// every order stays one native op and deterministic (gx.gather's derivative,
// a scatter-add, would take atomics on CUDA).
import type { DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { record, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import type { Tensor } from '../../core/tensor';
import { allocate } from '../creation/creation';
import { gatherRaw } from '../indexing/indexing';
import { namedForCaller } from '../library';
import type { Im2colGeometry } from './unfold';

/** A window geometry over (height, width), each entry [h, w]; grid is the output's (OH, OW). */
export type MaxPoolGeometry = Im2colGeometry;

const windowArgs = (g: MaxPoolGeometry) => ({ kernelSize: g.kernelSize, dilation: g.dilation, padding: g.padding, stride: g.stride });

/**
 * The maximum of each window of x (N, C, H, W), floating, and its flat index
 * h * W + w into the plane (int64), both (N, C, OH, OW); the values record
 * the backward op as their derivative (NOTE [ Derivatives of max pooling ]).
 */
export function maxPool2dWithIndices<D extends DType>(x: Tensor<D>, g: MaxPoolGeometry, fn: string): { values: Tensor<D>; indices: Tensor<'int64'> } {
  const [n, c, h, w] = x.shape;
  const shape = [n, c, g.grid[0], g.grid[1]];
  const values = allocate(shape, x.dtype, x.device, undefined, fn);
  const indices = allocate(shape, 'int64', x.device, undefined, fn);
  try {
    ops.maxPool2dWithIndices(fn, { self: x.handle(fn), ...windowArgs(g), out: values.handle(fn), indices: indices.handle(fn) });
  } catch (e) {
    values.dispose();
    indices.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(x)) record('max_pool2d_with_indices', [x], values, [indices], (gy, [ix]) => [maxPool2dBackward(gy, ix, [h, w], g, fn)]);
  return { values, indices };
}

/**
 * The gradient (N, C, H, W) = imageSize of max pooling's input from gy (N,
 * C, OH, OW) and the forward's indices; recorded: its derivative is the
 * gather of the incoming gradient at the indices.
 */
export function maxPool2dBackward<D extends DType>(gy: Tensor<D>, indices: Tensor, imageSize: readonly [number, number], g: MaxPoolGeometry,
  fn: string): Tensor<D> {
  const [n, c] = gy.shape;
  const dx = allocate([n, c, imageSize[0], imageSize[1]], gy.dtype, gy.device, undefined, fn);
  try {
    ops.maxPool2dWithIndicesBackward(fn, { gradOutput: gy.handle(fn), indices: indices.handle(fn), ...windowArgs(g), gradInput: dx.handle(fn) });
  } catch (e) {
    dx.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(gy)) record('max_pool2d_with_indices_backward', [gy], dx, [indices], (gdx, [ix]) => [gatherAt(gdx, ix, g, fn)]);
  return dx;
}

/** gdx (N, C, H, W) read at the indices (N, C, OH, OW) of each plane; recorded: its derivative is the backward op. */
function gatherAt<D extends DType>(gdx: Tensor<D>, indices: Tensor, g: MaxPoolGeometry, fn: string): Tensor<D> {
  const [n, c, h, w] = gdx.shape;
  const [, , oh, ow] = indices.shape;
  // The planes flattened (views, or a copy of a strided gradient), not recorded: this records itself.
  const flat = noGrad(() => {
    using planes = gdx.reshape([n, c, h * w]);
    using at = indices.reshape([n, c, oh * ow]);
    return gatherRaw(planes, 2, at, false, fn) as Tensor<D>;
  });
  const out = flat.reshape([n, c, oh, ow]);
  flat.dispose();
  if (shouldRecord(gdx)) record('max_pool2d_with_indices_gather', [gdx], out, [indices], (gg, [ix]) => [maxPool2dBackward(gg, ix, [h, w], g, fn)]);
  return out;
}
