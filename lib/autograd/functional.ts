// The functional form (tfjs's tf.grad / tf.valueAndGrad, JAX's grad): a
// function of tensors returning a one-element tensor, turned into one that
// returns its gradient with respect to chosen arguments. The arguments
// themselves are not touched: each is replaced by a fresh leaf sharing its
// data for the call.
import { full, ones, tensor, zeros } from '../ops/creation/creation';
import { stack } from '../ops/layout/layout';
import { booleanOption, checkOptions, optionKeys, tooManyArguments } from '../core/options';
import { Tensor } from '../core/tensor';
import { tidy, track as trackTensor, untrack } from '../core/tidy';
import { ownRef, runGraph, type Capture } from './engine';
import { alias, isFloatingDType, requiresGrad, type Node } from '../tape/graph';
import { enableGrad, noGrad } from '../tape/mode';

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
      trackTensor(g);  // the caller's, like any result (a .grad lives outside tidy scopes)
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
  if (arguments.length > 2) tooManyArguments('gx.grad', '(f, argnums?)', arguments.length - 2, arguments[2]);
  return (...args) => {
    const r = call(f, (argnums ?? 0) as A, args, 'gx.grad');
    r.value.dispose();
    return r.grad;
  };
}

/** Like grad, also returning f's value: `const { value, grad } = gx.valueAndGrad(loss)(w)`. */
export function valueAndGrad<F extends Fn, A extends number | readonly number[] = 0>(f: F, argnums?: A): (...args: Parameters<F>) => { value: Tensor; grad: GradOf<A> } {
  if (arguments.length > 2) tooManyArguments('gx.valueAndGrad', '(f, argnums?)', arguments.length - 2, arguments[2]);
  return (...args) => call(f, (argnums ?? 0) as A, args, 'gx.valueAndGrad');
}

// gx.autograd.functional: torch.autograd.functional's jacobian, hessian, vjp
// and jvp, from reverse mode alone.
//
// NOTE [ Functional derivatives ]
// Each call runs f once on fresh leaves sharing the inputs' data (with
// createGraph, on recorded views of inputs that require grad, so that the
// results differentiate back to them, as torch's _grad_preprocess), then
// backward passes that collect the leaves' gradients without touching any
// .grad (engine.ts's capture):
// - vjp: one pass seeded with v.
// - jacobian: one pass per output element (a one-hot seed: a row of J).
// - hessian: the gradient recorded (backward with createGraph), then the
//   Jacobian of that gradient.
// - jvp: forward mode from reverse, by the double-vjp trick (torch's too):
//   g(u) = J^T u is linear in u; recorded with createGraph from a leaf u,
//   its own vjp with v is d<J^T u, v>/du = J v. Two passes whatever the
//   sizes; it needs the derivative formulas on the path to record when run
//   with createGraph (the built-in ops' do); jacobian (one pass per output
//   element) needs only first derivatives.
// An output that does not depend on an input gives zeros there (strict:
// an error, as torch's). Everything but the results is freed before return.

/** A tensor, or a list of tensors (torch's tuple), as the inputs or outputs of f. */
export type TensorOrList = Tensor | readonly Tensor[];
/** One T for a single tensor, a list of T for a list. */
type Each<I, T> = I extends Tensor ? T : T[];

export interface FunctionalOptions {
  /** Record the results' graph, so that they differentiate again with respect to the inputs that require grad (default false). */
  createGraph?: boolean;
  /** Throw when an output does not depend on an input (default false: its derivative is zeros, as torch). */
  strict?: boolean;
}

const OPTION_KEYS = optionKeys<FunctionalOptions>({ createGraph: true, strict: true });

interface Call {
  /** The leaves f ran on, one per input. */
  leaves: Tensor[];
  outs: Tensor[];
  createGraph: boolean;
  strict: boolean;
  api: string;
}

function listOf(x: unknown, what: string, api: string): { list: Tensor[]; single: boolean } {
  const single = x instanceof Tensor;
  if (!single && !Array.isArray(x)) throw new TypeError(`${api}: ${what} must be a Tensor or an array of Tensors, got ${typeof x}`);
  const list = single ? [x] : [...(x as unknown[])];
  list.forEach((t, i) => {
    const name = single ? what : `${what}[${i}]`;
    if (!(t instanceof Tensor)) throw new TypeError(`${api}: ${name} must be a Tensor, got ${typeof t}`);
    if (t.isDisposed) throw new Error(`${api}: ${name} was disposed`);
    if (!isFloatingDType(t.dtype)) throw new TypeError(`${api}: ${name} must be a floating tensor to differentiate, got ${t.dtype}`);
  });
  return { list: list as Tensor[], single };
}

