// gx.jit.rawkernel: a JS function compiled to a CUDA kernel the first time it
// is called with given argument types (cupyx.jit.rawkernel, Numba's
// cuda.jit): tensors by dtype, rank and whether they are contiguous, numbers
// as int64 or weak float64 (NOTE [ Types in jit functions ]). Each
// specialization is a gx.RawKernel over the generated source, so it is
// cached in memory and on disk like every run-time kernel; the translation
// itself is cached in memory and on disk too (NOTE [ Translation cache ]),
// and the translator is loaded only when it misses. CPU tensors run the same
// typed kernel on the simulator (interpret.ts, simulator.ts).
//
// A tensor parameter `x` becomes a pointer `p_x`, plus only what the body
// asks of it: its extents `n_x_d` (x.shape, x.length, and every extent in
// { debug: true }, which checks each index) and, for a tensor that is not
// contiguous, its strides `s_x_d` (a contiguous one's follow from its
// extents). So a 1-d contiguous tensor passes as one pointer, as in a
// hand-written RawKernel.
import { checkOptions, optionKeys } from '../core/options';
import { Tensor } from '../core/tensor';
import { zeros } from '../ops/creation/creation';
import { RawKernel, readDim3, type Dim3, type LaunchOptions } from '../rtc/raw';
import { STAGED_ARGS, STAGED_DIMS, stagingArea } from '../core/staging';
import type { CompiledKernel } from './interpret';
import type { Parsed } from './parse';
import type { Lookup } from './closure';
import {
  closureKey, closureLookup, infoGet, infoPut, parser, translationGet, translationKey, translationPut,
  type ArgSpec, type FunctionInfo, type PlanEntry, type Translation,
} from './translation-cache';

export interface RawkernelOptions {
  /** The kernel's name (default: the function's name, else 'kernel'). */
  name?: string;
  /** Check every index of every tensor access: an index out of range throws, naming the kernel, the tensor, the index and the thread. Compiled with line info. */
  debug?: boolean;
  /** NVRTC options, e.g. ['--use_fast_math']. */
  options?: string[];
}

/** An argument of a jit kernel: a tensor, a number (int64 when integral, else float64), a bigint (int64) or a boolean. */
export type KernelArg = Tensor | number | bigint | boolean;

export interface JitKernel {
  /** Launches on `grid` blocks of `block` threads with `args` (CuPy's RawKernel style: kernel((128,), (1024,), (x, y, n))). */
  (grid: Dim3, block: Dim3, args: readonly KernelArg[], opts?: LaunchOptions): void;
  /** The launch configuration fixed first, then the arguments (Numba's `kernel[blocks, threads](x, y, n)`). */
  configure(grid: Dim3, block: Dim3, opts?: LaunchOptions): (...args: KernelArg[]) => void;
  /** The CUDA source generated for these arguments' types (Numba's inspect_types). */
  source(...args: KernelArg[]): string;
  /** The PTX generated for these arguments' types (Numba's inspect_asm), or undefined when the kernel is compiled from its CUDA source by NVRTC (NOTE [ PTX path ]). */
  ptx(...args: KernelArg[]): string | undefined;
  /** How many specializations have been compiled (one per argument types). */
  readonly specializations: number;
}

interface Specialization {
  args: ArgSpec[];
  source: string;
  kernel: RawKernel;
  plan: PlanEntry[];
  flat: unknown[];
  sites: Translation['sites'];
  /** { debug: true }: the error record per device. */
  err: Map<number, Tensor>;
}

const OPTION_KEYS = optionKeys<RawkernelOptions>({ name: true, debug: true, options: true });

const specKey = (s: readonly ArgSpec[]): string =>
  s.map((a) => (a.kind === 'tensor' ? `${a.dtype}/${a.rank}${a.contiguous ? 'c' : 's'}` : a.dtype)).join(',');

