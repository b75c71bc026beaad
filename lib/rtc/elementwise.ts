// gx.elementwiseKernel: CuPy's ElementwiseKernel for TypeScript. A body of
// C code over named inputs and outputs; the kernel is generated per dtype
// binding and layout, compiled through the kernel cache, and launched over the
// broadcast shape.
//
// NOTE [ Elementwise codegen ]
// Inputs are values (`const T x`), outputs references (`T& z`), and `i` (the
// linear index) and `n` (the element count) are in scope, as in CuPy. Type
// placeholders (any type name that is not a dtype) become typedefs bound from
// the tensors passed for them. Each operand has a layout:
//   c  a tensor, contiguous and of the full shape: indexed by `i`;
//   s  a tensor broadcast or strided: indexed by an offset computed from `i`
//      with the output shape and its strides (`long long` kernel parameters);
//   v  a JS number: passed as a double and converted to its type in the kernel;
//   r  `raw T x`: the whole (contiguous) array as a pointer, with `x_size`.
// With no `s` operand the kernel is tiled and moves 16-byte vectors where the
// pointers are aligned; else it is a grid-stride loop over offsets
// (elementwise-codegen.ts, NOTE [ Vectorized elementwise kernels ]).
//
// NOTE [ Elementwise call path ]
// A call costs about one launch: a plan (the kernel and the kinds of its
// arguments) is cached per dtype-and-layout signature, so a repeated call
// builds a numeric key (no string to build and hash: two base-64 digits per
// operand, exact for up to 4 operands; more spell a string), allocates its
// outputs without gx.empty's parsing (borrowing an input's frozen shape and
// strides), writes its arguments as numbers (tensors by address) into the
// staging area (NOTE [ Launch latency ] in raw.ts) and launches
// through RawKernel.launchPrepared, with none of launch()'s checks, which the
// plan made once.
import type { Device } from '../core/device';
import type { DType } from '../core/dtype';
import { allocate } from '../ops/creation/creation';
import { dtypeCode } from '../core/dtype';
import { Tensor } from '../core/tensor';
import { broadcastShapes, equalShapes, numelOf } from '../core/shape';
import { broadcastStrides, parseParams, type Param } from './params';
import { blocksFor, elementwiseParams, elementwiseSource, geometryOf, THREADS, type ElementwiseSourceIn, type Geometry, type Layout } from './elementwise-codegen';
import { STAGED_ARGS, STAGED_MAX_ARGS, stagingArea } from '../core/staging';
import { RawKernel, RawModule, type RawKernelOptions } from './raw';
import { checkKeys, checkOptions, optionKeys } from '../core/options';

export interface ElementwiseOptions {
  /** Kernel name (default 'elementwise_kernel'). */
  name?: string;
  /** Code placed before the kernel: helper functions, #defines. */
  preamble?: string;
  /** NVRTC options. */
  options?: string[];
  /**
   * @internal The kernel of a call's signature as PTX too, or undefined
   * (gx.vectorize's: NOTE [ Elementwise PTX ] in lib/jit/ptx-elementwise.ts);
   * RawKernelOptions.ptx.
   */
  ptx?: (g: ElementwiseSourceIn) => RawKernelOptions['ptx'];
  /**
   * @internal The preamble and NVRTC options, made only when a kernel is
   * compiled from its CUDA source (in place of `preamble` and `options`):
   * gx.vectorize's, whose PTX route needs neither.
   */
  cudaRoute?: () => { preamble: string; options: readonly string[] };
}

/** A trailing options argument of a call: the launch size when every operand is raw. */
export interface ElementwiseCallOptions {
  size?: number;
}

export type ElementwiseKernel = ((...args: (Tensor | number | ElementwiseCallOptions)[]) => Tensor | Tensor[]) & {
  readonly kernelName: string;
  /** Generated sources compiled so far (for inspection): a kernel loaded as PTX has none. */
  readonly sources: readonly string[];
};

