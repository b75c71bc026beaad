// JS functions translated to CUDA: parse (source.ts) -> type (typer.ts) ->
// IR (ir.ts) -> CUDA (emit-cuda.ts); the same IR is what the simulator runs
// (interpret.ts). This file is the translation's face for its callers
// (rawkernel.ts, vectorize.ts, fuse.ts): a scalar function as a __device__
// function, and the names they share.
import type { Lookup } from './closure';
import { emitDevice } from './emit-cuda';
import type { FnIR, ReturnTy } from './ir';
import type { Module } from './module';
import type { ParsedFunction } from './source';
import { typeFunction } from './typer-function';
import { strong, type ScalarDType, type Ty } from './types';

export { ATOMIC_HELPERS, DEBUG_HELPERS, JIT_HELPERS } from './cuda-helpers';
export { cName } from './emit-cuda';
export { DEVICE, deviceInfo, Module, type AccessSite, type DeviceFunctionInfo, type FactValue, type OpCalls, type OperandFact, type OpOptions } from './module';
export type { ReturnTy };

/**
 * A __device__ function `name` computing `f` for parameters of the given
 * types, returning `out` (or the type its returns have); `api` names the
 * caller in errors. Device functions it calls go into `module`; `fn` is its
 * typed IR.
 */
export function scalarFunction(f: ParsedFunction, name: string, params: readonly (readonly [string, Ty])[], out: ScalarDType | undefined,
  lookup: Lookup, module: Module, api: string): { code: string; ret: ReturnTy; fn: FnIR } {
  const fn = typeFunction(f, 'device', name, params.map(([, ty]) => ({ kind: 'number', ty })), out === undefined ? undefined : strong(out),
    lookup, module, api);
  const code = emitDevice(fn, module);
  return { code, ret: fn.ret as ReturnTy, fn };
}
