// Every options object gpuext reads refuses a key it does not know (issue 13):
// JS callers get no compile error, and an ignored key is a silent wrong
// answer. The tables below say, for every exported function, class and
// method, how its options are passed or that it takes none; a new export
// fails the walk at the bottom until it is put in one of them.
import test from 'ava';

import * as gx from '../lib';
import { booleanOption, closestKey, editDistance } from '../lib/core/options';
import { BINARY as BINARY_OPS, UNARY as UNARY_OPS } from '../lib/generated/ops';

/** A call with a misspelled key, what the error names (the function), the key and the suggestion. */
interface Case {
  call: () => unknown;
  fn: string;
  key: string;
  suggest: string;
}

const x = (): gx.Tensor => gx.ones([2, 3]);
/** A parameter for the optimizers. */
const w = (): gx.Tensor => gx.ones([2]).requiresGrad_();
// The elementwise ops, as ops/op-list.js lists them (a new one is walked without an edit here).
const BINARY = Object.keys(BINARY_OPS);
const UNARY = Object.keys(UNARY_OPS);
const INPLACE = [...Object.values(BINARY_OPS), ...Object.values(UNARY_OPS)].filter((s) => s.inplace);
const REDUCE = ['sum', 'prod', 'mean', 'max', 'min', 'argmax', 'argmin'] as const;
const STATS = ['logsumexp', 'var', 'std'] as const;

type AnyFn = (...args: unknown[]) => unknown;
const gxFn = (name: string): AnyFn => Reflect.get(gx, name) as AnyFn;
const method = (t: gx.Tensor, name: string): AnyFn => (Reflect.get(t, name) as AnyFn).bind(t);

const KERNEL = 'extern "C" __global__ void k(float* x, int n) { }';

