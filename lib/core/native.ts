// The typed face of the core addon (gpuext_core.node: built here in
// build/Release, or prebuilt in prebuilds/<platform>-<arch>; lib/platform/binaries.ts
// picks): one interface describing everything csrc/binding/*.cpp exports. Keep
// the two in step. Loading fails with the command that fixes it.
import { binaryCandidates, binaryOrigin, findBinary } from '../platform/binaries';
import { logger } from '../platform/log';

/** An opaque native tensor handle (NOTE [ Handles are Externals ] in csrc/binding/tensor_handle.h). */
export interface NativeTensor {
  readonly __nativeTensor: unique symbol;
}

/**
 * A schema `Handle` an op returned, to hand back to an op of the same library
 * (NOTE [ Handles and devices in schemas ] in csrc/core/schema.h): an object
 * JS can neither read nor make, so no number or string stands in for it.
 */
export interface OpaqueHandle {
  readonly __opaqueHandle: unique symbol;
}

export interface NativeDescription {
  shape: number[];
  strides: number[];
  offset: number;
  dtype: number;
  deviceType: number;
  deviceIndex: number;
  contiguous: boolean;
  pinned: boolean;
  storageBytes: number;
  storagePtr: bigint;
  dataPtr: bigint;
}

export interface NativeMemoryStats {
  allocatedBytes: number;
  reservedBytes: number;
  cachedBytes: number;
  peakAllocatedBytes: number;
  numAllocs: number;
  numFrees: number;
  numCacheHits: number;
  numDeviceMallocs: number;
  numDeviceFrees: number;
  numOoms: number;
  limitBytes: number;
  liveTensors: number;
  pinned?: Omit<NativeMemoryStats, 'liveTensors' | 'pinned'>;
}

export interface NativeDeviceProperties {
  name: string;
  major: number;
  minor: number;
  totalMemory: number;
  freeMemory: number;
  multiProcessorCount: number;
}

/** Opaque native stream, event and graph handles (csrc/binding/stream_functions.cpp). */
export interface NativeStream {
  readonly __nativeStream: unique symbol;
}
export interface NativeEvent {
  readonly __nativeEvent: unique symbol;
}
export interface NativeGraph {
  readonly __nativeGraph: unique symbol;
}

/** Opaque run-time kernel handles (csrc/binding/rtc_modules.cpp): a loaded CUDA module, and a kernel of one (which keeps its module loaded). */
export interface NativeModule {
  readonly __nativeModule: unique symbol;
}
export interface NativeFunction {
  readonly __nativeFunction: unique symbol;
}

export interface NativeRtcInfo {
  /** NVRTC's version ("13.0"), or null when it cannot be loaded (nvrtcError says why). */
  nvrtc: string | null;
  /** The candidate NVRTC was loaded from. */
  nvrtcPath?: string;
  nvrtcError?: string;
  /** Whether the CUDA driver library loaded and initialized (driverError says why not). */
  driver: boolean;
  driverError?: string;
}

export interface NativeCompileResult {
  /** false on a compile error (or an option NVRTC rejects); `log` has NVRTC's messages. */
  ok: boolean;
  log: string;
  /** CUBIN (arch sm_XY) or PTX (arch compute_XY; includes its terminating NUL). Present when ok. */
  image?: Uint8Array;
  ptx: boolean;
  /** name expression -> lowered (mangled) name, for moduleGetFunction / moduleGetGlobal. */
  loweredNames: Record<string, string>;
}

export interface NativeFunctionAttributes {
  numRegs: number;
  maxThreadsPerBlock: number;
  sharedSizeBytes: number;
  constSizeBytes: number;
  localSizeBytes: number;
  maxDynamicSharedSizeBytes: number;
  ptxVersion: number;
  binaryVersion: number;
}

export interface NativeDeviceLimits {
  maxThreadsPerBlock: number;
  maxBlockDim: [number, number, number];
  maxGridDim: [number, number, number];
  maxSharedMemoryPerBlock: number;
  maxSharedMemoryPerBlockOptin: number;
  multiProcessorCount: number;
  computeCapability: [number, number];
}

/** One argument of a registered op, as its schema declares it. */
export interface NativeOpArg {
  name: string;
  /** Schema spelling: one of lib/generated/schema-types.ts's SchemaType ('Tensor', 'int[]', 'Device?', ...). */
  type: string;
  kwOnly: boolean;
  /** Present when the schema gives a default (null for None). */
  default?: number | bigint | boolean | string | number[] | null;
}

