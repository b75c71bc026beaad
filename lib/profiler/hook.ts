// The one place gx.profiler sees op calls: every built-in op (lib/generated
// calls `native.callOpStaged`, or `native.callOp` for ops with list or string
// arguments), every op of a loaded library (generated bindings and gx.load's
// functions call `extensionRuntime.call` or `.callStaged`) goes through the
// core's callOp or callOpStaged.
//
// NOTE [ A profiler hook that costs nothing when off ]
// There is no flag on the call path. While a profiler records, install()
// puts a recording wrapper in place of native.callOp, native.callOpStaged
// and extensionRuntime's call and callStaged (each read as a property at each
// call, never kept elsewhere); uninstall() puts the core's own functions back.
// A staged call's recorder sees its tensor arguments only (the scalars are in
// the staging area: NOTE [ Staged op calls ]), which is all it describes. A program
// that never profiles, or profiles no longer, runs exactly the code it ran
// before (bench/profiler.bench.ts measures the call with and without).
import { extensionRuntime } from '../extension/runtime';
import { setRecycling } from '../core/handle-pool';
import { native, type NativeTensor } from '../core/native';

/** What the wrapper reports for each call: the op's registry id, its arguments, and a thunk that makes the call. */
export type CallRecorder = (id: number, args: unknown[], call: () => unknown) => unknown;

const coreCallOp = native.callOp;
const coreCallOpStaged = native.callOpStaged;
/** The extension runtime's own calls (they add a spare handle for the result: NOTE [ Recycled handles ]). */
const coreCall = extensionRuntime.call;
const coreCallStaged = extensionRuntime.callStaged;

/** Whether a recorder is installed. */
export function installed(): boolean {
  return native.callOp !== coreCallOp;
}

/** Routes every op call through `record` until uninstall(). */
export function install(record: CallRecorder): void {
  const wrapper = (id: number, ...args: unknown[]): unknown => record(id, args, () => coreCallOp.call(native, id, ...args));
  const staged = (id: number, ...tensors: unknown[]): unknown => record(id, tensors, () => coreCallOpStaged.call(native, id, ...tensors));
  native.callOp = wrapper;
  native.callOpStaged = staged;
  extensionRuntime.call = wrapper;
  extensionRuntime.callStaged = staged;
  // Handles are known by identity while recording, and the core gets no pooled ones (NOTE [ Recycled handles ]).
  setRecycling(false);
}

/** Puts the core's callOp back: calls cost what they cost before install(). */
export function uninstall(): void {
  native.callOp = coreCallOp;
  native.callOpStaged = coreCallOpStaged;
  extensionRuntime.call = coreCall;
  extensionRuntime.callStaged = coreCallStaged;
  setRecycling(true);
}

/** The extension runtime's own call (for tests: uninstall() must leave exactly it in place). */
export function coreExtensionCall(): (id: number, ...args: unknown[]) => unknown {
  return coreCall;
}

/** The core's own callOp (for tests: uninstall() must leave exactly it in place). */
export function coreOpCall(): (id: number, ...args: unknown[]) => unknown {
  return coreCallOp;
}

/** An argument the core takes as a tensor: an opaque handle (an External), not a number, string, array or buffer. */
export function isTensorHandle(a: unknown): a is NativeTensor {
  return typeof a === 'object' && a !== null && !Array.isArray(a) && !ArrayBuffer.isView(a) && !(a instanceof ArrayBuffer);
}