/** Exported functions and classes (by path; `Class#method` for methods) that take an options object. */
const TAKES_OPTIONS: Record<string, Case> = {
  tensor: { call: () => gx.tensor([1, 2], { devcie: 'cpu' } as gx.TensorOptions), fn: 'gx.tensor', key: 'devcie', suggest: 'device' },
  empty: { call: () => gx.empty([2], { pin_memory: true } as gx.EmptyOptions), fn: 'gx.empty', key: 'pin_memory', suggest: 'pinned' },
  zeros: { call: () => gx.zeros([2], { dtpye: 'float64' } as gx.EmptyOptions), fn: 'gx.zeros', key: 'dtpye', suggest: 'dtype' },
  ones: { call: () => gx.ones([2], { devices: 'cpu' } as gx.EmptyOptions), fn: 'gx.ones', key: 'devices', suggest: 'device' },
  full: { call: () => gx.full([2], 1, { dtyp: 'int8' } as gx.EmptyOptions), fn: 'gx.full', key: 'dtyp', suggest: 'dtype' },
  arange: { call: () => gx.arange(0, 5, 1, { type: 'int32' } as gx.TensorOptions), fn: 'gx.arange', key: 'type', suggest: 'dtype' },
  linspace: { call: () => gx.linspace(0, 1, 5, { dtpye: 'float64' } as gx.TensorOptions), fn: 'gx.linspace', key: 'dtpye', suggest: 'dtype' },
  logspace: { call: () => gx.logspace(0, 1, 5, 2, { dtpye: 'float64' } as gx.TensorOptions), fn: 'gx.logspace', key: 'dtpye', suggest: 'dtype' },
  rand: { call: () => gx.rand([2], { generater: new gx.Generator() } as gx.RandomOptions), fn: 'gx.rand', key: 'generater', suggest: 'generator' },
  randn: { call: () => gx.randn([2], { mean: 1, sd: 2 } as gx.RandnOptions), fn: 'gx.randn', key: 'sd', suggest: 'std' },
  randint: { call: () => gx.randint(0, 5, [2], { dtpye: 'int32' } as gx.RandomOptions), fn: 'gx.randint', key: 'dtpye', suggest: 'dtype' },
  uniform: { call: () => gx.uniform(0, 1, [2], { devcie: 'cpu' } as gx.RandomOptions), fn: 'gx.uniform', key: 'devcie', suggest: 'device' },
  where: { call: () => gx.where(gx.ones([2], { dtype: 'bool' }), x(), x(), { outt: x() } as gx.OutOptions), fn: 'gx.where', key: 'outt', suggest: 'out' },
  clamp: { call: () => gx.clamp(x(), 0, 1, { ouT: x() } as gx.OutOptions), fn: 'gx.clamp', key: 'ouT', suggest: 'out' },
  matmul: { call: () => gx.matmul(x(), x().transpose(0, 1), { allow_tf32: true } as gx.MatmulOptions), fn: 'gx.matmul', key: 'allow_tf32', suggest: 'allowTf32' },
  'linalg.svd': { call: () => gx.linalg.svd(x(), { full_matrices: false } as gx.SvdOptions), fn: 'gx.linalg.svd', key: 'full_matrices', suggest: 'fullMatrices' },
  'linalg.qr': { call: () => gx.linalg.qr(x(), { mdoe: 'r' } as gx.QrOptions), fn: 'gx.linalg.qr', key: 'mdoe', suggest: 'mode' },
  'linalg.cholesky': { call: () => gx.linalg.cholesky(x(), { uper: true } as gx.CholeskyOptions), fn: 'gx.linalg.cholesky', key: 'uper', suggest: 'upper' },
  'linalg.eigh': { call: () => gx.linalg.eigh(x(), { uplo: 'U' } as gx.EighOptions), fn: 'gx.linalg.eigh', key: 'uplo', suggest: 'UPLO' },
  softmax: { call: () => gx.softmax(x(), 1, { dtpye: 'float64' } as gx.SoftmaxOptions), fn: 'gx.softmax', key: 'dtpye', suggest: 'dtype' },
  logSoftmax: { call: () => gx.logSoftmax(x(), 1, { outs: x() } as gx.SoftmaxOptions), fn: 'gx.logSoftmax', key: 'outs', suggest: 'out' },
  cumsum: { call: () => gx.cumsum(x(), 1, { dtpye: 'float64' } as gx.CumsumOptions), fn: 'gx.cumsum', key: 'dtpye', suggest: 'dtype' },
  load: { call: () => gx.load({ name: 'n', sources: ['a.cu'], extra_cuda_cflags: ['-O3'] } as gx.LoadOptions), fn: 'gx.load', key: 'extra_cuda_cflags', suggest: 'nvccFlags' },
  loadInline: { call: () => gx.loadInline({ name: 'n', cuda_sources: 'int a;' } as gx.LoadInlineOptions), fn: 'gx.loadInline', key: 'cuda_sources', suggest: 'cuda' },
  Stream: { call: () => new gx.Stream({ prority: -1 } as gx.StreamOptions), fn: 'gx.Stream', key: 'prority', suggest: 'priority' },
  Event: { call: () => new gx.Event({ timming: true } as gx.EventOptions), fn: 'gx.Event', key: 'timming', suggest: 'timing' },
  'cuda.graph': { call: () => gx.cuda.graph(() => undefined, { devcie: 'cuda' } as gx.cuda.GraphOptions), fn: 'gx.cuda.graph', key: 'devcie', suggest: 'device' },
  'cuda.graphStep': { call: () => gx.cuda.graphStep(() => undefined, { warmpu: 1 } as gx.cuda.GraphStepOptions), fn: 'gx.cuda.graphStep', key: 'warmpu', suggest: 'warmup' },
  benchmark: { call: () => gx.benchmark(() => 0, { nRepeats: 3 } as gx.BenchmarkOptions), fn: 'gx.benchmark', key: 'nRepeats', suggest: 'nRepeat' },
  RawModule: { call: () => new gx.RawModule(KERNEL, { name_expressions: ['k'] } as gx.RawModuleOptions), fn: 'gx.RawModule', key: 'name_expressions', suggest: 'nameExpressions' },
  RawKernel: { call: () => new gx.RawKernel(KERNEL, 'k', { param: ['float*', 'int'] } as gx.RawKernelOptions), fn: 'gx.RawKernel', key: 'param', suggest: 'params' },
  'RawModule#getFunction': {
    call: () => new gx.RawModule(KERNEL).getFunction('k', { parms: [] } as { params?: string[] }), fn: 'RawModule.getFunction', key: 'parms', suggest: 'params',
  },
  'RawKernel#launch': {
    call: () => new gx.RawKernel(KERNEL, 'k').launch(1, 1, [x(), 6], { sharedMemory: 0 } as gx.LaunchOptions), fn: "gx.RawKernel 'k'", key: 'sharedMemory', suggest: 'sharedMem',
  },
  elementwiseKernel: {
    call: () => gx.elementwiseKernel('T x', 'T y', 'y = x', { preambel: '' } as gx.ElementwiseOptions), fn: 'gx.elementwiseKernel', key: 'preambel', suggest: 'preamble',
  },
  'elementwiseKernel()': {
    call: () => gx.elementwiseKernel('T x', 'T y', 'y = x', { name: 'ew' })(x(), { sizee: 6 } as gx.ElementwiseCallOptions), fn: "gx.elementwiseKernel 'ew'", key: 'sizee', suggest: 'size',
  },
  vectorize: {
    call: () => gx.vectorize(['float32(float32)'], (v) => v * 2, { nmae: 'twice' } as gx.VectorizeOptions), fn: 'gx.vectorize', key: 'nmae', suggest: 'name',
  },
  'jit.rawkernel': {
    call: () => gx.jit.rawkernel((a: gx.jit.Array) => { a[0] = 1; }, { debg: true } as gx.jit.RawkernelOptions), fn: 'gx.jit.rawkernel', key: 'debg', suggest: 'debug',
  },
  'distributed.initProcessGroup': {
    call: () => { void gx.distributed.initProcessGroup({ worldsize: 2 } as gx.distributed.InitOptions); }, fn: 'gx.distributed.initProcessGroup', key: 'worldsize', suggest: 'worldSize',
  },
  'autograd.gradcheck': {
    call: () => gx.autograd.gradcheck((v) => v, [gx.ones([1]).requiresGrad_()], { rtoll: 1 } as gx.autograd.GradcheckOptions), fn: 'gx.autograd.gradcheck', key: 'rtoll', suggest: 'rtol',
  },
  'Tensor#backward': {
    call: () => { const w = gx.ones([1]).requiresGrad_(); gx.mul(w, 2).backward(null, { retain_graph: true } as gx.BackwardOptions); }, fn: 'Tensor.backward', key: 'retain_graph', suggest: 'retainGraph',
  },
  'distributed.initDeviceGroup': {
    call: () => gx.distributed.initDeviceGroup(['cuda:0'], { timeout: 1 } as gx.distributed.DeviceGroupOptions), fn: 'gx.distributed.initDeviceGroup', key: 'timeout', suggest: 'timeoutMs',
  },
  chunked: {
    call: () => gx.chunked(x(), { chunk: [2] } as unknown as gx.ChunkOptions), fn: 'gx.chunked', key: 'chunk', suggest: 'chunks',
  },
  mapBlocks: {
    call: () => gx.mapBlocks((b: gx.Tensor) => b, gx.chunked(x(), { chunks: 3 }), { dtpye: 'float32' } as gx.MapBlocksOptions), fn: 'gx.mapBlocks', key: 'dtpye', suggest: 'dtype',
  },
  'ChunkedTensor#rechunk': {
    call: () => gx.chunked(x(), { chunks: 3 }).rechunk(2, { device: ['cpu'] } as { devices?: gx.DeviceLike[] }), fn: 'ChunkedTensor.rechunk', key: 'device', suggest: 'devices',
  },
  'ChunkedTensor#svd': {
    call: () => gx.chunked(x(), { chunks: [1, 3] }).svd({ factr: 'svd' } as gx.ChunkedSvdOptions), fn: 'ChunkedTensor.svd', key: 'factr', suggest: 'factor',
  },
  'ChunkedTensor#svdAsync': {
    call: () => gx.chunked(x(), { chunks: [1, 3] }).svdAsync({ factr: 'svd' } as gx.ChunkedSvdOptions), fn: 'ChunkedTensor.svdAsync', key: 'factr', suggest: 'factor',
  },
  fuse: {
    call: () => gx.fuse((a: gx.Tensor) => gx.sin(a), { nam: 'f' } as gx.FuseOptions), fn: 'gx.fuse', key: 'nam', suggest: 'name',
  },
  'vectorize()': {
    call: () => gx.vectorize(['float32(float32)'], (v) => v * 2)(x(), { outt: x() } as gx.VectorizeCallOptions), fn: 'gx.vectorize(vectorized)', key: 'outt', suggest: 'out',
  },
  reductionKernel: {
    call: () => gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { reduce_type: 'float' } as gx.ReductionOptions), fn: 'gx.reductionKernel', key: 'reduce_type', suggest: 'reduceType',
  },
  'reductionKernel()': {
    call: () => gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'red' })(x(), { dim: 0 } as gx.ReduceCallOptions), fn: "gx.reductionKernel 'red'", key: 'dim', suggest: 'axis',
  },
  'extensionRuntime.options': { call: () => gx.extensionRuntime.options({ larges: true }, 'topk', ['largest']), fn: 'topk', key: 'larges', suggest: 'largest' },
  // Nothing is written or read: the options are checked first.
  save: { call: () => gx.save('never-written.npz', x(), { compresed: true } as gx.SaveOptions), fn: 'gx.save', key: 'compresed', suggest: 'compressed' },
  loadTensors: { call: () => gx.loadTensors('never-read.safetensors', { devcie: 'cpu' } as gx.LoadTensorsOptions), fn: 'gx.loadTensors', key: 'devcie', suggest: 'device' },
  loadTensor: { call: () => gx.loadTensor('never-read.npy', { fromat: 'npy' } as gx.LoadTensorsOptions), fn: 'gx.loadTensor', key: 'fromat', suggest: 'format' },
  inspectTensors: { call: () => gx.inspectTensors('never-read.npz', { formats: 'npz' } as gx.InspectTensorsOptions), fn: 'gx.inspectTensors', key: 'formats', suggest: 'format' },
  eye: { call: () => gx.eye(2, { dtpye: 'float64' } as gx.TensorOptions), fn: 'gx.eye', key: 'dtpye', suggest: 'dtype' },
  emptyLike: { call: () => gx.emptyLike(x(), { devcie: 'cpu' } as gx.TensorOptions), fn: 'gx.emptyLike', key: 'devcie', suggest: 'device' },
  zerosLike: { call: () => gx.zerosLike(x(), { dtpye: 'int32' } as gx.TensorOptions), fn: 'gx.zerosLike', key: 'dtpye', suggest: 'dtype' },
  onesLike: { call: () => gx.onesLike(x(), { type: 'int32' } as gx.TensorOptions), fn: 'gx.onesLike', key: 'type', suggest: 'dtype' },
  fullLike: { call: () => gx.fullLike(x(), 1, { devices: 'cpu' } as gx.TensorOptions), fn: 'gx.fullLike', key: 'devices', suggest: 'device' },
  randLike: { call: () => gx.randLike(x(), { generater: new gx.Generator() } as gx.RandomOptions), fn: 'gx.randLike', key: 'generater', suggest: 'generator' },
  randnLike: { call: () => gx.randnLike(x(), { sd: 2 } as gx.RandnOptions), fn: 'gx.randnLike', key: 'sd', suggest: 'std' },
  pad: { call: () => gx.pad(x(), [1, 1], { mdoe: 'reflect' } as gx.PadOptions), fn: 'gx.pad', key: 'mdoe', suggest: 'mode' },
  meshgrid: { call: () => gx.meshgrid(gx.ones([2]), { indexng: 'xy' } as gx.MeshgridOptions), fn: 'gx.meshgrid', key: 'indexng', suggest: 'indexing' },
  any: { call: () => gx.any(x(), { axis: 1, keepdim: true } as gx.TestReduceOptions), fn: 'gx.any', key: 'keepdim', suggest: 'keepdims' },
  all: { call: () => gx.all(x(), 0, { keep_dims: true } as gx.TestReduceOptions), fn: 'gx.all', key: 'keep_dims', suggest: 'keepdims' },
  'Tensor#any': { call: () => x().any({ dims: 1 } as gx.TestReduceOptions), fn: 'Tensor.any', key: 'dims', suggest: 'axis' },
  'Tensor#all': { call: () => x().all(1, { keepDims: true } as gx.TestReduceOptions), fn: 'Tensor.all', key: 'keepDims', suggest: 'keepdims' },
  isclose: { call: () => gx.isclose(x(), x(), { equal_nan: true } as gx.IsCloseOptions), fn: 'gx.isclose', key: 'equal_nan', suggest: 'equalNan' },
  allclose: { call: () => gx.allclose(x(), x(), { rtoll: 1 } as gx.IsCloseOptions), fn: 'gx.allclose', key: 'rtoll', suggest: 'rtol' },
  diagonal: { call: () => gx.diagonal(x(), { dim1: 0 } as gx.DiagonalOptions), fn: 'gx.diagonal', key: 'dim1', suggest: 'axis1' },
  'Tensor#diagonal': { call: () => x().diagonal({ offset: 1, dim2: 0 } as gx.DiagonalOptions), fn: 'gx.diagonal', key: 'dim2', suggest: 'axis2' },
  'linalg.vectorNorm': { call: () => gx.linalg.vectorNorm(x(), { p: 1 } as gx.VectorNormOptions), fn: 'gx.linalg.vectorNorm', key: 'p', suggest: 'ord' },
  'linalg.matrixNorm': {
    call: () => gx.linalg.matrixNorm(x(), 'nuc', [0, 1], { keepdim: true } as gx.NormOptions), fn: 'gx.linalg.matrixNorm', key: 'keepdim', suggest: 'keepdims',
  },
  'linalg.norm': { call: () => gx.linalg.norm(x(), { ord: 2, dim: 1 } as gx.LinalgNormOptions), fn: 'gx.linalg.norm', key: 'dim', suggest: 'axis' },
  'Tensor#norm': { call: () => x().norm(2, 1, { dtpye: 'float64' } as gx.NormOptions), fn: 'Tensor.norm', key: 'dtpye', suggest: 'dtype' },
  'Tensor#matmul': { call: () => x().matmul(x().T, { allow_tf32: true } as gx.MatmulOptions), fn: 'gx.matmul', key: 'allow_tf32', suggest: 'allowTf32' },
  'Tensor#to': { call: () => x().to('cpu', { non_blocking: true } as gx.ToOptions), fn: 'Tensor.to', key: 'non_blocking', suggest: 'nonBlocking' },
  'Tensor#copy_': { call: () => x().copy_(x(), { non_blocking: true } as { nonBlocking?: boolean }), fn: 'Tensor.copy_', key: 'non_blocking', suggest: 'nonBlocking' },
  'Tensor#softmax': { call: () => x().softmax(1, { dtpye: 'float64' } as gx.SoftmaxOptions), fn: 'Tensor.softmax', key: 'dtpye', suggest: 'dtype' },
  'Tensor#logSoftmax': { call: () => x().logSoftmax(1, { outt: x() } as gx.SoftmaxOptions), fn: 'Tensor.logSoftmax', key: 'outt', suggest: 'out' },
  'Tensor#cumsum': { call: () => x().cumsum(1, { dtpye: 'float64' } as gx.CumsumOptions), fn: 'Tensor.cumsum', key: 'dtpye', suggest: 'dtype' },
  'Tensor#where': { call: () => x().where(gx.ones([2, 3], { dtype: 'bool' }), x(), { outt: x() } as gx.OutOptions), fn: 'Tensor.where', key: 'outt', suggest: 'out' },
  'Tensor#clamp': { call: () => x().clamp(0, 1, { outt: x() } as gx.OutOptions), fn: 'Tensor.clamp', key: 'outt', suggest: 'out' },
  'Tensor#clamp_': { call: () => x().clamp_({ mni: 0 } as gx.ClampOptions), fn: 'Tensor.clamp_', key: 'mni', suggest: 'min' },
  'Tensor#toNested': { call: () => x().toNested({ bigInt: true } as gx.ToNestedOptions), fn: 'Tensor.toNested', key: 'bigInt', suggest: 'bigint' },
  scatterReduce: {
    call: () => gx.scatterReduce(x(), 0, gx.zeros([1, 3], { dtype: 'int64' }), x(), 'sum', { include_self: false } as gx.ScatterReduceOptions),
    fn: 'gx.scatterReduce', key: 'include_self', suggest: 'includeSelf',
  },
  'Tensor#scatterReduce': {
    call: () => x().scatterReduce(0, gx.zeros([1, 3], { dtype: 'int64' }), x(), 'sum', { includeself: false } as gx.ScatterReduceOptions),
    fn: 'gx.scatterReduce', key: 'includeself', suggest: 'includeSelf',
  },
  'Tensor#scatterReduce_': {
    call: () => x().scatterReduce_(0, gx.zeros([1, 3], { dtype: 'int64' }), x(), 'sum', { includeSelff: true } as gx.ScatterReduceOptions),
    fn: 'Tensor.scatterReduce_', key: 'includeSelff', suggest: 'includeSelf',
  },
  indexAdd: { call: () => gx.indexAdd(x(), 0, gx.zeros([2], { dtype: 'int64' }), x(), { alhpa: 2 } as gx.IndexAddOptions), fn: 'gx.indexAdd', key: 'alhpa', suggest: 'alpha' },
  'Tensor#indexAdd': { call: () => x().indexAdd(0, gx.zeros([2], { dtype: 'int64' }), x(), { Alpha: 2 } as gx.IndexAddOptions), fn: 'gx.indexAdd', key: 'Alpha', suggest: 'alpha' },
  'Tensor#indexAdd_': { call: () => x().indexAdd_(0, gx.zeros([2], { dtype: 'int64' }), x(), { alpah: 2 } as gx.IndexAddOptions), fn: 'Tensor.indexAdd_', key: 'alpah', suggest: 'alpha' },
  nonzero: { call: () => gx.nonzero(x(), { as_tuple: true } as gx.NonzeroOptions), fn: 'gx.nonzero', key: 'as_tuple', suggest: 'asTuple' },
  'Tensor#nonzero': { call: () => x().nonzero({ astuple: true } as gx.NonzeroOptions), fn: 'gx.nonzero', key: 'astuple', suggest: 'asTuple' },
  bincount: { call: () => gx.bincount(gx.zeros([2], { dtype: 'int64' }), { min_length: 3 } as gx.BincountOptions), fn: 'gx.bincount', key: 'min_length', suggest: 'minlength' },
  'Tensor#bincount': { call: () => gx.zeros([2], { dtype: 'int64' }).bincount({ weight: x() } as gx.BincountOptions), fn: 'Tensor.bincount', key: 'weight', suggest: 'weights' },
  histc: { call: () => gx.histc(x(), { bin: 3 } as gx.HistcOptions), fn: 'gx.histc', key: 'bin', suggest: 'bins' },
  'Tensor#histc': { call: () => x().histc({ bins: 3, mn: 0 } as gx.HistcOptions), fn: 'Tensor.histc', key: 'mn', suggest: 'min' },
  indexPut_: { call: () => gx.indexPut_(x(), [0], 1, { accumlate: true } as gx.IndexPutOptions), fn: 'gx.indexPut_', key: 'accumlate', suggest: 'accumulate' },
  'Tensor#indexPut_': { call: () => x().indexPut_([0], 1, { acumulate: true } as gx.IndexPutOptions), fn: 'Tensor.indexPut_', key: 'acumulate', suggest: 'accumulate' },
  'optim.SGD': { call: () => new gx.optim.SGD([w()], { lr: 0.1, momentun: 0.9 } as gx.optim.SGDOptions), fn: 'gx.optim.SGD', key: 'momentun', suggest: 'momentum' },
  'optim.Adam': { call: () => new gx.optim.Adam([w()], { weight_decay: 0.1 } as gx.optim.AdamOptions), fn: 'gx.optim.Adam', key: 'weight_decay', suggest: 'weightDecay' },
  'optim.AdamW': { call: () => new gx.optim.AdamW([w()], { beta: [0.9, 0.99] } as gx.optim.AdamWOptions), fn: 'gx.optim.AdamW', key: 'beta', suggest: 'betas' },
  'optim.LBFGS': {
    call: () => new gx.optim.LBFGS([w()], { line_search_fn: 'strong_wolfe' } as gx.optim.LBFGSOptions), fn: 'gx.optim.LBFGS', key: 'line_search_fn', suggest: 'lineSearchFn',
  },
};
for (const name of BINARY) {
  TAKES_OPTIONS[name] = { call: () => gxFn(name)(x(), x(), { outt: x() }), fn: `gx.${name}`, key: 'outt', suggest: 'out' };
  TAKES_OPTIONS[`Tensor#${name}`] = { call: () => method(x(), name)(x(), { Out: x() }), fn: `Tensor.${name}`, key: 'Out', suggest: 'out' };
}
// The reductions of lib/ops/statistics-*.ts and diff: gx.f(x, axis, opts) and x.f(axis, opts).
const AXIS_CALLS: Record<string, [unknown[], string, string]> = {
  nansum: [[1], 'keepdim', 'keepdims'], nanmean: [[1], 'keepdmis', 'keepdims'], countNonzero: [[1], 'keepdimss', 'keepdims'],
  amax: [[1], 'keepdim', 'keepdims'], amin: [[1], 'keepdim', 'keepdims'], aminmax: [[1], 'keepdim', 'keepdims'],
  median: [[1], 'keepdim', 'keepdims'], cumprod: [[1], 'dtpye', 'dtype'], cummax: [[], 'axsi', 'axis'],
  cummin: [[], 'axsi', 'axis'], quantile: [[0.5, 1], 'interpolaton', 'interpolation'], diff: [[1, 0], 'apend', 'append'],
  mode: [[1], 'keepdim', 'keepdims'], nanmedian: [[1], 'keepdim', 'keepdims'], nanquantile: [[0.5, 1], 'interpolaton', 'interpolation'],
};
for (const [name, [args, key, suggest]] of Object.entries(AXIS_CALLS)) {
  TAKES_OPTIONS[name] = { call: () => gxFn(name)(x(), ...args, { [key]: true }), fn: `gx.${name}`, key, suggest };
  TAKES_OPTIONS[`Tensor#${name}`] = { call: () => method(x(), name)(...args, { [key]: true }), fn: `Tensor.${name}`, key, suggest };
}
for (const name of UNARY) {
  TAKES_OPTIONS[name] = { call: () => gxFn(name)(x(), { outt: x() }), fn: `gx.${name}`, key: 'outt', suggest: 'out' };
  TAKES_OPTIONS[`Tensor#${name}`] = { call: () => method(x(), name)({ output: x() }), fn: `Tensor.${name}`, key: 'output', suggest: 'out' };
}
// Number parameters in the options object (NOTE [ Parameters of elementwise ops ]): misspelt, the known key is suggested.
TAKES_OPTIONS.nanToNum = { call: () => gx.nanToNum(x(), { posinff: 1 } as { posinf?: number }), fn: 'gx.nanToNum', key: 'posinff', suggest: 'posinf' };
TAKES_OPTIONS.lerp = { call: () => gx.lerp(x(), x(), 0.5, { outt: x() } as gx.OutOptions), fn: 'gx.lerp', key: 'outt', suggest: 'out' };
TAKES_OPTIONS['Tensor#lerp'] = { call: () => x().lerp(x(), x(), { Out: x() } as gx.OutOptions), fn: 'Tensor.lerp', key: 'Out', suggest: 'out' };
for (const name of REDUCE) {
  // torch's dims (and keepdim) mean axis (and keepdims); dim itself is the deprecated spelling of axis (test/axis.test.ts).
  TAKES_OPTIONS[name] = { call: () => gxFn(name)(x(), { dims: 1 }), fn: `gx.${name}`, key: 'dims', suggest: 'axis' };
  TAKES_OPTIONS[`Tensor#${name}`] = { call: () => method(x(), name)({ axis: 1, keepdim: true }), fn: `Tensor.${name}`, key: 'keepdim', suggest: 'keepdims' };
}
for (const name of STATS) {
  TAKES_OPTIONS[name] = { call: () => gxFn(name)(x(), { axes: [0, 1] }), fn: `gx.${name}`, key: 'axes', suggest: 'axis' };
  TAKES_OPTIONS[`Tensor#${name}`] = { call: () => method(x(), name)({ keep_dims: true }), fn: `Tensor.${name}`, key: 'keep_dims', suggest: 'keepdims' };
}
// The layout ops whose one argument is the axis take it as { axis } too.
TAKES_OPTIONS.squeeze = { call: () => gx.squeeze(x(), { axsi: 0 } as gx.AxisOptions), fn: 'gx.squeeze', key: 'axsi', suggest: 'axis' };
TAKES_OPTIONS['Tensor#squeeze'] = { call: () => x().squeeze({ axes: 0 } as gx.AxisOptions), fn: 'gx.squeeze', key: 'axes', suggest: 'axis' };
TAKES_OPTIONS.unsqueeze = { call: () => gx.unsqueeze(x(), { axis: 0, dims: 1 } as gx.AxisOptions & { axis: number }), fn: 'gx.unsqueeze', key: 'dims', suggest: 'axis' };
TAKES_OPTIONS['Tensor#unsqueeze'] = { call: () => x().unsqueeze({ Axis: 0 } as unknown as { axis: number }), fn: 'gx.unsqueeze', key: 'Axis', suggest: 'axis' };
TAKES_OPTIONS.cat = { call: () => gx.cat([x(), x()], { axsi: 1 } as gx.AxisOptions), fn: 'gx.cat', key: 'axsi', suggest: 'axis' };
TAKES_OPTIONS.stack = { call: () => gx.stack([x(), x()], { acis: 0 } as gx.AxisOptions), fn: 'gx.stack', key: 'acis', suggest: 'axis' };
TAKES_OPTIONS['Tensor#var'] = { call: () => x().var({ ddof: 0 } as gx.VarOptions), fn: 'Tensor.var', key: 'ddof', suggest: 'correction' };
// The ordering ops: torch's keyword spellings are the usual misses.
TAKES_OPTIONS.sort = { call: () => gx.sort(x(), 1, { descnding: true } as gx.SortOptions), fn: 'gx.sort', key: 'descnding', suggest: 'descending' };
TAKES_OPTIONS['Tensor#sort'] = { call: () => x().sort({ stabel: true } as gx.SortOptions), fn: 'Tensor.sort', key: 'stabel', suggest: 'stable' };
TAKES_OPTIONS.argsort = { call: () => gx.argsort(x(), { axes: 0 } as gx.ArgsortOptions), fn: 'gx.argsort', key: 'axes', suggest: 'axis' };
TAKES_OPTIONS['Tensor#argsort'] = { call: () => x().argsort(0, { descendng: true } as gx.ArgsortOptions), fn: 'Tensor.argsort', key: 'descendng', suggest: 'descending' };
TAKES_OPTIONS.topk = { call: () => gx.topk(x(), 1, { larges: false } as gx.TopkOptions), fn: 'gx.topk', key: 'larges', suggest: 'largest' };
TAKES_OPTIONS['Tensor#topk'] = { call: () => x().topk(1, 0, { sortd: true } as gx.TopkOptions), fn: 'Tensor.topk', key: 'sortd', suggest: 'sorted' };
TAKES_OPTIONS.kthvalue = { call: () => gx.kthvalue(x(), 1, { keepdim: true } as gx.KthvalueOptions), fn: 'gx.kthvalue', key: 'keepdim', suggest: 'keepdims' };
TAKES_OPTIONS['Tensor#kthvalue'] = { call: () => x().kthvalue(1, { keep_dims: true } as gx.KthvalueOptions), fn: 'Tensor.kthvalue', key: 'keep_dims', suggest: 'keepdims' };
TAKES_OPTIONS.unique = { call: () => gx.unique(x(), { return_inverse: true } as gx.UniqueOptions), fn: 'gx.unique', key: 'return_inverse', suggest: 'returnInverse' };
TAKES_OPTIONS['Tensor#unique'] = { call: () => x().unique({ returnCount: true } as gx.UniqueOptions), fn: 'Tensor.unique', key: 'returnCount', suggest: 'returnCounts' };
TAKES_OPTIONS['profiler.start'] = { call: () => gx.profiler.start({ activity: ['cpu'] } as gx.profiler.ProfilerOptions), fn: 'gx.profiler.start', key: 'activity', suggest: 'activities' };
TAKES_OPTIONS['profiler.profile'] = { call: () => gx.profiler.profile(() => 0, { record_shapes: true } as gx.profiler.ProfilerOptions), fn: 'gx.profiler.profile', key: 'record_shapes', suggest: 'recordShapes' };
TAKES_OPTIONS.searchsorted = { call: () => gx.searchsorted(gx.ones([3]), x(), { out_int32: true } as gx.SearchsortedOptions), fn: 'gx.searchsorted', key: 'out_int32', suggest: 'outInt32' };