export interface NativeOpDescriptor {
  /** Registry id for callOp; -1 when only described. */
  id: number;
  name: string;
  qualifiedName: string;
  schema: string;
  doc: string;
  /** The derivative declared beside the schema (NOTE [ Derivatives beside a user's schema ]), when one is. */
  derivative?: string;
  args: NativeOpArg[];
  returns: { name: string; type: string }[];
  returnsTuple: boolean;
  devices: ('cpu' | 'cuda')[];
}

export interface NativeExtensionDescriptor {
  path: string;
  abiVersion: [number, number];
  ops: NativeOpDescriptor[];
}

/** Devices cross the boundary as (type, index): 0 = cpu, 1 = cuda. */
export interface NativeCore {
  readonly cudaCompiled: boolean;
  readonly abiVersion: [number, number];
  /** Drops a handle's core reference now; returns false when it was already dropped. */
  dispose(t: NativeTensor): boolean;
  isDisposed(t: NativeTensor): boolean;
  /** The address of the first element, as a number (refused when a double cannot hold it exactly). */
  dataAddress(t: NativeTensor): number;
  empty(shape: readonly number[], dtype: number, deviceType: number, deviceIndex: number, pinned: boolean): NativeTensor;
  /**
   * empty() with its request in the staging area (lib/core/staging.ts STAGED_EMPTY: ndim, dtype, device type and index,
   * shape); not pinned. In `spare` when it is a disposed tensor's handle (NOTE [ Recycled handles ]).
   */
  emptyStaged(spare?: NativeTensor): NativeTensor;
  fromBytes(data: ArrayBufferView, shape: number[], dtype: number, deviceType: number, deviceIndex: number): NativeTensor;
  /**
   * A view of t with the layout in the staging area (lib/core/handle-pool.ts stagedView: ndim, the strides'
   * count, the offset, the shape, the strides), checked by the core; in `spare` when it is a disposed tensor's
   * handle (NOTE [ Staged views ] in csrc/binding/staging.h).
   */
  viewStaged(t: NativeTensor, spare?: NativeTensor): NativeTensor;
  alias(t: NativeTensor): NativeTensor;
  copy(dst: NativeTensor, src: NativeTensor, nonBlocking?: boolean): void;
  toDevice(t: NativeTensor, deviceType: number, deviceIndex: number, nonBlocking?: boolean): NativeTensor;
  contiguous(t: NativeTensor): NativeTensor;
  fill(t: NativeTensor, bits: bigint): void;
  arange(t: NativeTensor, start: number, step: number): void;
  linspace(t: NativeTensor, start: number, end: number): void;
  /** Writes the elements in C order into dst (exactly the tensor's bytes; NOTE [ Readback buffers ]). */
  readSync(t: NativeTensor, dst: ArrayBuffer | ArrayBufferView): void;
  /** The same, resolving with dst once it holds them (a CUDA copy is awaited off the event loop). */
  read<T extends ArrayBuffer | ArrayBufferView>(t: NativeTensor, dst: T): Promise<T>;
  /** Fills the contiguous tensor dst with the bytes at `offset` of the open file `fd` (off the event loop; NOTE [ File reads ]). */
  readFile(fd: number, offset: number, dst: NativeTensor): Promise<void>;
  describe(t: NativeTensor): NativeDescription;
  memoryStats(deviceType: number, deviceIndex: number): NativeMemoryStats;
  emptyCache(device: number): void;
  emptyHostCache(): void;
  setMemoryLimit(device: number, bytes: number): void;
  cudaDeviceCount(): number;
  cudaUnavailableReason(): string;
  /** The calling thread's current CUDA device (NOTE [ Current device ] in csrc/cuda/runtime.h); 0 without a GPU. */
  cudaCurrentDevice(): number;
  /** Makes a device current on the calling thread (a RangeError naming gx.cuda.setDevice when it is not there). */
  cudaSetDevice(index: number): void;
  cudaSynchronize(device: number): void;
  cudaCurrentStream(device: number): bigint;
  cudaDeviceProperties(device: number): NativeDeviceProperties;
  /** The gx_api table (csrc/include/gpuext/abi.h) as an N-API external. */
  abiTable(): object;
  /** Loads an extension once per process and registers its ops. */
  loadExtension(path: string): NativeExtensionDescriptor;
  /** Runs an extension's registration without registering (for code generation). */
  describeExtension(path: string): NativeExtensionDescriptor;
  parseSchema(schema: string): NativeOpDescriptor;
  createStream(device: number, nonBlocking: boolean, priority: number): NativeStream;
  /** A non-owning handle to this thread's current stream on a device. */
  currentStream(device: number): NativeStream;
  setCurrentStream(s: NativeStream): void;
  streamInfo(s: NativeStream): { device: number; handle: bigint };
  streamSynchronize(s: NativeStream): void;
  streamQuery(s: NativeStream): boolean;
  streamWaitEvent(s: NativeStream, e: NativeEvent): void;
  /** Work queued on `waiter` from now on waits for what `producer` has queued so far (Stream.waitStream). */
  joinStreams(waiter: NativeStream, producer: NativeStream): void;
  /** [least, greatest] priority; lower numbers are higher priority. */
  streamPriorityRange(device: number): [number, number];
  createEvent(device: number, timing: boolean, external?: boolean): NativeEvent;
  recordEvent(e: NativeEvent, s: NativeStream | undefined): void;
  eventSynchronize(e: NativeEvent): void;
  eventQuery(e: NativeEvent): boolean;
  eventElapsed(start: NativeEvent, end: NativeEvent): number;
  /** Resolves when the event has completed, waiting on a pool thread. */
  eventWait(e: NativeEvent): Promise<void>;
  recordStream(t: NativeTensor, s: NativeStream): void;
  beginCapture(s: NativeStream): NativeGraph;
  /** Instantiates and uploads the graph; returns how many allocations it keeps alive and how many nodes it has. */
  endCapture(s: NativeStream, g: NativeGraph): [kept: number, nodes: number];
  graphReplay(g: NativeGraph, s: NativeStream | undefined): void;
  graphDispose(g: NativeGraph): void;
  /** Opens a named NVTX range on this thread / closes the innermost (no-ops with no NVIDIA tool attached, and in a CPU-only core). */
  nvtxRangePush(name: string): void;
  nvtxRangePop(): void;
  /**
   * Calls a registered op; tensors pass as NativeTensor handles (NOTE [ Op calls ] in csrc/binding/op_functions.cpp).
   * A pooled (disposed) handle as a tensor argument gets the staged result request's new tensor, and a spare
   * one after the arguments (flagged in the staging area) the returned tensor (NOTE [ Recycled handles ]).
   */
  callOp(id: number, ...args: unknown[]): unknown;
  /**
   * callOp with only the tensor arguments (and the flagged spare) as JS values; the others are read from
   * the staging area's OpArgs region, where the caller staged them right before (NOTE [ Staged op calls ]).
   */
  callOpStaged(id: number, ...tensors: unknown[]): unknown;
  /**
   * The C++ part of a staged op call (the call-latency benchmarks): the arguments converted once as callOpStaged
   * converts them, then the op invoked perBatch times from C++ in each of `batches` batches closed by a synchronize
   * of the device's current stream; microseconds per call, one figure per batch. Only ops that return nothing.
   */
  timeOpCall(id: number, batches: number, perBatch: number, ...tensors: unknown[]): Float64Array;
  // --- run-time kernels (csrc/binding/rtc_*.cpp, csrc/rtc/) ---
  // A missing NVRTC / driver throws an Error with code GX_NVRTC_NOT_FOUND / GX_DRIVER_NOT_FOUND;
  // a CPU-only core throws code GX_NO_CUDA (except rtcInfo, which never throws).
  rtcInfo(): NativeRtcInfo;
  /** Where NVRTC is looked for, in order: file paths, then bare sonames (loads nothing but the driver). */
  nvrtcCandidates(): string[];
  /** The first candidate that is a file, with its statFile(); null when a bare soname comes first. */
  nvrtcFile(): [string, [number, number, number, number, number]] | null;
  /** arch: 'sm_90' compiles to CUBIN, 'compute_90' to PTX. A compile error is { ok: false, log }, not a throw. */
  nvrtcCompile(source: string, programName: string, options: string[], nameExpressions: string[], arch: string): NativeCompileResult;
  moduleLoad(device: number, image: ArrayBufferView | ArrayBuffer): NativeModule;
  /**
   * name: an extern "C" name or a lowered name from nvrtcCompile. kinds[i] gives parameter i's C type:
   * 0 tensor, 1 int8, 2 int16, 3 int32, 4 int64, 5 uint8, 6 uint16, 7 uint32, 8 uint64, 9 float32,
   * 10 float64, 11 bool, 12 raw pointer (bigint or null); without kinds the handle cannot launch.
   */
  moduleGetFunction(mod: NativeModule, name: string, kinds?: Int8Array): NativeFunction;
  moduleGetGlobal(mod: NativeModule, name: string): { ptr: bigint; size: number };
  functionAttributes(fn: NativeFunction): NativeFunctionAttributes;
  functionSetMaxDynamicSharedSize(fn: NativeFunction, bytes: number): void;
  deviceLimits(device: number): NativeDeviceLimits;
  /**
   * This thread's staging area (NOTE [ Staging area ] in csrc/binding/staging.h): [0..6] a launch's
   * grid x, y, z, block x, y, z, dynamic shared memory bytes; [7] the data address of the tensor
   * empty() made last; from 8 on, a launch's arguments as numbers (tensors by address); then
   * emptyStaged's request, an op call's result request (NOTE [ Recycled handles ] in
   * csrc/binding/tensor_handle.h), a staged op call's scalars and viewStaged's layout.
   */
  stagingArea(): Float64Array;
  /**
   * The staging area's slots as the core has them: [last address, args, max args, empty request, shape, result
   * request, its shape, view request, its shape, its strides, size].
   */
  stagingLayout(): number[];
  /**
   * Launches with the extents in the staging area and the arguments there (values undefined) or in
   * `values`: tensors as NativeTensor, integers as numbers (safe integers) or bigints, per the kinds
   * given to moduleGetFunction. stream undefined: the device's current stream.
   */
  launchKernel(fn: NativeFunction, stream: NativeStream | undefined, values?: unknown[]): void;
  /**
   * The launch floor in this process (the call-latency benchmarks): `fn`, its arguments staged as for
   * launchKernel, launched perBatch times from C++ in each of `batches` batches closed by a synchronize of the
   * current stream; microseconds per launch, one figure per batch.
   */
  launchFloor(fn: NativeFunction, batches: number, perBatch: number): Float64Array;
  // --- kernel cache lookups (csrc/binding/cache_functions.cpp; NOTE [ First lookup ] in lib/rtc/cache-io.ts) ---
  /** SHA-256 (hex) of the parts' bytes in order: strings as UTF-8, typed arrays as they are. */
  sha256(parts: readonly (string | ArrayBufferView)[]): string;
  /** [size, mtime seconds, mtime nanoseconds, dev, ino] of a regular file (links followed), or null. */
  statFile(path: string): [number, number, number, number, number] | null;
  /** `<dir>/<key>.json` (as text) and `.bin` with the .bin's SHA-256, the .json touched; null when either is missing. */
  readCacheEntry(dir: string, key: string): { meta: string; image: Uint8Array; imageSha256: string } | null;
  /** Synchronous, after the device's current stream (synchronized first). */
  memcpyHtoD(device: number, ptr: bigint, data: ArrayBufferView): void;
  memcpyDtoH(device: number, ptr: bigint, size: number): ArrayBuffer;
}

function load(): NativeCore {
  const file = findBinary('core');
  const fix = 'Build it with `npm rebuild gpuext --build-from-source` (in a checkout of gpuext: `npm run build`). ' +
    'A CUDA toolkit is optional: without one the core is built for the CPU only.';
  if (file === undefined) {
    throw new Error(`gpuext: the core addon (gpuext_core.node) is missing: looked at ${binaryCandidates('core').join(', ')}.\n${fix}`);
  }
  try {
    const core = require(file) as NativeCore;
    logger('load')('core %s (%s, %s, C ABI %s)', file, binaryOrigin(file), core.cudaCompiled ? 'built with CUDA' : 'CPU-only', core.abiVersion.join('.'));
    return core;
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new Error(`gpuext: the core addon ${file} could not be loaded: ${reason}\n${fix}`);
  }
}

/** The loaded core addon. */
export const native: NativeCore = load();

/** Where the loaded core came from: 'prebuilt', 'built here' (binaryOrigin). */
export const nativeOrigin: string = binaryOrigin(findBinary('core') ?? '');
