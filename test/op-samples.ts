// A sample call for every gx function, gx.linalg function and Tensor method
// and property (float64 inputs that require grad, inside every op's domain),
// and how to call each by its declaration key: what the walks over every
// export share (test/differentiability.test.ts, test/arity.test.ts).
import * as gx from '../lib';
import { DIFFERENTIABILITY } from '../lib/autograd/declarations';
import { BINARY, UNARY } from '../lib/generated/ops';
import { rng, type TestDevice } from './helpers';

export type Args = unknown[];
/** A sample call: its arguments (tensors made fresh per call), and how to call it when not as gx[name](...args). */
export interface Sample { args: (d: TestDevice) => Args; call?: (...args: never[]) => unknown; noMethod?: true; gradcheck?: gx.autograd.GradcheckOptions }

let seed = 7;
/** A float64 tensor of values in [0.5, 1.5] (inside every op's domain, away from kinks and ties) that requires grad. */
export function P(d: TestDevice, shape: number[]): gx.Tensor {
  const r = rng(seed++);
  const n = shape.reduce((a, b) => a * b, 1);
  return gx.tensor(Array.from({ length: n }, () => 0.5 + r()), { dtype: 'float64', device: d }).reshape(shape).requiresGrad_();
}
export const idx = (d: TestDevice, v: number[], shape = [v.length]): gx.Tensor => gx.tensor(v, { dtype: 'int64', device: d }).reshape(shape);
export const mask = (d: TestDevice): gx.Tensor => gx.tensor([1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0], { dtype: 'bool', device: d }).reshape([3, 4]);
export const M = (d: TestDevice): gx.Tensor => P(d, [3, 4]);
/** A well-conditioned square matrix (the diagonal made dominant by a constant added outside the graph). */
export const SQ = (d: TestDevice): gx.Tensor => {
  const a = P(d, [3, 3]);
  return gx.noGrad(() => gx.add(a, gx.mul(gx.eye(3, { dtype: 'float64', device: d }), 3))).requiresGrad_();
};
/** a a^T + 3 I, symmetric positive definite, as a function of a (gradcheck moves single elements). */
export const spd = (a: gx.Tensor): gx.Tensor => gx.add(gx.matmul(a, a.T), gx.mul(gx.eye(a.shape[0], { dtype: 'float64', device: a.device }), 3));
/** A sign-invariant face of a factorization's vectors: each element squared. */
export const sq = (t: gx.Tensor): gx.Tensor => gx.mul(t, t);

/** f(M) computed outside the graph, as a leaf that requires grad (inputs moved into an op's domain). */
export const shifted = (d: TestDevice, f: (x: gx.Tensor) => gx.Tensor): gx.Tensor => gx.noGrad(() => f(M(d))).requiresGrad_();
export const unarySample: Sample = { args: (d) => [M(d)] };
/** Values in [0.25, 0.75]: inside (-1, 1) for asin, acos, atanh, erfinv; away from integers for frac. */
export const halfSample: Sample = { args: (d) => [shifted(d, (x) => gx.mul(x, 0.5))] };
/** Values in [-0.5, 0.5]: both branches of the activations with a kink at 0 (none at 0 itself: random values). */
export const centredSample: Sample = { args: (d) => [shifted(d, (x) => gx.sub(x, 1))] };
export const binarySample: Sample = { args: (d) => [M(d), M(d)] };

/**
 * An in-place op's sample: `twin`'s arguments, the op written into a recorded copy of self (self itself is a
 * leaf that requires grad, which in-place ops refuse, as torch's), whose gradient the walk checks.
 */
function writtenInto(method: string, twin: Sample): Sample {
  const call = (self: gx.Tensor, ...rest: unknown[]): gx.Tensor => {
    const y = gx.mul(self, 1);
    (Reflect.get(y, method) as (...a: unknown[]) => unknown).apply(y, rest);
    return y;
  };
  return { args: twin.args, gradcheck: twin.gradcheck, call: call as (...args: never[]) => unknown };
}