TAKES_OPTIONS['nn.Linear'] = { call: () => new gx.nn.Linear(2, 3, { bais: false } as gx.nn.LinearOptions), fn: 'gx.nn.Linear', key: 'bais', suggest: 'bias' };
TAKES_OPTIONS['nn.Embedding'] = { call: () => new gx.nn.Embedding(4, 3, { padding_idx: 0 } as gx.nn.EmbeddingLayerOptions), fn: 'gx.nn.Embedding', key: 'padding_idx', suggest: 'paddingIdx' };
TAKES_OPTIONS['nn.LayerNorm'] = { call: () => new gx.nn.LayerNorm(4, { elementwise_affine: false } as gx.nn.LayerNormOptions), fn: 'gx.nn.LayerNorm', key: 'elementwise_affine', suggest: 'elementwiseAffine' };
TAKES_OPTIONS['nn.RMSNorm'] = { call: () => new gx.nn.RMSNorm(4, { elementwise_affine: false } as gx.nn.RMSNormOptions), fn: 'gx.nn.RMSNorm', key: 'elementwise_affine', suggest: 'elementwiseAffine' };
TAKES_OPTIONS['nn.Bilinear'] = { call: () => new gx.nn.Bilinear(2, 3, 4, { bais: false } as gx.nn.BilinearOptions), fn: 'gx.nn.Bilinear', key: 'bais', suggest: 'bias' };
TAKES_OPTIONS['nn.MultiheadAttention'] = {
  call: () => new gx.nn.MultiheadAttention(4, 2, { batch_first: true } as gx.nn.MultiheadAttentionOptions), fn: 'gx.nn.MultiheadAttention', key: 'batch_first', suggest: 'batchFirst',
};
TAKES_OPTIONS['nn.MSELoss'] = { call: () => new gx.nn.MSELoss({ reductoin: 'sum' } as gx.nn.LossOptions), fn: 'gx.nn.MSELoss', key: 'reductoin', suggest: 'reduction' };
TAKES_OPTIONS['nn.L1Loss'] = { call: () => new gx.nn.L1Loss({ reducton: 'sum' } as gx.nn.LossOptions), fn: 'gx.nn.L1Loss', key: 'reducton', suggest: 'reduction' };
TAKES_OPTIONS['nn.SmoothL1Loss'] = { call: () => new gx.nn.SmoothL1Loss({ bta: 0.5 } as gx.nn.SmoothL1Options), fn: 'gx.nn.SmoothL1Loss', key: 'bta', suggest: 'beta' };
TAKES_OPTIONS['nn.HuberLoss'] = { call: () => new gx.nn.HuberLoss({ delt: 0.5 } as gx.nn.HuberOptions), fn: 'gx.nn.HuberLoss', key: 'delt', suggest: 'delta' };
TAKES_OPTIONS['nn.NLLLoss'] = { call: () => new gx.nn.NLLLoss({ ignore_index: 0 } as gx.nn.NllOptions), fn: 'gx.nn.NLLLoss', key: 'ignore_index', suggest: 'ignoreIndex' };
TAKES_OPTIONS['nn.CrossEntropyLoss'] = { call: () => new gx.nn.CrossEntropyLoss({ label_smoothing: 0.1 } as gx.nn.CrossEntropyOptions), fn: 'gx.nn.CrossEntropyLoss', key: 'label_smoothing', suggest: 'labelSmoothing' };
TAKES_OPTIONS['nn.BCELoss'] = { call: () => new gx.nn.BCELoss({ weigth: null } as gx.nn.BceOptions), fn: 'gx.nn.BCELoss', key: 'weigth', suggest: 'weight' };
TAKES_OPTIONS['nn.BCEWithLogitsLoss'] = { call: () => new gx.nn.BCEWithLogitsLoss({ pos_weight: null } as gx.nn.BceWithLogitsOptions), fn: 'gx.nn.BCEWithLogitsLoss', key: 'pos_weight', suggest: 'posWeight' };
TAKES_OPTIONS['nn.Conv1d'] = { call: () => new gx.nn.Conv1d(2, 2, 3, { padding_mode: 'zeros' } as gx.nn.ConvLayerOptions), fn: 'gx.nn.Conv1d', key: 'padding_mode', suggest: 'paddingMode' };
TAKES_OPTIONS['nn.Conv2d'] = { call: () => new gx.nn.Conv2d(2, 2, 3, { strides: 2 } as gx.nn.ConvLayerOptions), fn: 'gx.nn.Conv2d', key: 'strides', suggest: 'stride' };
TAKES_OPTIONS['nn.MaxPool1d'] = { call: () => new gx.nn.MaxPool1d(2, { ceil_mode: true } as gx.nn.MaxPoolLayerOptions), fn: 'gx.nn.MaxPool1d', key: 'ceil_mode', suggest: 'ceilMode' };
TAKES_OPTIONS['nn.MaxPool2d'] = { call: () => new gx.nn.MaxPool2d(2, { dilaton: 1 } as gx.nn.MaxPoolLayerOptions), fn: 'gx.nn.MaxPool2d', key: 'dilaton', suggest: 'dilation' };
TAKES_OPTIONS['nn.AvgPool1d'] = { call: () => new gx.nn.AvgPool1d(2, { paddng: 1 } as gx.nn.AvgPoolOptions), fn: 'gx.nn.AvgPool1d', key: 'paddng', suggest: 'padding' };
TAKES_OPTIONS['nn.AvgPool2d'] = { call: () => new gx.nn.AvgPool2d(2, { count_include_pad: false } as gx.nn.AvgPoolOptions), fn: 'gx.nn.AvgPool2d', key: 'count_include_pad', suggest: 'countIncludePad' };
TAKES_OPTIONS['linalg.pinv'] = { call: () => gx.linalg.pinv(x(), { rtl: 1e-6 } as gx.linalg.RankToleranceOptions), fn: 'gx.linalg.pinv', key: 'rtl', suggest: 'rtol' };
TAKES_OPTIONS['linalg.matrixRank'] = { call: () => gx.linalg.matrixRank(x(), { tol: 1e-6 } as gx.linalg.RankToleranceOptions), fn: 'gx.linalg.matrixRank', key: 'tol', suggest: 'atol' };
TAKES_OPTIONS['linalg.lstsq'] = { call: () => gx.linalg.lstsq(x(), x(), { rcnd: 1e-6 } as gx.linalg.LstsqOptions), fn: 'gx.linalg.lstsq', key: 'rcnd', suggest: 'rcond' };
TAKES_OPTIONS['linalg.eigvalsh'] = { call: () => gx.linalg.eigvalsh(x(), { uplo: 'U' } as gx.EighOptions), fn: 'gx.linalg.eigvalsh', key: 'uplo', suggest: 'UPLO' };
TAKES_OPTIONS.randperm = { call: () => gx.randperm(4, { dtpye: 'int32' } as gx.RandpermOptions), fn: 'gx.randperm', key: 'dtpye', suggest: 'dtype' };
TAKES_OPTIONS.bernoulli = { call: () => gx.bernoulli(gx.full([2], 0.5), null, { generater: new gx.Generator() } as gx.SamplingOptions), fn: 'gx.bernoulli', key: 'generater', suggest: 'generator' };
TAKES_OPTIONS.normal = { call: () => gx.normal(0, 1, [2], { devcie: 'cpu' } as gx.SamplingOptions), fn: 'gx.normal', key: 'devcie', suggest: 'device' };
TAKES_OPTIONS.multinomial = { call: () => gx.multinomial(gx.ones([3]), 2, { replacment: true } as gx.MultinomialOptions), fn: 'gx.multinomial', key: 'replacment', suggest: 'replacement' };
TAKES_OPTIONS.dropout = { call: () => gx.dropout(x(), 0.5, { trainig: false } as gx.DropoutOpOptions), fn: 'gx.dropout', key: 'trainig', suggest: 'training' };

