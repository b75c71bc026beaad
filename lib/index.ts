// gpuext: GPU tensors for TypeScript. The public surface of `import * as gx from 'gpuext'`.
// First, before any export's module too, so every module after it compiles from V8's cached data of the build (NOTE
// [ Code cache ]; test/code-cache.test.ts checks that only the cache's own modules compile from source).
import './platform/code-cache';
export { Tensor, type ItemOf } from './core/tensor';
export type { ReadOptions } from './core/tensor-read';
import { registerAll } from './register';
// Tensor's methods beyond the class's own and the autograd recorders, installed once (lib/register.ts).
registerAll();
// The method families' `declare module` blocks, which give Tensor its methods' types (the
// .d.ts keeps these imports, so a user's program sees them); importing them installs nothing.
import './ops/creation/tensor-to';
import './ops/elementwise/methods';
import './ops/layout/methods';
import './ops/softmax/methods';
import './ops/layout/shape-methods';
import './ops/indexing/methods';
import './ops/layout/reshape-methods';
import './ops/sort/methods';
import './ops/linalg/methods';
import './ops/reduce/methods';
import './ops/elementwise/lerp';
import './autograd/tensor-methods';
export type { ToOptions, ToTarget } from './ops/creation/tensor-to';
export type { Nested, NestedItem, NestedBigItem, ToNestedOptions } from './ops/layout/shape-methods';
export { tensor, empty, zeros, ones, full, arange, linspace } from './ops/creation/creation';
export { logspace, type LogspaceOptions } from './ops/creation/logspace';
export { eye, emptyLike, zerosLike, onesLike, fullLike, randLike, randnLike } from './ops/creation/like';
export { save, loadTensors, loadTensor, inspectTensors, type SaveOptions, type LoadTensorsOptions, type InspectTensorsOptions, type FileFormat, type TensorFileInfo, type TensorInfo } from './io/files';
export type { TensorOptions, EmptyOptions, TensorData } from './ops/creation/creation';
export { Device, type DeviceLike, type DeviceType } from './core/device';
export { DTYPES, DTYPE_INFO } from './generated/dtypes';
export type { DType } from './core/dtype';
export type { ValueArrayMap, StorageArrayMap, DTypeInfo, DTypeKind } from './generated/dtypes';
export * as memory from './core/memory';
export * as profiler from './profiler/index';
export * as cuda from './core/cuda';
export { loadLibrary, extensionRuntime, camelCase } from './extension/runtime';
export type { ExtensionLibrary, ExtensionDescriptor, OpDescriptor, OpArgDescriptor, OpFunction } from './extension/runtime';
export { load, loadInline, type LoadOptions, type LoadInlineOptions, type LoadedOps } from './toolkit/load';
export { BuildError, ConfigError, ToolchainError, type BuildErrorInit } from './toolkit/errors';
import { packageVersion } from './platform/paths';
export type { OpsOf, OpSignature, OpName } from './extension/schema-types';
export type { OpaqueHandle } from './core/native';
export { Stream, Event, withStream, type StreamOptions, type EventOptions } from './core/stream';
export { tidy, ownedTensors, type TensorOwner } from './core/tidy';
/** The package's version (its package.json's), as torch.__version__. @example gx.version // '0.1.0' */
export const version: string = packageVersion();
export { CUDAGraph } from './core/graph';
export { benchmark, type BenchmarkOptions, type BenchmarkResult, type BenchmarkStats } from './profiler/benchmark';
export { RawKernel, RawModule, type Dim3, type KernelAttributes, type LaunchOptions, type RawModuleOptions, type RawKernelOptions } from './rtc/raw';
export { elementwiseKernel, type ElementwiseKernel, type ElementwiseOptions, type ElementwiseCallOptions } from './rtc/elementwise';
export { CompileError } from './rtc/errors';
export { reductionKernel, type ReductionKernel, type ReductionOptions, type ReduceCallOptions } from './rtc/reduction';
export { vectorize, type VectorizedFunction, type VectorizeOptions, type VectorizeCallOptions } from './jit/vectorize';
export { JitError } from './jit/errors';
export * as jit from './jit/namespace';
export { fuse, type FusedFunction, type FuseOptions } from './jit/fuse';
export * as distributed from './distributed/index';
export { chunked, ChunkedTensor, type BlockLaunch, type ChunkOptions, type ChunksSpec, type ChunkedExtremum } from './distributed/chunked';
export { mapBlocks, type BlockInfo, type MapBlocksOptions } from './distributed/map-blocks';
export type { ChunkedSvd, ChunkedSvdOptions } from './distributed/chunked-svd';
export { transpose, permute, movedim, squeeze, unsqueeze, expand, broadcastTo, flatten, slice, narrow, sliceDims, cat, stack, type DimSlice } from './ops/layout/layout';
export { split, chunk, unbind } from './ops/layout/split';
export { flip, roll } from './ops/layout/reorder';
export { repeat, tile, repeatInterleave, meshgrid, type MeshgridOptions } from './ops/layout/repeat';
export { pad, type PadMode, type PadOptions } from './ops/layout/pad';
export { lerp } from './ops/elementwise/lerp';
export { any, all, isnan, isinf, isfinite, isclose, allclose, equal, type IsCloseOptions } from './ops/elementwise/predicates';
export {
  add, sub, mul, div, pow, maximum, minimum, remainder, eq, ne, lt, le, gt, ge, logicalAnd, logicalOr, logicalXor,
  exp, log, log1p, sqrt, rsqrt, sin, cos, tanh, sigmoid, gelu, softplus, neg, abs, sign, floor, ceil, round, relu,
  fmod, floorDivide, atan2, hypot, logaddexp, copysign, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, expm1, exp2, log2,
  log10, erf, erfc, erfinv, reciprocal, frac, silu, mish, selu, hardsigmoid, logSigmoid, leakyRelu, elu, hardtanh,
  square, trunc, nanToNum,
} from './generated/elementwise';
export { where, clamp, astype } from './ops/elementwise/functions';
export { sum, prod, mean, argmax, argmin } from './ops/reduce/functions';
export { max, min } from './ops/reduce/extremum';
export type { ExtremumFn, ExtremumOptions } from './ops/reduce/extremum';
export { resultType, promoteTypes, canCast } from './ops/promotion';
export type { Operand, ScalarOperand } from './ops/promotion';
export type { OutOptions } from './ops/common';
export type { ClampOptions, DivOptions, RoundingMode } from './ops/elementwise/elementwise';
export type { ReduceOptions, ReduceDTypeOptions, ArgReduceOptions } from './ops/reduce/reduction';
export type { FloatDType, IntegerDType, FloatResult, SumResult, ReduceArg, ReduceAxis, TestReduceOptions } from './ops/types';
export type { Axes, AxisOptions } from './ops/axes';
export { manualSeed, rand, randn, randint, uniform, Generator, type RandomOptions, type RandnOptions } from './ops/random/random';
export {
  randperm, bernoulli, normal, multinomial, dropout, type SamplingOptions, type RandpermOptions, type MultinomialOptions, type DropoutOpOptions,
} from './ops/random/sampling';
export { matmul, setFloat32MatmulPrecision, getFloat32MatmulPrecision, type MatmulOptions, type MatmulPrecision, type SvdResult, type SvdOptions } from './ops/linalg/matmul';
export { backends, type Backends, type CpuBackends } from './ops/backends';
export type { QrMode, QrOptions, QrResult } from './ops/linalg/qr';
export type { CholeskyOptions, EighOptions, EighResult } from './ops/linalg/symmetric';
export type { SlogdetResult } from './ops/linalg/lu';
export * as linalg from './ops/linalg/namespace';
export { dot, vdot, outer, cross, trace, diag, diagonal, triu, tril, type DiagonalOptions } from './ops/linalg/products';
export type { NormOptions, VectorNormOptions, MatrixNormOptions, MatrixNormOrd, LinalgNormOptions } from './ops/linalg/norms';
export { einsum } from './ops/linalg/einsum';
export { mm, bmm, tensordot, kron } from './ops/linalg/contract';
export { gather, indexSelect, take, scatter, scatterAdd, maskedFill } from './ops/indexing/indexing';
export {
  sort, msort, argsort, topk, kthvalue, unique, searchsorted, type SortOptions, type ArgsortOptions, type TopkOptions, type KthvalueOptions,
  type UniqueOptions, type UniqueResult, type SearchsortedOptions, type SortResult, type SortOut,
} from './ops/sort/sorting';
export { sl, type Slice, type IndexItem, type IndexList } from './ops/indexing/index-expr';
export { indexPut_, type IndexPutOptions } from './ops/indexing/index-write';
export {
  scatterReduce, indexAdd, maskedSelect, nonzero, bincount, histc,
  type ScatterReduction, type ScatterReduceOptions, type IndexAddOptions, type NonzeroOptions, type BincountOptions, type HistcOptions,
} from './ops/indexing/scatter-family';
export { softmax, logSoftmax, type SoftmaxOptions } from './ops/softmax/softmax';
export { logsumexp, variance as var, std, type LogsumexpOptions, type VarOptions } from './ops/reduce/statistics';
export { cumsum, type CumsumOptions } from './ops/reduce/scan';
export { diff, cumprod, type DiffOptions, type CumprodOptions } from './ops/reduce/scan';
export { cummax, cummin } from './ops/reduce/scan-extremum';
export { nansum, nanmean, countNonzero, amax, amin, aminmax, type NanReduceOptions, type AminmaxResult, type AminmaxFields } from './ops/reduce/statistics-nan';
export { median, quantile, type MedianOptions, type QuantileOptions, type QuantileInterpolation } from './ops/reduce/statistics-order';
export { mode, nanmedian, nanquantile, type ModeOptions } from './ops/reduce/statistics-nan-order';

export { noGrad, enableGrad, isGradEnabled } from './tape/mode';
export type { BackwardOptions } from './autograd/engine';
export { grad, valueAndGrad } from './autograd/functional';
export * as autograd from './autograd/index';
export * as optim from './optim/index';
export * as nn from './nn/index';