const OPTION_KEYS = optionKeys<ElementwiseOptions>({ name: true, preamble: true, options: true, ptx: true, cudaRoute: true });
const CALL_KEYS = optionKeys<ElementwiseCallOptions>({ size: true });

interface Plan {
  kernel: RawKernel;
  /** The dtype of each output, from the binding. */
  outTypes: DType[];
  /** How many arguments the kernel takes. */
  nargs: number;
  geometry: Geometry;
}

const LAYOUT_CODE: Record<Layout, number> = { c: 0, s: 1, v: 2, r: 3 };
/** The dtype digit of an output to be allocated (dtype codes are below it). */
const ALLOCATED = 63;


/** What a call's operands decide before the plan: the device, the broadcast shape and whose shape array it is. */
interface Operands {
  device: Device;
  shape: readonly number[];
  /** The input whose shape array `shape` is (its frozen shape and strides are borrowed by outputs), if any. */
  shapeOf: Tensor | undefined;
}

/**
 * An elementwise kernel from C code, like cupy.ElementwiseKernel.
 * @example
 * const squaredDiff = gx.elementwiseKernel('T x, T y', 'T z', 'z = (x - y) * (x - y)', { name: 'squared_diff' });
 * const z = squaredDiff(x, y);             // broadcasts x and y; allocates z
 */
export function elementwiseKernel(inParams: string, outParams: string, body: string, opts: ElementwiseOptions = {}): ElementwiseKernel {
  const k = new Elementwise(inParams, outParams, body, opts);
  const call = (...raw: (Tensor | number | ElementwiseCallOptions)[]): Tensor | Tensor[] => k.call(raw);
  return Object.assign(call, { kernelName: k.name, sources: k.sources });
}

/** @internal gx.elementwiseKernel's call taking its arguments as one array: gx.vectorize's, which holds them as one (no spread per call). */
export function elementwiseRunner(inParams: string, outParams: string, body: string, opts: ElementwiseOptions): (args: readonly (Tensor | number | ElementwiseCallOptions)[]) => Tensor | Tensor[] {
  const k = new Elementwise(inParams, outParams, body, opts);
  return (args) => k.call(args);
}

/**
 * One definition and its plans, one per dtype-and-layout signature (NOTE [
 * Elementwise call path ]). A call checks its operands, finds (or makes) the
 * plan, and launches it.
 */
class Elementwise {
  readonly name: string;
  /** Generated sources made so far (each when its kernel is first compiled from source). */
  readonly sources: string[] = [];
  readonly #fn: string;
  readonly #ins: Param[];
  readonly #outs: Param[];
  readonly #all: Param[];
  readonly #body: string;
  readonly #opts: ElementwiseOptions;
  readonly #plans = new Map<number | string, Plan>();
  /** The layout of each operand in the current call (set by #plan, read by #launch). */
  readonly #layouts: Layout[];

  constructor(inParams: string, outParams: string, body: string, opts: ElementwiseOptions) {
    opts = checkOptions<ElementwiseOptions>(opts, 'gx.elementwiseKernel', OPTION_KEYS);
    const fnName = `gx.elementwiseKernel '${opts.name ?? 'elementwise_kernel'}'`;
    const ins = parseParams(inParams, fnName, 'inParams');
    const outs = parseParams(outParams, fnName, 'outParams');
    if (outs.length === 0) throw new TypeError(`${fnName}: needs at least one output parameter`);
    if (typeof body !== 'string') throw new TypeError(`${fnName}: body must be C code`);
    const names = new Set<string>();
    for (const p of [...ins, ...outs]) {
      if (names.has(p.name)) throw new TypeError(`${fnName}: parameter '${p.name}' is declared twice`);
      names.add(p.name);
    }
    this.name = opts.name ?? 'elementwise_kernel';
    this.#fn = fnName;
    this.#ins = ins;
    this.#outs = outs;
    this.#all = [...ins, ...outs];
    this.#body = body;
    this.#opts = opts;
    this.#layouts = new Array<Layout>(this.#all.length);
  }