/** Exports (and methods) that take no options object. */
const NO_OPTIONS = new Set([
  'Tensor', 'Device', 'Generator', 'CUDAGraph', 'CompileError', 'JitError', 'BuildError', 'ConfigError', 'ToolchainError', 'loadLibrary', 'camelCase', 'withStream', 'tidy', 'manualSeed', 'backends',
  'isnan', 'isinf', 'isfinite', 'equal', 'split', 'chunk', 'unbind', 'flip', 'roll', 'repeat', 'tile', 'repeatInterleave',
  'transpose', 'permute', 'movedim', 'expand', 'broadcastTo', 'flatten', 'slice', 'narrow', 'sliceDims',
  'gather', 'indexSelect', 'take', 'scatter', 'scatterAdd', 'maskedFill', 'maskedSelect', 'sl',
  'astype', 'resultType', 'promoteTypes', 'canCast', 'setFloat32MatmulPrecision', 'getFloat32MatmulPrecision',
  'linalg.solve', 'linalg.inv', 'linalg.det', 'linalg.slogdet', 'linalg.cross', 'mm', 'bmm', 'tensordot', 'kron',
  'dot', 'vdot', 'outer', 'cross', 'trace', 'diag', 'triu', 'tril', 'einsum', 'msort',
  'profiler.stop', 'profiler.isActive', 'profiler.range', 'profiler.Profile',
  'memory.stats', 'memory.emptyCache', 'memory.setLimit', 'noGrad', 'enableGrad', 'isGradEnabled', 'Tensor#requiresGrad_', 'Tensor#detach', 'Tensor#retainGrad', 'Tensor#registerHook',
  'optim.Optimizer',
  ...['Module', 'Dropout', 'ReLU', 'GELU', 'Sigmoid', 'Tanh', 'Softmax', 'LogSoftmax', 'Sequential', 'ModuleList',
    'SiLU', 'Mish', 'SELU', 'Hardsigmoid', 'LogSigmoid', 'LeakyReLU', 'ELU', 'Hardtanh', 'Flatten'].map((c) => `nn.${c}`),
  ...['ProcessGroup', 'Work', 'placementFromEnv', 'isInitialized', 'rank', 'worldSize', 'allReduce', 'reduce', 'broadcast', 'allGather',
    'reduceScatter', 'send', 'recv', 'barrier', 'destroyProcessGroup', 'defaultGroup', 'DeviceGroup', 'ncclVersion'].map((f) => `distributed.${f}`),
  ...['block', 'blockAt', 'copyOn', 'copyAt', 'owner', 'home', 'compute', 'gather', 'sum', 'max', 'min', 'amax', 'amin', 'reduceAll', 'dispose', 'toString'].map((m) => `ChunkedTensor#${m}`), 'ChunkedTensor',
  'jit.device', 'jit.grid', 'jit.gridsize', 'jit.localArray', 'jit.sharedArray', 'jit.syncthreads', 'jit.threadfence',
  'jit.laneId', 'jit.ballot', 'jit.activemask',
  'cuda.currentStream', 'cuda.CUDAGraph', 'cuda.isAvailable', 'cuda.deviceCount', 'cuda.unavailableReason', 'cuda.isCompiled',
  'cuda.synchronize', 'cuda.getDeviceProperties', 'cuda.setDevice', 'cuda.currentDevice',
  'extensionRuntime.arity', 'extensionRuntime.load', 'extensionRuntime.call', 'extensionRuntime.tensor', 'extensionRuntime.optionalTensor',
  'extensionRuntime.tensorList', 'extensionRuntime.wrap', 'extensionRuntime.wrapOptional', 'extensionRuntime.wrapList', 'extensionRuntime.recorded', 'extensionRuntime.declared',
  'extensionRuntime.device', 'extensionRuntime.optionalDevice', 'extensionRuntime.wrapDevice',
  'extensionRuntime.callStaged', 'extensionRuntime.stageFloat', 'extensionRuntime.stageInt', 'extensionRuntime.stageBool', 'extensionRuntime.stageDType',
  'grad', 'valueAndGrad', ...['Function', 'FunctionContext', 'registerAutograd', 'grad', 'valueAndGrad', 'noGrad', 'enableGrad', 'isGradEnabled'].map((f) => `autograd.${f}`),
  'Device#equals', 'Device#toString', 'Device#toJSON',
  'Stream#synchronize', 'Stream#query', 'Stream#done', 'Stream#waitEvent', 'Stream#waitStream', 'Stream#use', 'Stream#toString',
  'Event#record', 'Event#synchronize', 'Event#query', 'Event#done', 'Event#elapsedTime',
  'CUDAGraph#replay', 'CUDAGraph#dispose', 'Generator#manualSeed', 'Generator#take',
  'RawKernel#function', 'RawKernel#attributes', 'RawKernel#setMaxDynamicSharedSize', 'RawKernel#compile', 'RawKernel#launchPrepared', 'RawKernel#launchStaged',
  'RawModule#load', 'RawModule#getGlobal', 'RawModule#setGlobal', 'RawModule#getGlobalBytes',
  ...['handle', 'address', 'knownAddress', 'info', 'alias', 'isContiguous', 'toDevice', 'recordStream', 'cpu', 'cuda', 'toArray', 'toArraySync', 'item', 'itemBigInt',
    'view', 'reshape', 'asStrided', 'contiguous', 'clone', 'fill_', 'dispose', 'toString', 'transpose', 'permute', 'movedim',
    'expand', 'broadcastTo', 'flatten', 'slice', 'narrow', 'sliceDims', 'astype', 'size',
    'gather', 'indexSelect', 'take', 'scatter', 'scatter_', 'scatterAdd', 'scatterAdd_', 'maskedFill',
    'index', 'get', 'set', 'maskedSelect', 'float', 'double', 'half', 'dim', 'zero_',
    'split', 'chunk', 'unbind', 'flip', 'roll', 'repeat', 'tile', 'repeatInterleave', 'isnan', 'isinf', 'isfinite',
    'trace', 'diag', 'triu', 'tril', 'dot', 'vdot', 'outer', 'cross',
    ...INPLACE.map((s) => `${gx.camelCase(s.name)}_`)].map((m) => `Tensor#${m}`),
]);