function matches(spec: readonly ArgSpec[], args: readonly unknown[]): boolean {
  if (spec.length !== args.length) return false;
  for (let i = 0; i < spec.length; i++) {
    const s = spec[i];
    const a = args[i];
    if (s.kind === 'tensor') {
      if (!(a instanceof Tensor) || a.dtype !== s.dtype || a.ndim !== s.rank || a.isContiguous() !== s.contiguous) return false;
    } else if (typeof a === 'number') {
      if ((s.dtype === 'int64') !== Number.isInteger(a) || s.dtype === 'bool') return false;
    } else if (!((typeof a === 'bigint' && s.dtype === 'int64') || (typeof a === 'boolean' && s.dtype === 'bool'))) {
      return false;
    }
  }
  return true;
}

/**
 * NVRTC options keeping the simulator's arithmetic (LANGUAGE.md): no fused
 * multiply-add contraction, which rounds `x * y + z` once where the
 * language rounds twice; unless the user asked for fast math or chose.
 */
export function exactMath(options: readonly string[]): string[] {
  const chose = options.some((o) => /^-?-(use_fast_math|fmad)/.test(o));
  return chose ? [...options] : ['--fmad=false', ...options];
}

/**
 * The NVRTC options of a source the jit generated: the kernel's, and
 * -minimal (NOTE [ Minimal NVRTC ] in lib/rtc/nvrtc-backend.ts) unless the
 * source or an option brings in a header, whose declarations -minimal might
 * leave out. The generated code itself uses none of them (test/jit-minimal.test.ts).
 */
export function compileOptions(source: string, options: readonly string[]): string[] {
  const header = /#[ \t]*include/.test(source) || options.some((o) => /^(-include|--pre-include|--?minimal$)/.test(o));
  return header ? [...options] : [...options, '-minimal'];
}

/** GPUEXT_JIT_PTX=0 compiles every jit kernel from its CUDA source (NOTE [ PTX path ]): read once. */
let ptxSwitch: boolean | undefined;
export const ptxEnabled = (): boolean => (ptxSwitch ??= process.env.GPUEXT_JIT_PTX !== '0');
/** @internal For tests: the PTX path on or off for kernels specialized from now on (GPUEXT_JIT_PTX's switch). */
export function setPtxEnabled(on: boolean): void {
  ptxSwitch = on;
}

/** The translator (kernel-gen.ts, with acorn and the typer), loaded when a translation first misses the cache. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const translator = (): typeof import('./kernel-gen') => require('./kernel-gen') as typeof import('./kernel-gen');

/**
 * One gx.jit.rawkernel: the user's function, its specializations by argument
 * types (each a RawKernel) and the launch path. The function is parsed only
 * when a translation misses the cache (NOTE [ Translation cache ]).
 */
class Rawkernel {
  readonly label: string;
  readonly name: string;
  private readonly debug: boolean;
  private readonly nvrtc: string[];
  private readonly text: string;
  private info: FunctionInfo;
  private parsed: Parsed | undefined;
  private readonly specs = new Map<string, Specialization>();
  private last: Specialization | undefined;
  private readonly simulated = new Map<string, CompiledKernel>();
  private readonly dims = new Float64Array(STAGED_DIMS);

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(private readonly fn: (...args: any[]) => void, options: RawkernelOptions | undefined) {
    const api = 'gx.jit.rawkernel';
    const opts = checkOptions<RawkernelOptions>(options, api, OPTION_KEYS);
    if (opts.name !== undefined && (typeof opts.name !== 'string' || !/^[A-Za-z_]\w*$/.test(opts.name))) {
      throw new TypeError(`${api}: name must be a C identifier, got ${JSON.stringify(opts.name)}`);
    }
    if (typeof fn !== 'function') throw new TypeError(`${api}: expected a function, got ${typeof fn}`);
    this.text = Function.prototype.toString.call(fn);
    this.name = (opts.name ?? (fn.name || 'kernel')).replace(/[^A-Za-z0-9_]/g, '_');
    this.label = `${api}(${this.name})`;
    this.debug = opts.debug === true;
    this.nvrtc = [...exactMath(opts.options ?? []), ...(this.debug ? ['-lineinfo'] : [])];
    // A text the cache has seen parsed; any other is parsed now, which reports a syntax error at once, and described in the cache.
    // A kernel meant for the PTX path needs no NVRTC, so its files are not read ahead (NOTE [ NVRTC prefetch ]).
    let info = infoGet(this.text, !(ptxEnabled() && this.ptxAllowed()));
    if (info === undefined) infoPut(this.text, (info = this.parse().info));
    this.info = info;
  }

