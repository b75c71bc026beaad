// NOTE [ One declaration per op ]
// Every exported function and Tensor method says here, once, what autograd
// does with it, as torch's derivatives.yaml does for its native functions:
//   formula            its derivative is written beside the op (the op list's
//                      `grad` for elementwise ops, generated; a recorder or a
//                      record() call beside the others) and it records;
//   composite          made of ops that record (its gradient is theirs);
//   nondifferentiable  integer, bool or index results, or results that are
//                      not functions of the input's values (zerosLike, randLike);
//   notImplemented     called with an input that requires grad, it throws
//                      naming itself (derivativeNotImplemented below);
//   none               not a tensor op (creation, files, settings, kernels'
//                      factories: their kernels are declared as 'name()').
// An in-place op records as its out-of-place twin and a copy into self (NOTE
// [ Autograd and in-place ops ]) and is declared as that twin (add_ a
// formula, floorDivide_ notImplemented: AS_TWIN below); copy_, fill_, zero_,
// indexPut_ and Tensor.set, whose twins are no export, are formulas. Every
// in-place op records, so none has a kind of its own.
// The elementwise ops' entries come from ops/op-list.js (the generator refuses
// an op with a floating result and no `grad`). test/differentiability.test.ts
// walks every export and method and checks each against its entry: a new
// export without one fails it, and so does an entry the op does not keep.
import { ELEMENTWISE_DIFFERENTIABILITY } from '../generated/derivatives';
import { BINARY, UNARY } from '../generated/ops';

export type Differentiability = 'formula' | 'composite' | 'nondifferentiable' | 'notImplemented' | 'none';

const NONE = [
  'tensor', 'empty', 'zeros', 'ones', 'full', 'arange', 'linspace', 'logspace', 'eye', 'save', 'loadTensors', 'loadTensor',
  'inspectTensors', 'loadLibrary', 'camelCase', 'load', 'loadInline', 'withStream', 'tidy', 'benchmark',
  'elementwiseKernel', 'reductionKernel', 'vectorize', 'fuse', 'chunked', 'mapBlocks', 'resultType', 'promoteTypes',
  'canCast', 'manualSeed', 'rand', 'randn', 'randint', 'uniform', 'randperm', 'setFloat32MatmulPrecision',
  'getFloat32MatmulPrecision', 'backends', 'sl', 'noGrad', 'enableGrad', 'isGradEnabled', 'grad', 'valueAndGrad',
  // Tensor's own members that are not ops on values.
  'Tensor.handle', 'Tensor.address', 'Tensor.knownAddress', 'Tensor.info', 'Tensor.toArray', 'Tensor.toArraySync', 'Tensor.item',
  'Tensor.itemBigInt', 'Tensor.toNested', 'Tensor.dispose', 'Tensor.toString', 'Tensor.recordStream', 'Tensor.size',
  'Tensor.requiresGrad_', 'Tensor.backward', 'Tensor.isDisposed', 'Tensor.isContiguous', 'Tensor.shape',
  'Tensor.strides', 'Tensor.dtype', 'Tensor.device', 'Tensor.storageOffset', 'Tensor.ndim', 'Tensor.numel',
  'Tensor.requiresGrad', 'Tensor.grad', 'Tensor.gradFn', 'Tensor.isLeaf', 'Tensor.retainGrad', 'Tensor.retainsGrad',
  'Tensor.registerHook', 'Tensor.dim',
  // @internal members (views and copies for the library's own use: not recorded on purpose).
  'Tensor.asStrided', 'Tensor.alias', 'Tensor.toDevice',
] as const;

const FORMULA = [
  // Layout and copies: views whose gradient is the view undone (NOTE [ Autograd and views ] in ops/layout/layout.ts).
  'transpose', 'permute', 'movedim', 'squeeze', 'unsqueeze', 'expand', 'broadcastTo', 'flatten', 'slice', 'narrow',
  'sliceDims', 'cat', 'stack', 'flip', 'where', 'clamp', 'astype', 'lerp', 'sum', 'prod', 'mean', 'max', 'min', 'matmul',
  'cross', 'diagonal', 'diag', 'gather', 'indexSelect', 'take', 'scatter', 'scatterAdd', 'sort', 'topk', 'kthvalue',
  'scatterReduce', 'indexAdd', 'maskedSelect', 'softmax', 'logSoftmax', 'logsumexp', 'var', 'std', 'cumsum',
  'linalg.vectorNorm', 'linalg.matrixNorm', 'linalg.cross', 'linalg.cholesky', 'linalg.solve', 'linalg.inv',
  'linalg.det', 'linalg.slogdet', 'linalg.qr', 'linalg.eigh', 'linalg.svd', 'amax', 'amin', 'cumprod', 'cummax', 'cummin',
  'Tensor.view', 'Tensor.reshape', 'Tensor.contiguous', 'Tensor.clone', 'Tensor.to', 'Tensor.cpu', 'Tensor.cuda', 'Tensor.index', 'Tensor.get', 'Tensor.T', 'Tensor.mT',
  'Tensor.float', 'Tensor.double', 'Tensor.half',
  'Tensor.copy_', 'Tensor.fill_', 'Tensor.zero_',  // in place, and recorded (NOTE [ copy_ into views ] in tape/graph.ts)
  'indexPut_', 'Tensor.set',  // in place, recorded as their twin index_put (NOTE [ index_put under autograd ] in ops/indexing/index-write.ts)
] as const;

