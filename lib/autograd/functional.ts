// The functional form (tfjs's tf.grad / tf.valueAndGrad, JAX's grad): a
// function of tensors returning a one-element tensor, turned into one that
// returns its gradient with respect to chosen arguments. The arguments
// themselves are not touched: each is replaced by a fresh leaf sharing its
// data for the call.
import { full } from '../creation';
import { Tensor } from '../tensor';
import { track } from '../tidy';
import { alias } from './graph';
import { enableGrad } from './mode';

type Fn = (...args: never[]) => Tensor;
type GradOf<A extends number | readonly number[]> = A extends number ? Tensor : Tensor[];

function call<A extends number | readonly number[]>(f: Fn, argnums: A, args: unknown[], api: string): { value: Tensor; grad: GradOf<A> } {
  if (typeof f !== 'function') throw new TypeError(`${api}: f must be a function`);
  const nums: number[] = typeof argnums === 'number' ? [argnums] : [...(argnums as readonly number[])];
  for (const n of nums) {
    if (!(Number.isInteger(n) && n >= 0 && n < args.length)) throw new RangeError(`${api}: argnums ${n} is not an argument of the call (it has ${args.length})`);
    if (!(args[n] instanceof Tensor)) throw new TypeError(`${api}: argument ${n} must be a Tensor to differentiate with respect to it`);
  }
  const leaves = nums.map((n) => {
    const leaf = alias(args[n] as Tensor);
    leaf.requiresGrad = true;
    return leaf;
  });
  try {
    const callArgs = args.slice();
    nums.forEach((n, i) => { callArgs[n] = leaves[i]; });
    const out = enableGrad(() => f(...(callArgs as never[])));
    if (!(out instanceof Tensor) || out.numel !== 1) {
      const got = out instanceof Tensor ? `shape [${out.shape.join(', ')}]` : typeof out;
      if (out instanceof Tensor) out.dispose();
      throw new TypeError(`${api}: f must return a one-element Tensor (a loss), got ${got}`);
    }
    if (out.requiresGrad) out.backward();
    const value = out.detach();
    out.dispose();
    const grads = leaves.map((leaf) => {
      const g = leaf.grad;
      if (leaf.ag !== undefined) leaf.ag.grad = null;  // ours now: disposing the leaf must not take it
      if (g === null) return full(leaf.shape as number[], 0, { dtype: leaf.dtype, device: leaf.device });
      track(g);  // the caller's, like any result (a .grad lives outside tidy scopes)
      return g;
    });
    return { value, grad: (typeof argnums === 'number' ? grads[0] : grads) as GradOf<A> };
  } finally {
    for (const l of leaves) l.dispose();
  }
}

/**
 * f's gradient with respect to argument `argnums` (or each of several), as a
 * function of the same arguments. f returns a one-element tensor.
 * @example
 * const df = gx.grad((x: gx.Tensor) => gx.sum(gx.mul(x, x)));
 * df(gx.tensor([1, 2]))  // [2, 4]
 */
export function grad<F extends Fn, A extends number | readonly number[] = 0>(f: F, argnums?: A): (...args: Parameters<F>) => GradOf<A> {
  return (...args) => {
    const r = call(f, (argnums ?? 0) as A, args, 'gx.grad');
    r.value.dispose();
    return r.grad;
  };
}

/** Like grad, also returning f's value: `const { value, grad } = gx.valueAndGrad(loss)(w)`. */
export function valueAndGrad<F extends Fn, A extends number | readonly number[] = 0>(f: F, argnums?: A): (...args: Parameters<F>) => { value: Tensor; grad: GradOf<A> } {
  return (...args) => call(f, (argnums ?? 0) as A, args, 'gx.valueAndGrad');
}