/** Runs f on fresh leaves standing for the inputs (NOTE [ Functional derivatives ]). */
function callOn(f: unknown, inputs: unknown, options: FunctionalOptions, api: string): Call & { singleIn: boolean; singleOut: boolean } {
  if (typeof f !== 'function') throw new TypeError(`${api}: f must be a function`);
  const o = checkOptions<FunctionalOptions>(options, api, OPTION_KEYS);
  const createGraph = booleanOption(api, 'createGraph', o.createGraph, false), strict = booleanOption(api, 'strict', o.strict, false);
  const { list, single: singleIn } = listOf(inputs, 'inputs', api);
  const leaves = list.map((x) => {
    if (createGraph && requiresGrad(x)) return track(ownRef(x, true));
    const leaf = track(alias(x));
    leaf.requiresGrad = true;
    return leaf;
  });
  const r: unknown = enableGrad(() => (f as (...xs: Tensor[]) => unknown)(...leaves));
  const { list: outs, single: singleOut } = listOf(r, 'the output of f', api);
  return { leaves, outs, createGraph, strict, api, singleIn, singleOut };
}

/** t joined to the innermost tidy scope (alone). */
function track<T extends Tensor>(t: T): T {
  untrack(t);
  trackTensor(t);
  return t;
}

/**
 * One backward pass from `roots` seeded with `seeds` (the engine's: each
 * given up here); the gradient of each of `leaves` (undefined where none
 * reached it), in the current tidy scope.
 */
function vjpOnce(roots: readonly Tensor[], seeds: readonly Tensor[], leaves: readonly Tensor[], createGraph: boolean, api: string): (Tensor | undefined)[] {
  const capture: Capture = { leaves: new Map(), outputs: new Map() };
  for (const l of leaves) {
    const node = l.ag?.node as Node | null | undefined;
    if (node == null) capture.leaves.set(l, undefined);
    else (capture.outputs.get(node) ?? capture.outputs.set(node, new Map()).get(node) as Map<number, Tensor | undefined>).set(l.ag?.index ?? 0, undefined);
  }
  const rs: Tensor[] = [], ss: Tensor[] = [];
  roots.forEach((r, i) => {
    if (requiresGrad(r)) {
      rs.push(r);
      ss.push(seeds[i]);
    } else {
      seeds[i].dispose();  // f's output does not depend on the inputs: nothing flows from it
    }
  });
  if (rs.length > 0) runGraph(rs, ss, { retainGraph: true, createGraph }, capture, api);
  return leaves.map((l) => {
    const node = l.ag?.node as Node | null | undefined;
    const g = node == null ? capture.leaves.get(l) : capture.outputs.get(node)?.get(l.ag?.index ?? 0);
    return g === undefined ? undefined : track(g);
  });
}

/** g, or where no gradient reached the input, zeros of `shape` (strict: an error). */
function orZeros(g: Tensor | undefined, like: Tensor, shape: readonly number[], c: Call, out: number, input: number): Tensor {
  if (g !== undefined) return g;
  if (c.strict) {
    throw new Error(`${c.api}: output ${out} of f does not depend on input ${input}; strict mode does not allow that (pass { strict: false } for zeros)`);
  }
  return zeros(shape as number[], { dtype: like.dtype, device: like.device });
}

/** The engine's own seed of `v` (checked against the output it seeds), recorded with createGraph. */
function seedOf(v: Tensor, like: Tensor, name: string, c: Call): Tensor {
  if (v.shape.join() !== like.shape.join()) throw new TypeError(`${c.api}: ${name} has shape [${v.shape.join(', ')}], its tensor [${like.shape.join(', ')}]`);
  if (v.dtype !== like.dtype || !v.device.equals(like.device)) {
    throw new TypeError(`${c.api}: ${name} is ${v.dtype} on ${String(v.device)}, its tensor ${like.dtype} on ${String(like.device)}`);
  }
  return ownRef(v, c.createGraph);
}