  call(raw: readonly (Tensor | number | ElementwiseCallOptions)[]): Tensor | Tensor[] {
    const { nargs, size } = this.#arity(raw);
    const args = raw as readonly (Tensor | number)[];
    const ops = this.#check(args, nargs, size);
    const { plan, strided } = this.#plan(args, nargs, ops.shape);
    return this.#launch(plan, strided, args, nargs, ops);
  }

  /** How many operands the call passes, and the launch size of its trailing options, if any. */
  #arity(raw: readonly (Tensor | number | ElementwiseCallOptions)[]): { nargs: number; size: number | undefined } {
    const fnName = this.#fn;
    let size: number | undefined;
    let nargs = raw.length;
    const last = raw[nargs - 1];
    if (last !== null && typeof last === 'object' && !(last instanceof Tensor)) {
      checkKeys(last, fnName, CALL_KEYS);
      size = last.size;
      if (size !== undefined && !(Number.isSafeInteger(size) && size >= 0)) {
        throw new RangeError(`${fnName}: size must be a non-negative integer, got ${String(size)}`);
      }
      nargs--;
    }
    if (nargs !== this.#ins.length && nargs !== this.#all.length) {
      throw new TypeError(`${fnName}: takes ${this.#ins.length} inputs (and optionally ${this.#outs.length} outputs), got ${nargs} arguments`);
    }
    return { nargs, size };
  }

  /** The operands' kinds and device, and the broadcast shape (or the launch size when every operand is raw). */
  #check(args: readonly (Tensor | number)[], nargs: number, size: number | undefined): Operands {
    const fnName = this.#fn;
    const ins = this.#ins;
    let device: Device | undefined;
    let shape: readonly number[] | undefined;
    let shapeOf: Tensor | undefined;
    let outShape: readonly number[] | undefined;  // of a non-raw output passed in, for when every input is raw
    let sameShape = true;
    for (let k = 0; k < nargs; k++) {
      const a = args[k];
      const p = this.#all[k];
      if (a instanceof Tensor) {
        const d = a.device;
        if (device === undefined) device = d;
        else if (d !== device && !device.equals(d)) throw new Error(`${fnName}: '${p.name}' is on ${d} but an earlier operand on ${device}`);
        if (p.raw) continue;
        if (k >= ins.length) {
          outShape ??= a.shape;
          continue;
        }
        const s = a.shape;
        if (shape === undefined) {
          shape = s;
          shapeOf = a;
        } else if (sameShape && s !== shape && !equalShapes(s, shape)) sameShape = false;
      } else if (typeof a !== 'number' || k >= ins.length || p.raw) {
        const what = k >= ins.length ? 'output' : 'input';
        throw new TypeError(`${fnName}: ${what} '${p.name}' must be a Tensor${k >= ins.length || p.raw ? '' : ' or a number'}, got ${typeof a}`);
      }
    }
    if (device === undefined || device.type !== 'cuda') {
      throw new TypeError(`${fnName}: needs at least one CUDA tensor operand to run on`);
    }
    if (!sameShape) shape = broadcastShapes(args.slice(0, ins.length).filter((a, k): a is Tensor => a instanceof Tensor && !ins[k].raw).map((t) => t.shape), fnName);
    shape ??= outShape;
    if (shape === undefined) {
      if (size === undefined) throw new TypeError(`${fnName}: every operand is raw: pass the launch size as a last argument { size }`);
      shape = [size];
    } else if (size !== undefined && size !== numelOf(shape)) {
      throw new RangeError(`${fnName}: size ${size} does not match the ${numelOf(shape)} elements of the broadcast shape [${shape.join(', ')}]`);
    }
    return { device, shape, shapeOf };
  }

  /**
   * The operands' layouts and the signature key: per operand, its dtype and
   * layout as one base-64 digit pair (NOTE [ Elementwise call path ]); the
   * plan cached under it, made on first use.
   */
  #plan(args: readonly (Tensor | number)[], nargs: number, shape: readonly number[]): { plan: Plan; strided: boolean } {
    const fnName = this.#fn;
    const all = this.#all;
    const layouts = this.#layouts;
    let key: number | string = 0;
    let strided = false;
    for (let k = 0; k < all.length; k++) {
      const a = k < nargs ? args[k] : undefined;
      let layout: Layout;
      let dtype = ALLOCATED;
      if (a === undefined) {
        layout = all[k].raw ? 'r' : 'c';
        if (layout === 'r') throw new TypeError(`${fnName}: raw output '${all[k].name}' must be passed (its shape is not the broadcast shape)`);
      } else if (typeof a === 'number') {
        layout = 'v';
      } else {
        layout = all[k].raw ? 'r' : a.isContiguous() && (a.shape === shape || equalShapes(a.shape, shape)) ? 'c' : 's';
        if (layout === 's') {
          strided = true;
          if (k >= this.#ins.length && !equalShapes(a.shape, shape)) {
            throw new Error(`${fnName}: output '${all[k].name}' has shape [${a.shape.join(', ')}] but the inputs broadcast to [${shape.join(', ')}]`);
          }
        }
        dtype = dtypeCode(a.dtype);
      }
      layouts[k] = layout;
      key = key * 4096 + dtype * 64 + LAYOUT_CODE[layout];
    }
    if (strided) key = key * 64 + shape.length;
    // Past 2^53 the number is no longer exact: spell the digits out.
    if (!Number.isSafeInteger(key)) key = `${layouts.join('')}:${args.slice(0, nargs).map((a) => (a instanceof Tensor ? a.dtype : typeof a)).join(',')}:${strided ? shape.length : ''}`;
    let plan = this.#plans.get(key);
    if (plan === undefined) {
      plan = this.#makePlan(args.slice(0, nargs), shape.length);
      this.#plans.set(key, plan);
    }
    return { plan, strided };
  }

  /** Binds the placeholders from the tensors, checks declared dtypes, and makes the kernel for this signature. */
  #makePlan(operands: (Tensor | number)[], ndim: number): Plan {
    const name = this.name;
    const body = this.#body;
    const all = this.#all;
    const nIn = this.#ins.length;
    const bound = this.#bind(operands);
    const types = all.map((p) => this.#typeOf(p, bound));
    const outputPassed = this.#outs.map((_, k) => operands[nIn + k] instanceof Tensor);
    const layouts = this.#layouts;
    const g: ElementwiseSourceIn = { name, preamble: '', body, nIn, all, types, bound, ndim, layouts: [...layouts], outputPassed };
    const route = this.#opts.cudaRoute ?? ((): { preamble: string; options: readonly string[] } => ({ preamble: this.#opts.preamble ?? '', options: this.#opts.options ?? [] }));
    // The source is made when a device compiles it, not when the driver takes the PTX twin.
    const module = RawModule.deferred(() => {
      const r = route();
      const code = elementwiseSource({ ...g, preamble: r.preamble });
      this.sources.push(code);
      return { code, options: r.options };
    }, this.#opts.ptx?.(g));
    const params = elementwiseParams(g);
    const kernel = new RawKernel(module, name, { kernelParams: params });
    const nargs = params.length;
    if (nargs > STAGED_MAX_ARGS) {
      throw new RangeError(`${this.#fn}: ${all.length} operands of ${ndim} dimensions make ${nargs} kernel arguments, more than a launch takes (${STAGED_MAX_ARGS}); make the operands contiguous or split the call`);
    }
    return { kernel, outTypes: types.slice(nIn), nargs, geometry: geometryOf(layouts, types, body) };
  }

  /** The placeholders' dtypes from the tensors passed for them; declared dtypes checked. */
  #bind(operands: (Tensor | number)[]): Map<string, DType> {
    const fnName = this.#fn;
    const bound = new Map<string, DType>();
    this.#all.forEach((p, k) => {
      const t = operands[k];
      if (!(t instanceof Tensor)) return;
      const role = k < this.#ins.length ? 'input' : 'output';
      if (!p.placeholder) {
        if (t.dtype !== p.type) throw new TypeError(`${fnName}: ${role} '${p.name}' is declared ${p.type} but the tensor is ${t.dtype}`);
        return;
      }
      const prev = bound.get(p.type);
      if (prev !== undefined && prev !== t.dtype) {
        throw new TypeError(`${fnName}: ${p.type} is ${prev} from an earlier argument but '${p.name}' is ${t.dtype}`);
      }
      bound.set(p.type, t.dtype);
    });
    return bound;
  }

  #typeOf(p: Param, bound: ReadonlyMap<string, DType>): DType {
    const d = p.placeholder ? bound.get(p.type) : (p.type as DType);
    if (d === undefined) {
      const hint = this.#all.indexOf(p) >= this.#ins.length ? '; pass the output' : '; pass a tensor for it';
      throw new TypeError(`${this.#fn}: cannot tell the type ${p.type} of '${p.name}' from the tensors${hint}`);
    }
    return d;
  }

  /** Allocates the outputs not passed, stages the arguments and launches: operands, n, and for strided layouts the shape and each one's strides. */
  #launch(plan: Plan, strided: boolean, args: readonly (Tensor | number)[], nargs: number, ops: Operands): Tensor | Tensor[] {
    const { device, shape, shapeOf } = ops;
    const nIn = this.#ins.length;
    const outTensors: Tensor[] = [];
    for (let k = nIn; k < this.#all.length; k++) {
      outTensors.push(k < nargs ? (args[k] as Tensor) : allocate(shape, plan.outTypes[k - nIn], device, shapeOf));
    }
    const n = numelOf(shape);
    if (n > 0) {
      this.#stage(plan, strided, args, outTensors, n, shape);
      plan.kernel.launchPrepared(device, blocksFor(n, plan.geometry), THREADS);
    }
    return outTensors.length === 1 ? outTensors[0] : outTensors;
  }

  /**
   * Every argument as a number into the staging area, tensors by address
   * (their devices were checked by #check); nothing after this runs other JS
   * before the launch.
   */
  #stage(plan: Plan, strided: boolean, args: readonly (Tensor | number)[], outTensors: Tensor[], n: number, shape: readonly number[]): void {
    const fnName = this.#fn;
    const all = this.#all;
    const layouts = this.#layouts;
    const nIn = this.#ins.length;
    const values = stagingArea();
    let j = STAGED_ARGS;
    for (let k = 0; k < all.length; k++) {
      const a = k < nIn ? args[k] : outTensors[k - nIn];
      if (typeof a === 'number') {
        values[j++] = a;
      } else if (layouts[k] === 'r') {
        values[j++] = rawOperand(a, all[k], fnName).address(fnName);
        values[j++] = a.numel;
      } else {
        values[j++] = a.address(fnName);
      }
    }
    values[j++] = n;
    if (strided) {
      for (const s of shape) values[j++] = s;
      for (let k = 0; k < all.length; k++) {
        if (layouts[k] !== 's') continue;
        const a = k < nIn ? args[k] : outTensors[k - nIn];
        for (const st of broadcastStrides(a as Tensor, shape)) values[j++] = st;
      }
    }
    if (j - STAGED_ARGS !== plan.nargs) throw new Error(`${fnName}: internal error: ${j - STAGED_ARGS} arguments for a kernel of ${plan.nargs}`);
  }
}

/** A raw operand is read as a flat array: it must be contiguous (a raw output cannot be copied back). */
function rawOperand(t: Tensor, p: Param, fn: string): Tensor {
  if (!t.isContiguous()) throw new TypeError(`${fn}: raw operand '${p.name}' must be contiguous (call .contiguous() first)`);
  return t;
}
