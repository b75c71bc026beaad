// gx.vectorize: a scalar JS function becomes an elementwise op over tensors
// (Numba's @vectorize([...], target='cuda')). On CUDA the function is
// typed (typer.ts; the numbers it closes over inlined, closure.ts), emitted
// as a __device__ function and run by an elementwise kernel (lib/rtc), one
// per signature, compiled on first use and cached like every run-time kernel.
// On the CPU the same typed function runs per element on the interpreter
// (interpret.ts), computing in the signature's dtypes as the GPU does.
// The translation is cached (NOTE [ Translation cache ]); the parser
// (parse.ts), the translator (vectorize-gen.ts) and the CPU side
// (vectorize-cpu.ts) each load only when they are needed.
import { Tensor } from '../core/tensor';
import { checkOptions, optionKeys } from '../core/options';
import { elementwiseRunner } from '../rtc/elementwise';
import type { CompiledScalar } from './interpret';
import type { Parsed } from './parse';
import { compileOptions, exactMath, ptxEnabled } from './rawkernel';
import type { ElementwiseSourceIn, Layout } from '../rtc/elementwise-codegen';
import { parseParams } from '../rtc/params';
import type { Lookup } from './closure';
import { closureKey, closureLookup, infoGet, infoPut, parser, ptxEntryGet, ptxEntryPut, translationGet, translationKey, translationPut, type FunctionInfo } from './translation-cache';
import { SCALAR_DTYPES, type ScalarDType, type Signature } from './types';

export interface VectorizeOptions {
  /** The kernel's name (default: the function's name, else 'vectorized'). */
  name?: string;
  /** NVRTC options, e.g. ['--fmad=true'] (LANGUAGE.md: the default, --fmad=false, computes as the simulator does). */
  options?: string[];
}

export interface VectorizeCallOptions {
  /** Write the result here (the broadcast shape, the signature's output dtype). */
  out?: Tensor;
}

/** A vectorized function: call it with tensors (and numbers), broadcasting like the built-in ops. */
export interface VectorizedFunction {
  (...args: (Tensor | number | VectorizeCallOptions)[]): Tensor;
  /** The signatures, as given. */
  readonly signatures: readonly string[];
  /** The CUDA source generated for a signature (by index or text; default the first): what the GPU runs. */
  source(signature?: number | string): string;
  /**
   * The PTX of a signature's kernel for contiguous tensors (by index or text;
   * default the first), which the driver loads instead of compiling the
   * source (lib/jit/LANGUAGE.md, "The PTX path"); undefined when that kernel
   * is compiled from its source.
   */
  ptx(signature?: number | string): string | undefined;
}

function parseSignature(text: unknown, fn: string): Signature {
  if (typeof text !== 'string') throw new TypeError(`${fn}: a signature is a string like 'float32(float32, float32)', got ${typeof text}`);
  const m = /^\s*(\w+)\s*\(\s*([\w\s,]*)\)\s*$/.exec(text);
  const names = m ? [m[1], ...(m[2].trim() === '' ? [] : m[2].split(',').map((s) => s.trim()))] : [];
  const bad = names.find((d) => !(SCALAR_DTYPES as readonly string[]).includes(d));
  if (!m || bad !== undefined) {
    throw new TypeError(`${fn}: cannot read the signature '${text}'${bad === undefined ? '' : ` ('${bad}' is not one of ${SCALAR_DTYPES.join(', ')})`}; ` +
      "write it as 'float32(float32, float32)'");
  }
  return { text, out: names[0] as ScalarDType, ins: names.slice(1) as ScalarDType[] };
}

const OPTION_KEYS = optionKeys<VectorizeOptions>({ name: true, options: true });
const CALL_KEYS = optionKeys<VectorizeCallOptions>({ out: true });

const isOptions = (a: unknown): a is VectorizeCallOptions =>
  typeof a === 'object' && a !== null && !(a instanceof Tensor) && !Array.isArray(a);

// eslint-disable-next-line @typescript-eslint/no-require-imports
const translator = (): typeof import('./vectorize-gen') => require('./vectorize-gen') as typeof import('./vectorize-gen');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cpuSide = (): typeof import('./vectorize-cpu') => require('./vectorize-cpu') as typeof import('./vectorize-cpu');

type Runner = ReturnType<typeof elementwiseRunner>;