  /** What the function closes over, keyed once (null: it cannot be; undefined: not read yet). */
  private closure: string | null | undefined;
  private lookupMemo: Lookup | undefined;
  /** The closure, read once per kernel object (LANGUAGE.md: the translation cache): for the key and the typer alike. */
  private readonly lookup = (): Lookup => (this.lookupMemo ??= closureLookup(this.fn, this.info));

  /** The translation cache's key for `what`, or undefined when the closure cannot be keyed. */
  private cacheKey(what: string): string | undefined {
    if (this.closure === undefined) this.closure = closureKey(this.fn, this.info, this.lookup()) ?? null;
    return this.closure === null ? undefined : translationKey(this.closure, this.text, what);
  }

  private parse(): { p: Parsed; info: FunctionInfo } {
    const r = parser().parse(this.fn, 'gx.jit.rawkernel', this.lookup);
    this.parsed = r.p;
    return r;
  }

  private parsedFn(): Parsed {
    return this.parsed ?? this.parse().p;
  }

  get params(): readonly string[] {
    return this.info.params;
  }

  get specializations(): number {
    return this.specs.size;
  }

  argSpecs(args: readonly unknown[], contiguous?: true): ArgSpec[] {
    return args.map((a, i): ArgSpec => {
      if (a instanceof Tensor) return { kind: 'tensor', dtype: a.dtype, rank: a.ndim, contiguous: contiguous ?? a.isContiguous() };
      if (typeof a === 'number') return { kind: 'number', dtype: Number.isInteger(a) ? 'int64' : 'float64' };
      if (typeof a === 'bigint') return { kind: 'number', dtype: 'int64' };
      if (typeof a === 'boolean') return { kind: 'number', dtype: 'bool' };
      throw new TypeError(`${this.label}: argument ${i} (${this.params[i] ?? '?'}) must be a Tensor, a number, a bigint or a boolean, ` +
        `got ${a === null ? 'null' : typeof a}`);
    });
  }

  /**
   * Whether the kernel may also be printed as PTX (NOTE [ PTX path ] in
   * emit-ptx.ts): not in { debug: true }, and not under NVRTC options of the
   * user's, whose meaning the PTX would not follow. (Part of the cache key
   * already: the key holds the debug flag and the options.)
   */
  private ptxAllowed(): boolean {
    return !this.debug && this.nvrtc.length === 1 && this.nvrtc[0] === '--fmad=false';
  }

  /** The translation for `specs`: from the cache, else generated (and cached when its closure can be keyed). */
  translation(specs: readonly ArgSpec[]): Translation {
    const kernelName = `gx_jit_${this.name}`;
    const key = this.cacheKey(JSON.stringify(['rawkernel', kernelName, this.debug, this.nvrtc, specKey(specs)]));
    const hit = key === undefined ? undefined : translationGet(key);
    if (hit !== undefined) return hit;
    const t = translator().generate(this.parsedFn(), kernelName, specs, this.debug, this.label, this.ptxAllowed());
    if (key !== undefined) translationPut(key, t);
    return t;
  }

  /** The specialization for these arguments' types, compiled (a RawKernel) when first seen. */
  specialize(args: readonly unknown[]): Specialization {
    if (this.last !== undefined && matches(this.last.args, args)) return this.last;
    const argSpecs = this.argSpecs(args);
    const key = specKey(argSpecs);
    let s = this.specs.get(key);
    if (s === undefined) {
      const t = this.translation(argSpecs);
      const ptx = t.ptx !== undefined && ptxEnabled() ? { ptx: t.ptx } : {};
      const kernel = new RawKernel(t.source, `gx_jit_${this.name}`, { params: t.types, options: compileOptions(t.source, this.nvrtc), ...ptx });
      s = { args: argSpecs, source: t.source, kernel, plan: t.plan, flat: new Array(t.plan.length), sites: t.sites, err: new Map() };
      this.specs.set(key, s);
    }
    this.last = s;
    return s;
  }