/** v as a list of the given tensors' shapes; when absent, ones for a single one-element tensor. */
function vectors(v: unknown, like: readonly Tensor[], single: boolean, what: string, c: Call): Tensor[] {
  if (v === undefined || v === null) {
    if (!single || like[0].numel !== 1) throw new TypeError(`${c.api}: v is needed unless ${what} is a single one-element tensor`);
    return [ones(like[0].shape as number[], { dtype: like[0].dtype, device: like[0].device })];
  }
  const { list, single: vSingle } = listOf(v, 'v', c.api);
  if (vSingle !== single || list.length !== like.length) {
    throw new TypeError(`${c.api}: v must be shaped as ${what}: ${single ? 'a Tensor' : `an array of ${like.length} Tensors`}`);
  }
  return list;
}

/** The Jacobian of `o` with respect to each leaf: one backward pass per element of o; shapes o.shape + leaf.shape. */
function jacobianOf(o: Tensor, out: number, c: Call): Tensor[] {
  const m = o.numel;
  const rows: (Tensor | undefined)[][] = c.leaves.map(() => []);
  for (let j = 0; j < m; j++) {
    const onehot = new Array<number>(m).fill(0);
    onehot[j] = 1;
    const seed = untrack(tensor(onehot, { dtype: o.dtype, device: o.device }).reshape(o.shape as number[]));
    vjpOnce([o], [seed], c.leaves, c.createGraph, c.api).forEach((g, i) => rows[i].push(g));
  }
  return c.leaves.map((x, i) => {
    const shape = [...o.shape, ...x.shape];
    if (m === 0) return zeros(shape, { dtype: x.dtype, device: x.device });
    const reached = rows[i].some((g) => g !== undefined);
    if (!reached) return orZeros(undefined, x, shape, c, out, i);
    const flat = rows[i].map((g) => (g === undefined ? zeros([x.numel], { dtype: x.dtype, device: x.device }) : g.reshape(-1)));
    return stack(flat).reshape(shape);
  });
}

/** Runs `fn` recording (createGraph: the results differentiate again) or not. */
const mode = <T>(c: { createGraph: boolean }, fn: () => T): T => (c.createGraph ? enableGrad(fn) : noGrad(fn));

/** f's outputs as the caller gets them: detached unless createGraph. */
const outputsOf = (c: Call & { singleOut: boolean }): Tensor | Tensor[] => {
  const outs = c.createGraph ? c.outs : c.outs.map((o) => o.detach());
  return c.singleOut ? outs[0] : outs;
};

/**
 * The Jacobian of f at `inputs` (torch.autograd.functional.jacobian): for
 * an output of shape O and an input of shape I, a tensor of shape [...O,
 * ...I]; a list over the inputs when `inputs` is a list, over the outputs
 * when f returns a list (a list of lists for both). One backward pass per
 * output element (NOTE [ Functional derivatives ]).
 * @example
 * gx.autograd.functional.jacobian((x) => gx.mul(x, x), gx.tensor([1, 2]))  // [[2, 0], [0, 4]]
 */
export function jacobian<O extends TensorOrList, I extends TensorOrList>(f: (...inputs: Tensor[]) => O, inputs: I, options: FunctionalOptions = {}): Each<O, Each<I, Tensor>> {
  const api = 'gx.autograd.functional.jacobian';
  return tidy(() => {
    const c = callOn(f, inputs, options, api);
    const per = mode(c, () => c.outs.map((o, k) => jacobianOf(o, k, c)));
    const byInput = per.map((js) => (c.singleIn ? js[0] : js));
    return (c.singleOut ? byInput[0] : byInput) as Each<O, Each<I, Tensor>>;
  });
}

/**
 * The Hessian of f (which returns a one-element tensor) at `inputs`
 * (torch.autograd.functional.hessian): for one input of shape I, a tensor of
 * shape [...I, ...I]; for a list, H[i][j] of shape [...I_i, ...I_j].
 * @example
 * gx.autograd.functional.hessian((x) => gx.sum(gx.pow(x, 3)), x)  // diag(6 x)
 */
