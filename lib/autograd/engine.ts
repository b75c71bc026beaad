// Reverse mode over the tape (graph.ts): from the output, each node's
// backward runs once every node that consumes its result has added its part
// to the gradient (reverse topological order), the gradients brought back to
// each input's shape (undoing broadcasting) and dtype; leaves accumulate
// into .grad (or, for gx.autograd.functional, chosen tensors' gradients are
// collected instead); tensor hooks run on the way (hooks.ts).
import { full } from '../ops/creation/creation';
import { sum } from '../ops/reduce/functions';
import { add } from '../generated/elementwise';
import { equalShapes } from '../core/shape';
import { Tensor } from '../core/tensor';
import { closeScope, openScope, untrack } from '../core/tidy';
import { alias, filled, Node, recordStandingFor, requiresGrad, type InputInfo } from '../tape/graph';
import { FIRST_ORDER_ONLY } from './declarations';
import { runHooks } from './hooks';
import { enableGrad, noGrad } from '../tape/mode';

/** `g` summed over the dimensions broadcasting added or stretched, to `shape`. */
export function sumToShape(g: Tensor, shape: readonly number[]): Tensor {
  if (equalShapes(g.shape, shape)) return g;
  const lead = g.ndim - shape.length;
  const axes: number[] = [];
  for (let d = 0; d < g.ndim; d++) if (d < lead || (shape[d - lead] === 1 && g.shape[d] !== 1)) axes.push(d);
  const s = axes.length > 0 ? sum(g, { axis: axes, keepdims: true }) : g;
  return s.reshape(shape as number[]);
}

/** A gradient as the input needs it: a tensor of its shape and dtype. */
function fit(g: Tensor | number, info: InputInfo, like: Tensor): Tensor {
  let t = typeof g === 'number' ? full(info.shape as number[], g, { dtype: like.dtype, device: like.device }) : g;
  t = sumToShape(t, info.shape);
  if (t.dtype !== info.dtype) t = t.astype(info.dtype as Tensor['dtype']);
  return t;
}

export interface BackwardOptions {
  /** Keep the saved tensors so backward can run through this graph again (default: createGraph). */
  retainGraph?: boolean;
  /**
   * Record the backward pass itself, so that the gradients it makes can be
   * differentiated again (higher derivatives; NOTE [ Backward of backward ]).
   */
  createGraph?: boolean;
}

// NOTE [ Backward of backward ]
// With createGraph the derivative formulas run with recording on: they are
// written in gx's own ops, which record like any others, so the gradients
// come out as tensors made by recorded ops, differentiable in turn (torch's
// create_graph). Two things change with it: the references the engine takes
// of a gradient it passes on are recorded views rather than bare aliases (an
// alias is cut from the graph), and the saved tensors are kept by default
// (the second backward reads them again). A formula whose result does not
// record although the gradient it got did (it wrote in place, or called an
// op with no derivative) would drop its part of the higher derivative
// without a word: every formula is linear in its gradient, so its result
// must depend on whatever that gradient depends on. That is an error naming
// the op. (A zero derivative, as floor's, is returned as the number 0, a
// constant the engine widens.) A formula declared first order only
// (FIRST_ORDER_ONLY in declarations.ts) records, but leaves out what its
// unrecorded kernels compute: its results stand in the graph for the op's
// inputs, with a backward that throws (refuseSecondOrder).

/**
 * gx.autograd.functional's form (torch.autograd.grad): the gradients of
 * these tensors (leaves or not) are collected, and no .grad is touched.
 */
export interface Capture {
  readonly leaves: Map<Tensor, Tensor | undefined>;
  readonly outputs: Map<Node, Map<number, Tensor | undefined>>;
}

interface Run {
  readonly retainGraph: boolean;
  readonly createGraph: boolean;
  readonly capture: Capture | undefined;
  /** The engine's own reference to a tensor (NOTE [ Backward of backward ]). */
  readonly own: (t: Tensor) => Tensor;
}

