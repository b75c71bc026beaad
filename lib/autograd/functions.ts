// The recorders of the built-in op families (graph.ts `recorders`): each
// saves what its derivative needs and records the node. Elementwise
// derivatives come from ops/op-list.js (lib/generated/derivatives.ts);
// reductions, matmul, softmax and layout ops are written here.
//
// A formula reads its inputs' shapes, dtypes and whether they require grad
// when the op is recorded, never at backward time: by then an input may be
// disposed (an intermediate freed by gx.tidy or `using`; NOTE [ Autograd
// memory ]), and only the saved aliases and these values remain.
import { DERIVATIVES } from '../generated/derivatives';
import * as E from '../generated/elementwise';
import { cumsum } from '../ops/reduce/scan';
import { cumprodBackward } from './cumprod-backward';
import { othersProduct } from './prod-backward';
import { recordedCopy, recordedFill, viewOfBackward } from './copy-backward';
import { recordedInPlace } from './inplace-backward';
import { matmul } from '../ops/linalg/matmul';
import { mean, sum } from '../ops/reduce/functions';
import { sumToShape } from './engine';
import { whereOp } from '../ops/elementwise/elementwise';
import { Tensor } from '../core/tensor';
import { autogradHooks } from '../core/tensor';
import { filled, isFloatingDType, record, recorders, requiresGrad, shouldRecord } from '../tape/graph';

const asTensor = (x: unknown): x is Tensor => x instanceof Tensor;

/** Stands for a tensor the formula does not read (and so was not saved). */
const UNUSED = undefined as unknown as Tensor;

type Derivative = (typeof DERIVATIVES)[keyof typeof DERIVATIVES];

/**
 * Per op of the op list, its gx name ('leaky_relu' is gx.leakyRelu: the
 * node's name and DERIVATIVES' key) and its derivative (undefined: none),
 * found once: one Map lookup per recorded op. (A regular expression per
 * recorded op was a tenth of the recording's time; a keyed load by name
 * into DERIVATIVES is megamorphic, NOTE [ Dtype lookups ].)
 */
const DERIVATIVE_OF_OP = new Map<string, { name: string; d: Derivative | undefined }>();

function derivativeOf(op: string): { name: string; d: Derivative | undefined } {
  let known = DERIVATIVE_OF_OP.get(op);
  if (known === undefined) {
    const name = op.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
    const d = Object.prototype.hasOwnProperty.call(DERIVATIVES, name) ? DERIVATIVES[name as keyof typeof DERIVATIVES] : undefined;
    DERIVATIVE_OF_OP.set(op, (known = { name, d }));
  }
  return known;
}

/** A binary op's parameters: it has none. */
const NO_PARAMS: Readonly<Record<string, number>> = {};

const binaryRecorder: NonNullable<(typeof recorders)['binary']> = (op, x, y, out) => {
  const { name, d } = derivativeOf(op);
  if (d === undefined || d.other === undefined) return;  // comparisons and logical ops: no gradient
  const gx = requiresGrad(x), gy = requiresGrad(y);
  // Save only what the needed formulas read (NOTE [ Derivatives beside the schemas ]: the generator says which).
  const su = d.selfUses, ou = d.otherUses as NonNullable<typeof d.otherUses>;
  const keepX = asTensor(x) && ((gx && su.self) || (gy && ou.self));
  const keepY = asTensor(y) && ((gx && su.other) || (gy && ou.other));
  const keepR = (gx && su.result) || (gy && ou.result);
  // An array of its final length (an empty one grown by push takes room for 17), each slot then written.
  const save = filled(Number(keepX) + Number(keepY) + Number(keepR), out);
  let n = 0;
  if (keepX) save[n++] = x as Tensor;
  if (keepY) save[n++] = y as Tensor;
  if (keepR) save[n++] = out;
  record(name, [x, y], out, save, (g, s) => {
    let k = 0;
    const sx = keepX ? s[k++] : asTensor(x) ? UNUSED : (x as number);
    const sy = keepY ? s[k++] : asTensor(y) ? UNUSED : (y as number);
    const r = keepR ? s[k++] : UNUSED;
    return [gx ? d.self(g, sx, sy, r, NO_PARAMS) : null, gy ? (d.other as NonNullable<typeof d.other>)(g, sx, sy, r, NO_PARAMS) : null];
  });
};

