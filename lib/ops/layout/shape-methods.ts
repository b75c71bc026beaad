// Tensor conveniences a PyTorch user reaches for: x.T, x.mT, x.matmul(y),
// x.size(dim), `for (const row of x)` and x.toNested(), declared and
// installed (by lib/register.ts) as NOTE [ Tensor methods ] (install.ts) says. Each is a thin
// face of a gx op (transpose, permute, matmul, sliceDims), so autograd and
// both devices come with it.
import type { DType } from '../../core/dtype';
import { nestValues } from '../../core/nested';
import { describeValue } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { booleanOption, optionKeys, tooManyArguments } from '../../core/options';
import { normalizeAxis } from '../axes';
import { optionsOf } from '../common';
import type { TensorGetters, TensorMethods } from '../install';
import { permute, sliceDims, transpose } from './layout';
import { matmul, type MatmulOptions } from '../linalg/matmul';

/** One element of toNested()'s result: as item() gives it (a boolean for bool, else a number). */
export type NestedItem<D extends DType> = D extends 'bool' ? boolean : number;
/** One element of toNested({ bigint: true })'s result: int64 as bigint, so nothing is rounded. */
export type NestedBigItem<D extends DType> = D extends 'bool' ? boolean : D extends 'int64' ? bigint : number;

export interface ToNestedOptions {
  /** int64 elements as bigints, exact for every value (default false: numbers, as item() gives). */
  bigint?: boolean;
}

const TO_NESTED_KEYS = optionKeys<ToNestedOptions>({ bigint: true });
/** Nested arrays of T (or T itself, for a 0-d tensor). */
export type Nested<T> = T | Nested<T>[];

declare module '../../core/tensor' {
  interface Tensor<D extends DType> {
    /**
     * The transpose: a view with the dims reversed (a 2-d tensor's rows and
     * columns swapped; 0-d and 1-d tensors are returned as views of themselves), as torch's x.T.
     * @example gx.zeros([2, 3]).T.shape // [3, 2]
     */
    readonly T: Tensor<D>;
    /**
     * A view with the last two dims swapped (a batch of matrices transposed); needs 2 dims or more.
     * @example gx.zeros([5, 2, 3]).mT.shape // [5, 3, 2]
     */
    readonly mT: Tensor<D>;
    /** gx.matmul(this, other). @example a.matmul(b) */
    matmul(other: Tensor, options?: MatmulOptions | null): Tensor;
    /**
     * The shape, or the size of dim `axis` (negative counts from the end), as torch's x.size().
     * @example gx.zeros([2, 3]).size(-1) // 3
     */
    size(): readonly number[];
    size(axis: number): number;
    /**
     * The sub-tensors along the first dim, as views (x[0], x[1], ...); a 0-d tensor cannot be iterated.
     * @example for (const row of gx.zeros([2, 3])) console.log(row.shape); // [3], twice
     */
    [Symbol.iterator](): IterableIterator<Tensor<D>>;
    /**
     * The values as nested JS arrays (torch's tolist()): numbers as item()
     * gives them (so JSON.stringify takes them), booleans for bool; an int64
     * value beyond ±(2^53 - 1) is a RangeError, as item()'s, unless
     * `{ bigint: true }` asks for int64 as bigints. A 0-d tensor gives its value.
     * gx.tensor(x.toNested({ bigint: true }), { dtype: x.dtype }) rebuilds x.
     * @example gx.tensor([[1, 2], [3, 4]]).toNested() // [[1, 2], [3, 4]]; JSON.stringify(gx.argmax(x, 1).toNested())
     */
    toNested(opts?: ToNestedOptions & { bigint?: false }): Nested<NestedItem<D>>;
    toNested(opts: ToNestedOptions & { bigint: true }): Nested<NestedBigItem<D>>;
    toNested(opts?: ToNestedOptions): Nested<NestedBigItem<D>> | Nested<NestedItem<D>>;
    /** The number of dims, as torch's x.dim() (the same as x.ndim). @example gx.zeros([2, 3]).dim() // 2 */
    dim(): number;
    /**
     * Sets every element to 0 in place and returns this, as torch's x.zero_(). On a tensor in the graph (or a
     * view of one) autograd records it, the gradient of what it held being zero; refused on a leaf that
     * requires grad outside gx.noGrad, as torch (NOTE [ copy_ into views ]). @example w.grad?.zero_()
     */
    zero_(): this;
  }
}

