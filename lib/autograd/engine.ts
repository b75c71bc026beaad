// Reverse mode over the tape (graph.ts): from the output, each node's
// backward runs once every node that consumes its result has added its part
// to the gradient (reverse topological order), the gradients brought back to
// each input's shape (undoing broadcasting) and dtype; leaves accumulate
// into .grad.
import { full } from '../creation';
import { sum } from '../ops/index';
import { add } from '../generated/elementwise';
import { Tensor } from '../tensor';
import { tidy, untrack } from '../tidy';
import { alias, Node, requiresGrad, type InputInfo } from './graph';
import { noGrad } from './mode';

/** `g` summed over the dimensions broadcasting added or stretched, to `shape`. */
export function sumToShape(g: Tensor, shape: readonly number[]): Tensor {
  if (g.shape.length === shape.length && g.shape.every((n, i) => n === shape[i])) return g;
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
    backwardFrom(rootNode, grad, opts);
  } catch (e) {
    throw e instanceof Error && !e.message.startsWith(fn) ? Object.assign(e, { message: `${fn}: ${e.message}` }) : e;
  }
}

function backwardFrom(rootNode: Node, grad: Tensor, opts: BackwardOptions): void {
  // Reverse topological order: a node after every node that consumes its result.
  const order: Node[] = [];
  const seen = new Set<Node>();
  const stack: [Node, number][] = [[rootNode, 0]];
  seen.add(rootNode);
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
  const grads = new Map<Node, Tensor>([[rootNode, grad]]);
  noGrad(() => {
    for (const node of order) {
      const g = grads.get(node);
      grads.delete(node);
      if (g === undefined) continue;  // nothing reached it (its outputs' gradients were all null)
      try {
        const saved = node.saved();
        const made = tidy(() => {
          const raw = node.fn(g, saved);
          return node.edges.map((e, i) => (e === null || raw[i] == null ? null : fit(raw[i] as Tensor | number, node.inputs[i] as InputInfo, g)));
        });
        // Each gradient passed on is a tensor of its own (a formula may return g, a saved tensor, or one twice).
        const owned = new Set<Tensor>();
        const outs = made.map((o) => {
          if (o === null) return null;
          if (o === g || saved.includes(o) || owned.has(o)) return alias(o);
          owned.add(o);
          return o;
        });
        node.edges.forEach((e, i) => {
          const gi = outs[i];
          if (e === null || gi === null) return;
          if (e.leaf !== undefined) {
            accumulate(e.leaf, gi);
            return;
          }
          const prev = grads.get(e.node);
          if (prev === undefined) {
            grads.set(e.node, gi);
          } else {
            grads.set(e.node, add(prev, gi));
            prev.dispose();
            gi.dispose();
          }
        });
      } finally {
        g.dispose();
        if (!opts.retainGraph) node.freeSaved();
      }
    }
  });
  for (const g of grads.values()) g.dispose();
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
