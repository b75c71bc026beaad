// gx.einsum: torch.einsum's grammar (./einsum-parse.ts) computed as a few
// whole-tensor ops, never a loop over the index space:
//   1. a subscript repeated within one operand takes that operand's diagonal
//      (a view);
//   2. a subscript found in one operand only and not in the output is summed
//      out of it at once;
//   3. the operands are contracted two at a time, the pair picked greedily as
//      opt_einsum's 'greedy' does: among the pairs sharing a subscript (any
//      pair when none do) the one whose result is smallest against what it
//      replaces (size(result) - size(a) - size(b)), then the smallest result.
//      A pair is one batched matmul: each operand permuted and reshaped to
//      [batch.., M, K] and [batch.., K, N] (batch: subscripts both have and
//      something later needs; K: those they share and nothing later needs;
//      M, N: each one's own), so 'bij,bjk->bik' is exactly gx.matmul's call
//      on its operands (no view is made when nothing moves). Without shared
//      subscripts to sum a pair is a broadcasting multiply (an outer product
//      is bandwidth-bound: one pass); integer operands, which matmul does not
//      take, multiply and sum (in int64);
//   4. what is left is summed over the subscripts the output lacks and
//      permuted to the output's order (a view: einsum('ij->ji', a) shares a's
//      memory, as in torch). The result has the operands' dtype.
// Size-1 dims broadcast against their subscript's size in the other
// operands, as torch allows. Autograd follows the composed ops.
//
// NOTE [ einsum plans ]
// Steps 1-4 depend on the equation and the operands' shapes only, so they are
// planned once (validation included) and the plan is cached under the
// equation, the shapes and whether the dtype is floating: a training loop's
// einsum then costs a map lookup and the ops themselves. (Planned afresh,
// the JS of a call cost about 30 us more than gx.matmul's before V8 optimized
// it, 9% of a [64, 512, 512] float32 batched matmul on an H100.)
import { formatShape } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { checkTensor, commonDevice, describeOperand } from '../common';
import { astypeOp, BINARY, binaryOp } from '../elementwise/elementwise';
import { labelName, LETTERS, parseEinsum } from './einsum-parse';
import { permute } from '../layout/layout';
import { namedForCaller } from '../library';
import { matmul } from './matmul';
import { recordedDiagonal } from './products';
import { isFloating } from '../promotion';
import { REDUCE, reduceOp } from '../reduce/reduction';

// --- plans ------------------------------------------------------------------------------

/** A permutation and then a reshape of an operand; null where that part changes nothing. */
interface Shaping {
  perm: number[] | null;
  shape: number[] | null;
}

/**
 * One step on the list of operands: a diagonal or a sum replaces its operand;
 * a contraction (mul, matmul, mulsum) takes operands i and j out and appends
 * its result.
 */
type Step =
  | { kind: 'diagonal'; op: number; d0: number; d1: number }
  | { kind: 'sum'; op: number; axes: number[]; keepdims: boolean }
  | { kind: 'mul'; i: number; j: number; a: Shaping; b: Shaping }
  | { kind: 'matmul'; i: number; j: number; a: Shaping; b: Shaping; out: number[] | null }
  | { kind: 'mulsum'; i: number; j: number; a: Shaping; b: Shaping; axes: number[] };

interface Plan {
  steps: Step[];
  /** The last operand's permutation to the output's order (null: none). */
  perm: number[] | null;
  /** The pairs contracted, as opt_einsum's contract_path lists them. */
  path: [number, number][];
}

/** An operand as planning sees it: one label per dim, and the dims' sizes. */
interface Planned {
  labels: number[];
  shape: number[];
}

const numelOf = (shape: readonly number[]): number => shape.reduce((p, n) => p * n, 1);
const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

/** The labels each operand but those in `skip`, and the output, have. */
function neededBy(ops: readonly Planned[], output: readonly number[], skip: readonly number[]): Set<number> {
  const keep = new Set(output);
  ops.forEach((op, i) => { if (!skip.includes(i)) for (const l of op.labels) keep.add(l); });
  return keep;
}

