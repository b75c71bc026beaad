// gx.vectorize: a scalar JS function becomes an elementwise op over tensors
// (Numba's @vectorize([...], target='cuda')). On CUDA the function is
// typed (typer.ts; the numbers it closes over inlined, closure.ts), emitted
// as a __device__ function and run by an elementwise kernel (lib/rtc), one
// per signature, compiled on first use and cached like every run-time kernel.
// On the CPU the same typed function runs per element on the interpreter
// (interpret.ts), computing in the signature's dtypes as the GPU does.
import { STORAGE_ARRAY, VALUE_ARRAY, type DType, type StorageArrayMap } from '../generated/dtypes';
import { broadcastShapes, numelOf } from '../shape';
import { Tensor } from '../tensor';
import { tensor } from '../creation';
import { checkOptions, optionKeys } from '../options';
import { elementwiseKernel, type ElementwiseKernel } from '../rtc/elementwise';
import { closureValues, type Lookup } from './closure';
import { Module, scalarFunction } from './translate';
import { compileScalar, type CompiledScalar, type SimBlock, type SimState, type SimThread } from './interpret';
import { simArray, STEP_BUDGET } from './simulator';
import { exactMath } from './rawkernel';
import { typeFunction } from './typer-function';
import { SCALAR_DTYPES, strong, type ScalarDType } from './types';
import { parseFunction, referencedNames, type ParsedFunction } from './source';

/** One signature, `'float32(float32, float32)'`: the output dtype and the inputs'. */
interface Signature {
  text: string;
  out: ScalarDType;
  ins: ScalarDType[];
}

