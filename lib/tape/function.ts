// Gradients for users' own ops: gx.autograd.Function (torch.autograd.Function's
// shape: static forward(ctx, ...args) and backward(ctx, ...grads)) for
// functions made of RawKernels, jit kernels or anything else, and
// gx.autograd.registerAutograd(op, { setupContext, backward }) for extension
// ops (torch.library.register_autograd's shape), after which the op's
// generated function records on the tape like a built-in op.
import { Tensor } from '../core/tensor';
import { recordMulti, requiresGrad, shouldRecord } from './graph';
import { noGrad } from './mode';

/** What forward (or setupContext) leaves for backward. */
export class FunctionContext {
  #toSave: Tensor[] = [];
  #saved: readonly Tensor[] | undefined;
  /** Per input: whether it needs a gradient (backward may skip the others, returning null). */
  needsInputGrad: boolean[] = [];
  [key: string]: unknown;

  /** Keeps tensors for backward (checked against in-place changes, freed with the graph). */
  saveForBackward(...tensors: Tensor[]): void {
    tensors.forEach((t, i) => {
      if (!(t instanceof Tensor)) throw new TypeError(`saveForBackward: argument ${i} is not a Tensor`);
    });
    this.#toSave = tensors;
  }

  /** In backward: the tensors saveForBackward kept, in its order. */
  get savedTensors(): readonly Tensor[] {
    if (this.#saved === undefined) throw new Error('ctx.savedTensors: only available in backward');
    return this.#saved;
  }

  /** @internal */
  static toSave(ctx: FunctionContext): Tensor[] {
    return ctx.#toSave;
  }

  /** @internal */
  static setSaved(ctx: FunctionContext, saved: readonly Tensor[] | undefined): void {
    ctx.#saved = saved;
  }
}

type Grads = readonly (Tensor | number | null | undefined)[] | Tensor | null;

/** Records outputs of a custom op: `backward(ctx, ...grads)` gives a gradient per input. */
function recordCustom(name: string, inputs: readonly unknown[], outputs: readonly Tensor[], ctx: FunctionContext,
  backward: (ctx: FunctionContext, ...grads: Tensor[]) => Grads): void {
  // The inputs' shapes now: by backward time an input may be disposed (an intermediate freed by gx.tidy).
  const shapes = inputs.map((x) => (x instanceof Tensor ? x.shape.join() : undefined));
  recordMulti(name, inputs, outputs, FunctionContext.toSave(ctx), (gs, saved) => {
    FunctionContext.setSaved(ctx, saved);
    try {
      const r = backward(ctx, ...gs);
      const list = Array.isArray(r) ? r : [r];
      if (list.length !== inputs.length) {
        throw new TypeError(`${name}.backward returned ${list.length} gradient${list.length === 1 ? '' : 's'} for ${inputs.length} input${inputs.length === 1 ? '' : 's'} (null for an input without one)`);
      }
      return list.map((g, i) => {
        if (g == null || typeof g === 'number') return g;
        if (!(g instanceof Tensor)) throw new TypeError(`${name}.backward: gradient ${i} is not a Tensor, a number or null`);
        const shape = shapes[i];
        if (shape !== undefined && g.shape.join() !== shape) {
          throw new TypeError(`${name}.backward: gradient ${i} has shape [${g.shape.join(', ')}], input ${i} [${shape.split(',').join(', ')}]`);
        }
        return g;
      });
    } finally {
      FunctionContext.setSaved(ctx, undefined);
    }
  });
}

/** Outputs as a list; an output that is one of the inputs becomes a view of it (a tensor of its own for the tape). */
function outputsOf(result: unknown, inputs: readonly unknown[], name: string): Tensor[] {
  const list = Array.isArray(result) ? result : [result];
  return list.map((o, i) => {
    if (!(o instanceof Tensor)) throw new TypeError(`${name}.forward: output ${i} is not a Tensor`);
    return o;
  }).map((o) => (inputs.includes(o) ? o.asStrided(o.shape, o.strides, o.storageOffset) : o));
}

/**
 * A differentiable function with a hand-written backward, as
 * torch.autograd.Function: subclass it with static forward and backward,
 * then call `MyFn.apply(...args)`.
 * @example
 * class Square extends gx.autograd.Function {
 *   static forward(ctx: gx.autograd.FunctionContext, x: gx.Tensor) { ctx.saveForBackward(x); return squareKernel(x); }
 *   static backward(ctx: gx.autograd.FunctionContext, g: gx.Tensor) { const [x] = ctx.savedTensors; return [gx.mul(g, gx.mul(x, 2))]; }
 * }
 * const y = Square.apply(x);
 */
export class Function {
  /** Computes the outputs (nothing in it is recorded); save what backward needs on ctx. */
  static forward(ctx: FunctionContext, ...args: never[]): Tensor | Tensor[] {
    void ctx;
    void args;
    throw new Error('gx.autograd.Function: subclasses define static forward(ctx, ...args)');
  }

