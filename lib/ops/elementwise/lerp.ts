// lerp(self, end, weight): self + weight * (end - self) as one elementwise
// op of three operands (LerpOp in ops/unary/functors.h, through the op
// list's lerp schema), weight a tensor or a JS number, all broadcasting, as
// torch.lerp. Its derivative is recorded here: d/dself (1 - weight),
// d/dend weight, d/dweight end - self.
import { record, shouldRecord } from '../../tape/graph';
import type { DType } from '../../generated/dtypes';
import * as E from '../../generated/elementwise';
import * as ops from '../../generated/ops';
import type { TensorMethods } from '../install';
import { Tensor } from '../../core/tensor';
import { broadcastShapes, checkTensor, commonDevice, computeResult, describeOperand, optionsOf, OUT_KEYS, type OutOptions } from '../common';
import { isFloating, resultType } from '../promotion';
import { tooManyArguments } from '../../core/options';

declare module '../../core/tensor' {
  interface Tensor<D extends DType = DType> {
    /** this + weight * (end - this) (gx.lerp(this, end, weight)). */
    lerp(end: Tensor, weight: Tensor | number, opts?: OutOptions<D>): Tensor<D>;
  }
}

/** @internal lerp into a new tensor or `opts.out`. */
export function lerpOp(a: unknown, b: unknown, w: unknown, fn: string, opts?: unknown): Tensor {
  const { out } = optionsOf<OutOptions>(opts, fn, OUT_KEYS);
  const self = checkTensor(a, fn, 'self');
  const end = checkTensor(b, fn, 'end');
  if (!(w instanceof Tensor) && typeof w !== 'number') {
    throw new TypeError(`${fn}: weight must be a Tensor or a number, got ${describeOperand(w)}`);
  }
  const tensors = w instanceof Tensor ? [self, end, w] : [self, end];
  const device = commonDevice(tensors, ['self', 'end', 'weight'], fn);
  const shape = broadcastShapes(tensors, fn);
  const common = resultType(self, end, w);
  // torch.lerp takes floating self and end only (a float weight would otherwise promote integers to float32).
  if (!isFloating(resultType(self, end))) {
    throw new TypeError(`${fn}: needs floating operands (got ${tensors.map((x) => describeOperand(x)).join(', ')}${w instanceof Tensor ? '' : ` and ${w}`}); ` +
      'convert with .astype() first');
  }
  const result = computeResult(shape, common, device, fn, { out, inputs: tensors, elementwise: true }, (r) =>
    ops.lerp(fn, {
      self: self.handle(fn), end: end.handle(fn), weight: w instanceof Tensor ? w.handle(fn) : null,
      weightScalar: w instanceof Tensor ? 0 : w, dtype: common, out: r.handle(fn),
    }));
  if (shouldRecord(self, end, w)) {
    record('lerp', [self, end, w], result, w instanceof Tensor ? [self, end, w] : [self, end], (g, s) => {
      const [sa, sb] = s;
      if (!(w instanceof Tensor)) return [E.mul(g, 1 - w), E.mul(g, w), null];  // torch: grad * (1 - weight), in double
      const sw = s[2];
      return [E.mul(g, E.sub(1, sw)), E.mul(g, sw), E.mul(g, E.sub(sb, sa))];
    });
  }
  return result;
}

/**
 * self + weight * (end - self), elementwise, broadcasting; weight a tensor or
 * a number. Computed from the nearer end as torch.lerp (weight 1 gives end).
 * @example gx.lerp(a, b, 0.25); gx.lerp(a, b, w)
 */
export function lerp<D extends DType>(self: Tensor<D>, end: Tensor, weight: Tensor | number, opts?: OutOptions<D>): Tensor<D>;
export function lerp(self: Tensor, end: Tensor, weight: Tensor | number, opts?: OutOptions): Tensor;
export function lerp(self: unknown, end: unknown, weight: unknown, opts?: unknown): Tensor {
  if (arguments.length > 4) tooManyArguments('gx.lerp', '(self, end, weight, options?)', arguments.length - 4, arguments[4]);
  return lerpOp(self, end, weight, 'gx.lerp', opts);
}

export const LERP_METHODS: TensorMethods = {
  lerp(this: Tensor, end: unknown, weight: unknown, opts?: unknown) {
    if (arguments.length > 3) tooManyArguments('Tensor.lerp', '(end, weight, options?)', arguments.length - 3, arguments[3]);
    return lerpOp(this, end, weight, 'Tensor.lerp', opts);
  },
};
