// Run-time kernels from CUDA source: gx.RawModule and gx.RawKernel (CuPy's,
// for TypeScript). Compiled by NVRTC (nvcc where NVRTC is missing) through
// the kernel cache (lib/rtc/compiler.ts), loaded per device on first launch.
//
// NOTE [ Kernel arguments ]
// Arguments are converted by the kernel's declared parameter types, read from
// its source (or given as `params`): a pointer takes a Tensor (its data on the
// kernel's device), a scalar a JS number or bigint, range-checked for the C
// type. CuPy passes a plain int as `long long` whatever the kernel declares,
// silently misreading it; here a mismatch is an error naming the argument.
import fs from 'fs';

import { checkDevice } from '../core/gpus';
import { checkOptions, optionKeys } from '../core/options';
import { Device, parseDevice, type DeviceLike } from '../core/device';
import { native, type NativeFunction, type NativeFunctionAttributes, type NativeModule } from '../core/native';
import { STAGED_ARGS, STAGED_DIMS, STAGED_MAX_ARGS, stagingArea } from '../core/staging';
import { Stream } from '../core/stream';
import { Tensor } from '../core/tensor';
import { ARG_KIND_CODE } from '../generated/arg-kinds';
import { lazyModule } from '../platform/lazy';
import { logger } from '../platform/log';
import { checkScalar, parseKernelSignature, parseParamType, type KernelParam, type ParamKind } from './signature';

// The compiler and its cache load with a module's first compile, not with gpuext (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const compiler = lazyModule(() => require('./compiler') as typeof import('./compiler'));
// A module's first load asks the warm path first, which loads no compiler (NOTE [ Warm lookup ] in cache-lookup.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cacheLookup = lazyModule(() => require('./cache-lookup') as typeof import('./cache-lookup'));

const jitLog = logger('jit');

/**
 * Codes the native launcher reads (the kinds of csrc/binding/arg_kinds.h): a
 * pointer parameter takes a tensor or an address, the native 'tensor' kind.
 */
const KIND_CODE: Record<Exclude<ParamKind, 'unknown'>, number> = { ...ARG_KIND_CODE, pointer: ARG_KIND_CODE.tensor };

export interface CompileOptions {
  /** NVRTC options, e.g. ['-std=c++17', '--use_fast_math', '-DN=4']. */
  options?: string[];
  /** 'sm_90' (default: the device's own) or 'compute_90' for PTX. */
  arch?: string;
}

export interface RawModuleOptions extends CompileOptions {
  /** C++ names to instantiate and look up, e.g. ['my_kernel<float>'] (templates need them). */
  nameExpressions?: string[];
}

/**
 * Checks a RawModule's (or RawKernel's) options object before anything is
 * kept: a wrong shape otherwise surfaces later as an internal message
 * ("... is not iterable") that names neither the function nor the option.
 */
function checkModuleOptions(fn: string, opts: unknown, known: readonly string[]): asserts opts is RawModuleOptions {
  const o: { options?: unknown; nameExpressions?: unknown; arch?: unknown } =
    checkOptions(opts, fn, known, { like: "{ options: ['-DN=4'], arch: 'sm_90' }", nullIsEmpty: false });
  const strings = (name: string, v: unknown, example: string): void => {
    if (v === undefined) return;
    if (!Array.isArray(v)) throw new TypeError(`${fn}: option '${name}' must be an array of strings like ${example}, got ${describe(v)}`);
    v.forEach((e, i) => {
      if (typeof e !== 'string') throw new TypeError(`${fn}: option '${name}'[${i}] must be a string like ${example}, got ${describe(e)}`);
    });
  };
  strings('options', o.options, "['-DN=4']");
  strings('nameExpressions', o.nameExpressions, "['my_kernel<float>']");
  if (o.arch !== undefined && typeof o.arch !== 'string') {
    throw new TypeError(`${fn}: option 'arch' must be a string like 'sm_90' or 'compute_90', got ${describe(o.arch)}`);
  }
}

/** RawKernel's options: how to compile, and the parameter types when the source does not say them. */
export interface RawKernelOptions extends CompileOptions {
  /** The kernel's C parameter types, e.g. ['float*', 'int'] (for templates, or types gpuext cannot read). */
  params?: readonly string[];
  /**
   * @internal The same kernel as PTX (the jit's, NOTE [ PTX path ] in
   * lib/jit/emit-ptx.ts): loaded instead of compiling the source on a device
   * of at least `minCapability` (major * 10 + minor).
   */
  ptx?: { text: string; minCapability: number };
  /** @internal The parameters as read already (elementwiseParams): not parsed from `params` or the source. */
  kernelParams?: readonly KernelParam[];
}