  /** One gradient per forward argument (null where there is none) from one gradient per output. */
  static backward(ctx: FunctionContext, ...grads: Tensor[]): Grads {
    void ctx;
    void grads;
    throw new Error('gx.autograd.Function: subclasses define static backward(ctx, ...grads)');
  }

  /** Runs forward and records it for autograd when an argument requires grad. */
  static apply<T extends typeof Function>(this: T, ...args: Parameters<T['forward']> extends [FunctionContext, ...infer A] ? A : never): ReturnType<T['forward']> {
    const name = this.name || 'Function';
    const ctx = new FunctionContext();
    ctx.needsInputGrad = args.map((a) => requiresGrad(a));
    const record = shouldRecord(...args);
    const result = noGrad(() => this.forward(ctx, ...(args as unknown as never[])));
    if (!record) return result as ReturnType<T['forward']>;
    const outs = outputsOf(result, args, name);
    recordCustom(name, args, outs, ctx, (c, ...gs) => this.backward(c, ...gs));
    return (Array.isArray(result) ? outs : outs[0]) as ReturnType<T['forward']>;
  }
}

/** The autograd formula of an extension op (torch.library.register_autograd's shape). */
export interface AutogradSpec {
  /** After forward: keep what backward needs on ctx (inputs: the op's arguments as called; output: its result). */
  setupContext?: (ctx: FunctionContext, inputs: readonly unknown[], output: unknown) => void;
  /** One gradient per argument of the op (null where there is none), from one gradient per Tensor output. */
  backward: (ctx: FunctionContext, ...grads: Tensor[]) => Grads;
}

const registry = new WeakMap<object, { name: string; spec: AutogradSpec }>();

/**
 * Gives an extension op (the function `gpuext build`, gx.load or gx.loadInline
 * made) a gradient: afterwards calling it with inputs that require grad
 * records it on the tape.
 * @example
 * gx.autograd.registerAutograd(lltmForward, {
 *   setupContext(ctx, inputs, outputs) { ctx.saveForBackward(...); },
 *   backward(ctx, gradH, gradCell) { return lltmBackward(gradH, gradCell, ...ctx.savedTensors); },
 * });
 */
export function registerAutograd(op: (...args: never[]) => unknown, spec: AutogradSpec): void {
  const fn = 'gx.autograd.registerAutograd';
  if (typeof op !== 'function') throw new TypeError(`${fn}: op must be an extension op's function`);
  if (spec === null || typeof spec !== 'object' || typeof spec.backward !== 'function') throw new TypeError(`${fn}: spec must be { setupContext?, backward }`);
  if (spec.setupContext !== undefined && typeof spec.setupContext !== 'function') throw new TypeError(`${fn}: setupContext must be a function`);
  for (const k of Object.keys(spec)) if (k !== 'setupContext' && k !== 'backward') throw new TypeError(`${fn}: unknown key '${k}' (expected setupContext, backward)`);
  registry.set(op, { name: op.name || 'extension op', spec });
}

/**
 * An extension op with no derivative, called on inputs that require grad:
 * its outputs are recorded by a node whose backward throws naming the op
 * (as torch's autograd-not-implemented fallback), so the graph is not cut
 * silently and the error says how to give it one.
 */
function recordNoDerivative(name: string, args: readonly unknown[], outs: readonly Tensor[]): void {
  recordMulti(name, args, outs, [], () => {
    throw new Error(`${name} has no derivative, so backward() cannot go through it: give it one with ` +
      `gx.autograd.registerAutograd(${name}, { setupContext, backward }) (or beside its schema), or call it on detach()ed ` +
      'inputs or under gx.noGrad() when no gradient should flow through it');
  });
}

/** @internal Gives `to` the gradient registered for `from` (a generated binding's function and the library's own). */
export function shareAutograd(from: object, to: object): void {
  const entry = registry.get(from);
  if (entry !== undefined) registry.set(to, entry);
}

/**
 * @internal Called by every extension op's function with its arguments and
 * result: records the call when the op has a registered gradient.
 */
export function recordExtensionCall(op: object, args: readonly unknown[], result: unknown): unknown {
  if (!shouldRecord(...args)) return result;
  const entry = registry.get(op);
  const tensors = (Array.isArray(result) ? result : [result]).filter((r): r is Tensor => r instanceof Tensor);
  const outs = tensors.map((o) => (args.includes(o) ? o.asStrided(o.shape, o.strides, o.storageOffset) : o));
  if (entry === undefined) {
    recordNoDerivative((op as { name?: string }).name || 'extension op', args, outs);
  } else {
    const ctx = new FunctionContext();
    ctx.needsInputGrad = args.map((a) => requiresGrad(a));
    entry.spec.setupContext?.(ctx, args, result);
    recordCustom(entry.name, args, outs, ctx, entry.spec.backward);
  }
  if (outs.every((o, i) => o === tensors[i])) return result;
  return Array.isArray(result) ? result.map((r) => (r instanceof Tensor ? outs[tensors.indexOf(r)] : r)) : outs[0];
}