/** Every function reachable from `import * as gx`: exports, namespace members, and the methods of exported classes. */
function exportedFunctions(): string[] {
  const names: string[] = [];
  const isClass = (f: unknown): f is new (...a: never[]) => unknown =>
    typeof f === 'function' && /^class\b/.test(Function.prototype.toString.call(f));
  const methodsOf = (path: string, cls: { prototype: object }): void => {
    for (const m of Object.getOwnPropertyNames(cls.prototype)) {
      const d = Object.getOwnPropertyDescriptor(cls.prototype, m);
      if (m !== 'constructor' && typeof d?.value === 'function') names.push(`${path}#${m}`);
    }
  };
  for (const [key, value] of Object.entries(gx)) {
    if (typeof value === 'function') {
      names.push(key);
      if (isClass(value)) methodsOf(key, value);
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [member, v] of Object.entries(value)) if (typeof v === 'function') names.push(`${key}.${member}`);
    }
  }
  return names;
}

test('every exported function and method is in the table of options or in the list of those without', (t) => {
  const all = exportedFunctions();
  const unlisted = all.filter((n) => !(n in TAKES_OPTIONS) && !NO_OPTIONS.has(n));
  t.deepEqual(unlisted, [], 'new exports: add a case to TAKES_OPTIONS (and check its options) or list it in NO_OPTIONS');
  // `name()`: the function an export returns (a kernel to call), not an export itself.
  const stale = [...Object.keys(TAKES_OPTIONS), ...NO_OPTIONS].filter((n) => !n.endsWith('()') && !all.includes(n));
  t.deepEqual(stale, [], 'listed but not exported');
  t.log(`${Object.keys(TAKES_OPTIONS).length} functions and methods take options; ${NO_OPTIONS.size} take none`);
});

