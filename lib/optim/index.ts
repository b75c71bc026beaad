// gx.optim: optimizers that update parameters from their gradients, as
// torch.optim: SGD, Adam, AdamW, LBFGS, and their base Optimizer.
export { Optimizer, type OptimizerStateDict, type ParamGroup, type ParamState, type StateValue } from './optimizer';
export type { Params, ParamGroupSpec } from './params';
export type { Loss } from './closure';
export { SGD, type SGDOptions } from './sgd';
export { Adam, type AdamOptions } from './adam';
export { AdamW, type AdamWOptions } from './adamw';
export { LBFGS, type LBFGSOptions } from './lbfgs';
export * as lrScheduler from './schedulers';
