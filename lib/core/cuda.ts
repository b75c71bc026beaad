// gx.cuda: is there a GPU, how many, the current one, waiting for them, the current stream,
// graphs and graphed training steps (the face only: the checks live in gpus.ts, streams in stream.ts).
import type { DeviceLike } from './device';
import { cudaIndex } from './gpus';
import { native, type NativeDeviceProperties } from './native';
export { deviceCount } from './device';

export { isAvailable, unavailableReason, isCompiled, setDevice, currentDevice } from './gpus';
export { currentStream } from './stream';
export { graph, CUDAGraph, type GraphOptions } from './graph';
export { graphStep, type GraphedStep, type GraphStepOptions, type StepOutputs } from './graph-step';

/** Blocks until all work on the device is done. */
export function synchronize(device?: DeviceLike): void {
  native.cudaSynchronize(cudaIndex(device, 'gx.cuda.synchronize'));
}

export type DeviceProperties = NativeDeviceProperties;

/** Name, compute capability, memory and SM count of a GPU. */
export function getDeviceProperties(device?: DeviceLike): DeviceProperties {
  return native.cudaDeviceProperties(cudaIndex(device, 'gx.cuda.getDeviceProperties'));
}