/** Signature k's elementwise kernel (of the function called `name`): its parameters, body and kernel name. */
function elementwiseOf(s: Signature, name: string, k: number): { ins: string; outs: string; body: string; name: string } {
  return {
    ins: s.ins.map((d, i) => `${d} a${i}`).join(', '), outs: `${s.out} out`,
    body: `out = gx_vec_${name}(${s.ins.map((_, i) => `a${i}`).join(', ')})`, name: `vec_${name}_${k}`,
  };
}

/**
 * What gx.elementwiseKernel's plan gives the code generators for signature
 * k's kernel at these layouts (inputs then the output; no preamble, which
 * only the CUDA source reads): for `.ptx()`, and for tests of the PTX.
 */
export function signatureSourceIn(s: Signature, name: string, k: number, layouts: readonly Layout[], ndim: number): ElementwiseSourceIn {
  const e = elementwiseOf(s, name, k);
  const all = [...parseParams(e.ins, `gx.vectorize(${name})`, 'inputs'), ...parseParams(e.outs, `gx.vectorize(${name})`, 'output')];
  return { name: e.name, preamble: '', body: e.body, nIn: s.ins.length, all, types: [...s.ins, s.out], bound: new Map(), ndim, layouts, outputPassed: [false] };
}

/** One gx.vectorize: its signatures, per signature the CUDA source and kernel (or the simulator's function), and the call path. */
class Vectorized {
  readonly fnName: string;
  readonly name: string;
  readonly sigs: Signature[];
  private readonly text: string;
  private readonly info: FunctionInfo;
  private parsed: Parsed | undefined;
  private readonly sources: (string | undefined)[];
  /** Per signature, its elementwise kernel's call (arguments as one array). */
  private readonly kernels: (Runner | undefined)[];
  private readonly simulated: (CompiledScalar | undefined)[];
  private readonly nvrtc: string[];
  /** The user gave NVRTC options: the kernels take the CUDA route alone. */
  private readonly userOptions: boolean;

  constructor(readonly list: readonly string[], private readonly f: (...args: number[]) => number | boolean, options?: VectorizeOptions) {
    const api = 'gx.vectorize';
    const opts = checkOptions<VectorizeOptions>(options, api, OPTION_KEYS);
    if (opts.name !== undefined && (typeof opts.name !== 'string' || !/^[A-Za-z_]\w*$/.test(opts.name))) {
      throw new TypeError(`${api}: name must be a C identifier, got ${JSON.stringify(opts.name)}`);
    }
    if (!Array.isArray(list) || list.length === 0) throw new TypeError(`${api}: needs at least one signature, e.g. ['float32(float32, float32)']`);
    if (opts.options !== undefined && !(Array.isArray(opts.options) && opts.options.every((o) => typeof o === 'string'))) {
      throw new TypeError(`${api}: options must be an array of NVRTC option strings, got ${JSON.stringify(opts.options)}`);
    }
    this.nvrtc = exactMath(opts.options ?? []);
    this.userOptions = (opts.options ?? []).length > 0;
    this.sigs = list.map((s) => parseSignature(s, api));
    if (typeof f !== 'function') throw new TypeError(`${api}: expected a function, got ${typeof f}`);
    this.text = Function.prototype.toString.call(f);
    // A text the cache has seen parsed; any other is parsed now, which reports a syntax error at once, and described in the cache.
    // One loaded as PTX needs no NVRTC files read ahead.
    let info = infoGet(this.text, !this.ptxRoute());
    if (info === undefined) infoPut(this.text, (info = this.parse().info));
    this.info = info;
    this.name = (opts.name ?? (f.name || 'vectorized')).replace(/[^A-Za-z0-9_]/g, '_');
    this.fnName = `${api}(${this.name})`;
    const n = this.info.params.length;
    for (const s of this.sigs) {
      if (s.ins.length !== n) throw new TypeError(`${api}: the signature '${s.text}' has ${s.ins.length} input${s.ins.length === 1 ? '' : 's'} but the function takes ${n}`);
    }
    this.sources = this.sigs.map(() => undefined);
    this.kernels = this.sigs.map(() => undefined);
    this.simulated = this.sigs.map(() => undefined);
  }

  /** What the function closes over, keyed once (null: it cannot be; undefined: not read yet). */
  private closure: string | null | undefined;
  private lookupMemo: Lookup | undefined;
  /** The closure, read once per kernel object (LANGUAGE.md: the translation cache): for the key and the typer alike. */
  private readonly lookup = (): Lookup => (this.lookupMemo ??= closureLookup(this.f, this.info));

