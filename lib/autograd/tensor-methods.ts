// Autograd's face on Tensor: requiresGrad, grad, gradFn, isLeaf,
// backward(), detach(), requiresGrad_(), retainGrad(), registerHook().
import { full } from '../ops/creation/creation';
import { Tensor } from '../core/tensor';
import { booleanOption, checkOptions, optionKeys, tooManyArguments } from '../core/options';
import { untrack } from '../core/tidy';
import { ownRef, runBackward, type BackwardOptions } from './engine';
import { isFloatingDType, refreshView, requiresGrad as needsGrad, type Node } from '../tape/graph';
import { registerHook, retainGrad, retainsGrad, type GradHook, type RemovableHandle } from './hooks';

const BACKWARD_KEYS = optionKeys<BackwardOptions>({ retainGraph: true, createGraph: true });

declare module '../core/tensor' {
  interface Tensor<D extends DType = DType> {
    /** Whether gradients flow to this tensor: set it on the leaves (parameters) you want .grad for. */
    requiresGrad: boolean;
    /** The gradient accumulated by backward() (null until then). Setting it (null clears it) disposes the previous one, as does disposing the tensor. */
    grad: Tensor<D> | null;
    /** The name of the op that made this tensor for autograd, or null for a leaf. */
    readonly gradFn: string | null;
    /** True unless a recorded op made this tensor. */
    readonly isLeaf: boolean;
    /** Sets requiresGrad (a leaf only) and returns this. */
    requiresGrad_(on?: boolean): this;
    /**
     * Accumulates d(this)/d(leaf) into every leaf's .grad; `gradient` is
     * required unless this is one element (it is then 1).
     * @example const loss = gx.mean(gx.square(gx.sub(pred, y))); loss.backward(); w.grad
     */
    backward(gradient?: Tensor | null, opts?: BackwardOptions): void;
    /** The same data, cut from the graph (no gradient flows through it). */
    detach(): Tensor<D>;
    /**
     * Keeps this non-leaf tensor's gradient in its .grad after backward (a
     * leaf's is kept anyway), added up over backward calls as a leaf's.
     * @example const h = gx.tanh(gx.matmul(x, w)); h.retainGrad(); loss(h).backward(); h.grad
     */
    retainGrad(): void;
    /** Whether retainGrad() was called on this non-leaf tensor. */
    readonly retainsGrad: boolean;
    /**
     * Calls `hook` with this tensor's gradient each time backward computes
     * it (a leaf's before it is added to .grad); a tensor it returns is used
     * instead. The gradient it gets is freed after (clone() it to keep it).
     * @example const h = w.registerHook((g) => gx.clamp(g, -1, 1)); ...; h.remove();
     */
    registerHook(hook: GradHook): RemovableHandle;
  }
}

type DType = import('../generated/dtypes').DType;

function setRequiresGrad(t: Tensor, value: unknown, fn: string): void {
  const on = booleanOption(fn, 'requiresGrad', value);
  refreshView(t);
  if (on && !isFloatingDType(t.dtype)) throw new TypeError(`${fn}: only floating tensors can require grad, this one is ${t.dtype}`);
  if (t.ag?.node != null) {
    if (!on) throw new Error(`${fn}: this tensor was made by ${(t.ag.node as Node).name}; use detach() to cut it from the graph`);
    return;
  }
  if (t.ag === undefined) {
    if (on) t.ag = { requiresGrad: true, grad: null, node: null, index: 0 };
    return;
  }
  t.ag.requiresGrad = on;
}