export const SHAPE_GETTERS: TensorGetters = {
  T(this: Tensor) {
    const n = this.ndim;
    return n === 2 ? transpose(this, 0, 1) : permute(this, Array.from({ length: n }, (_, i) => n - 1 - i));
  },
  mT(this: Tensor) {
    if (this.ndim < 2) throw new RangeError(`Tensor.mT: needs a tensor of 2 or more dimensions, got ${this.ndim}`);
    return transpose(this, -2, -1);
  },
};

/** v as a number, exact: beyond ±(2^53 - 1) a RangeError (item()'s rule). */
function safeNumber(v: bigint, dtype: DType, fn: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`${fn}: the value ${v} (${dtype}) is beyond ±(2^53 - 1), where a number is exact; ` +
      'read the values as bigints with toNested({ bigint: true })');
  }
  return Number(v);
}

function* rows<D extends DType>(x: Tensor<D>): IterableIterator<Tensor<D>> {
  const n = x.shape[0];
  for (let i = 0; i < n; i++) yield sliceDims(x, i);
}

export const SHAPE_METHODS: TensorMethods = {
  matmul(this: Tensor, other: Tensor, options?: MatmulOptions | null) {
    if (arguments.length > 2) tooManyArguments('Tensor.matmul', '(other, options?)', arguments.length - 2, arguments[2]);
    return matmul(this, other, options);
  },
  size(this: Tensor, axis?: number) {
    if (arguments.length > 1) tooManyArguments('Tensor.size', '(axis?)', arguments.length - 1, arguments[1]);
    const shape = this.shape;
    if (axis === undefined) return shape;
    if (typeof axis !== 'number') throw new TypeError(`Tensor.size: axis must be an integer, got ${describeValue(axis)}`);
    return shape[normalizeAxis(axis, shape, 'Tensor.size', 'axis', 'strict')];
  },
  [Symbol.iterator](this: Tensor) {
    // Checked here, not in the generator, so that `for (... of x)` throws at once.
    this.handle('Tensor iteration');
    if (this.ndim === 0) throw new TypeError('Tensor iteration: a 0-d tensor cannot be iterated; read it with item()');
    return rows(this);
  },
  dim(this: Tensor) {
    if (arguments.length > 0) tooManyArguments('Tensor.dim', '()', arguments.length, arguments[0]);
    return this.ndim;
  },
  zero_(this: Tensor) {
    if (arguments.length > 0) tooManyArguments('Tensor.zero_', '()', arguments.length, arguments[0]);
    return this.fill_(0, 'Tensor.zero_');
  },
  toNested(this: Tensor, opts?: unknown) {
    if (arguments.length > 1) tooManyArguments('Tensor.toNested', '(options?)', arguments.length - 1, arguments[1]);
    const fn = 'Tensor.toNested';
    const o = optionsOf<ToNestedOptions>(opts, fn, TO_NESTED_KEYS);
    const bigint = booleanOption(fn, 'bigint', o.bigint, false);
    const values = this.toArraySync() as ArrayLike<number | bigint>;
    const items: ArrayLike<number | bigint | boolean> = this.dtype === 'bool' ? Array.from(values, (v) => v !== 0)
      : values instanceof BigInt64Array && !bigint ? Array.from(values, (v) => safeNumber(v, this.dtype, fn)) : values;
    return nestValues(items, this.shape) as never;
  },
};