/**
 * How many PTX modules were loaded, and refused by the driver (then compiled from source): what the jit's tests check;
 * and the ms the driver's loads took (its JIT, or its cache of it): what bench:jit reports of a first call.
 */
export const ptxCounts = { loaded: 0, refused: 0, loadMs: 0 };

const MODULE_KEYS = optionKeys<RawModuleOptions>({ options: true, arch: true, nameExpressions: true });
const KERNEL_KEYS = optionKeys<RawKernelOptions>({ options: true, arch: true, params: true, ptx: true, kernelParams: true });
const GET_FUNCTION_KEYS = optionKeys<{ params?: readonly string[] }>({ params: true });
const LAUNCH_KEYS = optionKeys<LaunchOptions>({ sharedMem: true, stream: true });

export type Dim3 = number | readonly [number] | readonly [number, number] | readonly [number, number, number];

export interface LaunchOptions {
  /** Dynamic shared memory in bytes (default 0). */
  sharedMem?: number;
  /** Stream to launch on (default: the current stream of the kernel's device). */
  stream?: Stream;
}

/** Registers, shared memory and thread limits of a compiled kernel. */
export type KernelAttributes = NativeFunctionAttributes;

interface Loaded {
  module: NativeModule;
  loweredNames: Record<string, string>;
}

// NOTE [ Launch latency ]
// A one-element launch costs a few microseconds, most of it the driver's
// (bench/launch_floor.cu measures that floor; `npm run bench:calls` splits a
// call into its layers). What the binding adds is kept to one N-API call with
// at most three arguments: the extents, the shared memory and the arguments
// are written as numbers into this thread's staging area (lib/core/staging.ts),
// tensors by their device addresses (known at creation or asked once per
// tensor), and the native side reads them there with no N-API call at all
// (NOTE [ Staging area ] in csrc/binding/staging.h, NOTE [ Argument slots ]
// in csrc/binding/rtc_launch.cpp); their C types were
// given once, with the function handle. A bigint a double cannot hold, or
// more arguments than the staging area holds, sends that launch's arguments
// as an array of values.

/** Extents [x, y, z] of a grid or block, checked, written into `out` at `at` (no allocation on the launch path). */
export function readDim3(d: Dim3, out: Float64Array, at: number, fn: string, what: string): void {
  let x: unknown = d;
  let y: unknown = 1;
  let z: unknown = 1;
  if (Array.isArray(d) && d.length >= 1 && d.length <= 3) {
    x = d[0];
    if (d.length > 1) y = d[1];
    if (d.length > 2) z = d[2];
  } else if (typeof d !== 'number') {
    throw new TypeError(`${fn}: ${what} must be a number or an array of 1 to 3 numbers, got ${String(d)}`);
  }
  if (!(isExtent(x) && isExtent(y) && isExtent(z))) {
    const bad = [x, y, z].findIndex((v) => !isExtent(v));
    throw new RangeError(`${fn}: ${what}[${bad}] must be a positive integer, got ${String([x, y, z][bad])}`);
  }
  out[at] = x;
  out[at + 1] = y;
  out[at + 2] = z;
}

function isExtent(v: unknown): v is number {
  return typeof v === 'number' && v >= 1 && Number.isInteger(v);
}

/** Several kernels (and __constant__ globals) compiled from one source, or loaded from a cubin/PTX file. */
export class RawModule {
  readonly path: string | undefined;
  readonly nameExpressions: readonly string[];
  readonly arch: string | undefined;
  /** @internal The module as PTX too (RawKernelOptions.ptx). */
  ptx: RawKernelOptions['ptx'];
  #loaded = new Map<number, Loaded>();
  #code: string | undefined;
  #options: readonly string[];
  /** A deferred module's source and options, made when first read (RawModule.deferred). */
  #make: (() => { code: string; options: readonly string[] }) | undefined;