/** Tensor.backward: the gradient of this tensor's graph with respect to its leaves (seed 1 for one element). */
function tensorBackward(this: Tensor, gradient?: Tensor | null, opts: BackwardOptions = {}): void {
  if (arguments.length > 2) tooManyArguments('Tensor.backward', '(gradient?, opts?)', arguments.length - 2, arguments[2]);
  const fn = 'Tensor.backward';
  const o = checkOptions<BackwardOptions>(opts, fn, BACKWARD_KEYS);
  booleanOption(fn, 'retainGraph', o.retainGraph, false);
  const createGraph = booleanOption(fn, 'createGraph', o.createGraph, false);
  let seed: Tensor;
  if (gradient == null) {
    if (this.numel !== 1) throw new TypeError(`${fn}: a gradient is needed for a tensor of ${this.numel} elements (only a one-element output implies 1)`);
    seed = full(this.shape as number[], 1, { dtype: this.dtype, device: this.device });
  } else {
    if (!(gradient instanceof Tensor)) throw new TypeError(`${fn}: gradient must be a Tensor`);
    if (gradient.shape.join() !== this.shape.join()) throw new TypeError(`${fn}: the gradient's shape [${gradient.shape.join(', ')}] is not the tensor's [${this.shape.join(', ')}]`);
    seed = ownRef(gradient, createGraph);  // the engine's own reference (recorded with createGraph)
  }
  runBackward(this, untrack(seed), o, fn);
}

/** Installs requiresGrad, grad, backward() and the rest on Tensor (lib/register.ts runs it once). */
export function installAutogradMethods(): void {
  Object.defineProperties(Tensor.prototype, {
    requiresGrad: {
      get(this: Tensor): boolean {
        return needsGrad(this);
      },
      set(this: Tensor, on: boolean) {
        setRequiresGrad(this, on, 'Tensor.requiresGrad');
      },
      configurable: true,
    },
    grad: {
      get(this: Tensor): Tensor | null {
        return this.ag?.grad ?? null;
      },
      set(this: Tensor, g: Tensor | null) {
        if (g !== null && !(g instanceof Tensor)) throw new TypeError('Tensor.grad: expected a Tensor or null');
        if (g !== null && g.shape.join() !== this.shape.join()) throw new TypeError(`Tensor.grad: the gradient's shape [${g.shape.join(', ')}] is not the tensor's [${this.shape.join(', ')}]`);
        this.ag ??= { requiresGrad: false, grad: null, node: null, index: 0 };
        const prev = this.ag.grad;
        this.ag.grad = g === null ? null : untrack(g);
        if (prev !== null && prev !== g && !prev.isDisposed) prev.dispose();
      },
      configurable: true,
    },
    gradFn: {
      get(this: Tensor): string | null {
        refreshView(this);
        return (this.ag?.node as Node | null | undefined)?.name ?? null;
      },
      configurable: true,
    },
    isLeaf: {
      get(this: Tensor): boolean {
        refreshView(this);
        return this.ag?.node == null;
      },
      configurable: true,
    },
    retainsGrad: {
      get(this: Tensor): boolean {
        return retainsGrad(this);
      },
      configurable: true,
    },
  });

  Object.assign(Tensor.prototype, {
    requiresGrad_(this: Tensor, on = true): Tensor {
      if (arguments.length > 1) tooManyArguments('Tensor.requiresGrad_', '(on?)', arguments.length - 1, arguments[1]);
      setRequiresGrad(this, on, 'Tensor.requiresGrad_');
      return this;
    },
    backward: tensorBackward,
    retainGrad(this: Tensor): void {
      if (arguments.length > 0) tooManyArguments('Tensor.retainGrad', '()', arguments.length, arguments[0]);
      retainGrad(this);
    },
    registerHook(this: Tensor, hook: GradHook): RemovableHandle {
      if (arguments.length > 1) tooManyArguments('Tensor.registerHook', '(hook)', arguments.length - 1, arguments[1]);
      return registerHook(this, hook);
    },
    detach(this: Tensor): Tensor {
      if (arguments.length > 0) tooManyArguments('Tensor.detach', '()', arguments.length, arguments[0]);
      return this.alias();  // not a view for autograd: copy_ into it records on it alone, as torch's detach()
    },
  });
}