  /** Arity and shape of the argument list. */
  check(args: readonly unknown[]): void {
    if (!Array.isArray(args)) throw new TypeError(`${this.label}: args must be an array of the kernel's arguments`);
    const params = this.params;
    if (args.length !== params.length) {
      throw new TypeError(`${this.label}: takes ${params.length} argument${params.length === 1 ? '' : 's'} (${params.join(', ')}), got ${args.length}`);
    }
  }

  /** The C arguments of `s` for `args`, in s.flat: pointers (tensors), values, extents and strides. */
  plan(s: Specialization, args: readonly unknown[]): unknown[] {
    const { flat, plan } = s;
    for (let k = 0; k < plan.length; k++) {
      const [i, what, d] = plan[k];
      const a = args[i];
      flat[k] = what === 'ptr' || what === 'value' ? a : what === 'dim' ? (a as Tensor).shape[d] : (a as Tensor).strides[d];
    }
    return flat;
  }

  // NOTE [ jit launch path ]: a repeated call checks its arguments against the
  // last specialization, writes them as numbers (tensors by address) into the
  // staging area and launches (RawKernel.launchStaged), as the elementwise
  // kernels do; the first call of a specialization, a stream option, debug
  // kernels and bigints a double cannot hold take RawKernel.launch's checks.
  call(grid: Dim3, block: Dim3, args: readonly unknown[], lo?: LaunchOptions): void {
    this.check(args);
    const fast = this.last !== undefined && lo === undefined && !this.debug && matches(this.last.args, args);
    if (!fast && args.some((a) => a instanceof Tensor && a.device.type === 'cpu')) return this.runOnSimulator(grid, block, args);
    const s = fast ? (this.last as Specialization) : this.specialize(args);
    const flat = this.plan(s, args);
    if (this.debug) return this.launchChecked(s, grid, block, args, lo);
    if (!fast) return s.kernel.launch(grid, block, flat, lo);
    this.launchStaged(s, grid, block, args);
  }

  private launchStaged(s: Specialization, grid: Dim3, block: Dim3, args: readonly unknown[]): void {
    const { flat, label } = { flat: s.flat, label: this.label };
    readDim3(grid, this.dims, 0, label, 'grid');
    readDim3(block, this.dims, 3, label, 'block');
    // The same device for every tensor (the first call's checks covered the rest of the layout).
    let device: Tensor['device'] | undefined;
    const st = stagingArea();
    for (let k = 0; k < flat.length; k++) {
      const v = flat[k];
      if (v instanceof Tensor) {
        const dv = v.device;
        if (device === undefined) {
          // The last specialization matches by dtype, rank and layout, not device: CPU tensors take the simulator.
          if (dv.type === 'cpu') return this.runOnSimulator(grid, block, args);
          device = dv;
        } else if (dv !== device && !dv.equals(device)) throw new Error(`${label}: arguments are on ${device} and ${dv}; move them to one device`);
        st[STAGED_ARGS + k] = v.address(label);
      } else if (typeof v === 'bigint') {
        if (!Number.isSafeInteger(Number(v))) return s.kernel.launch(grid, block, flat);
        st[STAGED_ARGS + k] = Number(v);
      } else {
        st[STAGED_ARGS + k] = v === true ? 1 : v === false ? 0 : (v as number);
      }
    }
    if (device === undefined) return s.kernel.launch(grid, block, flat);
    s.kernel.launchStaged(device, this.dims);
  }