  /**
   * @example
   * const mod = new gx.RawModule(src, { nameExpressions: ['scale<float>', 'scale<double>'] });
   * const k = mod.getFunction('scale<float>');
   */
  constructor(code: string | { path: string }, opts: RawModuleOptions = {}) {
    if (typeof code === 'string') {
      this.#code = code;
    } else if (code !== null && typeof code === 'object' && typeof code.path === 'string') {
      if (!fs.existsSync(code.path)) throw new Error(`gx.RawModule: no such file '${code.path}' (a .cubin or .ptx)`);
      this.path = code.path;
    } else {
      throw new TypeError('gx.RawModule: code must be CUDA source text or { path } of a .cubin/.ptx file');
    }
    checkModuleOptions('gx.RawModule', opts, MODULE_KEYS);
    this.#options = Object.freeze([...(opts.options ?? [])]);
    this.nameExpressions = Object.freeze([...(opts.nameExpressions ?? [])]);
    this.arch = opts.arch;
  }

  /**
   * @internal A module whose source (and its options) is made only when it
   * is read: when a device takes the module's PTX twin (NOTE [ PTX path ]),
   * never (vectorize's kernels on a warm first call, NOTE [ Elementwise PTX ]).
   */
  static deferred(make: () => { code: string; options: readonly string[] }, ptx: RawKernelOptions['ptx']): RawModule {
    const m = new RawModule('');
    m.#make = make;
    m.ptx = ptx;
    return m;
  }

  /** The CUDA source (undefined for a module loaded from a file). */
  get code(): string | undefined {
    this.#force();
    return this.#code;
  }

  /** The NVRTC options. */
  get options(): readonly string[] {
    this.#force();
    return this.#options;
  }

  #force(): void {
    if (this.#make === undefined) return;
    const made = this.#make();
    this.#make = undefined;
    this.#code = made.code;
    this.#options = Object.freeze([...made.options]);
  }

  /** @internal The module on a device, compiled (through the cache) and loaded on first use. */
  load(device: Device): Loaded {
    const known = this.#loaded.get(device.index);
    if (known !== undefined) return known;
    let image: Uint8Array;
    let loweredNames: Record<string, string> = {};
    if (this.path !== undefined) {
      image = new Uint8Array(fs.readFileSync(this.path));
      if (this.path.endsWith('.ptx')) image = nulTerminated(image);
    } else {
      const limits = native.deviceLimits(device.index);
      const ptx = this.#loadPtx(device, limits.computeCapability);
      if (ptx !== undefined) return ptx;
      const arch = this.arch ?? `sm_${limits.computeCapability[0]}${limits.computeCapability[1]}`;
      const source = this.code ?? '';
      const r = (this.nameExpressions.length === 0 ? cacheLookup().cachedImage({ source, options: this.options, arch }) : undefined) ??
        compiler().compile({ source, name: 'gx_module.cu', options: [...this.options], nameExpressions: [...this.nameExpressions], arch });
      image = r.ptx ? nulTerminated(r.image) : r.image;
      loweredNames = r.loweredNames;
    }
    const loaded = { module: native.moduleLoad(device.index, image), loweredNames };
    this.#loaded.set(device.index, loaded);
    return loaded;
  }

  /** The PTX twin loaded, when there is one for this device and the driver takes it (NOTE [ PTX path ]). */
  #loadPtx(device: Device, cc: readonly number[]): Loaded | undefined {
    const ptx = this.ptx;
    if (ptx === undefined || cc[0] * 10 + cc[1] < ptx.minCapability) return undefined;
    // process.hrtime, not performance.now(): the first touch of `performance` loads node:perf_hooks (1-2 ms of a warm first call).
    const t0 = process.hrtime.bigint();
    try {
      const loaded = { module: native.moduleLoad(device.index, nulTerminated(new TextEncoder().encode(ptx.text))), loweredNames: {} };
      ptxCounts.loaded++;
      ptxCounts.loadMs += Number(process.hrtime.bigint() - t0) / 1e6;
      this.#loaded.set(device.index, loaded);
      return loaded;
    } catch (e) {
      ptxCounts.refused++;
      jitLog('the driver refused a PTX module (%s); compiling its CUDA source instead', e instanceof Error ? e.message.split('\n')[0] : String(e));
      return undefined;
    }
  }

  /** A kernel of this module by name (or by one of its name expressions). */
  getFunction(name: string, opts: { params?: readonly string[] } = {}): RawKernel {
    const o = checkOptions<{ params?: readonly string[] }>(opts, 'RawModule.getFunction', GET_FUNCTION_KEYS);
    return new RawKernel(this, name, o.params === undefined ? {} : { params: o.params });
  }

  /** Address and size of a __device__ or __constant__ global. */
  getGlobal(name: string, device?: DeviceLike): { ptr: bigint; size: number } {
    const d = cudaDevice(device, 'RawModule.getGlobal');
    return native.moduleGetGlobal(this.load(d).module, name);
  }

  /** Writes a typed array into a __constant__ (or __device__) global, after the current stream's work. */
  setGlobal(name: string, data: ArrayBufferView, device?: DeviceLike): void {
    const d = cudaDevice(device, 'RawModule.setGlobal');
    const g = this.getGlobal(name, d);
    if (data.byteLength > g.size) throw new RangeError(`RawModule.setGlobal: '${name}' holds ${g.size} bytes; got ${data.byteLength}`);
    native.memcpyHtoD(d.index, g.ptr, data);
  }

  /** Reads a global's bytes, after the current stream's work. */
  getGlobalBytes(name: string, device?: DeviceLike): ArrayBuffer {
    const d = cudaDevice(device, 'RawModule.getGlobalBytes');
    const g = this.getGlobal(name, d);
    return native.memcpyDtoH(d.index, g.ptr, g.size);
  }
}

