// The tape: every differentiable op that sees an input requiring grad
// records a Node with edges to where its inputs came from (the nodes that
// made them, or leaf tensors whose .grad collects) and a backward function.
//
// NOTE [ Autograd memory ]
// gpuext frees memory deterministically (dispose, tidy), so the graph does
// too. A node keeps what its backward needs; when the user disposes one of
// those tensors first, an alias (a view sharing the storage, outside every
// tidy scope; one, however many nodes saved the tensor) takes its place just
// before, so the user may dispose the originals. (Aliasing every saved tensor
// up front cost a native call and a Tensor per op, mostly for nothing:
// backward usually runs first.)
// Nodes are reference-counted: by the tensors they made and by the nodes
// that consume those. Disposing a tensor drops its reference; a node at zero
// frees its saved tensors and drops its references to its inputs' nodes. A
// backward without { retainGraph } frees each node's saved tensors once used,
// so running backward through that graph again is an error. A training loop
// that disposes its loss (or runs in tidy) therefore frees the whole tape.
//
// NOTE [ Autograd and in-place ops ]
// Each storage written in place gets a version counter (bumped by the
// in-place ops and `out`). A saved tensor remembers its version; if its
// storage was written after it was saved, backward is an error naming the
// op, as PyTorch's version counter rule. An in-place op autograd must see
// (grad mode on, and self, its base or an input takes part) records, as
// torch's: computeResult, given the op's out-of-place form (ResultOptions
// outOfPlace: the elementwise ops, clamp_, the scatter family, indexPut_ and
// Tensor.set: NOTE [ index_put under autograd ]), computes it
// from a recorded clone of self, so the op records through its own derivative
// and an op saving its input saves the clone, and copies the result into self
// through copy_'s path (autograd/inplace-backward.ts; gradFn 'add_', through a
// view its base's: NOTE [ copy_ into views ]). A tensor outside the graph
// joins it (zeros(3).add_(w)); a leaf that requires grad, a view of one, and a
// view made under gx.noGrad() of a tensor in the graph are refused, as torch
// refuses them. One difference: a result an op saved (exp's) is its own
// tensor, not self, so exp_ then add_ gives the right gradient where torch
// refuses; an input saved (x.exp() then out.add_(1), or h.mul_(h)) still
// refuses backward. An op whose twin is notImplemented (floorDivide_) refuses
// naming itself; `out` of an op whose inputs require grad is refused (torch
// refuses out= too). copy_, fill_ and zero_ record (NOTE [ copy_ into views ]). The library's own
// copies go through copyValues (core/tensor.ts), which never records: the op
// calling it records its own derivative.
//
// NOTE [ copy_ into views ]
// copy_ records as torch's does. Written whole, the tensor gets a new history:
// a node whose gradient goes to src and zero to what it held before (torch's
// CopyBackwards). Written through a view (y.narrow(0, 1, 2).copy_(x)), the
// history changed is that of the view's base, the tensor whose storage the
// view shows (Tensor.viewBase, set by every view; never itself a view): its
// new node gives src the gradient of the elements written and its old history
// the rest (torch's CopySlices), its positions found from the two layouts in
// the one storage (autograd/copy-backward.ts). A leaf that requires grad, or
// a view of one, is refused, as torch refuses it, unless grad mode is off.
// Every view of a base its history predates is then out of date, the one
// written among them: each records the base's `epoch` when its history was
// made, copy_ bumps the base's, and requiresGrad (which every op asks of its
// inputs) remakes a view's history from its base's first (refreshView: a node
// whose gradient lands at the view's positions of the base's). A view whose
// base was disposed is a tensor of its own. fill_ and zero_ are copies of
// their value (a constant, or a 0-d tensor, broadcast to self) and record
// through copy_'s path (torch's FillBackward and ZeroBackward, CopySlices
// through a view; gradFn 'fill_' / 'zero_'): what self held gets zero, a
// tensor value the sum of the gradient of the elements written.
import { dtypeInfo, type DType } from '../generated/dtypes';
import { autogradHooks, Tensor, type AutogradMeta } from '../core/tensor';
import { untrack } from '../core/tidy';
import { isGradEnabled } from './mode';

