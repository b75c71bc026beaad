// gx.autograd: custom functions, extension-op gradients, gradcheck.
export { Function, FunctionContext, registerAutograd, type AutogradSpec } from './function';
export { gradcheck, type GradcheckOptions, type GradcheckReport } from './gradcheck';
export { grad, valueAndGrad } from './functional';
export { noGrad, enableGrad, isGradEnabled } from './mode';
export type { BackwardOptions } from './engine';
export { type GradHook, type RemovableHandle } from './hooks';