  /** The translation cache's key for `what`, or undefined when the closure cannot be keyed. */
  private cacheKey(what: string): string | undefined {
    if (this.closure === undefined) this.closure = closureKey(this.f, this.info, this.lookup()) ?? null;
    return this.closure === null ? undefined : translationKey(this.closure, this.text, what);
  }

  private parse(): { p: Parsed; info: FunctionInfo } {
    const r = parser().parse(this.f, 'gx.vectorize', this.lookup);
    this.parsed = r.p;
    return r;
  }

  private parsedFn(): Parsed {
    return this.parsed ?? this.parse().p;
  }

  /** The CUDA source of signature k: from the translation cache, else translated (and cached when its closure can be keyed). */
  sourceOf(k: number): string {
    const known = this.sources[k];
    if (known !== undefined) return known;
    const key = this.cacheKey(JSON.stringify(['vectorize', this.name, this.sigs[k].out, this.sigs[k].ins]));
    let source = key === undefined ? undefined : translationGet(key)?.source;
    if (source === undefined) {
      source = translator().scalarSource(this.parsedFn(), this.name, this.sigs[k], this.fnName);
      if (key !== undefined) translationPut(key, { source, types: [], plan: [], sites: [] });
    }
    return (this.sources[k] = source);
  }

  /** Whether the kernels are loaded as PTX (NOTE [ Elementwise PTX ]): not under NVRTC options of the user's, which only the CUDA route honours. */
  private ptxRoute(): boolean {
    return ptxEnabled() && !this.userOptions;
  }

  kernelOf(k: number): Runner {
    const known = this.kernels[k];
    if (known !== undefined) return known;
    const e = elementwiseOf(this.sigs[k], this.name, k);
    // The CUDA source is read (or translated) only when a kernel is compiled from it: on the PTX route, when the driver refuses the PTX.
    const cudaRoute = (): { preamble: string; options: string[] } => {
      const preamble = this.sourceOf(k);
      return { preamble, options: compileOptions(preamble, this.nvrtc) };
    };
    const ptx = this.ptxRoute() ? { ptx: (g: ElementwiseSourceIn) => this.ptxOf(k, g) } : {};
    return (this.kernels[k] = elementwiseRunner(e.ins, e.outs, e.body, { name: e.name, cudaRoute, ...ptx }));
  }

  /** Signature k's kernel for contiguous tensors as PTX (what `.ptx()` shows), or undefined when it goes through NVRTC. */
  contiguousPtx(k: number): string | undefined {
    if (!this.ptxRoute()) return undefined;
    const s = this.sigs[k];
    return this.ptxOf(k, signatureSourceIn(s, this.name, k, [...s.ins, s.out].map(() => 'c'), 1))?.text;
  }

  /** The PTX of signature k's kernel for a call's layouts (`g`): from the translation cache, else emitted (and cached). */
  private ptxOf(k: number, g: ElementwiseSourceIn): { text: string; minCapability: number } | undefined {
    const s = this.sigs[k];
    const key = this.cacheKey(JSON.stringify(['vectorize-ptx', this.name, s.out, s.ins, g.name, g.layouts, g.ndim]));
    const known = key === undefined ? undefined : ptxEntryGet(key);
    if (known !== undefined) return known.ptx;
    const ptx = translator().scalarPtx(this.parsedFn(), this.name, s, g, this.fnName);
    if (key !== undefined) ptxEntryPut(key, ptx);
    return ptx;
  }

  /** The signature whose input dtypes the tensors have (numbers fit any), or -1. */
  signatureOf(args: readonly (Tensor | number)[]): number {
    const sigs = this.sigs;
    for (let k = 0; k < sigs.length; k++) {
      const ins = sigs[k].ins;
      let ok = true;
      for (let i = 0; i < ins.length && ok; i++) {
        const a = args[i];
        ok = !(a instanceof Tensor) || a.dtype === ins[i];
      }
      if (ok) return k;
    }
    return -1;
  }