/**
 * A tensor that nodes saved, shared by their saved slots: the tensor itself
 * until someone disposes it (gx.tidy, `using`, dispose()), then, made just
 * before, an alias in its place (NOTE [ Autograd memory ]); a backward run
 * before the tensor is disposed, the common case, never makes one. It also
 * holds its storage's version record, which each slot compares with the
 * version it saved. The tensor's meta points here (savedIn) while any slot
 * holds it. One per tensor, not per slot: saving a tensor again is a count
 * (a constant used by every op of a long chain is saved by each), reading
 * its version no lookup, and disposing it makes one alias however many
 * nodes hold it.
 */
class SavedTensor {
  /** How many saved slots hold it. */
  holders = 0;
  #alias: Tensor | undefined = undefined;
  readonly #key: number;
  /** Its storage's entry in `versions`, there while this holds it. */
  readonly record: { version: number; saved: number };

  private constructor(readonly tensor: Tensor) {
    this.#key = storageKey(tensor);
    let v = versions.get(this.#key);
    if (v === undefined) versions.set(this.#key, (v = { version: 0, saved: 0 }));
    v.saved++;
    this.record = v;
  }

  /** One more slot holding `t` (its SavedTensor, made on the first). */
  static hold(t: Tensor): SavedTensor {
    const meta = (t.ag ??= { requiresGrad: false, grad: null, node: null, index: 0 });
    let s = meta.savedIn as SavedTensor | undefined;
    if (s === undefined) meta.savedIn = s = new SavedTensor(t);
    s.holders++;
    return s;
  }

  /** The saved tensor (the original, or its alias once the original was disposed). */
  get value(): Tensor {
    return this.#alias ?? this.tensor;
  }

  /**
   * Called as the original is disposed: an alias keeps the values, and stands
   * for the original in the graph, so that a backward with createGraph
   * differentiates through it too (NOTE [ Saved aliases in the graph ]).
   */
  keep(): void {
    if (this.#alias !== undefined) return;
    this.#alias = alias(this.tensor);
    const m = this.tensor.ag;
    if (m !== undefined && (m.requiresGrad || m.node !== null)) {
      this.#alias.ag = { requiresGrad: m.requiresGrad, grad: null, node: m.node, index: m.index, unheld: true };
    }
  }

  /** One slot fewer; after the last, the alias (if any) is freed and the original no longer points here. */
  drop(): void {
    if (--this.holders > 0) return;
    if (this.#alias !== undefined) {
      this.#alias.dispose();
    } else {
      const meta = this.tensor.ag;
      if (meta?.savedIn === this) meta.savedIn = undefined;
    }
    if (--this.record.saved === 0) versions.delete(this.#key);
  }
}

// NOTE [ Saved aliases in the graph ]
// A saved tensor the user disposed lives on as an alias (NOTE [ Autograd
// memory ]). Its values suffice for a plain backward, but a backward with
// createGraph runs the formulas recording, and a formula reading the saved
// tensor must then record its dependence on the graph that made it (exp's
// gradient g * exp(x) differentiates again through its saved result): the
// alias carries the original's place in the graph. It does not hold that
// node (a node saving its own output would then hold itself and never be
// freed): the node consuming the saved tensor holds it by its edge, or is it.
// Its meta says so (`unheld`), read as it is disposed.

/** Per storage that some saved tensor views: its in-place write count, and how many saved tensors (SavedTensor) view it. */
const versions = new Map<number, { version: number; saved: number }>();

/**
 * A key shared by every view of one storage: its first byte's address (host
 * and device memory share one virtual address space, CUDA's unified
 * addressing, so no two live storages have the same).
 */
function storageKey(t: Tensor): number {
  const m = t.info();
  return t.address() - m.offset * dtypeInfo(m.dtype).itemsize;
}

/** @internal Called by in-place writes (NOTE [ Autograd and in-place ops ]): counted only for storages a node saved. */
export function bumpVersion(t: Tensor): void {
  if (versions.size === 0) return;
  const v = versions.get(storageKey(t));
  if (v !== undefined) v.version++;
}

/**
 * @internal An array of n copies of `value`, to be filled in by index (the
 * tape's per-node arrays): made at its length, and packed, as `new Array(n)`
 * is not (its holes slow every read). One or two, the common lengths, as literals.
 */
export function filled<T>(n: number, value: T): T[] {
  return n === 1 ? [value] : n === 2 ? [value, value] : new Array<T>(n).fill(value);
}

/** Where an input's gradient goes: output `index` of the node that made it, or the leaf it is. */
export type Edge = { node: Node; index: number; leaf?: undefined } | { leaf: Tensor; node?: undefined };

/** An input's (or output's) shape, dtype and device, to bring a gradient back to them or make zeros of them. */
export interface InputInfo {
  shape: readonly number[];
  dtype: string;
  device: Tensor['device'];
}

/** A gradient per input (null, undefined: none) from the gradient of the output. */
export type BackwardFn = (grad: Tensor, saved: readonly Tensor[]) => readonly (Tensor | number | null | undefined)[];
/** The same for a node of several outputs: one gradient per output (zeros where an output got none). */
export type MultiBackwardFn = (grads: readonly Tensor[], saved: readonly Tensor[]) => readonly (Tensor | number | null | undefined)[];

export class Node {
  refs = 0;
  /** @internal The backward walk that numbered this node last (walkGraph in autograd/engine.ts), and its number there. */
  walkStamp = 0;
  walkId = 0;
  /** The saved tensors, and the storage version each had when saved (undefined once freed). */
  #saved: SavedTensor[] | undefined;
  #versions: number[];
  #freed = false;

  /**
   * `fn` takes one gradient per output; `single`: the node has one output
   * and `fn` is a BackwardFn taking that gradient itself (no wrapper made per op).
   */
  constructor(readonly name: string, readonly edges: readonly (Edge | null)[], readonly inputs: readonly (InputInfo | null)[],
    readonly outputs: readonly InputInfo[], private readonly fn: MultiBackwardFn | BackwardFn, saved: readonly Tensor[],
    private readonly single = false) {
    const held = filled<SavedTensor | null>(saved.length, null), at = filled(saved.length, 0);
    for (let i = 0; i < saved.length; i++) {
      const s = SavedTensor.hold(saved[i]);
      held[i] = s;
      at[i] = s.record.version;
    }
    this.#saved = held as SavedTensor[];
    this.#versions = at;
    for (const e of edges) if (e?.node !== undefined) e.node.refs++;
  }

  /** The gradients of the inputs from those of the outputs (one per output). */
  backward(grads: readonly Tensor[], saved: readonly Tensor[]): readonly (Tensor | number | null | undefined)[] {
    return this.single ? (this.fn as BackwardFn)(grads[0], saved) : (this.fn as MultiBackwardFn)(grads, saved);
  }

  /** The saved tensors, checked against in-place writes since. */
  saved(): Tensor[] {
    const held = this.#saved;
    if (held === undefined) {
      throw new Error(`trying to go through ${this.name}'s part of the graph a second time, but its saved tensors were freed; ` +
        'pass { retainGraph: true } to the first backward() to keep them');
    }
    const values = filled<Tensor | null>(held.length, null);
    for (let i = 0; i < values.length; i++) {
      const now = held[i].record.version, then = this.#versions[i];
      if (now !== then) {
        throw new Error(`a tensor ${this.name} saved (its ${ordinal(i)}) was modified in place after it was saved ` +
          `(version ${now}, saved at ${then}); clone() it before the in-place op`);
      }
      values[i] = held[i].value;
    }
    return values as Tensor[];
  }

  /** Frees the saved tensors (after backward, or when nothing refers to the node any more). */
  freeSaved(): void {
    const held = this.#saved;
    if (held === undefined) return;
    this.#saved = undefined;
    for (const s of held) s.drop();
  }

  release(): void {
    if (--this.refs > 0 || this.#freed) return;
    this.#freed = true;
    this.freeSaved();
    for (const e of this.edges) e?.node?.release();
  }
}

const ordinal = (i: number): string => ['first', 'second', 'third', 'fourth'][i] ?? `#${i + 1}`;

/** @internal A view of all of `t`, not recorded and outside every tidy scope. */
export function alias(t: Tensor): Tensor {
  return untrack(t.alias());
}

const inPlaceHook: NonNullable<(typeof autogradHooks)['inPlace']> = (fn, t, inputs) => checkInPlace(fn, t, inputs);

const disposingHook: NonNullable<(typeof autogradHooks)['disposing']> = (t: Tensor): void => {
  const held = t.ag?.savedIn;
  if (held === undefined) return;
  (t.ag as AutogradMeta).savedIn = undefined;
  held.keep();
};

const disposedHook: NonNullable<(typeof autogradHooks)['disposed']> = (t: Tensor): void => {
  const meta = t.ag;
  if (meta === undefined) return;
  t.ag = undefined;
  // A leaf's gradient goes with it (take a clone() first to keep it); a made tensor drops its node.
  if (meta.grad !== null && !meta.grad.isDisposed) meta.grad.dispose();
  if (meta.unheld !== true) (meta.node as Node | null)?.release();
};

/** Whether `t` takes part in autograd (a leaf with requiresGrad, or a tensor a recorded op made). */
export function requiresGrad(t: unknown): t is Tensor {
  if (!(t instanceof Tensor)) return false;
  if (t.viewBase !== undefined && t.viewBase.epoch !== t.epoch) refreshView(t);
  return t.ag !== undefined && (t.ag.requiresGrad || t.ag.node !== null);
}

/**
 * @internal Remakes the history of `t`, a view whose base copy_ wrote since it was made (NOTE [ copy_ into
 * views ]): a view of the base's history now, or none when the base takes no part in autograd. A view made
 * a leaf of its own (requiresGrad_) keeps its place.
 */
export function refreshView(t: Tensor): void {
  const base = t.viewBase;
  if (base === undefined || base.epoch === t.epoch) return;
  if (base.isDisposed) {
    t.viewBase = undefined;
    return;
  }
  t.epoch = base.epoch;
  const meta = t.ag;
  if (meta !== undefined && meta.node === null && meta.requiresGrad) return;
  if (requiresGrad(base) && isFloatingDType(t.dtype)) {
    recordOver('asStrided', [base], t, [], (recorders.viewOf as NonNullable<typeof recorders.viewOf>)(base, t));
  } else if (meta !== undefined) {
    t.ag = meta.savedIn === undefined && meta.grad === null ? undefined
      : { requiresGrad: false, grad: meta.grad, node: null, index: 0, savedIn: meta.savedIn };
    if (meta.unheld !== true) (meta.node as Node | null)?.release();
  }
}

/**
 * @internal Records `target`, an existing tensor written in place, as made by `name` from `inputs` (which
 * may hold target itself: its edge is to its history until now), in place of the history it had.
 */
export function recordOver(name: string, inputs: readonly unknown[], target: Tensor, save: readonly Tensor[], backward: BackwardFn): void {
  const prev = target.ag;
  recordNode(name, inputs, [target], save, backward, true);
  if (prev === undefined) return;
  (target.ag as AutogradMeta).grad = prev.grad;  // .grad stays the tensor's, as torch's
  if (prev.unheld !== true) (prev.node as Node | null)?.release();
}

/** Whether an op on these operands must be recorded. */
export function shouldRecord(...xs: readonly unknown[]): boolean {
  if (!isGradEnabled()) return false;
  for (const x of xs) if (requiresGrad(x)) return true;
  return false;
}

/** Whether a dtype can carry a gradient: the floating kind of the dtype list (csrc/include/gpuext/dtype_list.h). */
export const isFloatingDType = (d: string): boolean => dtypeInfo(d as DType)?.kind === 'f';  // undefined: not a dtype

/**
 * Records `output` as made by `name` from `inputs` (tensors, numbers or
 * anything else: only tensors that require grad get edges). `backward` gets
 * the output's gradient and the tensors listed in `save` (as saved) and
 * returns one gradient per input (null where there is none). Returns output.
 */
export function record<T extends Tensor>(name: string, inputs: readonly unknown[], output: T, save: readonly Tensor[], backward: BackwardFn): T {
  if (!isFloatingDType(output.dtype)) return output;  // an integer or bool result has no gradient
  recordNode(name, inputs, [output], save, backward, true);
  return output;
}

/** The tensor's own metadata (shape, dtype, device): nothing to copy, it never changes. */
const infoOf = (t: Tensor): InputInfo => t.info();

/** record() for an op of several outputs (those of a non-floating dtype get no gradient). */
export function recordMulti(name: string, inputs: readonly unknown[], outputs: readonly Tensor[], save: readonly Tensor[], backward: MultiBackwardFn): void {
  recordNode(name, inputs, outputs, save, backward, false);
}

// Plain loops and arrays of their final length: this runs once per recorded op, where the tape's overhead is counted.
function recordNode(name: string, inputs: readonly unknown[], outputs: readonly Tensor[], save: readonly Tensor[],
  backward: MultiBackwardFn | BackwardFn, single: boolean): void {
  const n = inputs.length;
  const edges = filled<Edge | null>(n, null), infos = filled<InputInfo | null>(n, null);
  for (let i = 0; i < n; i++) {
    const x = inputs[i];
    if (requiresGrad(x)) {
      const meta = x.ag as AutogradMeta;
      edges[i] = meta.node !== null ? { node: meta.node as Node, index: meta.index } : { leaf: x };
    } else {
      edges[i] = null;
    }
    infos[i] = x instanceof Tensor ? infoOf(x) : null;
  }
  const outInfos = filled<InputInfo | null>(outputs.length, null);
  for (let k = 0; k < outputs.length; k++) outInfos[k] = infoOf(outputs[k]);
  const node = new Node(name, edges, infos, outInfos as InputInfo[], backward, save, single);
  for (let index = 0; index < outputs.length; index++) {
    const out = outputs[index];
    if (!single && !isFloatingDType(out.dtype)) continue;  // record() checked a single output's dtype
    node.refs++;
    // An output this node saves already has a meta (its savedIn); keep it.
    out.ag = { requiresGrad: true, grad: null, node, index, savedIn: out.ag?.savedIn };
  }
  if (node.refs === 0) node.freeSaved();
}

/**
 * A recorded alias of `t` that stands for `node`'s inputs too: its node has
 * node's edges (the tensors node was computed from, recorded or not in `t`)
 * and t's own, and its backward is `backward` (a refusal: the engine's
 * first-order-only formulas, NOTE [ Backward of backward ] in autograd/engine.ts).
 */
export function recordStandingFor(name: string, node: Node, t: Tensor, backward: BackwardFn): Tensor {
  const out = alias(t);
  const own: Edge | null = requiresGrad(t) ? (t.ag?.node != null ? { node: t.ag.node as Node, index: t.ag.index } : { leaf: t }) : null;
  const standing = new Node(name, [...node.edges, own], [...node.inputs, infoOf(t)], [infoOf(out)], backward, [], true);
  standing.refs++;
  out.ag = { requiresGrad: true, grad: null, node: standing, index: 0, savedIn: undefined };
  return out;
}

/** Refuses an in-place write, or `out`, that autograd cannot follow (NOTE [ Autograd and in-place ops ]). */
export function checkInPlace(fn: string, target: Tensor | undefined, inputs: readonly unknown[]): void {
  if (target === undefined) return;
  if (isGradEnabled() && (requiresGrad(target) || inputs.some(requiresGrad))) throw inPlaceRefusal(fn);
  bumpVersion(target);
}

/** The refusal of a write autograd cannot record: `out`, or an in-place op with no recorded form. */
export const inPlaceRefusal = (fn: string): Error => new Error(`${fn}: an in-place op or out= on tensors that require grad ` +
  'cannot be recorded; compute a new tensor, or run it inside gx.noGrad() (as optimizer steps do)');

/**
 * Whether a write into `target` from `inputs` is one autograd must see: grad mode is on and target, its
 * base (a view made under gx.noGrad() has no history of its own, its base does) or an input takes part.
 * The ops' writes ask it (computeResult): then an in-place op records or is refused, `out` is refused.
 */
export function writeInGraph(target: Tensor, inputs: readonly unknown[]): boolean {
  if (!isGradEnabled()) return false;
  const base = target.viewBase;  // read first: requiresGrad() narrows target's type
  if (requiresGrad(target) || inputs.some(requiresGrad)) return true;
  return base !== undefined && !base.isDisposed && requiresGrad(base);
}

/**
 * The recorders of the op families, filled in by lib/autograd/functions.ts
 * (the ops call them through here, so that lib/ops does not import the
 * derivative formulas, which are written in lib/ops' own functions).
 */
export const recorders: {
  binary?: (name: string, x: unknown, y: unknown, out: Tensor) => void;
  /** `params`: a unary op's number parameters by name (NOTE [ Parameters of elementwise ops ]). */
  unary?: (name: string, x: Tensor, out: Tensor, params: Readonly<Record<string, number>>) => void;
  reduce?: (name: string, x: Tensor, axes: readonly number[], keepdims: boolean, out: Tensor) => void;
  where?: (cond: Tensor, x: unknown, y: unknown, out: Tensor) => void;
  clamp?: (x: Tensor, lo: number | undefined, hi: number | undefined, out: Tensor) => void;
  astype?: (x: Tensor, out: Tensor) => void;
  matmul?: (a: Tensor, b: Tensor, out: Tensor) => void;
  /** softmax, logSoftmax, cumsum along `axis`. */
  alongAxis?: (name: string, x: Tensor, axis: number, out: Tensor) => void;
  /** logsumexp, var, std over `axes`. */
  statReduce?: (name: string, x: Tensor, axes: readonly number[], keepdims: boolean, correction: number, out: Tensor) => void;
  /** The backward of `view`, a view of `base`, remade by refreshView: its gradient put at its positions of base's. */
  viewOf?: (base: Tensor, view: Tensor) => BackwardFn;
  /**
   * An in-place op `fn` on `self` recorded (NOTE [ Autograd and in-place ops ]): `outOfPlace` computes
   * the op, recording, from a stand-in for self's values; its result is written into self by copy_'s path.
   */
  inPlace?: (fn: string, self: Tensor, outOfPlace: (self: Tensor) => Tensor) => void;
} = {};

/**
 * The refusal of an op declared notImplemented (NOTE [ One declaration per op ] in
 * lib/autograd/declarations.ts), called before it computes: throws, naming the caller
 * `fn` ('gx.unique', 'Tensor.unique'), when grad mode is on and a tensor among `inputs`
 * requires grad. It lives on the tape, below the ops that call it; the declaration walk
 * (test/differentiability.test.ts) checks that every op declared notImplemented refuses
 * and every other one does not, so the declaration is not repeated here.
 */
export function derivativeNotImplemented(fn: string, ...inputs: readonly unknown[]): void {
  if (!shouldRecord(...inputs)) return;
  throw new Error(`${fn}: the derivative is not implemented; detach() the input or call it under gx.noGrad()`);
}

/** Installs the tape's hooks on Tensor's lifecycle (lib/register.ts runs it once). */
export function installTapeHooks(): void {
  Object.assign(autogradHooks, { inPlace: inPlaceHook, disposing: disposingHook, disposed: disposedHook });
}