export const SAMPLES: Record<string, Sample> = {
  ...Object.fromEntries(Object.keys(UNARY).map((n) => [n, unarySample])),
  ...Object.fromEntries(Object.keys(BINARY).map((n) => [n, binarySample])),
  transpose: { args: (d) => [M(d), 0, 1] },
  permute: { args: (d) => [M(d), [1, 0]] },
  movedim: { args: (d) => [M(d), 0, 1] },
  squeeze: { args: (d) => [P(d, [3, 1, 4]), 1] },
  unsqueeze: { args: (d) => [M(d), 0] },
  expand: { args: (d) => [P(d, [1, 4]), [3, 4]] },
  broadcastTo: { args: (d) => [P(d, [1, 4]), [3, 4]] },
  flatten: { args: (d) => [P(d, [2, 3, 2])] },
  slice: { args: (d) => [M(d), 1, 1, 3] },
  sliceDims: { args: (d) => [M(d), null, [1, 3, 1]] },
  narrow: { args: (d) => [M(d), 1, 1, 2] },
  cat: { args: (d) => [[M(d), M(d)], 0] },
  stack: { args: (d) => [[M(d), M(d)], 0] },
  split: { args: (d) => [M(d), 2, 1] },
  chunk: { args: (d) => [M(d), 2, 1] },
  unbind: { args: (d) => [M(d), 0] },
  flip: { args: (d) => [M(d), [0]] },
  roll: { args: (d) => [M(d), 1, 0] },
  repeat: { args: (d) => [M(d), [2, 1]] },
  tile: { args: (d) => [M(d), [1, 2]] },
  repeatInterleave: { args: (d) => [M(d), 2, 0] },
  meshgrid: { args: (d) => [P(d, [3]), P(d, [2])] },
  pad: { args: (d) => [M(d), [1, 1]] },
  any: unarySample, all: unarySample, isnan: unarySample, isinf: unarySample, isfinite: unarySample,
  isclose: binarySample, allclose: binarySample, equal: binarySample,
  where: { args: (d) => [mask(d), M(d), M(d)], noMethod: true },  // x.where(condition, y): its own argument order
  asin: halfSample, acos: halfSample, atanh: halfSample, erfinv: halfSample, frac: halfSample,
  acosh: { args: (d) => [shifted(d, (x) => gx.add(x, 1))] },
  leakyRelu: centredSample, elu: centredSample, selu: centredSample, hardtanh: centredSample, silu: centredSample,
  mish: centredSample, logSigmoid: centredSample, hardsigmoid: centredSample,
  lerp: { args: (d) => [M(d), M(d), M(d)] },
  clamp: { args: (d) => [M(d), 0.8, 1.2] },
  astype: { args: (d) => [M(d), 'float64'] },
  sum: { args: (d) => [M(d), 1] }, prod: { args: (d) => [M(d), 1] }, mean: { args: (d) => [M(d), 1] },
  max: { args: (d) => [M(d), 1] }, min: { args: (d) => [M(d), 1] },
  argmax: { args: (d) => [M(d), 1] }, argmin: { args: (d) => [M(d), 1] },
  matmul: { args: (d) => [M(d), P(d, [4, 2])] },
  dot: { args: (d) => [P(d, [4]), P(d, [4])] }, vdot: { args: (d) => [P(d, [4]), P(d, [4])] },
  outer: { args: (d) => [P(d, [3]), P(d, [4])] },
  cross: { args: (d) => [P(d, [2, 3]), P(d, [2, 3])] },
  trace: { args: (d) => [P(d, [3, 3])] },
  diag: { args: (d) => [P(d, [3])] },
  diagonal: { args: (d) => [P(d, [3, 3])] },
  triu: { args: (d) => [P(d, [3, 3])] }, tril: { args: (d) => [P(d, [3, 3])] },
  einsum: { args: (d) => ['ij,jk->ik', M(d), P(d, [4, 2])] },
  gather: { args: (d) => [M(d), 1, idx(d, [0, 3, 1, 2, 2, 0], [3, 2])] },
  indexSelect: { args: (d) => [M(d), 0, idx(d, [2, 0])] },
  take: { args: (d) => [M(d), idx(d, [5, 0, 11])] },
  scatter: { args: (d) => [M(d), 1, idx(d, [0, 3, 1, 2, 2, 0], [3, 2]), P(d, [3, 2])] },
  scatterAdd: { args: (d) => [M(d), 1, idx(d, [0, 3, 1, 1, 2, 0], [3, 2]), P(d, [3, 2])] },
  scatterReduce: { args: (d) => [M(d), 1, idx(d, [0, 3, 1, 1, 2, 0], [3, 2]), P(d, [3, 2]), 'sum'] },
  indexAdd: { args: (d) => [M(d), 0, idx(d, [2, 0]), P(d, [2, 4])] },
  maskedFill: { args: (d) => [M(d), mask(d), 0] },
  maskedSelect: { args: (d) => [M(d), mask(d)] },
  sort: { args: (d) => [M(d)] }, argsort: { args: (d) => [M(d)] },
  topk: { args: (d) => [M(d), 2] }, kthvalue: { args: (d) => [M(d), 2] },
  unique: { args: (d) => [P(d, [5])] },
  searchsorted: { args: (d) => [gx.noGrad(() => gx.sort(P(d, [4])).values).requiresGrad_(), P(d, [3])] },
  nonzero: unarySample,
  bincount: { args: (d) => [idx(d, [0, 2, 2, 1]), { weights: P(d, [4]) }] },
  histc: { args: (d) => [M(d)] },
  softmax: { args: (d) => [M(d), 1] }, logSoftmax: { args: (d) => [M(d), 1] }, logsumexp: { args: (d) => [M(d), 1] },
  var: { args: (d) => [M(d), 1] }, std: { args: (d) => [M(d), 1] }, cumsum: { args: (d) => [M(d), 1] },
  nansum: { args: (d) => [M(d), 1] }, nanmean: { args: (d) => [M(d), 1] }, countNonzero: { args: (d) => [M(d), 1] },
  amax: { args: (d) => [M(d), 1] }, amin: { args: (d) => [M(d), [0, 1]] }, aminmax: { args: (d) => [M(d), 0] },
  cumprod: { args: (d) => [M(d), 1] }, cummax: { args: (d) => [M(d), 1] }, cummin: { args: (d) => [M(d), 0] },
  median: { args: (d) => [M(d), 1] }, quantile: { args: (d) => [M(d), [0.3, 0.5], 1] }, diff: { args: (d) => [M(d), 2, 1] },
  // mode of distinct values (a step of gradcheck would break a tie of counts): the smallest, picked.
  mode: { args: (d) => [M(d), 1] }, msort: { args: (d) => [M(d)] },
  nanmedian: { args: (d) => [M(d), 1] }, nanquantile: { args: (d) => [M(d), [0.3, 0.5], 1] },
  emptyLike: unarySample, zerosLike: unarySample, onesLike: unarySample, fullLike: { args: (d) => [M(d), 2] },
  randLike: unarySample, randnLike: unarySample,
  // In place, written into a recorded copy of self: a value that requires grad, added at a repeated index.
  indexPut_: writtenInto('indexPut_', { args: (d) => [M(d), [idx(d, [0, 2, 0])], P(d, [3, 4]), { accumulate: true }] }),
  'linalg.vectorNorm': unarySample,
  'linalg.matrixNorm': unarySample,
  'linalg.norm': unarySample,
  'linalg.cross': { args: (d) => [P(d, [2, 3]), P(d, [2, 3])] },
  'linalg.solve': { args: (d) => [SQ(d), P(d, [3, 2])] },
  'linalg.inv': { args: (d) => [SQ(d)] },
  'linalg.det': { args: (d) => [SQ(d)] },
  'linalg.slogdet': { args: (d) => [SQ(d)], call: (a: gx.Tensor) => gx.linalg.slogdet(a).logabsdet },  // the sign has no gradient (torch's)
  'linalg.cholesky': { args: (d) => [SQ(d)], call: (a: gx.Tensor) => gx.linalg.cholesky(spd(a)) },
  'linalg.qr': { args: (d) => [P(d, [4, 3])] },
  'linalg.eigh': { args: (d) => [SQ(d)], call: (a: gx.Tensor) => { const r = gx.linalg.eigh(spd(a)); return [r.eigenvalues, sq(r.eigenvectors)]; } },
  'linalg.svd': { args: (d) => [M(d)], call: (a: gx.Tensor) => { const r = gx.linalg.svd(a, { fullMatrices: false }); return [r.S, sq(r.U), sq(r.Vh)]; } },
  mm: { args: (d) => [M(d), P(d, [4, 2])] }, bmm: { args: (d) => [P(d, [2, 3, 4]), P(d, [2, 4, 2])] },
  tensordot: { args: (d) => [P(d, [2, 3, 4]), P(d, [3, 4, 2]), 2] }, kron: { args: (d) => [P(d, [2, 3]), P(d, [2, 2])] },
  'linalg.pinv': unarySample, 'linalg.matrixRank': unarySample,
  'linalg.lstsq': { args: (d) => [P(d, [4, 3]), P(d, [4, 2])], call: (a: gx.Tensor, b: gx.Tensor) => gx.linalg.lstsq(a, b).solution },
  'linalg.eigvalsh': { args: (d) => [SQ(d)], call: (a: gx.Tensor) => gx.linalg.eigvalsh(spd(a)) },
  bernoulli: { args: (d) => [gx.mul(M(d), 0.5)] }, normal: { args: (d) => [M(d), M(d)] }, multinomial: { args: (d) => [M(d), 2] },
  // dropout with a fixed generator: gradcheck's calls draw the same mask each time.
  dropout: { args: (d) => [M(d), 0.3], call: (x: gx.Tensor, p: number) => gx.dropout(x, p, { generator: new gx.Generator(5) }) },
  'Tensor.view': { args: (d) => [M(d), [4, 3]] },
  'Tensor.reshape': { args: (d) => [M(d), [4, 3]] },
  'Tensor.asStrided': { args: (d) => [M(d), [2, 2], [4, 1], 1] },
  'Tensor.alias': unarySample, 'Tensor.contiguous': { args: (d) => [gx.noGrad(() => M(d).T).requiresGrad_()] }, 'Tensor.clone': unarySample,
  'Tensor.to': { args: (d) => [M(d), 'cpu'] },
  'Tensor.cpu': unarySample, 'Tensor.cuda': unarySample,
  'Tensor.index': { args: (d) => [M(d), gx.sl(1, 3), idx(d, [0, 2])] },
  'Tensor.get': { args: (d) => [M(d), '1:, 2'] },
  'Tensor.T': unarySample, 'Tensor.mT': unarySample,
  'Tensor.norm': unarySample,
  'Tensor.detach': unarySample,
  // float() and half() round: their (linear) results are checked with steps wide enough that the rounding
  // (1e-7, 1e-3 relative) stays under the tolerance; a wrong gradient (0, 2, ...) is still far outside it.
  'Tensor.double': unarySample,
  'Tensor.float': { args: (d) => [M(d)], gradcheck: { eps: 1e-2, atol: 1e-4 } },
  'Tensor.half': { args: (d) => [M(d)], gradcheck: { eps: 0.1, atol: 2e-2 } },
  // Into a view of a recorded tensor, as copy_ (they are copies of their value): self keeps the gradient of the rest, a 0-d value gets the sum.
  'Tensor.zero_': {
    args: (d) => [M(d)],
    call: ((self: gx.Tensor) => {
      const y = gx.mul(self, 2);
      y.narrow(1, 1, 2).zero_();
      return y;
    }) as (...args: never[]) => unknown,
  },
  'Tensor.fill_': {
    args: (d) => [M(d), P(d, [])],
    call: ((self: gx.Tensor, value: gx.Tensor) => {
      const y = gx.mul(self, 2);
      y.narrow(1, 1, 2).fill_(value);
      return y;
    }) as (...args: never[]) => unknown,
  },
  // Into a view of a recorded tensor: src gets the gradient of the columns written, self the rest (NOTE [ copy_ into views ]).
  'Tensor.copy_': {
    args: (d) => [M(d), P(d, [3, 2])],
    call: ((self: gx.Tensor, src: gx.Tensor) => {
      const y = gx.mul(self, 2);
      y.narrow(1, 1, 2).copy_(src);
      return y;
    }) as (...args: never[]) => unknown,
  },
  'Tensor.set': writtenInto('set', { args: (d) => [M(d), [gx.sl(0, 2), idx(d, [1, 3])], P(d, [2, 1])] }),
  'Tensor.scatter_': writtenInto('scatter_', { args: (d) => [M(d), 1, idx(d, [0, 3, 1, 2, 2, 0], [3, 2]), P(d, [3, 2])] }),
  'Tensor.scatterAdd_': writtenInto('scatterAdd_', { args: (d) => [M(d), 1, idx(d, [0, 3, 1, 1, 2, 0], [3, 2]), P(d, [3, 2])] }),
  'Tensor.scatterReduce_': writtenInto('scatterReduce_', { args: (d) => [M(d), 1, idx(d, [0, 3, 1, 1, 2, 0], [3, 2]), P(d, [3, 2]), 'sum'] }),
  'Tensor.indexAdd_': writtenInto('indexAdd_', { args: (d) => [M(d), 0, idx(d, [2, 0]), P(d, [2, 4])] }),
  'Tensor.clamp_': writtenInto('clamp_', { args: (d) => [M(d), 0.8, 1.2] }),
};
// The elementwise in-place ops: their twin's arguments (inside its domain), written into a recorded copy.
for (const [n, e] of [...Object.entries(BINARY), ...Object.entries(UNARY)]) if (e.inplace) SAMPLES[`Tensor.${n}_`] = writtenInto(`${n}_`, SAMPLES[n]);