export interface VectorizeOptions {
  /** The kernel's name (default: the function's name, else 'vectorized'). */
  name?: string;
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

const OPTION_KEYS = optionKeys<VectorizeOptions>({ name: true });
const CALL_KEYS = optionKeys<VectorizeCallOptions>({ out: true });

const isOptions = (a: unknown): a is VectorizeCallOptions =>
  typeof a === 'object' && a !== null && !(a instanceof Tensor) && !Array.isArray(a);

type Storage = StorageArrayMap[ScalarDType];

/** Stores the JS value v at j of `a` (dtype d's storage), converted as a C cast would (NaN to an integer gives 0 here, undefined in C). */
function store(a: Storage, j: number, v: number | boolean, d: ScalarDType): void {
  if (d === 'int64') (a as BigInt64Array)[j] = typeof v === 'number' && Number.isFinite(v) ? BigInt(Math.trunc(v)) : v === true ? 1n : 0n;
  else if (d === 'bool') a[j] = v !== 0 && v !== false ? 1 : 0;
  else a[j] = Number(v);  // the typed array rounds (float32) or wraps (int32) on store
}

/** An element of `a` (dtype d's storage) as the simulator's value of d: bool a boolean, int64 a bigint. */
function valueOf(a: Storage, j: number, d: ScalarDType): unknown {
  const v = a[j];
  return d === 'bool' ? v !== 0 : v;
}

/** Stores a value of the simulator (already of dtype d) at j of `a`. */
function storeValue(a: Storage, j: number, v: unknown, d: ScalarDType): void {
  if (d === 'bool') a[j] = v === true ? 1 : 0;
  else (a as Float64Array)[j] = v as number;
}

/** A scalar function runs outside a kernel: no thread or block to read; its loops share a step budget per element. */
const NO_THREAD: SimThread = { tx: 0, ty: 0, tz: 0, bx: 0n, by: 0n, bz: 0n };
const NO_BLOCK: SimBlock = { shared: () => { throw new Error('gx.vectorize: shared arrays belong in a kernel'); } };
function cpuState(fn: string): SimState {
  return {
    bd: [1, 1, 1], gd: [1n, 1n, 1n], steps: STEP_BUDGET,
    over(): never {
      throw new RangeError(`${fn}: the simulator stopped after ${STEP_BUDGET} loop iterations for one element (a loop that never ends?)`);
    },
    local: (dtype, extents, label) => simArray(label, dtype, new VALUE_ARRAY[dtype](extents.reduce((a, b) => a * b, 1)), extents),
    rd: (_a, off) => off,
    wr: (_a, off) => off,
  };
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
  const api = 'gx.vectorize';
  const opts = checkOptions<VectorizeOptions>(options, api, OPTION_KEYS);
  if (opts.name !== undefined && (typeof opts.name !== 'string' || !/^[A-Za-z_]\w*$/.test(opts.name))) {
    throw new TypeError(`${api}: name must be a C identifier, got ${JSON.stringify(opts.name)}`);
  }
  const list = typeof signatures === 'string' ? [signatures] : signatures;
  if (!Array.isArray(list) || list.length === 0) throw new TypeError(`${api}: needs at least one signature, e.g. ['float32(float32, float32)']`);
  const sigs = list.map((s) => parseSignature(s, api));
  const parsed: ParsedFunction = parseFunction(f, api);
  const name = (opts.name ?? (parsed.name || 'vectorized')).replace(/[^A-Za-z0-9_]/g, '_');
  const fnName = `${api}(${name})`;
  for (const s of sigs) {
    if (s.ins.length !== parsed.params.length) {
      throw new TypeError(`${api}: the signature '${s.text}' has ${s.ins.length} input${s.ins.length === 1 ? '' : 's'} but the function takes ${parsed.params.length}`);
    }
  }
  let lookup: Lookup | undefined;
  const sources: (string | undefined)[] = sigs.map(() => undefined);
  const kernels: (ElementwiseKernel | undefined)[] = sigs.map(() => undefined);

  const sourceOf = (k: number): string => {
    if (sources[k] === undefined) {
      lookup ??= closureValues(f, referencedNames(parsed));
      const module = new Module(false);
      const fn = scalarFunction(parsed, `gx_vec_${name}`, parsed.params.map((p, i) => [p, strong(sigs[k].ins[i])] as const),
        sigs[k].out, lookup, module, fnName);
      sources[k] = module.preamble() + fn.code;
    }
    return sources[k];
  };
  const kernelOf = (k: number): ElementwiseKernel => {
    const s = sigs[k];
    kernels[k] ??= elementwiseKernel(s.ins.map((d, i) => `${d} a${i}`).join(', '), `${s.out} out`,
      `out = gx_vec_${name}(${s.ins.map((_, i) => `a${i}`).join(', ')})`, { name: `vec_${name}_${k}`, preamble: sourceOf(k), options: exactMath([]) });
    return kernels[k];
  };

  const nParams = parsed.params.length;
  /** The signature whose input dtypes the tensors have (numbers fit any), or -1. */
  const signatureOf = (args: readonly (Tensor | number)[]): number => {
    for (let k = 0; k < sigs.length; k++) {
      const ins = sigs[k].ins;
      let ok = true;
      for (let i = 0; i < nParams && ok; i++) {
        const a = args[i];
        ok = !(a instanceof Tensor) || a.dtype === ins[i];
      }
      if (ok) return k;
    }
    return -1;
  };

  const call = (...raw: (Tensor | number | VectorizeCallOptions)[]): Tensor => {
    let out: Tensor | undefined;
    if (raw.length > 0 && isOptions(raw[raw.length - 1])) {
      const o = checkOptions<VectorizeCallOptions>(raw.pop(), fnName, CALL_KEYS);
      if (o.out !== undefined && !(o.out instanceof Tensor)) throw new TypeError(`${fnName}: out must be a Tensor`);
      out = o.out;
    }
    const args = raw as (Tensor | number)[];
    if (args.length !== nParams) throw new TypeError(`${fnName}: takes ${nParams} arguments, got ${args.length}`);
    let first: Tensor | undefined;
    for (let i = 0; i < nParams; i++) {
      const a = args[i];
      if (a instanceof Tensor) {
        if (first === undefined) first = a;
        else if (a.device !== first.device && !a.device.equals(first.device)) {
          throw new Error(`${fnName}: arguments are on ${first.device} and ${a.device}; move them to one device`);
        }
      } else if (typeof a !== 'number') {
        throw new TypeError(`${fnName}: argument ${i} (${parsed.params[i]}) must be a Tensor or a number, got ${typeof a}`);
      }
    }
    if (first === undefined) throw new TypeError(`${fnName}: needs at least one Tensor argument`);
    const k = signatureOf(args);
    if (k < 0) {
      const got = args.map((a) => (a instanceof Tensor ? a.dtype : 'number')).join(', ');
      throw new TypeError(`${fnName}: no signature takes (${got}); the signatures are ${sigs.map((s) => `'${s.text}'`).join(', ')}`);
    }
    if (first.device.type === 'cuda') {
      const kern = kernels[k] ?? kernelOf(k);
      if (out !== undefined) args.push(out);
      return kern(...args) as Tensor;
    }
    return runOnCpu(k, args, out);
  };

  /** The signature's function as the simulator runs it: typed as for CUDA (so refused where CUDA refuses it), then interpreted. */
  const simulated: (CompiledScalar | undefined)[] = sigs.map(() => undefined);
  const scalarOf = (k: number): CompiledScalar => {
    if (simulated[k] === undefined) {
      lookup ??= closureValues(f, referencedNames(parsed));
      const s = sigs[k];
      const fn = typeFunction(parsed, 'device', `gx_vec_${name}`, s.ins.map((d) => ({ kind: 'number', ty: strong(d) })), strong(s.out),
        lookup, new Module(false), fnName);
      simulated[k] = compileScalar(fn);
    }
    return simulated[k];
  };

  const runOnCpu = (k: number, args: (Tensor | number)[], out: Tensor | undefined): Tensor => {
    const s = sigs[k];
    const fn = scalarOf(k);
    const shape = broadcastShapes(args.filter((a): a is Tensor => a instanceof Tensor).map((t) => t.shape), fnName);
    const n = numelOf(shape);
    const cols = args.map((a, i) => {
      const d = s.ins[i];
      if (!(a instanceof Tensor)) {
        const one = new STORAGE_ARRAY[d](1);
        store(one, 0, a, d);
        const v = valueOf(one, 0, d);
        return () => v;
      }
      using b = a.broadcastTo(shape);
      using c = b.contiguous();
      const vals = c.toArraySync() as Storage;
      return (j: number): unknown => valueOf(vals, j, d);
    });
    const data = new STORAGE_ARRAY[s.out](n);
    const xs = new Array<unknown>(args.length);
    const S = cpuState(fnName);
    for (let j = 0; j < n; j++) {
      for (let i = 0; i < xs.length; i++) xs[i] = cols[i](j);
      S.steps = STEP_BUDGET;
      storeValue(data, j, fn(NO_THREAD, S, NO_BLOCK, ...xs), s.out);
    }
    const result = tensor(data, { dtype: s.out as DType, shape });
    if (out === undefined) return result;
    try {
      out.copy_(result);
    } finally {
      result.dispose();
    }
    return out;
  };

  const v = call as VectorizedFunction;
  Object.defineProperty(v, 'name', { value: name });
  Object.defineProperty(v, 'signatures', { value: Object.freeze([...list]), enumerable: true });
  Object.defineProperty(v, 'source', {
    value: (which: number | string = 0): string => {
      const k = typeof which === 'number' ? which : list.indexOf(which);
      if (!Number.isInteger(k) || k < 0 || k >= sigs.length) throw new RangeError(`${fnName}.source: no signature ${JSON.stringify(which)}`);
      return sourceOf(k);
    },
  });
  return v;
}