/** The labels and shape of a and b contracted keeping `keep`: batch, a's own, b's own. */
function pairResult(a: Planned, b: Planned, keep: ReadonlySet<number>): Planned {
  const sizeIn = (op: Planned, l: number): number => op.shape[op.labels.indexOf(l)];
  const batch = a.labels.filter((l) => b.labels.includes(l) && keep.has(l));
  const labels = [...batch, ...a.labels.filter((l) => !b.labels.includes(l)), ...b.labels.filter((l) => !a.labels.includes(l))];
  const shape = labels.map((l) => (a.labels.includes(l) && sizeIn(a, l) !== 1 ? sizeIn(a, l) : b.labels.includes(l) ? sizeIn(b, l) : sizeIn(a, l)));
  return { labels, shape };
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * The pair to contract next among two or more operands, as opt_einsum's
 * greedy strategy picks it: pairs sharing a label before the others, then the
 * least size(result) - size(a) - size(b), then the smallest result.
 */
function nextPair(ops: readonly Planned[], output: readonly number[]): [number, number] {
  if (ops.length === 2) return [0, 1];
  let best: [number, number] = [0, 1];
  let bestKey: number[] | undefined;
  for (let i = 0; i < ops.length; i++) {
    for (let j = i + 1; j < ops.length; j++) {
      const resultSize = numelOf(pairResult(ops[i], ops[j], neededBy(ops, output, [i, j])).shape);
      const sharesOne = ops[i].labels.some((l) => ops[j].labels.includes(l));
      const key = [sharesOne ? 0 : 1, resultSize - numelOf(ops[i].shape) - numelOf(ops[j].shape), resultSize];
      if (bestKey === undefined || compareKeys(key, bestKey) < 0) {
        best = [i, j];
        bestKey = key;
      }
    }
  }
  return best;
}

/** op's dims ordered as `order` (labels it has) and reshaped to `shape`: the Shaping, and nulls where nothing moves. */
function shaping(op: Planned, order: readonly number[], shape: readonly number[]): Shaping {
  const perm = order.map((l) => op.labels.indexOf(l));
  const permuted = perm.map((d) => op.shape[d]);
  return { perm: perm.every((d, i) => d === i) ? null : perm, shape: sameList(permuted, shape) ? null : shape.slice() };
}

/** Checks the operands' shapes against the equation's labels and plans the einsum (NOTE [ einsum plans ]). */
function planEinsum(equation: string, shapes: readonly (readonly number[])[], floating: boolean, fn: string): Plan {
  const spec = parseEinsum(equation, shapes.map((s) => s.length), fn);
  const names = shapes.map((_, k) => `operands[${k}]`);
  // Each label's size: within an operand equal (a diagonal), across operands equal or 1 (which broadcasts).
  const sizes = new Map<number, number>();
  shapes.forEach((shape, k) => {
    const labels = spec.inputs[k];
    labels.forEach((l, d) => {
      const first = labels.indexOf(l);
      if (first !== d && shape[first] !== shape[d]) {
        throw new RangeError(`${fn}: subscript '${labelName(l)}' is repeated in the term of ${names[k]} but its dims have different ` +
          `sizes, ${shape[first]} and ${shape[d]} (shape ${formatShape(shape)})`);
      }
      const n = shape[d];
      const prev = sizes.get(l);
      if (prev === undefined || prev === 1) sizes.set(l, n);
      else if (n !== prev && n !== 1) {
        const what = l >= LETTERS ? 'the broadcast dims of ... do not broadcast' : `subscript '${labelName(l)}' has different sizes`;
        throw new RangeError(`${fn}: ${what}: ${prev} and ${n} in ${names[k]} (shapes ${shapes.map((s) => formatShape(s)).join(', ')})`);
      }
    });
  });
  const steps: Step[] = [];
  const path: [number, number][] = [];
  let ops: Planned[] = shapes.map((s, k) => ({ labels: spec.inputs[k].slice(), shape: s.slice() }));
  // 1. Diagonals.
  ops.forEach((op, k) => {
    for (;;) {
      const d1 = op.labels.findIndex((l, i) => op.labels.indexOf(l) !== i);
      if (d1 < 0) return;
      const l = op.labels[d1];
      const d0 = op.labels.indexOf(l);
      steps.push({ kind: 'diagonal', op: k, d0, d1 });
      const n = op.shape[d0];
      const keep = (_: unknown, i: number): boolean => i !== d0 && i !== d1;
      op.labels = [...op.labels.filter(keep), l];
      op.shape = [...op.shape.filter(keep), n];
    }
  });
  /** Sums op k over `drop` (labels it has). */
  const sumOver = (k: number, drop: readonly number[], keepdims: boolean): void => {
    if (drop.length === 0) return;
    const op = ops[k];
    steps.push({ kind: 'sum', op: k, axes: drop.map((l) => op.labels.indexOf(l)), keepdims });
    if (keepdims) {
      op.shape = op.shape.map((n, d) => (drop.includes(op.labels[d]) ? 1 : n));
    } else {
      const keep = (_: unknown, d: number): boolean => !drop.includes(op.labels[d]);
      op.shape = op.shape.filter(keep);
      op.labels = op.labels.filter(keep);
    }
  };
  // 2. Labels no other operand and not the output has.
  const sumSingles = (): void => {
    for (let k = 0; k < ops.length; k++) {
      const keep = neededBy(ops, spec.output, [k]);
      sumOver(k, ops[k].labels.filter((l) => !keep.has(l)), false);
    }
  };
  sumSingles();
  // 3. Contractions.
  while (ops.length > 1) {
    const [i, j] = nextPair(ops, spec.output);
    const keep = neededBy(ops, spec.output, [i, j]);
    const a = ops[i], b = ops[j];
    const size = (op: Planned, l: number): number => op.shape[op.labels.indexOf(l)];
    const shared = a.labels.filter((l) => b.labels.includes(l));
    // A summed label of size 1 on one side only: the other side is summed over it first (a broadcast factor of one).
    for (const l of shared) {
      if (keep.has(l) || size(a, l) === size(b, l)) continue;
      sumOver(size(a, l) === 1 ? j : i, [l], true);
    }
    const batch = shared.filter((l) => keep.has(l));
    const summed = shared.filter((l) => !keep.has(l));
    const aOnly = a.labels.filter((l) => !b.labels.includes(l));
    const bOnly = b.labels.filter((l) => !a.labels.includes(l));
    const as = (ls: readonly number[]): number[] => ls.map((l) => size(a, l));
    const bs = (ls: readonly number[]): number[] => ls.map((l) => size(b, l));
    const ones = (ls: readonly number[]): number[] => ls.map(() => 1);
    const result = pairResult(a, b, keep);
    if (summed.length === 0) {
      steps.push({
        kind: 'mul', i, j,
        a: shaping(a, [...batch, ...aOnly], [...as(batch), ...as(aOnly), ...ones(bOnly)]),
        b: shaping(b, [...batch, ...bOnly], [...bs(batch), ...ones(aOnly), ...bs(bOnly)]),
      });
    } else if (floating) {
      const m = numelOf(as(aOnly)), k = numelOf(as(summed)), n = numelOf(bs(bOnly));
      const product = [...result.shape.slice(0, batch.length), m, n];
      steps.push({
        kind: 'matmul', i, j,
        a: shaping(a, [...batch, ...aOnly, ...summed], [...as(batch), m, k]),
        b: shaping(b, [...batch, ...summed, ...bOnly], [...bs(batch), k, n]),
        out: sameList(product, result.shape) ? null : result.shape.slice(),
      });
    } else {
      const all = batch.length + aOnly.length + bOnly.length;
      steps.push({
        kind: 'mulsum', i, j,
        a: shaping(a, [...batch, ...aOnly, ...summed], [...as(batch), ...as(aOnly), ...ones(bOnly), ...as(summed)]),
        b: shaping(b, [...batch, ...bOnly, ...summed], [...bs(batch), ...ones(aOnly), ...bs(bOnly), ...bs(summed)]),
        axes: summed.map((_, q) => all + q),
      });
    }
    path.push([i, j]);
    ops = [...ops.filter((_, q) => q !== i && q !== j), result];
    sumSingles();
  }
  // 4. The output: what is left summed over the labels the output lacks, then permuted to its order.
  sumOver(0, ops[0].labels.filter((l) => !spec.output.includes(l)), false);
  const perm = spec.output.map((l) => ops[0].labels.indexOf(l));
  return { steps, perm: perm.every((d, q) => d === q) ? null : perm, path };
}

/** Plans made before (NOTE [ einsum plans ]). */
const PLANS = new Map<string, Plan>();
const PLANS_MAX = 256;

function planFor(equation: string, tensors: readonly Tensor[], floating: boolean, fn: string): Plan {
  let key = `${equation}|${floating ? 'f' : 'i'}`;
  for (const t of tensors) key += `|${t.shape.join(',')}`;
  let plan = PLANS.get(key);
  if (plan === undefined) {
    plan = planEinsum(equation, tensors.map((t) => t.shape), floating, fn);
    if (PLANS.size >= PLANS_MAX) PLANS.clear();
    PLANS.set(key, plan);
  }
  return plan;
}

/**
 * @internal The contraction path einsum takes for operands of these shapes:
 * the pair contracted at each step, as indices into the operand list as it
 * stands then (the result goes last), as opt_einsum's contract_path lists
 * them. (Diagonals and single-operand sums take no step.)
 */
export function einsumPath(equation: string, shapes: readonly (readonly number[])[]): [number, number][] {
  return planEinsum(equation, shapes, true, 'einsumPath').path;
}

// --- running a plan -----------------------------------------------------------------------

/** An operand as the plan runs: its tensor, and whether einsum made it (and so disposes it). */
interface Operand {
  t: Tensor;
  owned: boolean;
}

/** op's tensor shaped by s: op.t itself when s moves nothing (the caller disposes what it got unless it is op.t). */
function shaped(op: Operand, s: Shaping): Tensor {
  const p = s.perm === null ? op.t : permute(op.t, s.perm);
  if (s.shape === null) return p;
  try {
    return p.reshape(s.shape);
  } finally {
    if (p !== op.t) p.dispose();
  }
}

function run(plan: Plan, tensors: readonly Tensor[], fn: string): Tensor {
  let ops: Operand[] = tensors.map((t) => ({ t, owned: false }));
  const made: Tensor[] = [];  // shaped views of the step running (disposed after it)
  try {
    for (const step of plan.steps) {
      if (step.kind === 'diagonal' || step.kind === 'sum') {
        const op = ops[step.op];
        const t = step.kind === 'diagonal' ? recordedDiagonal(op.t, 0, step.d0, step.d1)
          : reduceOp(REDUCE.sum, op.t, step.axes, { keepdims: step.keepdims }, fn);
        if (op.owned) op.t.dispose();
        ops[step.op] = { t, owned: true };
        continue;
      }
      const a = ops[step.i], b = ops[step.j];
      const a2 = shaped(a, step.a);
      if (a2 !== a.t) made.push(a2);
      const b2 = shaped(b, step.b);
      if (b2 !== b.t) made.push(b2);
      let r: Tensor;
      if (step.kind === 'mul') {
        r = binaryOp(BINARY.mul, a2, b2, fn);
      } else if (step.kind === 'matmul') {
        r = matmul(a2, b2);
        if (step.out !== null) {
          const v = r.reshape(step.out);
          r.dispose();
          r = v;
        }
      } else {
        using p = binaryOp(BINARY.mul, a2, b2, fn);
        r = reduceOp(REDUCE.sum, p, step.axes, undefined, fn);
      }
      for (const t of made.splice(0)) t.dispose();
      if (a.owned) a.t.dispose();
      if (b.owned) b.t.dispose();
      ops = [...ops.filter((_, q) => q !== step.i && q !== step.j), { t: r, owned: true }];
    }
    const last = ops[0];
    ops = [];
    // A new Tensor for the caller: the last operand itself when einsum made it and it is in order, else a view.
    if (plan.perm === null && last.owned) return last.t;
    const v = permute(last.t, plan.perm ?? last.t.shape.map((_, d) => d));
    if (last.owned) last.t.dispose();
    return v;
  } catch (e) {
    for (const t of made) if (!t.isDisposed) t.dispose();
    for (const op of ops) if (op.owned && !op.t.isDisposed) op.t.dispose();
    throw e;
  }
}

/**
 * Einstein summation, as torch.einsum: `equation` names each operand's dims
 * with letters (a-z, A-Z; `...` for broadcast dims), letters an operand
 * repeats take its diagonal, letters missing from the output (after `->`, or
 * implicitly the letters used once, in order) are summed. Contracted two
 * operands at a time through gx.matmul, in the order opt_einsum's greedy
 * strategy picks. The operands share one dtype (numeric) and device; the
 * result has that dtype.
 * @example
 * gx.einsum('bij,bjk->bik', a, b)     // batched matmul: one gx.matmul
 * gx.einsum('ii', m)                  // trace
 * gx.einsum('i,j->ij', u, v)          // outer product
 * gx.einsum('...ij,...jk', a, b)      // broadcasting batch dims
 * gx.einsum('ij,jk,kl->il', [a, b, c])
 */
export function einsum(equation: string, ...operands: Tensor[] | [readonly Tensor[]]): Tensor {
  const fn = 'gx.einsum';
  if (typeof equation !== 'string') throw new TypeError(`${fn}: equation must be a string, got ${describeOperand(equation)}`);
  const list = (operands.length === 1 && Array.isArray(operands[0]) ? operands[0] : operands) as readonly unknown[];
  if (list.length === 0) throw new RangeError(`${fn}: needs at least one operand after the equation`);
  const names = list.map((_, i) => `operands[${i}]`);
  const tensors = list.map((t, i) => checkTensor(t, fn, names[i]));
  if (tensors.length > 1) commonDevice(tensors, names, fn);
  const dtype = tensors[0].dtype;
  for (let i = 1; i < tensors.length; i++) {
    if (tensors[i].dtype !== dtype) throw new TypeError(`${fn}: operands must share one dtype; operands[0] is ${dtype} but ${names[i]} is ${tensors[i].dtype}`);
  }
  if (dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(tensors[0])})`);
  const plan = planFor(equation, tensors, isFloating(dtype), fn);
  try {
    const r = run(plan, tensors, fn);
    if (r.dtype === dtype) return r;
    // Integer sums are int64: the result has the operands' dtype, as their products do.
    try {
      return astypeOp(r, dtype, fn);
    } finally {
      r.dispose();
    }
  } catch (e) {
    throw namedForCaller(e, fn);
  }
}
