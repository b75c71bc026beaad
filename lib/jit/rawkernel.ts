// gx.jit.rawkernel: a JS function compiled to a CUDA kernel the first time it
// is called with given argument types (cupyx.jit.rawkernel, Numba's
// cuda.jit): tensors by dtype, rank and whether they are contiguous, numbers
// as int64 or weak float64 (NOTE [ Types in jit functions ]). Each
// specialization is a gx.RawKernel over the generated source, so it is
// cached in memory and on disk like every run-time kernel. CPU tensors run
// the same typed kernel on the simulator (interpret.ts, simulator.ts).
//
// A tensor parameter `x` becomes a pointer `p_x`, plus only what the body
// asks of it: its extents `n_x_d` (x.shape, x.length, and every extent in
// { debug: true }, which checks each index) and, for a tensor that is not
// contiguous, its strides `s_x_d` (a contiguous one's follow from its
// extents). So a 1-d contiguous tensor passes as one pointer, as in a
// hand-written RawKernel.
import { checkOptions, optionKeys } from '../options';
import { Tensor } from '../tensor';
import { zeros } from '../creation';
import { typeHeaders } from '../rtc/params';
import { RawKernel, readDim3, type Dim3, type LaunchOptions } from '../rtc/raw';
import { STAGED_ARGS, stagingArea } from '../staging';
import { closureValues, type Lookup } from './closure';
import { simulate } from './simulator';
import { compileKernel, type CompiledKernel } from './interpret';
import { parseFunction, referencedNames, type ParsedFunction } from './source';
import { cName, emitKernelBody, paramNames, type ParamArrays } from './emit-cuda';
import type { ArrayDecl } from './ir';
import { Module } from './module';
import { typeFunction, type ParamSpec } from './typer-function';
import { C_TYPE, elementCType, type ScalarDType } from './types';
import type { DType } from '../generated/dtypes';

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
  /** How many specializations have been compiled (one per argument types). */
  readonly specializations: number;
}

/** One argument's part of a specialization: what the kernel receives for it. */
type ArgSpec =
  | { kind: 'tensor'; dtype: DType; rank: number; contiguous: boolean }
  | { kind: 'number'; dtype: ScalarDType };

interface Specialization {
  args: ArgSpec[];
  source: string;
  kernel: RawKernel;
  /** For each C parameter: [argument index, what, dimension]. */
  plan: [number, 'ptr' | 'value' | 'dim' | 'stride', number][];
  flat: unknown[];
  sites: Module['sites'];
  /** { debug: true }: the error record per device. */
  err: Map<number, Tensor>;
}

const OPTION_KEYS = optionKeys<RawkernelOptions>({ name: true, debug: true, options: true });

function argSpec(a: unknown, i: number, params: readonly string[], fn: string): ArgSpec {
  if (a instanceof Tensor) return { kind: 'tensor', dtype: a.dtype, rank: a.ndim, contiguous: a.isContiguous() };
  if (typeof a === 'number') return { kind: 'number', dtype: Number.isInteger(a) ? 'int64' : 'float64' };
  if (typeof a === 'bigint') return { kind: 'number', dtype: 'int64' };
  if (typeof a === 'boolean') return { kind: 'number', dtype: 'bool' };
  throw new TypeError(`${fn}: argument ${i} (${params[i] ?? '?'}) must be a Tensor, a number, a bigint or a boolean, got ${a === null ? 'null' : typeof a}`);
}

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

/** The typer's view of the parameters of `specs`: tensors as arrays, integral numbers int64, fractional ones weak float64. */
function paramSpecs(f: ParsedFunction, specs: readonly ArgSpec[]): ParamSpec[] {
  return specs.map((s, i): ParamSpec => {
    if (s.kind === 'number') return { kind: 'number', ty: { dtype: s.dtype, weak: s.dtype === 'float64' } };
    const arr: ArrayDecl = { id: -1 - i, label: f.params[i] ?? `arg${i}`, dtype: s.dtype, rank: s.rank, space: 'param', param: i, contiguous: s.contiguous };
    return { kind: 'array', arr };
  });
}