const unaryRecorder: NonNullable<(typeof recorders)['unary']> = (op, x, out, params) => {
  const { name, d } = derivativeOf(op);
  if (d === undefined) return;
  const save = [...(d.selfUses.self ? [x] : []), ...(d.selfUses.result ? [out] : [])];
  record(name, [x], out, save, (g, s) => [d.self(g, d.selfUses.self ? s[0] : UNUSED, 0, d.selfUses.result ? s[s.length - 1] : UNUSED, params)]);
};

/** The gradient of a reduction's result spread back over the input's shape (before scaling). */
function unreduce(g: Tensor, shape: readonly number[], axes: readonly number[], keepdims: boolean): Tensor {
  const kept = shape.map((n, d) => (axes.includes(d) ? 1 : n));
  const gk = keepdims ? g : g.reshape(kept);
  return gk.expand(shape as number[]);
}

const reduceRecorder: NonNullable<(typeof recorders)['reduce']> = (name, x, axes, keepdims, out) => {
  const shape = x.shape.slice();
  const count = axes.reduce((n, d) => n * shape[d], 1);
  switch (name) {
    case 'sum':
      record(name, [x], out, [], (g) => [unreduce(g, shape, axes, keepdims)]);
      break;
    case 'mean':
      // Scaled before it is spread: one small division, and the spread gradient stays a view.
      record(name, [x], out, [], (g) => [unreduce(E.div(g, count), shape, axes, keepdims)]);
      break;
    case 'prod':
      // d prod / dx_i = the product of the others along the reduced axes, exact with zeros (prod-backward.ts).
      record(name, [x], out, [x], (g, [sx]) => [E.mul(unreduce(g, shape, axes, keepdims), othersProduct(sx, axes))]);
      break;
    case 'max':
    case 'min':
      // The gradient goes to the elements equal to the extremum, split evenly between ties (torch's amax rule).
      record(name, [x], out, [x, out], (g, [sx, r]) => {
        const hit = E.eq(sx, unreduce(r, shape, axes, keepdims)).astype(sx.dtype);
        const ties = sum(hit, { axis: [...axes], keepdims: true });
        return [E.mul(E.div(hit, ties), unreduce(g, shape, axes, keepdims))];
      });
      break;
    default:
      break;  // argmax / argmin: integer results, no gradient
  }
};

const whereRecorder: NonNullable<(typeof recorders)['where']> = (cond, x, y, out) => {
  const needX = requiresGrad(x), needY = requiresGrad(y);
  record('where', [x, y], out, [cond], (g, [c]) => [
    needX ? whereOp(c, g, 0, 'where backward') : null,
    needY ? whereOp(c, 0, g, 'where backward') : null,
  ]);
};

const clampRecorder: NonNullable<(typeof recorders)['clamp']> = (x, lo, hi, out) => {
  // The gradient passes where x is inside [lo, hi] (at a bound too, as torch).
  record('clamp', [x], out, [x], (g, [sx]) => {
    let inside: Tensor | undefined;
    if (lo !== undefined) inside = E.ge(sx, lo);
    if (hi !== undefined) {
      const le = E.le(sx, hi);
      inside = inside === undefined ? le : E.logicalAnd(inside, le);
    }
    return [whereOp(inside as Tensor, g, 0, 'clamp backward')];
  });
};

const astypeRecorder: NonNullable<(typeof recorders)['astype']> = (x, out) => {
  const dtype = x.dtype;
  if (!isFloatingDType(dtype)) return;
  record('astype', [x], out, [], (g) => [g.astype(dtype)]);
};

const sameValuesRecorder: NonNullable<(typeof autogradHooks)['sameValues']> = (name, t, out) => {
  if (!shouldRecord(t)) return;
  const shape = t.shape.slice();
  record(name, [t], out, [], (g) => [g.reshape(shape)]);
};

const movedRecorder: NonNullable<(typeof autogradHooks)['moved']> = (t, out) => {
  if (!shouldRecord(t)) return;
  const from = t.device;
  record('to', [t], out, [], (g) => [g.toDevice(from, false, 'Tensor.to backward')]);
};

/** The last two axes swapped (a matrix's transpose, batched). */
const mT = (t: Tensor): Tensor => t.transpose(-1, -2);