const COMPOSITE = [
  'split', 'chunk', 'unbind', 'roll', 'repeat', 'tile', 'repeatInterleave', 'meshgrid', 'pad', 'dot', 'vdot', 'outer',
  'trace', 'triu', 'tril', 'einsum', 'maskedFill', 'linalg.norm', 'Tensor.norm',
  'nansum', 'nanmean', 'aminmax', 'median', 'quantile', 'diff', 'mm', 'bmm', 'tensordot', 'kron', 'linalg.pinv',
  'linalg.lstsq', 'linalg.eigvalsh', 'dropout', 'mode', 'nanmedian', 'nanquantile', 'msort',
] as const;

const NONDIFFERENTIABLE = [
  'emptyLike', 'zerosLike', 'onesLike', 'fullLike', 'randLike', 'randnLike', 'any', 'all', 'isnan', 'isinf',
  'isfinite', 'isclose', 'allclose', 'equal', 'argmax', 'argmin', 'argsort', 'searchsorted', 'nonzero', 'countNonzero',
  'linalg.matrixRank', 'bernoulli', 'normal', 'multinomial',
  'Tensor.detach',
] as const;

const NOT_IMPLEMENTED = ['unique', 'bincount', 'histc'] as const;

/** In-place ops recorded as their out-of-place twin (computeResult's outOfPlace), declared as it (besides the elementwise ones). */
const AS_TWIN = { 'Tensor.scatter_': 'scatter', 'Tensor.scatterAdd_': 'scatterAdd', 'Tensor.scatterReduce_': 'scatterReduce',
  'Tensor.indexAdd_': 'indexAdd', 'Tensor.clamp_': 'clamp' } as const;

function table(): Record<string, Differentiability> {
  const t: Record<string, Differentiability> = {};
  const put = (names: readonly string[], d: Differentiability): void => {
    for (const n of names) {
      if (t[n] !== undefined) throw new Error(`gpuext: ${n} is declared twice in lib/autograd/declarations.ts`);
      t[n] = d;
    }
  };
  for (const [n, d] of Object.entries(ELEMENTWISE_DIFFERENTIABILITY)) put([n], d);
  for (const [n, e] of [...Object.entries(BINARY), ...Object.entries(UNARY)]) if (e.inplace) put([`Tensor.${n}_`], t[n]);
  put(NONE, 'none');
  put(FORMULA, 'formula');
  put(COMPOSITE, 'composite');
  put(NONDIFFERENTIABLE, 'nondifferentiable');
  put(NOT_IMPLEMENTED, 'notImplemented');
  for (const [n, twin] of Object.entries(AS_TWIN)) put([n], t[twin]);
  return t;
}

/**
 * By gx path ('add', 'linalg.solve'; 'Tensor.view' for a method that is no gx
 * function; a method named as a gx function is that function on `this`).
 */
export const DIFFERENTIABILITY: Readonly<Record<string, Differentiability>> = table();

/** How autograd treats the gx function or Tensor method `name` (undefined: undeclared). */
export function differentiability(name: string): Differentiability | undefined {
  return Object.prototype.hasOwnProperty.call(DIFFERENTIABILITY, name) ? DIFFERENTIABILITY[name] : undefined;
}

/**
 * The recorded ops whose derivative formula is first order only: it calls
 * kernels that do not record (the LU solves and inverses of linalg's
 * backwards, the decompositions' own), so a backward with createGraph
 * through one would give a second derivative missing those terms (Hessians
 * of det that were wrong, of svd and eigh that were NaN). With createGraph,
 * the engine gives such a formula's results a recorded step that refuses to
 * be differentiated, naming the op (NOTE [ Backward of backward ] in
 * engine.ts): the first derivative stays usable, a second one through the op
 * throws, as torch's not-implemented double backwards do.
 */
export const FIRST_ORDER_ONLY: ReadonlySet<string> = new Set([
  'linalg.solve', 'linalg.det', 'linalg.slogdet', 'linalg.cholesky', 'linalg.qr', 'linalg.eigh', 'linalg.svd',
  'linalg.matrixNorm',  // its nuclear and spectral norms, from singular vectors computed unrecorded ('fro' is vectorNorm's)
]);