/** The generated source and launch plan for arguments of `specs`. */
function generate(f: ParsedFunction, name: string, specs: readonly ArgSpec[], lookup: Lookup, debug: boolean, api: string) {
  const module = new Module(debug);
  const fn = typeFunction(f, 'kernel', name, paramSpecs(f, specs), undefined, lookup, module, api);
  const used = specs.map(() => ({ dims: new Set<number>(), strides: new Set<number>() }));
  const reserved = new Set<string>();
  specs.forEach((s, i) => {
    const p = f.params[i];
    if (s.kind === 'number') return reserved.add(cName(p));
    const n = paramNames(p);
    reserved.add(n.ptr);
    for (let d = 0; d < s.rank; d++) reserved.add(n.dim(d)).add(n.stride(d));
    if (debug) for (let d = 0; d < s.rank; d++) used[i].dims.add(d);
  });
  const dim = (a: ArrayDecl, d: number): string => {
    used[a.param ?? 0].dims.add(d);
    return paramNames(a.label).dim(d);
  };
  const arrays: ParamArrays = {
    ptr: (a) => paramNames(a.label).ptr,
    dim,
    stride: (a, d) => {
      if (!a.contiguous) {
        used[a.param ?? 0].strides.add(d);
        return paramNames(a.label).stride(d);
      }
      if (d === a.rank - 1) return '1';
      return Array.from({ length: a.rank - 1 - d }, (_, k) => dim(a, d + 1 + k)).join(' * ');
    },
  };
  const body = emitKernelBody(fn, module, arrays, reserved);
  const cParams: string[] = [];
  const types: string[] = [];
  const plan: Specialization['plan'] = [];
  const add = (type: string, cname: string, entry: Specialization['plan'][number]): void => {
    cParams.push(`${type} ${cname}`);
    types.push(type);
    plan.push(entry);
  };
  specs.forEach((s, i) => {
    const p = f.params[i];
    if (s.kind === 'number') {
      add(C_TYPE[s.dtype], cName(p), [i, 'value', 0]);
      return;
    }
    const n = paramNames(p);
    add(`${elementCType(s.dtype)}*`, n.ptr, [i, 'ptr', 0]);
    for (const d of [...used[i].dims].sort()) add('long long', n.dim(d), [i, 'dim', d]);
    for (const d of [...used[i].strides].sort()) add('long long', n.stride(d), [i, 'stride', d]);
  });
  if (debug) {
    cParams.push('long long* gx_err');
    types.push('long long*');
  }
  const headers = typeHeaders(specs.flatMap((s) => (s.kind === 'tensor' ? [s.dtype] : [])));
  const source = `${headers}${module.preamble()}extern "C" __global__ void ${name}(${cParams.join(', ')}) {\n${body.join('\n')}\n}\n`;
  return { source, types, plan, sites: module.sites };
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
  const api = 'gx.jit.rawkernel';
  const opts = checkOptions<RawkernelOptions>(options, api, OPTION_KEYS);
  if (opts.name !== undefined && (typeof opts.name !== 'string' || !/^[A-Za-z_]\w*$/.test(opts.name))) {
    throw new TypeError(`${api}: name must be a C identifier, got ${JSON.stringify(opts.name)}`);
  }
  const parsed = parseFunction(fn, api);
  const name = (opts.name ?? (parsed.name || 'kernel')).replace(/[^A-Za-z0-9_]/g, '_');
  const label = `${api}(${name})`;
  const debug = opts.debug === true;
  const nvrtc = [...exactMath(opts.options ?? []), ...(debug ? ['-lineinfo'] : [])];
  let lookup: Lookup | undefined;
  const lookupOf = (): Lookup => (lookup ??= closureValues(fn, referencedNames(parsed)));
  const specs = new Map<string, Specialization>();
  let last: Specialization | undefined;
  const simulated = new Map<string, CompiledKernel>();

  const specialize = (args: readonly unknown[]): Specialization => {
    if (last !== undefined && matches(last.args, args)) return last;
    const argSpecs = args.map((a, i) => argSpec(a, i, parsed.params, label));
    const key = specKey(argSpecs);
    let s = specs.get(key);
    if (s === undefined) {
      const g = generate(parsed, `gx_jit_${name}`, argSpecs, lookupOf(), debug, label);
      const kernel = new RawKernel(g.source, `gx_jit_${name}`, { params: g.types, options: nvrtc });
      s = { args: argSpecs, source: g.source, kernel, plan: g.plan, flat: new Array(g.plan.length), sites: g.sites, err: new Map() };
      specs.set(key, s);
    }
    last = s;
    return s;
  };

  const checkArity = (args: readonly unknown[]): void => {
    if (args.length !== parsed.params.length) {
      throw new TypeError(`${label}: takes ${parsed.params.length} argument${parsed.params.length === 1 ? '' : 's'} (${parsed.params.join(', ')}), got ${args.length}`);
    }
  };

  // NOTE [ jit launch path ]: a repeated call checks its arguments against the
  // last specialization, writes them as numbers (tensors by address) into the
  // staging area and launches (RawKernel.launchStaged), as the elementwise
  // kernels do; the first call of a specialization, a stream option, debug
  // kernels and bigints a double cannot hold take RawKernel.launch's checks.
  const dims = new Float64Array(7);
  const launch = (grid: Dim3, block: Dim3, args: readonly unknown[], lo?: LaunchOptions): void => {
    if (!Array.isArray(args)) throw new TypeError(`${label}: args must be an array of the kernel's arguments`);
    checkArity(args);
    const fast = last !== undefined && lo === undefined && !debug && matches(last.args, args);
    if (!fast) {
      for (const a of args) {
        if (a instanceof Tensor && a.device.type === 'cpu') {
          runOnSimulator(grid, block, args);
          return;
        }
      }
    }
    const s = fast ? (last as Specialization) : specialize(args);
    const flat = s.flat;
    const plan = s.plan;
    for (let k = 0; k < plan.length; k++) {
      const [i, what, d] = plan[k];
      const a = args[i];
      flat[k] = what === 'ptr' || what === 'value' ? a : what === 'dim' ? (a as Tensor).shape[d] : (a as Tensor).strides[d];
    }
    if (debug) {
      launchChecked(s, grid, block, args, lo);
      return;
    }
    if (!fast) {
      s.kernel.launch(grid, block, flat, lo);
      return;
    }
    readDim3(grid, dims, 0, label, 'grid');
    readDim3(block, dims, 3, label, 'block');
    // The same device for every tensor (the first call's checks covered the rest of the layout).
    let device: Tensor['device'] | undefined;
    const st = stagingArea();
    for (let k = 0; k < flat.length; k++) {
      const v = flat[k];
      if (v instanceof Tensor) {
        const dv = v.device;
        if (device === undefined) {
          // The last specialization matches by dtype, rank and layout, not device: CPU tensors take the simulator.
          if (dv.type === 'cpu') {
            runOnSimulator(grid, block, args);
            return;
          }
          device = dv;
        } else if (dv !== device && !dv.equals(device)) throw new Error(`${label}: arguments are on ${device} and ${dv}; move them to one device`);
        st[STAGED_ARGS + k] = v.address(label);
      } else if (typeof v === 'bigint') {
        if (!Number.isSafeInteger(Number(v))) {
          s.kernel.launch(grid, block, flat);
          return;
        }
        st[STAGED_ARGS + k] = Number(v);
      } else {
        st[STAGED_ARGS + k] = v === true ? 1 : v === false ? 0 : (v as number);
      }
    }
    if (device === undefined) {
      s.kernel.launch(grid, block, flat);
      return;
    }
    s.kernel.launchStaged(device, dims);
  };

  const launchChecked = (s: Specialization, grid: Dim3, block: Dim3, args: readonly unknown[], lo?: LaunchOptions): void => {
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
    if (n(2) === -1) {
      throw new RangeError(`${label}: integer remainder by zero (${n(3)} % 0), line ${site.line}, ` +
        `thread (${n(5)}, ${n(6)}, ${n(7)}) of block (${n(8)}, ${n(9)}, ${n(10)}); it gave 0`);
    }
    throw new RangeError(`${label}: index ${n(3)} is out of range for dimension ${n(2)} of ${site.label} (size ${n(4)}), ` +
      `line ${site.line}, thread (${n(5)}, ${n(6)}, ${n(7)}) of block (${n(8)}, ${n(9)}, ${n(10)}); the access was skipped`);
  };

  const runOnSimulator = (grid: Dim3, block: Dim3, args: readonly unknown[]): void => {
    for (const a of args) {
      if (a instanceof Tensor && a.device.type !== 'cpu') throw new Error(`${label}: arguments are on cpu and ${a.device}; move them to one device`);
    }
    // The kernel typed for these arguments as for CUDA (contiguity aside): what CUDA refuses is refused here, before any thread runs.
    const argSpecs = args.map((a, i): ArgSpec => {
      const s = argSpec(a, i, parsed.params, label);
      return s.kind === 'tensor' ? { ...s, contiguous: true } : s;
    });
    const key = specKey(argSpecs);
    let k = simulated.get(key);
    if (k === undefined) {
      const fn = typeFunction(parsed, 'kernel', `gx_jit_${name}`, paramSpecs(parsed, argSpecs), undefined, lookupOf(), new Module(debug), label);
      simulated.set(key, (k = compileKernel(fn, debug)));
    }
    simulate(k, label, parsed.text, extentsOf(grid, 'grid'), extentsOf(block, 'block'), parsed.params, args, debug);
  };

  const extentsOf = (d: Dim3, what: string): number[] => {
    const v = new Float64Array(3);
    readDim3(d, v, 0, label, what);
    return [...v];
  };

  const k = launch as JitKernel;
  Object.defineProperty(k, 'name', { value: name });
  Object.defineProperty(k, 'configure', {
    value: (grid: Dim3, block: Dim3, lo?: LaunchOptions) => (...args: KernelArg[]) => launch(grid, block, args, lo),
  });
  Object.defineProperty(k, 'source', {
    value: (...args: KernelArg[]): string => {
      checkArity(args);
      const argSpecs = args.map((a, i) => argSpec(a, i, parsed.params, label));
      return generate(parsed, `gx_jit_${name}`, argSpecs, lookupOf(), debug, label).source;
    },
  });
  Object.defineProperty(k, 'specializations', { get: () => specs.size });
  return k;
}

