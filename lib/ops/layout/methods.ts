// The layout ops of ./layout as Tensor methods (t.transpose(0, 1), ...),
// declared and installed (by lib/register.ts) as NOTE [ Tensor methods ] (install.ts) says. Each
// method is its function with `this` as the input (errors name the function:
// 'gx.transpose').
import type { DType } from '../../core/dtype';
import type { Tensor } from '../../core/tensor';
import type { Axes, AxisOptions } from '../axes';
import type { TensorMethods } from '../install';
import * as ops from './layout';
import { tooManyArguments } from '../../core/options';


declare module '../../core/tensor' {
  interface Tensor<D extends DType> {
    /** gx.transpose: a view with axes `axis0` and `axis1` swapped. @example a.transpose(0, 1) */
    transpose(axis0: number, axis1: number): Tensor<D>;
    /** gx.permute: a view whose axis i is this tensor's axis `axes[i]`. @example a.permute(2, 0, 1) */
    permute(...axes: number[] | [readonly number[]]): Tensor<D>;
    /** gx.movedim: a view with axes `source` moved to `destination`. @example a.movedim(0, -1) */
    movedim(source: number | readonly number[], destination: number | readonly number[]): Tensor<D>;
    /** gx.squeeze: a view without size-1 axes (all, or those in `axis`). @example a.squeeze(0); a.squeeze({ axis: [0, 2] }) */
    squeeze(axis?: Axes | AxisOptions<Axes>): Tensor<D>;
    /** gx.unsqueeze: a view with a new size-1 axis at `axis`. @example a.unsqueeze(-1) */
    unsqueeze(axis: number | AxisOptions & { axis: number }): Tensor<D>;
    /** gx.expand: size-1 dims repeated to `shape` (stride 0, a view); -1 keeps a dim. @example a.expand(4, -1) */
    expand(...shape: number[] | [readonly number[]]): Tensor<D>;
    /** gx.broadcastTo: this tensor broadcast to `shape` (a view). @example a.broadcastTo([4, 3]) */
    broadcastTo(shape: readonly number[]): Tensor<D>;
    /** gx.flatten: axes startAxis..endAxis merged (a view when possible, else a copy). @example a.flatten(1) */
    flatten(startAxis?: number, endAxis?: number): Tensor<D>;
    /** gx.slice: a view of start:end:step along `axis`. @example a.slice(0, 1, null, 2) */
    slice(axis: number, start?: number | null, end?: number | null, step?: number): Tensor<D>;
    /** gx.narrow: a view of `length` elements along `axis` from `start`. @example a.narrow(1, 2, 3) */
    narrow(axis: number, start: number, length: number): Tensor<D>;
    /** gx.sliceDims: NumPy-style basic indexing, a view. @example a.sliceDims([0, 4, 2], null, -1) // a[0:4:2, :, -1] */
    sliceDims(...specs: ops.DimSlice[]): Tensor<D>;
  }
}

/** Accepts f(2, 3) and f([2, 3]). */
function listArg(args: readonly unknown[]): number[] {
  return (args.length === 1 && Array.isArray(args[0]) ? args[0] : args) as number[];
}

export const LAYOUT_METHODS: TensorMethods = {
  transpose(this: Tensor, axis0: number, axis1: number) {
    if (arguments.length > 2) tooManyArguments('Tensor.transpose', '(axis0, axis1)', arguments.length - 2, arguments[2]);
    return ops.transpose(this, axis0, axis1);
  },
  permute(this: Tensor, ...axes: number[] | [readonly number[]]) {
    return ops.permute(this, listArg(axes));
  },
  movedim(this: Tensor, source: number | readonly number[], destination: number | readonly number[]) {
    if (arguments.length > 2) tooManyArguments('Tensor.movedim', '(source, destination)', arguments.length - 2, arguments[2]);
    return ops.movedim(this, source, destination);
  },
  squeeze(this: Tensor, axis?: Axes | AxisOptions<Axes>) {
    // squeeze(0, 2) squeezed axis 0 only, the second argument dropped: several axes come as a list.
    if (arguments.length > 1) throw new TypeError('Tensor.squeeze: takes (axis?): give several axes as a list, x.squeeze([0, 2])');
    return ops.squeeze(this, axis);
  },
  unsqueeze(this: Tensor, axis: number | AxisOptions & { axis: number }) {
    if (arguments.length > 1) throw new TypeError('Tensor.unsqueeze: takes one axis (insert one dimension per call)');
    return ops.unsqueeze(this, axis);
  },
  expand(this: Tensor, ...shape: number[] | [readonly number[]]) {
    return ops.expand(this, listArg(shape));
  },
  broadcastTo(this: Tensor, shape: readonly number[]) {
    if (arguments.length > 1) tooManyArguments('Tensor.broadcastTo', '(shape)', arguments.length - 1, arguments[1]);
    return ops.broadcastTo(this, shape);
  },
  flatten(this: Tensor, startAxis?: number, endAxis?: number) {
    if (arguments.length > 2) tooManyArguments('Tensor.flatten', '(startAxis?, endAxis?)', arguments.length - 2, arguments[2]);
    return ops.flatten(this, startAxis, endAxis);
  },
  slice(this: Tensor, axis: number, start?: number | null, end?: number | null, step?: number) {
    if (arguments.length > 4) tooManyArguments('Tensor.slice', '(axis, start?, end?, step?)', arguments.length - 4, arguments[4]);
    return ops.slice(this, axis, start, end, step);
  },
  narrow(this: Tensor, axis: number, start: number, length: number) {
    if (arguments.length > 3) tooManyArguments('Tensor.narrow', '(axis, start, length)', arguments.length - 3, arguments[3]);
    return ops.narrow(this, axis, start, length);
  },
  sliceDims(this: Tensor, ...specs: ops.DimSlice[]) {
    return ops.sliceDims(this, ...specs);
  },
};
