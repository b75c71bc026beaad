// Tensor hooks and retained gradients, as torch's Tensor.register_hook and
// Tensor.retain_grad: functions called with a tensor's gradient during
// backward (each may return a replacement), and non-leaf tensors that keep
// their gradient in .grad. A leaf's hooks are keyed by the tensor; a non-leaf
// tensor's by the node that made it and its output index, which is where the
// engine (engine.ts) holds its gradient, summed, before that node's backward.
//
// NOTE [ Hook order ]
// As torch's: a tensor's hooks run in the order registered, each on the
// gradient the previous one left; a leaf's before the gradient is added to
// .grad; a retained gradient is taken after every hook (torch runs its
// retains-grad hook last whatever the order of registration), and adds up
// over backward calls as a leaf's .grad does. The gradient a hook receives
// belongs to the engine and is freed after the backward step that used it
// (clone() it to keep it); a tensor a hook returns stays the hook's (gx.tidy
// around backward frees it), the engine taking a reference of its own.
import { add } from '../generated/elementwise';
import { Tensor } from '../core/tensor';
import { tidy, untrack } from '../core/tidy';
import type { Node } from '../tape/graph';
import { requiresGrad } from '../tape/graph';

/** Called with a tensor's gradient during backward; may return the gradient to use instead. */
export type GradHook = (grad: Tensor) => Tensor | void;

/** What registerHook returns: remove() unregisters the hook (again: nothing). */
export interface RemovableHandle {
  remove(): void;
}

interface Slot {
  hooks: GradHook[];
  /** The non-leaf tensors that keep this gradient in their .grad (retainGrad). */
  retain?: Set<Tensor>;
}

const leafSlots = new WeakMap<Tensor, Slot>();
const nodeSlots = new WeakMap<Node, Map<number, Slot>>();
/** How many slots were ever made: at 0 (the common case) the engine skips the lookups. */
let slots = 0;

function slotOf(t: Tensor, create: boolean): Slot | undefined {
  const meta = t.ag;
  const node = meta?.node as Node | null | undefined;
  if (node == null) {
    let s = leafSlots.get(t);
    if (s === undefined && create) leafSlots.set(t, (s = { hooks: [] }));
    if (create) slots++;
    return s;
  }
  let byIndex = nodeSlots.get(node);
  if (byIndex === undefined) {
    if (!create) return undefined;
    nodeSlots.set(node, (byIndex = new Map()));
  }
  let s = byIndex.get(meta?.index ?? 0);
  if (s === undefined && create) byIndex.set(meta?.index ?? 0, (s = { hooks: [] }));
  if (create) slots++;
  return s;
}

function requireGrad(t: Tensor, fn: string): void {
  if (t.isDisposed) throw new Error(`${fn}: the tensor was disposed`);
  if (!requiresGrad(t)) throw new Error(`${fn}: the tensor does not require grad, so no gradient reaches it (set requiresGrad on it or on the inputs it is made from)`);
}

/** t.registerHook(fn) (NOTE [ Hook order ]). */
export function registerHook(t: Tensor, hook: GradHook): RemovableHandle {
  const fn = 'Tensor.registerHook';
  if (typeof hook !== 'function') throw new TypeError(`${fn}: hook must be a function (grad) => Tensor | undefined, got ${typeof hook}`);
  requireGrad(t, fn);
  const slot = slotOf(t, true) as Slot;
  // A wrapper of our own, so that registering one function twice gives two handles that each remove their own.
  const entry: GradHook = (g) => hook(g);
  slot.hooks.push(entry);
  return {
    remove(): void {
      const i = slot.hooks.indexOf(entry);
      if (i >= 0) slot.hooks.splice(i, 1);
    },
  };
}

/** t.retainGrad(): a non-leaf tensor keeps its gradient in .grad after backward; a leaf's does anyway. */
export function retainGrad(t: Tensor): void {
  requireGrad(t, 'Tensor.retainGrad');
  if (t.isLeaf) return;
  ((slotOf(t, true) as Slot).retain ??= new Set()).add(t);
}

/** Whether t is a non-leaf tensor that retainGrad() asked to keep its gradient. */
export function retainsGrad(t: Tensor): boolean {
  if (t.isLeaf) return false;
  return slotOf(t, false)?.retain?.has(t) ?? false;
}

/**
 * Runs the hooks of a leaf (`index` undefined) or of a node's output on its
 * gradient `g` (the engine's); returns the gradient to go on with (g, or the
 * engine's own reference to a hook's result, made by `own`; g then freed).
 */
export function runHooks(key: Tensor | Node, index: number | undefined, g: Tensor, own: (t: Tensor) => Tensor): Tensor {
  if (slots === 0) return g;
  const slot = index === undefined ? leafSlots.get(key as Tensor) : nodeSlots.get(key as Node)?.get(index);
  if (slot === undefined) return g;
  for (const hook of [...slot.hooks]) {
    const r = tidy(() => hook(g));
    if (r === undefined || r === null || r === g) continue;
    if (!(r instanceof Tensor)) throw new TypeError(`Tensor.registerHook: a hook returned ${typeof r}; return a Tensor (the gradient to use instead) or nothing`);
    if (r.shape.join() !== g.shape.join() || r.dtype !== g.dtype || !r.device.equals(g.device)) {
      throw new TypeError(`Tensor.registerHook: a hook returned a gradient of shape [${r.shape.join(', ')}], ${r.dtype} on ${String(r.device)} ` +
        `for one of shape [${g.shape.join(', ')}], ${g.dtype} on ${String(g.device)}; it must be the same`);
    }
    const next = own(r);
    g.dispose();
    g = next;
  }
  for (const t of slot.retain ?? []) retain(t, g);
  return g;
}

/** t.grad += g, in a tensor of t's own (NOTE [ Hook order ]). */
function retain(t: Tensor, g: Tensor): void {
  const meta = t.ag;
  if (meta === undefined || t.isDisposed) return;
  const prev = meta.grad;
  meta.grad = untrack(prev === null || prev.isDisposed ? g.clone() : add(prev, g));
  if (prev !== null && !prev.isDisposed) prev.dispose();
}