for (const [name, c] of Object.entries(TAKES_OPTIONS)) {
  test(`${name}: an unknown option is a TypeError naming ${c.fn}, '${c.key}' and '${c.suggest}'`, async (t) => {
    const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const message = new RegExp(`^${escape(c.fn)}: unknown option '${escape(c.key)}'; did you mean '${escape(c.suggest)}'\\? \\(known: `);
    let result: unknown;
    try {
      result = c.call();
    } catch (e) {
      result = Promise.reject(e);
    }
    await t.throwsAsync(Promise.resolve(result), { instanceOf: TypeError, message });
  });
}

test('the known options still work, and an options object with only known keys passes', (t) => {
  using s = gx.ones([2, 3]).sum({ axis: 1, keepdims: true });
  t.deepEqual(s.shape, [2, 1]);
  using z = gx.zeros([2], { dtype: 'float64', device: 'cpu' });
  t.is(z.dtype, 'float64');
  using m = gx.ones([2, 3]).mean(1);
  t.deepEqual(Array.from(m.toArraySync() as Float32Array), [1, 1]);
  t.notThrows(() => gx.add(gx.ones([1]), 1, {}));
  t.notThrows(() => gx.add(gx.ones([1]), 1, undefined));
});

test('an options object that is not an object says so', (t) => {
  // Wrong kinds of arguments, as plain JavaScript could pass them.
  // An axis op's second argument is its options when an object, else its axis (NOTE [ Axis forms ]).
  t.throws(() => Reflect.apply(gx.sum, undefined, [gx.ones([2]), 'axis']), { instanceOf: TypeError, message: /^gx\.sum: axis must be a number or an array of numbers, got a string/ });
  t.throws(() => Reflect.apply(gx.zeros, undefined, [[2], 'float64']), { instanceOf: TypeError, message: /^gx\.zeros: options must be an object/ });
  t.throws(() => Reflect.construct(gx.Stream, [[]]), { instanceOf: TypeError, message: /^gx\.Stream: options must be an object/ });
});

