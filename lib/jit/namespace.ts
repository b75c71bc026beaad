// gx.jit: kernels written in JavaScript / TypeScript (rawkernel, device) and
// the intrinsics they use; also the types to annotate a kernel's parameters.
export { rawkernel, type JitKernel, type KernelArg, type RawkernelOptions } from './rawkernel';
export { device } from './device';
export {
  activemask, atomic, ballot, blockDim, blockIdx, grid, gridDim, gridsize, laneId, localArray, sharedArray, shfl, syncthreads, threadfence,
  threadIdx, warpSize,
  type AtomicIndex, type Array1d, type Array2d, type Array3d,
} from './intrinsics';
import type { Array1d } from './intrinsics';

/** Array1d, the common case. */
export type { Array1d as Array };