  /** The count, kinds and devices of the first `nArgs` arguments (the rest: `out`); the first tensor. */
  check(args: readonly unknown[], nArgs: number): Tensor {
    const { fnName } = this;
    const nParams = this.info.params.length;
    if (nArgs !== nParams) throw new TypeError(`${fnName}: takes ${nParams} arguments, got ${nArgs}`);
    let first: Tensor | undefined;
    for (let i = 0; i < nParams; i++) {
      const a = args[i];
      if (a instanceof Tensor) {
        if (first === undefined) first = a;
        else if (a.device !== first.device && !a.device.equals(first.device)) {
          throw new Error(`${fnName}: arguments are on ${first.device} and ${a.device}; move them to one device`);
        }
      } else if (typeof a !== 'number') {
        throw new TypeError(`${fnName}: argument ${i} (${this.info.params[i]}) must be a Tensor or a number, got ${typeof a}`);
      }
    }
    if (first === undefined) throw new TypeError(`${fnName}: needs at least one Tensor argument`);
    return first;
  }

  /**
   * `raw` is the call's own rest array: the options object at its end, if
   * any, is replaced by `out` in place (the elementwise runner's operand
   * list), not popped and pushed back, which regrew the array on each call.
   */
  call(raw: (Tensor | number | VectorizeCallOptions)[]): Tensor {
    let out: Tensor | undefined;
    const last = raw.length - 1;
    if (last >= 0 && isOptions(raw[last])) {
      const o = checkOptions<VectorizeCallOptions>(raw[last], this.fnName, CALL_KEYS);
      if (o.out !== undefined && !(o.out instanceof Tensor)) throw new TypeError(`${this.fnName}: out must be a Tensor`);
      out = o.out;
      if (out !== undefined) raw[last] = out;
      else raw.length = last;
    }
    const nArgs = out === undefined ? raw.length : last;
    const args = raw as (Tensor | number)[];
    const first = this.check(args, nArgs);
    const k = this.signatureOf(args);
    if (k < 0) {
      const got = args.slice(0, nArgs).map((a) => (a instanceof Tensor ? a.dtype : 'number')).join(', ');
      throw new TypeError(`${this.fnName}: no signature takes (${got}); the signatures are ${this.sigs.map((s) => `'${s.text}'`).join(', ')}`);
    }
    if (first.device.type === 'cuda') return (this.kernels[k] ?? this.kernelOf(k))(args) as Tensor;
    const gen = cpuSide();
    const fn = (this.simulated[k] ??= gen.scalarOf(this.parsedFn(), this.name, this.sigs[k], this.fnName));
    return gen.runOnCpu(fn, this.sigs[k], nArgs === args.length ? args : args.slice(0, nArgs), out, this.fnName);
  }
}

/**
 * A scalar function as an elementwise op over tensors, for the signatures
 * given (Numba's @vectorize): each call picks the signature whose input
 * dtypes are the tensors' (JS numbers fit any), broadcasts, and returns a new
 * tensor of the signature's output dtype (or writes `{ out }`). Numbers the
 * function closes over are inlined when it is first compiled.
 * @example
 * const SQRT_2PI = Math.sqrt(2 * Math.PI);
 * const gaussianPdf = gx.vectorize(['float32(float32, float32, float32)'],
 *   (x, mean, sigma) => Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI));
 * const y = gaussianPdf(x, 0, 1);
 */
export function vectorize(signatures: string | readonly string[], f: (...args: number[]) => number | boolean,
  options?: VectorizeOptions): VectorizedFunction {
  const list = typeof signatures === 'string' ? [signatures] : signatures;
  const vec = new Vectorized(list, f, options);
  const signatureIndex = (which: number | string, method = 'ptx'): number => {
    const k = typeof which === 'number' ? which : list.indexOf(which);
    if (!Number.isInteger(k) || k < 0 || k >= vec.sigs.length) throw new RangeError(`${vec.fnName}.${method}: no signature ${JSON.stringify(which)}`);
    return k;
  };
  const v = ((...raw: (Tensor | number | VectorizeCallOptions)[]): Tensor => vec.call(raw)) as VectorizedFunction;
  Object.defineProperty(v, 'name', { value: vec.name });
  Object.defineProperty(v, 'signatures', { value: Object.freeze([...list]), enumerable: true });
  Object.defineProperty(v, 'ptx', {
    value: (which: number | string = 0): string | undefined => vec.contiguousPtx(signatureIndex(which)),
  });
  Object.defineProperty(v, 'source', {
    value: (which: number | string = 0): string => vec.sourceOf(signatureIndex(which, 'source')),
  });
  return v;
}
