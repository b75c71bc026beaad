// gx.nn: layers, losses, initializers and gradient clipping on top of the ops
// and autograd, in torch.nn's shape (README.md in this folder).
export { Module, type AnyModule, type StateDict, type LoadResult, type LoadStateDictOptions, type RegisterBufferOptions } from './module';
export {
  Linear, Embedding, LayerNorm, Dropout, ReLU, GELU, Sigmoid, Tanh, Softmax, LogSoftmax, Sequential, ModuleList,
  type FactoryOptions, type LinearOptions, type EmbeddingLayerOptions, type LayerNormOptions,
} from './layers';
export {
  Conv1d, Conv2d, MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, Flatten, type ConvLayerOptions, type MaxPoolLayerOptions,
} from './conv-modules';
export type { UnfoldOptions, ConvOptions } from './conv';
export type { PoolOptions, MaxPoolOptions, AvgPoolOptions, MaxPoolResult } from './pooling';
export { RMSNorm, Bilinear, type RMSNormOptions, type BilinearOptions } from './layers-more';
export {
  MultiheadAttention, type MultiheadAttentionOptions, type MultiheadAttentionForwardOptions, type AttentionResult,
} from './attention';
export type { ScaledDotProductAttentionOptions } from './attention-functional';
export { SiLU, Mish, SELU, Hardsigmoid, LogSigmoid, LeakyReLU, ELU, Hardtanh } from './activations';
export { MSELoss, L1Loss, SmoothL1Loss, HuberLoss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss, type LossModuleOptions } from './loss-modules';
export type {
  Reduction, LossOptions, SmoothL1Options, HuberOptions, NllOptions, CrossEntropyOptions, BceOptions, BceWithLogitsOptions,
} from './losses';
export * as functional from './functional';
export * as init from './init';
export * as utils from './utils';