/** The engine's own reference to `t`: a bare alias, or with createGraph a recorded view (NOTE [ Backward of backward ]). */
export function ownRef(t: Tensor, createGraph: boolean): Tensor {
  return createGraph && requiresGrad(t) ? untrack(enableGrad(() => t.reshape(t.shape as number[]))) : alias(t);
}

/** Accumulates the gradients of `root` (seeded with `grad`, which the engine then owns) into the leaves' .grad. */
export function runBackward(root: Tensor, grad: Tensor, opts: BackwardOptions, fn: string): void {
  runGraph([root], [grad], opts, undefined, fn);
}

/**
 * Backward from several roots at once, each seeded with its gradient (the
 * engine's from then on); into the leaves' .grad, or into `capture`.
 */
export function runGraph(roots: readonly Tensor[], seeds: readonly Tensor[], opts: BackwardOptions, capture: Capture | undefined, fn: string): void {
  roots.forEach((root, i) => {
    if (!requiresGrad(root)) {
      for (const s of seeds) s.dispose();
      const which = roots.length > 1 ? `output ${i} ` : 'the tensor ';
      throw new Error(`${fn}: ${which}does not require grad and no recorded op made it (set requiresGrad on the inputs first)`);
    }
  });
  const createGraph = opts.createGraph ?? false;
  const run: Run = { retainGraph: opts.retainGraph ?? createGraph, createGraph, capture, own: (t) => ownRef(t, createGraph) };
  try {
    backwardFrom(run, roots, seeds);
  } catch (e) {
    throw e instanceof Error && !e.message.startsWith(fn) ? Object.assign(e, { message: `${fn}: ${e.message}` }) : e;
  }
}

/**
 * The graph from the roots, walked depth first: `order` lists each node
 * after every node that consumes its results (reverse topological order),
 * `ids` the number each got when first reached, which `idOf` gives by node
 * (the engine keeps the gradients in an array by these numbers). A node
 * carries its number and the walk's stamp (Node.walkStamp): a lookup is two
 * field reads, not a Map's hash (whose identity hash, insert and regrowth
 * cost a one-element op ~500 instructions); a node a later walk renumbered
 * (a backward run from a hook) is found by its place in `order`.
 */
interface Walk {
  readonly order: Node[];
  readonly ids: number[];
  readonly idOf: (node: Node) => number | undefined;
}

/** The stamp of the latest walk (a node's walkStamp equal to a walk's own: numbered by it). */
let walks = 0;

function walkGraph(roots: readonly Node[]): Walk {
  const order: Node[] = [], ids: number[] = [];
  const stamp = ++walks;
  let count = 0;
  for (const r of roots) {
    r.walkStamp = stamp;
    r.walkId = count++;
  }
  // The stack in arrays (the node, its number, the next edge to follow): no tuple made per node.
  const stack: Node[] = roots.slice(), stackIds: number[] = roots.map((_r, i) => i), next: number[] = roots.map(() => 0);
  while (stack.length > 0) {
    const top = stack.length - 1;
    const node = stack[top], i = next[top];
    if (i < node.edges.length) {
      next[top] = i + 1;
      const n = node.edges[i]?.node;
      if (n !== undefined && n.walkStamp !== stamp) {
        n.walkStamp = stamp;
        n.walkId = count++;
        stack.push(n);
        stackIds.push(n.walkId);
        next.push(0);
      }
    } else {
      order.push(node);
      ids.push(stackIds[top]);
      stack.pop();
      stackIds.pop();
      next.pop();
    }
  }
  order.reverse();
  ids.reverse();
  const idOf = (node: Node): number | undefined => {
    if (node.walkStamp === stamp) return node.walkId;
    const k = order.indexOf(node);
    return k < 0 ? undefined : ids[k];
  };
  return { order, ids, idOf };
}

