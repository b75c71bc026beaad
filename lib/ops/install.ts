// NOTE [ Tensor methods ]
// The one way gpuext gives Tensor a method that is not part of its core
// (storage, shape, copies: the class members in tensor.ts): a family of ops
// declares its methods by merging an interface into Tensor
// (`declare module '../core/tensor'`, with JSDoc and the same result dtypes as the
// gx functions) and installs them here, in the module that declares them
// (the elementwise ops' declarations are generated from ops/op-list.js into
// lib/generated/elementwise.ts; ops/elementwise/methods.ts installs them from the same tables).
// The family files (ops/elementwise/methods.ts, ops/layout/methods.ts,
// ops/softmax/methods.ts, tensor-to.ts) import their ops, never the other
// way round, and lib/index.ts loads each once. A method is its gx function
// with `this` as the input, and its errors name it ('Tensor.softmax').
import { Tensor } from '../core/tensor';

/** Methods by name; only names declared on Tensor (by declaration merging) are accepted. */
export type TensorMethods = { readonly [K in keyof Tensor]?: (this: Tensor, ...args: never[]) => unknown };

/**
 * Defines each method on Tensor.prototype, non-enumerable as class methods
 * are; a name defined twice is an error (our bug), not a silent override.
 */
export function installMethods(methods: TensorMethods): void {
  // Reflect.ownKeys: symbol-named methods too ([Symbol.iterator]).
  for (const name of Reflect.ownKeys(methods)) {
    if (Object.prototype.hasOwnProperty.call(Tensor.prototype, name)) {
      throw new Error(`installMethods: Tensor.${String(name)} is already defined`);
    }
    Object.defineProperty(Tensor.prototype, name, {
      value: methods[name as keyof TensorMethods], writable: true, configurable: true, enumerable: false,
    });
  }
}

/** Read-only properties by name (x.T, x.mT): getters on Tensor.prototype, installed as installMethods does. */
export type TensorGetters = { readonly [K in keyof Tensor]?: (this: Tensor) => unknown };

/** Defines each getter on Tensor.prototype; a name defined twice is an error (our bug). */
export function installGetters(getters: TensorGetters): void {
  for (const name of Object.keys(getters)) {
    if (Object.prototype.hasOwnProperty.call(Tensor.prototype, name)) {
      throw new Error(`installGetters: Tensor.${name} is already defined`);
    }
    Object.defineProperty(Tensor.prototype, name, { get: getters[name as keyof TensorGetters], configurable: true, enumerable: false });
  }
}
