// Starting the driver's JIT compiler on a pool thread while a jit kernel is
// translated, so the kernel's own PTX load does not pay for it.
//
// NOTE [ PTX JIT warm-up ]
// A process's first PTX module costs the driver's JIT compiler its start-up
// before any work on the kernel: 11-16 ms on an H200's host for a module of
// one `ret` (dlopen of the compiler's library is 2 ms of it; a second module
// in the process pays none of it). A jit kernel on the PTX path (NOTE [ PTX
// path ] in lib/jit/emit-ptx.ts) whose text the translation cache has never
// seen is parsed and translated first, which takes longer than that start-up
// (the translator's modules, acorn, the parse: 20-30 ms there). So when such a
// kernel is made, a one-instruction module is loaded and unloaded on a libuv
// pool thread (rtc::ptx_jit_warm_up), and the kernel's load finds the compiler
// started. Once per process; only where a GPU has been found already (asking
// would initialize CUDA) and no graph capture is running; a failure is said
// under NODE_DEBUG=gpuext:jit and changes nothing else (the kernel's own load
// reports its errors). The NVRTC route has its own: NOTE [ NVRTC prefetch ].
import { capturingDevice } from '../core/capture-guard';
import { currentCudaIndex, knownDeviceCount } from '../core/device';
import { native } from '../core/native';
import { logger } from '../platform/log';

const jitLog = logger('jit');
let started = false;

/**
 * Starts the warm-up, once per process: the promise of its ms (undefined if
 * it failed), or undefined when this call did not start it.
 */
export function warmUpPtxJit(): Promise<number | undefined> | undefined {
  if (started || (knownDeviceCount() ?? 0) === 0 || capturingDevice() !== null) return undefined;
  started = true;
  const said = (what: string, e: unknown): undefined => {
    jitLog('the PTX compiler warm-up %s (%s)', what, e instanceof Error ? e.message : String(e));
    return undefined;
  };
  try {
    return native.ptxJitWarmUp(currentCudaIndex()).then((ms) => {
      jitLog('the driver\'s PTX compiler started in %s ms on a pool thread', ms.toFixed(1));
      return ms;
    }, (e: unknown) => said('failed', e));
  } catch (e) {
    return Promise.resolve(said('did not start', e));
  }
}

/** Whether the warm-up has been started in this process (tests). */
export const ptxJitWarmUpStarted = (): boolean => started;