export function hessian<I extends TensorOrList>(f: (...inputs: Tensor[]) => Tensor, inputs: I, options: FunctionalOptions = {}): I extends Tensor ? Tensor : Tensor[][] {
  const api = 'gx.autograd.functional.hessian';
  return tidy(() => {
    const c = callOn(f, inputs, options, api);
    if (!c.singleOut || c.outs[0].numel !== 1) throw new TypeError(`${api}: f must return a one-element Tensor, got ${c.singleOut ? `shape [${c.outs[0].shape.join(', ')}]` : 'an array'}`);
    const out = c.outs[0];
    // The gradient, recorded so that it differentiates again; then its Jacobian.
    const grads = vjpOnce([out], [untrack(ones(out.shape as number[], { dtype: out.dtype, device: out.device }))], c.leaves, true, api);
    const H = mode(c, () => grads.map((g, i) => {
      const x = c.leaves[i];
      if (g === undefined) return c.leaves.map((y, j) => orZeros(undefined, y, [...x.shape, ...y.shape], c, 0, j));
      return jacobianOf(g, i, c);
    }));
    return (c.singleIn ? H[0][0] : H) as I extends Tensor ? Tensor : Tensor[][];
  });
}

/**
 * f's outputs and the vector-Jacobian product v^T J at `inputs`
 * (torch.autograd.functional.vjp): v shaped as the outputs (it may be left
 * out when f returns one element), the product shaped as the inputs. One
 * backward pass.
 * @example const [y, g] = gx.autograd.functional.vjp((x) => gx.sin(x), x, v);  // g = v cos(x)
 */
export function vjp<O extends TensorOrList, I extends TensorOrList>(f: (...inputs: Tensor[]) => O, inputs: I, v?: O | null, options: FunctionalOptions = {}): [outputs: O extends Tensor ? Tensor : Tensor[], vjp: Each<I, Tensor>] {
  const api = 'gx.autograd.functional.vjp';
  return tidy(() => {
    const c = callOn(f, inputs, options, api);
    const vs = vectors(v, c.outs, c.singleOut, 'the output of f', c);
    const seeds = vs.map((t, k) => seedOf(t, c.outs[k], c.singleOut ? 'v' : `v[${k}]`, c));
    const gs = vjpOnce(c.outs, seeds, c.leaves, c.createGraph, api);
    const r = mode(c, () => gs.map((g, i) => orZeros(g, c.leaves[i], c.leaves[i].shape, c, 0, i)));
    return [outputsOf(c), c.singleIn ? r[0] : r] as [O extends Tensor ? Tensor : Tensor[], Each<I, Tensor>];
  });
}

/**
 * f's outputs and the Jacobian-vector product J v at `inputs`
 * (torch.autograd.functional.jvp): v shaped as the inputs (it may be left
 * out for a single one-element input), the product shaped as the outputs.
 * Forward mode from reverse by the double-vjp trick: two backward passes
 * (NOTE [ Functional derivatives ]).
 * @example const [y, t] = gx.autograd.functional.jvp((x) => gx.sin(x), x, v);  // t = cos(x) v
 */
export function jvp<O extends TensorOrList, I extends TensorOrList>(f: (...inputs: Tensor[]) => O, inputs: I, v?: I | null, options: FunctionalOptions = {}): [outputs: O extends Tensor ? Tensor : Tensor[], jvp: Each<O, Tensor>] {
  const api = 'gx.autograd.functional.jvp';
  return tidy(() => {
    const c = callOn(f, inputs, options, api);
    const vs = vectors(v, c.leaves, c.singleIn, 'inputs', c);
    // u, shaped as the outputs, and g(u) = J^T u recorded from it.
    const us = c.outs.map((o) => {
      const u = zeros(o.shape as number[], { dtype: o.dtype, device: o.device });
      u.requiresGrad = true;
      return u;
    });
    const gT = vjpOnce(c.outs, us.map((u) => ownRef(u, true)), c.leaves, true, api);
    // J v = d<g(u), v>/du: a backward pass from g(u) seeded with v.
    const roots: Tensor[] = [], seeds: Tensor[] = [];
    gT.forEach((g, i) => {
      const seed = seedOf(vs[i], c.leaves[i], c.singleIn ? 'v' : `v[${i}]`, c);
      if (g === undefined) {
        seed.dispose();
      } else {
        roots.push(g);
        seeds.push(seed);
      }
    });
    const jv = vjpOnce(roots, seeds, us, c.createGraph, api);
    const r = mode(c, () => jv.map((t, k) => {
      if (t !== undefined || !c.strict) return t ?? zeros(c.outs[k].shape as number[], { dtype: c.outs[k].dtype, device: c.outs[k].device });
      throw new Error(`${api}: output ${k} of f does not depend on the inputs; strict mode does not allow that (pass { strict: false } for zeros)`);
    }));
    return [outputsOf(c), c.singleOut ? r[0] : r] as [O extends Tensor ? Tensor : Tensor[], Each<O, Tensor>];
  });
}