test('suggestions: typos within a third of the word, known PyTorch spellings, nothing for a stranger', (t) => {
  t.is(editDistance('dtpye', 'dtype'), 1, 'a swap is one edit');
  t.is(closestKey('devcie', ['dtype', 'device']), 'device');
  t.is(closestKey('keepdim', ['axis', 'keepdims', 'out']), 'keepdims');
  t.is(closestKey('dim', ['axis', 'keepdims', 'out']), 'axis');
  t.is(closestKey('DTYPE', ['dtype', 'device']), 'dtype', 'case');
  t.is(closestKey('color', ['dtype', 'device']), undefined);
  t.throws(() => gx.ones([2], { color: 'red' } as gx.EmptyOptions), { instanceOf: TypeError, message: "gx.ones: unknown option 'color' (known: dtype, device, pinned)" });
});

test('boolean options: undefined takes the default; null, 0, 1 and strings are refused in one wording', (t) => {
  t.is(booleanOption('f', 'flag', undefined, true), true);
  t.is(booleanOption('f', 'flag', undefined, false), false);
  t.is(booleanOption('f', 'flag', false, true), false);
  t.throws(() => booleanOption('f', 'flag', undefined), { instanceOf: TypeError, message: 'f: flag must be a boolean, got undefined' }, 'no default: undefined is refused');
  t.throws(() => booleanOption('f', 'flag', null, true), { instanceOf: TypeError, message: 'f: flag must be a boolean, got null' }, 'null is not undefined (torch refuses None for a bool)');
  t.throws(() => booleanOption('f', 'flag', 0, true), { instanceOf: TypeError, message: 'f: flag must be a boolean, got number 0' });
  t.throws(() => booleanOption('f', 'flag', 1, false), { instanceOf: TypeError, message: 'f: flag must be a boolean, got number 1' });
  t.throws(() => booleanOption('f', 'flag', 'false', true), { instanceOf: TypeError, message: 'f: flag must be a boolean, got a string ("false")' });
  // Sites that read `o.x ?? default` took null as the default; they refuse it now, as the others did.
  const a = gx.ones([2, 2]);
  t.throws(() => gx.linalg.cholesky(a, { upper: null as never }), { instanceOf: TypeError, message: 'gx.linalg.cholesky: upper must be a boolean, got null' });
  t.throws(() => gx.sort(a, { descending: null as never }), { instanceOf: TypeError, message: 'gx.sort: descending must be a boolean, got null' });
  t.throws(() => gx.linalg.svd(a, { fullMatrices: 0 as never }), { instanceOf: TypeError, message: 'gx.linalg.svd: fullMatrices must be a boolean, got number 0' }, 'was read by truthiness');
  t.is(gx.sort(a, { descending: undefined }).values.shape.length, 2, 'undefined is the default');
});