export type AnyFn = (...args: unknown[]) => unknown;
export const sampleOf = (key: string): Sample => SAMPLES[key.replace(/^#/, '')];
export const prototypeNames = (): string[] => Object.getOwnPropertyNames(gx.Tensor.prototype).filter((n) => n !== 'constructor');
export const isGetter = (name: string): boolean => Object.getOwnPropertyDescriptor(gx.Tensor.prototype, name)?.get !== undefined;

/** The exports the walk covers, by declaration key. */
export function exportedNames(): string[] {
  const top = Object.keys(gx).filter((k) => typeof Reflect.get(gx, k) === 'function' && !/^[A-Z]/.test(k));
  const linalg = Object.keys(gx.linalg).map((k) => `linalg.${k}`);
  // A method named as a gx function is that function on `this` (NOTE [ Tensor methods ]); a getter is its own.
  const methods = prototypeNames().filter((n) => !top.includes(n) || isGetter(n)).map((n) => `Tensor.${n}`);
  return [...top, ...linalg, ...methods];
}

/**
 * How to call a declaration key: the gx function, or the method on its first
 * argument; the sample's own `call` unless `exportItself` (which calls the
 * export with the sample's arguments as they are).
 */
export function caller(key: string, exportItself = false): AnyFn {
  if (key.startsWith('#')) return (self: unknown, ...rest: unknown[]) => (Reflect.get(self as object, key.slice(1)) as AnyFn).apply(self, rest);
  const sample = SAMPLES[key];
  if (sample.call !== undefined && !exportItself) return sample.call as AnyFn;
  if (key.startsWith('Tensor.')) {
    const m = key.slice(7);
    return (self: unknown, ...rest: unknown[]) => (isGetter(m) ? Reflect.get(self as object, m) : (Reflect.get(self as object, m) as AnyFn).apply(self, rest));
  }
  if (key.startsWith('linalg.')) return Reflect.get(gx.linalg, key.slice(7)) as AnyFn;
  return Reflect.get(gx, key) as AnyFn;
}

/** The tensors of a result (a tensor, a list, or an object of them). */
export function tensorsOf(r: unknown): gx.Tensor[] {
  if (r instanceof gx.Tensor) return [r];
  if (Array.isArray(r)) return r.flatMap(tensorsOf);
  if (r !== null && typeof r === 'object') return Object.values(r).flatMap(tensorsOf);
  return [];
}
export const floating = (t: gx.Tensor): boolean => gx.DTYPE_INFO[t.dtype].kind === 'f';
export const gradInputs = (args: Args): gx.Tensor[] => args.flatMap(tensorsOf).filter((t) => t.requiresGrad);


/** gx functions that are also Tensor methods: each is walked a second time as `#name`, called on its first argument. */
export const hasMethod = (k: string): boolean => !k.includes('.') && SAMPLES[k]?.call === undefined && SAMPLES[k]?.noMethod === undefined
  && typeof Object.getOwnPropertyDescriptor(gx.Tensor.prototype, k)?.value === 'function';

/** The keys of one declaration kind that this device can run, with their method forms. */
export const keysOf = (kind: string, d: TestDevice): string[] => Object.keys(DIFFERENTIABILITY)
  .filter((k) => DIFFERENTIABILITY[k] === kind && SAMPLES[k] !== undefined && !(k === 'Tensor.cuda' && (d === 'cpu' || !gx.cuda.isAvailable())))
  .flatMap((k) => (hasMethod(k) ? [k, `#${k}`] : [k]));