function nulTerminated(image: Uint8Array): Uint8Array {
  if (image.length > 0 && image[image.length - 1] === 0) return image;
  const out = new Uint8Array(image.length + 1);
  out.set(image);
  return out;
}

function cudaDevice(device: DeviceLike | undefined, fn: string): Device {
  const d = parseDevice(device ?? 'cuda', fn);
  if (d.type !== 'cuda') throw new TypeError(`${fn}: kernels run on CUDA devices, got '${d}'`);
  checkDevice(d, fn);
  return d;
}

/** One kernel, compiled lazily per device; launch() it with grid, block and arguments. */
export class RawKernel {
  readonly name: string;
  readonly module: RawModule;
  readonly params: readonly KernelParam[] | undefined;
  #kinds: Int8Array | undefined;
  #functions = new Map<number, NativeFunction>();
  #lastIndex = -1;
  #lastFunction: NativeFunction | undefined;
  /** launch()'s arguments and extents, read from the caller's arrays before any is staged. */
  #numbers: Float64Array | undefined;
  #dims = new Float64Array(STAGED_DIMS);
  /** True inside launch(): a launch of this kernel from the caller's code takes arrays of its own. */
  #reading = false;
  #label: string;

  /**
   * @example
   * const add = new gx.RawKernel(`extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
   *   int i = blockIdx.x * blockDim.x + threadIdx.x;
   *   if (i < n) c[i] = a[i] + b[i];
   * }`, 'add');
   * add.launch([Math.ceil(n / 256)], [256], [a, b, c, n]);
   */
  constructor(code: string | RawModule, name: string, opts: RawKernelOptions = {}) {
    if (typeof code !== 'string' && !(code instanceof RawModule)) {
      throw new TypeError('gx.RawKernel: code must be CUDA source text');
    }
    if (typeof name !== 'string' || name === '') throw new TypeError('gx.RawKernel: name must be the kernel\'s name');
    checkModuleOptions('gx.RawKernel', opts, KERNEL_KEYS);
    this.name = name;
    this.#label = `gx.RawKernel '${name}'`;
    this.module = code instanceof RawModule ? code : new RawModule(code, { options: opts.options, arch: opts.arch });
    if (opts.ptx !== undefined && typeof code === 'string') this.module.ptx = opts.ptx;
    this.params = opts.kernelParams ?? declaredParams(this.module.code ?? '', name, opts.params);
    this.#kinds = this.params && kindsOf(this.params);
  }