  private launchChecked(s: Specialization, grid: Dim3, block: Dim3, args: readonly unknown[], lo?: LaunchOptions): void {
    const label = this.label;
    const t = args.find((a): a is Tensor => a instanceof Tensor);
    const dev = lo?.stream?.device ?? t?.device;
    if (dev === undefined) throw new TypeError(`${label}: { debug: true } needs a tensor argument or a stream (to know the device)`);
    let err = s.err.get(dev.index);
    if (err === undefined) s.err.set(dev.index, (err = zeros([11], { dtype: 'int64', device: dev })));
    else err.fill_(0);
    s.kernel.launch(grid, block, [...s.flat, err], lo);
    const rec = err.toArraySync();
    if (rec[0] === 0n) return;
    const n = (k: number): number => Number(rec[k]);
    const site = s.sites[n(1)];
    const where = `line ${site.line}, thread (${n(5)}, ${n(6)}, ${n(7)}) of block (${n(8)}, ${n(9)}, ${n(10)})`;
    if (n(2) === -1) throw new RangeError(`${label}: integer remainder by zero (${n(3)} % 0), ${where}; it gave 0`);
    throw new RangeError(`${label}: index ${n(3)} is out of range for dimension ${n(2)} of ${site.label} (size ${n(4)}), ${where}; the access was skipped`);
  }

  private runOnSimulator(grid: Dim3, block: Dim3, args: readonly unknown[]): void {
    for (const a of args) {
      if (a instanceof Tensor && a.device.type !== 'cpu') throw new Error(`${this.label}: arguments are on cpu and ${a.device}; move them to one device`);
    }
    // The kernel typed for these arguments as for CUDA (contiguity aside): what CUDA refuses is refused here, before any thread runs.
    const argSpecs = this.argSpecs(args, true);
    const key = specKey(argSpecs);
    const gen = translator();
    const p = this.parsedFn();
    let k = this.simulated.get(key);
    if (k === undefined) this.simulated.set(key, (k = gen.simulated(p, `gx_jit_${this.name}`, argSpecs, this.debug, this.label)));
    gen.simulate(k, this.label, p.parsed.text, this.extentsOf(grid, 'grid'), this.extentsOf(block, 'block'), p.parsed.params, args, this.debug);
  }

  private extentsOf(d: Dim3, what: string): number[] {
    const v = new Float64Array(3);
    readDim3(d, v, 0, this.label, what);
    return [...v];
  }

  source(args: readonly unknown[]): string {
    this.check(args);
    return this.translation(this.argSpecs(args)).source;
  }

  ptx(args: readonly unknown[]): string | undefined {
    this.check(args);
    return this.translation(this.argSpecs(args)).ptx?.text;
  }
}

/**
 * Compiles a JS function to a CUDA kernel when first called with given
 * argument types (cupyx.jit.rawkernel, Numba's cuda.jit). Inside: gx.jit's
 * threadIdx / blockIdx / blockDim / gridDim, grid(n) / gridsize(n),
 * syncthreads(), sharedArray / localArray, atomic.*, Math.*, loops, and
 * elements of tensors (`x[i]`, `x[i][j]` or `x[i, j]`, their strides
 * respected). CPU tensors run the function on the simulator.
 * @example
 * const { jit } = gx;
 * const square = jit.rawkernel((x: jit.Array, y: jit.Array, size: number) => {
 *   const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
 *   const ntid = jit.gridDim.x * jit.blockDim.x;
 *   for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
 * });
 * square([128], [1024], [x, y, size]);        // CuPy's RawKernel style
 * square.configure(128, 1024)(x, y, size);    // Numba's kernel[128, 1024](x, y, size)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function rawkernel(fn: (...args: any[]) => void, options?: RawkernelOptions): JitKernel {
  const r = new Rawkernel(fn, options);
  const launch = (grid: Dim3, block: Dim3, args: readonly KernelArg[], lo?: LaunchOptions): void => r.call(grid, block, args, lo);
  const k = launch as JitKernel;
  Object.defineProperty(k, 'name', { value: r.name });
  Object.defineProperty(k, 'configure', {
    value: (grid: Dim3, block: Dim3, lo?: LaunchOptions) => (...args: KernelArg[]) => r.call(grid, block, args, lo),
  });
  Object.defineProperty(k, 'source', { value: (...args: KernelArg[]): string => r.source(args) });
  Object.defineProperty(k, 'ptx', { value: (...args: KernelArg[]): string | undefined => r.ptx(args) });
  Object.defineProperty(k, 'specializations', { get: () => r.specializations });
  return k;
}
