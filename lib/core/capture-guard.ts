// What a CUDA graph capture refuses, and the capture state others ask about.
//
// NOTE [ What a capture refuses ]
// During capture nothing runs: kernels and copies are recorded, to run at
// replay. Work that needs a result on the host now (reading a tensor back,
// item(), a copy between host and device memory, waiting for a stream or
// the device) would see memory nothing has written yet, or (a synchronize)
// fail deep in the driver and invalidate the capture. So while gx.cuda.graph
// runs its function, those calls of the core throw an error naming the
// call and how to do without it; the capture then ends, failed, and its
// graph is freed. CPU tensors are not refused: CPU work runs at once.
// Allocations in the capture are kept for the graph (NOTE [ Graph memory ]
// in csrc/core/capture.h).
import type { Device } from './device';
import { native, type NativeCore, type NativeTensor } from './native';

let capturing: Device | null = null;

/** The device a gx.cuda.graph capture is running on (this thread), or null. */
export function capturingDevice(): Device | null {
  return capturing;
}

function onCuda(t: NativeTensor): boolean {
  return native.describe(t).deviceType !== 0;
}

function refuse(what: string, instead: string): never {
  throw new Error(`gx.cuda.graph: ${what} cannot be captured in a CUDA graph (nothing runs during capture); ${instead}`);
}

const READ = 'read the graph\'s output tensors after replay() instead';

/**
 * The core's calls refused during capture, each a wrapper of the original
 * that hands every argument on as it came (a wrapper naming them dropped an
 * argument added to the call later).
 */
function guards(o: NativeCore): Partial<NativeCore> {
  return {
    readSync: (...a) => (onCuda(a[0]) ? refuse('Tensor.toArraySync / Tensor.item (a read back to the host)', READ) : o.readSync(...a)),
    read: (...a) => (onCuda(a[0]) ? refuse('Tensor.toArray (a read back to the host)', READ) : o.read(...a)),
    fromBytes: (...a) => (a[3] !== 0
      ? refuse('gx.tensor from host data on a GPU (a copy from host memory)', 'make the tensor before capturing and copy_ into it')
      : o.fromBytes(...a)),
    toDevice: (...a) => (a[1] === 0 && onCuda(a[0])
      ? refuse('Tensor.to(\'cpu\') (a copy to the host)', READ) : o.toDevice(...a)),
    copy: (...a) => (onCuda(a[0]) !== onCuda(a[1])
      ? refuse('Tensor.copy_ between host and device memory', 'copy into the graph\'s static input tensors before replay()')
      : o.copy(...a)),
    cudaSynchronize: () => refuse('gx.cuda.synchronize', 'synchronize after replay()'),
    streamSynchronize: () => refuse('Stream.synchronize', 'synchronize after replay()'),
    eventSynchronize: () => refuse('Event.synchronize', 'synchronize after replay()'),
  };
}

/** Runs `fn` as the capture on `device`: the refused calls throw (NOTE [ What a capture refuses ]). */
export function whileCapturing<T>(device: Device, fn: () => T): T {
  if (capturing !== null) throw new Error('gx.cuda.graph: a capture is already running (graphs do not nest)');
  const originals: NativeCore = { ...native };
  Object.assign(native, guards(originals));
  capturing = device;
  try {
    return fn();
  } finally {
    capturing = null;
    Object.assign(native, originals);
  }
}