const matmulRecorder: NonNullable<(typeof recorders)['matmul']> = (a, b, out) => {
  // Vectors as matrices ([1, k] and [k, 1]), as the forward op treats them; the gradient of the result gets the dims back.
  const needA = requiresGrad(a), needB = requiresGrad(b);
  record('matmul', [a, b], out, [a, b], (g, [sa, sb]) => {
    const a2 = sa.ndim === 1 ? sa.reshape(1, -1) : sa;
    const b2 = sb.ndim === 1 ? sb.reshape(-1, 1) : sb;
    let g2 = g;
    if (sa.ndim === 1) g2 = g2.unsqueeze(g2.ndim - (sb.ndim === 1 ? 0 : 1));
    if (sb.ndim === 1) g2 = g2.unsqueeze(-1);
    const ga = needA ? sumToShape(matmul(g2, mT(b2)), a2.shape).reshape(sa.shape as number[]) : null;
    const gb = needB ? sumToShape(matmul(mT(a2), g2), b2.shape).reshape(sb.shape as number[]) : null;
    return [ga, gb];
  });
};

const alongAxisRecorder: NonNullable<(typeof recorders)['alongAxis']> = (name, x, axis, out) => {
  switch (name) {
    case 'softmax':  // dx = y (g - sum(g y))
      record(name, [x], out, [out], (g, [y]) => [E.mul(y, E.sub(g, sum(E.mul(g, y), { axis, keepdims: true })))]);
      break;
    case 'logSoftmax':  // dx = g - exp(y) sum(g)
      record(name, [x], out, [out], (g, [y]) => [E.sub(g, E.mul(E.exp(y), sum(g, { axis, keepdims: true })))]);
      break;
    case 'cumsum':  // dx_i = sum_{j >= i} g_j = sum(g) - cumsum(g) + g
      record(name, [x], out, [], (g) => [E.add(E.sub(sum(g, { axis, keepdims: true }), cumsum(g, axis)), g)]);
      break;
    case 'cumprod':  // NOTE [ cumprod's gradient with zeros ]
      record(name, [x], out, [x, out], (g, [sx, y]) => [cumprodBackward(sx, y, g, axis)]);
      break;
    default:
      break;
  }
};

const statReduceRecorder: NonNullable<(typeof recorders)['statReduce']> = (name, x, axes, keepdims, correction, out) => {
  const shape = x.shape.slice();
  const count = axes.reduce((n, d) => n * shape[d], 1);
  const spread = (t: Tensor): Tensor => unreduce(t, shape, axes, keepdims);
  switch (name) {
    case 'logsumexp':  // dx = g exp(x - lse)
      record(name, [x], out, [x, out], (g, [sx, r]) => [E.mul(spread(g), E.exp(E.sub(sx, spread(r))))]);
      break;
    case 'var':  // dx = g 2 (x - mean) / (N - correction)
      record(name, [x], out, [x], (g, [sx]) => [E.mul(spread(g), E.mul(E.sub(sx, mean(sx, { axis: [...axes], keepdims: true })), 2 / Math.max(0, count - correction)))]);
      break;
    case 'std':  // dx = g (x - mean) / ((N - correction) std), 0 where std is 0 (as torch's std_backward; it was NaN there)
      record(name, [x], out, [x, out], (g, [sx, r]) => {
        const sr = spread(r);
        const d = E.div(E.mul(spread(g), E.sub(sx, mean(sx, { axis: [...axes], keepdims: true }))), E.mul(sr, Math.max(0, count - correction)));
        return [whereOp(E.eq(sr, 0), 0, d, 'autograd')];
      });
      break;
    default:
      break;
  }
};

/** Installs the recorders above into the tape (lib/register.ts runs it once). */
export function installRecorders(): void {
  Object.assign(recorders, { binary: binaryRecorder, unary: unaryRecorder, reduce: reduceRecorder, where: whereRecorder, clamp: clampRecorder, astype: astypeRecorder, matmul: matmulRecorder, alongAxis: alongAxisRecorder, statReduce: statReduceRecorder, viewOf: viewOfBackward,
    inPlace: recordedInPlace });
  Object.assign(autogradHooks, { sameValues: sameValuesRecorder, moved: movedRecorder, copy: recordedCopy, fill: recordedFill });
}