/** With a capture, the nodes that lead to a captured tensor (the others need not run). */
function neededNodes(order: readonly Node[], capture: Capture | undefined): Set<Node> | undefined {
  if (capture === undefined) return undefined;
  const needed = new Set<Node>();
  for (let k = order.length - 1; k >= 0; k--) {  // inputs before the nodes that consume them
    const node = order[k];
    if (capture.outputs.has(node) || node.edges.some((e) => e !== null && (e.leaf !== undefined ? capture.leaves.has(e.leaf) : needed.has(e.node)))) needed.add(node);
  }
  return needed;
}

function backwardFrom(run: Run, roots: readonly Tensor[], seeds: readonly Tensor[]): void {
  const { order, ids, idOf } = walkGraph([...new Set(roots.map((r) => r.ag?.node as Node | null).filter((n): n is Node => n != null))]);
  const needed = neededNodes(order, run.capture);
  // Each node's gradients (by its number), one per output, summed over the nodes that consume it.
  const grads = filled<(Tensor | undefined)[] | undefined>(order.length, undefined);
  const addGrad = (node: Node, index: number, g: Tensor): void => {
    const id = idOf(node);
    if (id === undefined) throw new Error(`internal error: a gradient for ${node.name}, which the walk from the roots did not reach`);
    let gs = grads[id];
    if (gs === undefined) grads[id] = gs = filled<Tensor | undefined>(node.outputs.length, undefined);
    const prev = gs[index];
    if (prev === undefined) {
      gs[index] = g;
    } else {
      gs[index] = add(prev, g);
      prev.dispose();
      g.dispose();
    }
  };
  try {
    (run.createGraph ? enableGrad : noGrad)(() => {
      roots.forEach((root, i) => {
        const node = root.ag?.node as Node | null;
        if (node == null) toLeaf(run, root, seeds[i]);  // a leaf: its gradient is the seed
        else addGrad(node, root.ag?.index ?? 0, seeds[i]);
      });
      for (let k = 0; k < order.length; k++) {
        const node = order[k], gs = grads[ids[k]];
        grads[ids[k]] = undefined;
        if (gs === undefined) continue;  // nothing reached it (its outputs' gradients were all null)
        if (needed !== undefined && !needed.has(node)) {
          for (const g of gs) g?.dispose();
          continue;
        }
        runNode(run, node, gs, addGrad);
      }
    });
  } finally {
    // Gradients no node took (all of them when a formula or a hook threw).
    for (const gs of grads) if (gs !== undefined) for (const g of gs) g?.dispose();
  }
}

/** One node's backward: its outputs' hooks and captures, its formula, its inputs' gradients passed on. */
function runNode(run: Run, node: Node, gs: (Tensor | undefined)[], addGrad: (node: Node, index: number, g: Tensor) => void): void {
  const slot = run.capture?.outputs.get(node);
  for (let k = 0; k < gs.length; k++) {
    const g = gs[k];
    if (g === undefined) continue;
    const h = runHooks(node, k, g, run.own);
    gs[k] = h;
    if (slot?.has(k)) slot.set(k, run.own(h));
  }
  // Outputs nobody used get zeros (a multi-output op's backward takes one gradient per output).
  for (let k = 0; k < gs.length; k++) gs[k] ??= untrack(zerosOf(node.outputs[k]));
  const given = gs as Tensor[];
  try {
    const saved = node.saved();
    const edges = node.edges;
    const made = inputGrads(run, node, given, saved);
    for (let i = 0; i < edges.length; i++) {
      const e = edges[i], o = made[i];
      if (e === null || o === null) continue;
      // Each gradient passed on is a tensor of its own (a formula may return g, a saved tensor, or one twice).
      const gi = given.includes(o) || saved.includes(o) || made.indexOf(o) < i ? run.own(o) : o;
      if (e.leaf !== undefined) toLeaf(run, e.leaf, gi);
      else addGrad(e.node, e.index, gi);
    }
  } finally {
    for (const g of given) g.dispose();
    if (!run.retainGraph) node.freeSaved();
  }
}

/**
 * The node's formula on its outputs' gradients, brought to each input's
 * shape and dtype (null where an input takes none), in a tidy scope of its
 * own: what the formula made besides them is disposed. (The scope is opened
 * here, not by a tidy-like call taking a closure: none made per node.)
 */
