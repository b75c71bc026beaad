// The one place gx.profiler sees op calls: every built-in op (lib/generated
// calls `native.callOp`), every op of a loaded library (generated bindings
// and gx.load's functions call `extensionRuntime.call`) goes through the
// core's callOp.
//
// NOTE [ A profiler hook that costs nothing when off ]
// There is no flag on the call path. While a profiler records, install()
// puts a recording wrapper in place of native.callOp and
// extensionRuntime.call (both are read as properties at each call, never
// kept elsewhere); uninstall() puts the core's own function back. A program
// that never profiles, or profiles no longer, runs exactly the code it ran
// before (bench/profiler.bench.ts measures the call with and without).
import { extensionRuntime } from '../extension/runtime';
import { setRecycling } from '../core/handle-pool';
import { native, type NativeTensor } from '../core/native';

/** What the wrapper reports for each call: the op's registry id, its arguments, and a thunk that makes the call. */
export type CallRecorder = (id: number, args: unknown[], call: () => unknown) => unknown;

const coreCallOp = native.callOp;
/** The extension runtime's own call (it adds a spare handle for the result: NOTE [ Recycled handles ]). */
const coreCall = extensionRuntime.call;

/** Whether a recorder is installed. */
export function installed(): boolean {
  return native.callOp !== coreCallOp;
}

/** Routes every op call through `record` until uninstall(). */
export function install(record: CallRecorder): void {
  const wrapper = (id: number, ...args: unknown[]): unknown => record(id, args, () => coreCallOp.call(native, id, ...args));
  native.callOp = wrapper;
  extensionRuntime.call = wrapper;
  // Handles are known by identity while recording, and the core gets no pooled ones (NOTE [ Recycled handles ]).
  setRecycling(false);
}

/** Puts the core's callOp back: calls cost what they cost before install(). */
export function uninstall(): void {
  native.callOp = coreCallOp;
  extensionRuntime.call = coreCall;
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
