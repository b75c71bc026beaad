// The gx functions and Tensor methods of the ops that take an input, one or two
// arguments (an axis, or a count or quantile and an axis), then options:
// reductions (any and all too), scans, statistics, softmax, sort. Each is made here from its
// implementation, as binaryFunction and unaryFunction make the elementwise ops
// (lib/ops/elementwise/elementwise.ts): the name its errors give, the refusal
// of an argument after the options, and its type come from one line.
//
// NOTE [ Counting arguments without allocating ]
// The made function is a `function`, not an arrow, and takes its parameters by
// name: it reads `arguments.length` (and `arguments[n]` only to refuse), which
// V8 answers without materializing the arguments object, where a rest
// parameter would allocate an array on every call of a hot op (gx.sum in a
// training step). The implementation is a closure made once per op.
import type { Tensor } from '../core/tensor';
import { tooManyArguments } from '../core/options';

/** What an op takes between its input and its options, as its errors spell it: 'axis?', 'q, axis?'. */
type TwoLeading = `${string}, ${string}`;

/** An implementation taking one argument before the options; `fn` names the caller in errors. */
type Impl1 = (x: unknown, a: unknown, opts: unknown, fn: string) => unknown;
/** An implementation taking two arguments before the options. */
type Impl2 = (x: unknown, a: unknown, b: unknown, opts: unknown, fn: string) => unknown;

/** A Tensor method as installMethods takes it (lib/ops/install.ts). */
type Method = (this: Tensor, ...args: never[]) => unknown;

/**
 * @internal gx.`name`, typed F (the op's overloads), refusing an argument after
 * its options with the form `(x, ${leading}, options?)`. `leading` names the
 * arguments between the input and the options; with two ('k, axis?'), `impl`
 * takes both.
 * @example export const sum = axisFunction<SumFn>('sum', 'axis?', (x, a, o, fn) => reduceOp(REDUCE.sum, x, a, o, fn));
 */
export function axisFunction<F>(name: string, leading: TwoLeading, impl: Impl2): F;
export function axisFunction<F>(name: string, leading: string, impl: Impl1): F;
export function axisFunction<F>(name: string, leading: string, impl: Impl1 | Impl2): F {
  const fn = `gx.${name}`;
  const form = `(x, ${leading}, options?)`;
  let f: (x: unknown, a?: unknown, b?: unknown, opts?: unknown) => unknown;
  if (takesTwo(leading)) {
    const two = impl as Impl2;
    f = function (x, a, b, opts) {
      if (arguments.length > 4) tooManyArguments(fn, form, arguments.length - 4, arguments[4]);
      return two(x, a, b, opts, fn);
    };
  } else {
    const one = impl as Impl1;
    f = function (x, a, opts) {
      if (arguments.length > 3) tooManyArguments(fn, form, arguments.length - 3, arguments[3]);
      return one(x, a, opts, fn);
    };
  }
  Object.defineProperty(f, 'name', { value: name });
  return f as F;
}

/**
 * @internal Tensor.`name`: `impl` with the tensor as its input, refusing an
 * argument after its options with the form `(${leading}, options?)`.
 * @example nansum: axisMethod('nansum', 'axis?', nansumImpl)
 */
export function axisMethod(name: string, leading: TwoLeading, impl: Impl2): Method;
export function axisMethod(name: string, leading: string, impl: Impl1): Method;
export function axisMethod(name: string, leading: string, impl: Impl1 | Impl2): Method {
  const fn = `Tensor.${name}`;
  const form = `(${leading}, options?)`;
  let f: (this: Tensor, a?: unknown, b?: unknown, opts?: unknown) => unknown;
  if (takesTwo(leading)) {
    const two = impl as Impl2;
    f = function (this: Tensor, a, b, opts) {
      if (arguments.length > 3) tooManyArguments(fn, form, arguments.length - 3, arguments[3]);
      return two(this, a, b, opts, fn);
    };
  } else {
    const one = impl as Impl1;
    f = function (this: Tensor, a, opts) {
      if (arguments.length > 2) tooManyArguments(fn, form, arguments.length - 2, arguments[2]);
      return one(this, a, opts, fn);
    };
  }
  Object.defineProperty(f, 'name', { value: name });
  return f;
}

/** Whether `leading` names two arguments (the overloads tie the implementation's shape to it). */
const takesTwo = (leading: string): boolean => leading.includes(',');