function inputGrads(run: Run, node: Node, given: readonly Tensor[], saved: readonly Tensor[]): (Tensor | null)[] {
  const { edges, inputs } = node;
  const scope = openScope();
  const out = filled<Tensor | null>(edges.length, null);
  try {
    const raw = node.backward(given, saved);
    for (let i = 0; i < edges.length; i++) {
      const r = raw[i];
      if (edges[i] !== null && r != null) out[i] = fit(r, inputs[i] as InputInfo, given[0]);
    }
    if (run.createGraph) {
      checkRecorded(node, given, raw, out);
      if (FIRST_ORDER_ONLY.has(node.name)) refuseSecondOrder(node, out);
    }
  } catch (e) {
    closeScope(scope, undefined);
    throw e;
  }
  closeScope(scope, out);
  return out;
}

/** With createGraph, a formula's tensor results must be in the graph when a gradient it got is (NOTE [ Backward of backward ]). */
function checkRecorded(node: Node, given: readonly Tensor[], raw: readonly unknown[], out: readonly (Tensor | null)[]): void {
  if (!given.some(requiresGrad)) return;
  out.forEach((o, i) => {
    if (o === null || typeof raw[i] === 'number' || requiresGrad(o)) return;
    throw new Error(`${node.name}'s derivative is not differentiable here (its backward for input ${i} does not record), so a backward ` +
      'with createGraph would miss its part of the higher derivative; differentiate around it, or use gx.autograd.functional.jacobian (first derivatives only)');
  });
}

/**
 * With createGraph, a first-order-only formula's results (FIRST_ORDER_ONLY)
 * become recorded aliases whose own backward throws, naming the op: standing
 * for the op's inputs (its saved tensors may have been computed from them
 * unrecorded, as matrixNorm's singular vectors are) and for the results'
 * own graph, so that any derivative of them reaches the refusal (torch's
 * DelayedError node).
 */
function refuseSecondOrder(node: Node, out: (Tensor | null)[]): void {
  const op = node.name;
  const refuse = (): never => {
    throw new Error(`gx.${op}: its derivative is first order only (its formula calls kernels that do not record), so a second ` +
      `derivative through gx.${op} (gx.autograd.functional.hessian, a gradient of a gradient) is not supported`);
  };
  for (let i = 0; i < out.length; i++) {
    const o = out[i];
    if (o === null) continue;
    out[i] = recordStandingFor(`${op} (derivative)`, node, o, refuse);
  }
}

function zerosOf(info: InputInfo): Tensor {
  return full(info.shape as number[], 0, { dtype: info.dtype as Tensor['dtype'], device: info.device });
}

/** A leaf's gradient: through its hooks, then into its .grad, or the capture's. */
function toLeaf(run: Run, leaf: Tensor, g: Tensor): void {
  const capture = run.capture;
  if (capture !== undefined) {
    if (!capture.leaves.has(leaf) || leaf.isDisposed) {
      g.dispose();
      return;
    }
    const h = runHooks(leaf, undefined, g, run.own);
    const prev = capture.leaves.get(leaf);
    capture.leaves.set(leaf, prev === undefined ? h : untrack(add(prev, h)));
    if (prev !== undefined) {
      prev.dispose();
      h.dispose();
    }
    return;
  }
  accumulate(leaf, leaf.isDisposed ? g : runHooks(leaf, undefined, g, run.own));
}

/** leaf.grad += g (a new contiguous tensor of the leaf's own, outside every tidy scope). */
function accumulate(leaf: Tensor, g: Tensor): void {
  const meta = leaf.ag;
  if (meta === undefined || leaf.isDisposed) {
    g.dispose();
    return;
  }
  const prev = meta.grad;
  const next = prev === null || prev.isDisposed ? g.contiguous() : add(prev, g);
  if (next !== g) g.dispose();
  if (prev !== null && !prev.isDisposed) prev.dispose();
  meta.grad = untrack(next);
}
