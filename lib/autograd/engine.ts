// Reverse mode over the tape (graph.ts): from the output, each node's
// backward runs once every node that consumes its result has added its part
// to the gradient (reverse topological order), the gradients brought back to
// each input's shape (undoing broadcasting) and dtype; leaves accumulate
// into .grad.
import { full } from '../creation';
import { sum } from '../ops/index';
import { add } from '../generated/elementwise';
import { equalShapes } from '../shape';
import { Tensor } from '../tensor';
import { tidyList, untrack } from '../tidy';
import { alias, Node, requiresGrad, type InputInfo } from './graph';
import { noGrad } from './mode';

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
  /** Keep the saved tensors so backward can run through this graph again. */
  retainGraph?: boolean;
}

/** Accumulates the gradients of `root` (seeded with `grad`, which the engine then owns) into the leaves' .grad. */
export function runBackward(root: Tensor, grad: Tensor, opts: BackwardOptions, fn: string): void {
  const rootNode = root.ag?.node as Node | null | undefined;
  if (!requiresGrad(root)) throw new Error(`${fn}: the tensor does not require grad and no recorded op made it (set requiresGrad on the inputs first)`);
  if (rootNode == null) {  // a leaf: its gradient is the seed
    accumulate(root, grad);
    return;
  }
  try {
    backwardFrom(rootNode, root.ag?.index ?? 0, grad, opts);
  } catch (e) {
    throw e instanceof Error && !e.message.startsWith(fn) ? Object.assign(e, { message: `${fn}: ${e.message}` }) : e;
  }
}

function backwardFrom(rootNode: Node, rootIndex: number, grad: Tensor, opts: BackwardOptions): void {
  // Reverse topological order: a node after every node that consumes its results.
  const order: Node[] = [];
  const seen = new Set<Node>([rootNode]);
  const stack: [Node, number][] = [[rootNode, 0]];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const [node, i] = top;
    if (i < node.edges.length) {
      top[1]++;
      const next = node.edges[i]?.node;
      if (next !== undefined && !seen.has(next)) {
        seen.add(next);
        stack.push([next, 0]);
      }
    } else {
      stack.pop();
      order.push(node);
    }
  }
  order.reverse();
  // Each node's gradients, one per output, summed over the nodes that consume it.
  const grads = new Map<Node, (Tensor | undefined)[]>();
  const addGrad = (node: Node, index: number, g: Tensor): void => {
    let gs = grads.get(node);
    if (gs === undefined) grads.set(node, (gs = node.outputs.map(() => undefined)));
    const prev = gs[index];
    if (prev === undefined) {
      gs[index] = g;
    } else {
      gs[index] = add(prev, g);
      prev.dispose();
      g.dispose();
    }
  };
  addGrad(rootNode, rootIndex, grad);
  noGrad(() => {
    for (const node of order) {
      const gs = grads.get(node);
      grads.delete(node);
      if (gs === undefined) continue;  // nothing reached it (its outputs' gradients were all null)
      // Outputs nobody used get zeros (a multi-output op's backward takes one gradient per output).
      for (let k = 0; k < gs.length; k++) gs[k] ??= untrack(zerosOf(node.outputs[k]));
      const given = gs as Tensor[];
      try {
        const saved = node.saved();
        const { edges, inputs } = node;
        const made = tidyList(() => {
          const raw = node.backward(given, saved);
          const out: (Tensor | null)[] = [];
          for (let i = 0; i < edges.length; i++) {
            const r = raw[i];
            out.push(edges[i] === null || r == null ? null : fit(r, inputs[i] as InputInfo, given[0]));
          }
          return out;
        });
        for (let i = 0; i < edges.length; i++) {
          const e = edges[i], o = made[i];
          if (e === null || o === null) continue;
          // Each gradient passed on is a tensor of its own (a formula may return g, a saved tensor, or one twice).
          const gi = given.includes(o) || saved.includes(o) || made.indexOf(o) < i ? alias(o) : o;
          if (e.leaf !== undefined) accumulate(e.leaf, gi);
          else addGrad(e.node, e.index, gi);
        }
      } finally {
        for (const g of given) g.dispose();
        if (!opts.retainGraph) node.freeSaved();
      }
    }
  });
  for (const gs of grads.values()) for (const g of gs) g?.dispose();
}

function zerosOf(info: InputInfo): Tensor {
  return full(info.shape as number[], 0, { dtype: info.dtype as Tensor['dtype'], device: info.device });
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
