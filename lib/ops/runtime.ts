// What the generated bindings of the built-in ops (ops/build/gx_ops.js and
// .d.ts, from the root setup.config.json's "runtimeImport") require instead
// of 'gpuext': the package's own entry would be circular. lib/ops/*.ts does
// not use those bindings (tsc runs before the ops exist on a fresh clone); it
// calls the ops by id (library.ts).
export { extensionRuntime } from '../extension/runtime';
export type { ExtensionLibrary } from '../extension/runtime';
export type { DType } from '../core/dtype';
export type { Tensor } from '../core/tensor';
