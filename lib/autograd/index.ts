// gx.autograd: custom functions, extension-op gradients, gradcheck, tensor
// hooks, and the functional derivatives (jacobian, hessian, vjp, jvp).
export { Function, FunctionContext, registerAutograd, type AutogradSpec } from '../tape/function';
export { gradcheck, type GradcheckOptions, type GradcheckReport } from './gradcheck';
export { grad, valueAndGrad } from './functional';
export { noGrad, enableGrad, isGradEnabled } from '../tape/mode';
export type { BackwardOptions } from './engine';
export { type GradHook, type RemovableHandle } from './hooks';
export * as functional from './functional';