  /** @internal The native function on a device. */
  function(device: Device): NativeFunction {
    // A CPU tensor's address is host memory: a kernel given it would fault (or, with a CPU index that matches a GPU's, run on that GPU with host pointers).
    if (device.type !== 'cuda') throw new TypeError(`${this.#label}: runs on a CUDA device, not ${device}`);
    if (device.index === this.#lastIndex && this.#lastFunction !== undefined) return this.#lastFunction;
    let f = this.#functions.get(device.index);
    if (f === undefined) {
      const loaded = this.module.load(device);
      const lowered = loaded.loweredNames[this.name] ?? this.name;
      f = native.moduleGetFunction(loaded.module, lowered, this.#kinds);
      this.#functions.set(device.index, f);
    }
    this.#lastIndex = device.index;
    this.#lastFunction = f;
    return f;
  }

  /** Registers, shared memory, thread limits of the compiled kernel on a device. */
  attributes(device?: DeviceLike): KernelAttributes {
    return native.functionAttributes(this.function(cudaDevice(device, 'RawKernel.attributes')));
  }

  /** Allows dynamic shared memory beyond 48 KiB (up to the device's opt-in limit). */
  setMaxDynamicSharedSize(bytes: number, device?: DeviceLike): void {
    native.functionSetMaxDynamicSharedSize(this.function(cudaDevice(device, 'RawKernel.setMaxDynamicSharedSize')), bytes);
  }

  /** Compiles and loads now (launch does it on first use). */
  compile(device?: DeviceLike): this {
    this.function(cudaDevice(device, 'RawKernel.compile'));
    return this;
  }

  /**
   * Launches on `grid` blocks of `block` threads. Tensors pass as device
   * pointers, numbers and bigints as the C types the kernel declares (NOTE
   * [ Kernel arguments ]). Asynchronous: ordered on the stream.
   */
  launch(grid: Dim3, block: Dim3, args: readonly unknown[], opts?: LaunchOptions): void {
    const fn = this.#label;
    const params = this.#checkArity(args);
    if (opts !== undefined) checkOptions<LaunchOptions>(opts, fn, LAUNCH_KEYS);
    const stream = opts?.stream;
    let device: Device | undefined = stream?.device;
    // Numbers (tensors by address) into this kernel's array first: reading the
    // caller's arrays may run their code (a getter, a Proxy), which could
    // launch too, so nothing is staged until all is read. A bigint a double
    // cannot hold sends the values as an array instead (NOTE [ Launch latency ]).
    const reentered = this.#reading;
    const numbers = reentered ? new Float64Array(params.length) : (this.#numbers ??= new Float64Array(params.length));
    const dims = reentered ? new Float64Array(STAGED_DIMS) : this.#dims;
    this.#reading = true;
    let asNumbers = params.length <= STAGED_MAX_ARGS;
    try {
      for (let i = 0; i < args.length; i++) {
        const a = args[i];
        const p = params[i];
        if (p.kind === 'pointer') {
          if (!(a instanceof Tensor)) {
            throw new TypeError(`${fn}: argument ${i} '${p.name}' is declared ${p.type} but got ${describe(a)}; pass a Tensor`);
          }
          const d = a.device;
          if (device === undefined) {
            if (d.type !== 'cuda') throw new TypeError(`${fn}: argument ${i} '${p.name}' is on ${d}; kernels read CUDA tensors (move it with .cuda())`);
            device = d;
          } else if (d !== device && !device.equals(d)) {
            throw new Error(`${fn}: argument ${i} '${p.name}' is on ${d} but the launch is on ${device}`);
          }
          numbers[i] = a.address(fn);
        } else if (typeof a === 'number' && fastScalarOk(p.kind, a)) {
          numbers[i] = a;
        } else {
          // The rest (bigints, booleans, edge values, mistakes) go through the full check.
          const v = launchValue(a, checkScalar(p, a, fn, `${i} '${p.name}'`));
          numbers[i] = Number(v);
          if (typeof v === 'bigint' && !Number.isSafeInteger(numbers[i])) asNumbers = false;
        }
      }
      readDim3(grid, dims, 0, fn, 'grid');
      readDim3(block, dims, 3, fn, 'block');
    } finally {
      this.#reading = reentered;
    }
    dims[6] = sharedMemOf(opts, fn);
    const f = this.function(device ?? cudaDevice(undefined, fn));
    const values = asNumbers ? undefined : launchValues(params, args, fn);
    // Staged and launched with no other JS in between (the staging area is this thread's).
    const st = stagingArea();
    st.set(dims, 0);
    if (asNumbers) st.set(numbers, STAGED_ARGS);
    native.launchKernel(f, stream?.native, values);
  }

  /** The declared parameters, when `args` matches them in number (launch()'s first check). */
  #checkArity(args: readonly unknown[]): readonly KernelParam[] {
    const fn = this.#label;
    if (this.#kinds === undefined || this.params === undefined) {
      throw new TypeError(`${fn}: cannot read its parameter types from the source (a template, or types gpuext does not know); ` +
        `declare them: new gx.RawKernel(code, '${this.name}', { params: ['float*', 'int'] }), or use RawModule name expressions`);
    }
    if (!Array.isArray(args)) throw new TypeError(`${fn}: args must be an array`);
    const params = this.params;
    if (args.length !== params.length) {
      throw new TypeError(`${fn}: takes ${params.length} argument${params.length === 1 ? '' : 's'} (${params.map((p) => p.type).join(', ')}) but ${args.length} were given`);
    }
    return params;
  }

  /**
   * @internal launchPrepared with extents of any rank: `dims` holds grid x,
   * y, z, block x, y, z and the dynamic shared memory (readDim3 writes them),
   * the arguments already staged. On the current stream.
   */
  launchStaged(device: Device, dims: Float64Array): void {
    const f = this.function(device);
    stagingArea().set(dims, 0);
    native.launchKernel(f, undefined);
  }

  /**
   * @internal Launches generated code whose arguments are known to match the
   * parameters (elementwise and reduction kernels): numbers, tensors by
   * address, checked by the caller (alive, on `device`; NOTE [ Argument slots ]
   * in csrc/binding/rtc_launch.cpp), either `values` or, without them,
   * already written into the staging area from STAGED_ARGS on. A 1-D grid on
   * the current stream.
   */
  launchPrepared(device: Device, blocks: number, threads: number, values?: readonly number[], sharedMem = 0): void {
    const f = this.function(device);
    const st = stagingArea();
    if (values !== undefined) {
      const n = (this.#kinds as Int8Array).length;
      if (values.length !== n) throw new Error(`${this.#label}: internal error: ${values.length} arguments for ${n} parameters`);
      if (n > STAGED_MAX_ARGS) throw new RangeError(`${this.#label}: ${n} kernel arguments are more than a launch takes (${STAGED_MAX_ARGS})`);
      for (let i = 0; i < n; i++) st[STAGED_ARGS + i] = values[i];
    }
    st[0] = blocks;
    st[1] = 1;
    st[2] = 1;
    st[3] = threads;
    st[4] = 1;
    st[5] = 1;
    st[6] = sharedMem;
    native.launchKernel(f, undefined);
  }
}

/** launch()'s dynamic shared memory in bytes, checked. */
function sharedMemOf(opts: LaunchOptions | undefined, fn: string): number {
  const sharedMem = opts?.sharedMem ?? 0;
  if (sharedMem !== 0 && !(typeof sharedMem === 'number' && Number.isInteger(sharedMem) && sharedMem > 0)) {
    throw new RangeError(`${fn}: sharedMem must be a non-negative integer of bytes, got ${String(sharedMem)}`);
  }
  return sharedMem;
}

/**
 * What the launcher gets for a checked scalar: a number as itself (the
 * launcher refuses integers beyond 2^53 as imprecise), a bigint or a boolean
 * as checkScalar converted it.
 */
function launchValue(a: unknown, checked: number | bigint | boolean): number | bigint | boolean {
  return typeof a === 'number' ? a : checked;
}

/** The arguments as an array of values (tensors as handles), for a launch with a bigint a double cannot hold; already checked. */
function launchValues(params: readonly KernelParam[], args: readonly unknown[], fn: string): unknown[] {
  return args.map((a, i) => (a instanceof Tensor ? a.handle(fn) : launchValue(a, checkScalar(params[i], a, fn, `${i} '${params[i].name}'`))));
}

/** True for a number that plainly fits `kind` (floats: any finite number; ints: an integer in range). */
function fastScalarOk(kind: ParamKind, v: number): boolean {
  switch (kind) {
    case 'float32':
    case 'float64':
      return Number.isFinite(v) && Math.abs(v) < 3e38;
    case 'int32':
      return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647;
    case 'int64':
      return Number.isSafeInteger(v);
    case 'uint32':
      return Number.isInteger(v) && v >= 0 && v <= 4294967295;
    case 'uint64':
      return Number.isSafeInteger(v) && v >= 0;
    default:
      return false;
  }
}

function declaredParams(code: string, name: string, params: readonly string[] | undefined): KernelParam[] | undefined {
  if (params !== undefined) return params.map((t, i) => parseParamType(t, `p${i}`));
  return parseKernelSignature(code, name);
}

function kindsOf(params: readonly KernelParam[]): Int8Array | undefined {
  const kinds = new Int8Array(params.length);
  for (let i = 0; i < params.length; i++) {
    const k = params[i].kind;
    if (k === 'unknown') return undefined;
    kinds[i] = KIND_CODE[k];
  }
  return kinds;
}

function describe(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  return typeof x === 'object' ? 'an object' : `${typeof x} ${String(x)}`;
}
