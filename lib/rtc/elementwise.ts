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
import type { Device } from '../device';
import type { DType } from '../dtype';
import { allocate } from '../creation';
import { dtypeCode } from '../dtype';
import { Tensor } from '../tensor';
import { broadcastShapes, equalShapes, numelOf } from '../shape';
import { broadcastStrides, parseParams, type Param } from './params';
import { blocksFor, elementwiseSource, geometryOf, THREADS, type Geometry, type Layout } from './elementwise-codegen';
import { STAGED_ARGS, STAGED_MAX_ARGS, stagingArea } from '../staging';
import { RawKernel } from './raw';
import { checkKeys, checkOptions, optionKeys } from '../options';

export interface ElementwiseOptions {
  /** Kernel name (default 'elementwise_kernel'). */
  name?: string;
  /** Code placed before the kernel: helper functions, #defines. */
  preamble?: string;
  /** NVRTC options. */
  options?: string[];
}

/** A trailing options argument of a call: the launch size when every operand is raw. */
export interface ElementwiseCallOptions {
  size?: number;
}

export type ElementwiseKernel = ((...args: (Tensor | number | ElementwiseCallOptions)[]) => Tensor | Tensor[]) & {
  readonly kernelName: string;
  /** Generated sources compiled so far (for inspection). */
  readonly sources: readonly string[];
};

const OPTION_KEYS = optionKeys<ElementwiseOptions>({ name: true, preamble: true, options: true });
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


/**
 * An elementwise kernel from C code, like cupy.ElementwiseKernel.
 * @example
 * const squaredDiff = gx.elementwiseKernel('T x, T y', 'T z', 'z = (x - y) * (x - y)', { name: 'squared_diff' });
 * const z = squaredDiff(x, y);             // broadcasts x and y; allocates z
 */
export function elementwiseKernel(inParams: string, outParams: string, body: string, opts: ElementwiseOptions = {}): ElementwiseKernel {
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
  const name = opts.name ?? 'elementwise_kernel';
  const all = [...ins, ...outs];
  const plans = new Map<number | string, Plan>();
  const sources: string[] = [];
  const layouts: Layout[] = new Array<Layout>(all.length);

  /** Binds the placeholders from the tensors, checks declared dtypes, and makes the kernel for this signature. */
  const makePlan = (operands: (Tensor | number)[], ndim: number): Plan => {
    const bound = new Map<string, DType>();
    all.forEach((p, k) => {
      const t = operands[k];
      if (!(t instanceof Tensor)) return;
      const role = k < ins.length ? 'input' : 'output';
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
    const typeOf = (p: Param): DType => {
      const d = p.placeholder ? bound.get(p.type) : (p.type as DType);
      if (d === undefined) {
        const hint = all.indexOf(p) >= ins.length ? '; pass the output' : '; pass a tensor for it';
        throw new TypeError(`${fnName}: cannot tell the type ${p.type} of '${p.name}' from the tensors${hint}`);
      }
      return d;
    };
    const types = all.map(typeOf);
    const outputPassed = outs.map((_, k) => operands[ins.length + k] instanceof Tensor);
    const src = elementwiseSource({ name, preamble: opts.preamble ?? '', body, nIn: ins.length, all, types, bound, ndim, layouts, outputPassed });
    sources.push(src);
    const kernel = new RawKernel(src, name, { options: opts.options });
    const nargs = kernel.params?.length ?? 0;
    if (nargs > STAGED_MAX_ARGS) {
      throw new RangeError(`${fnName}: ${all.length} operands of ${ndim} dimensions make ${nargs} kernel arguments, more than a launch takes (${STAGED_MAX_ARGS}); make the operands contiguous or split the call`);
    }
    return { kernel, outTypes: types.slice(ins.length), nargs, geometry: geometryOf(layouts, types, body) };
  };

  const call = (...raw: (Tensor | number | ElementwiseCallOptions)[]): Tensor | Tensor[] => {
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
    if (nargs !== ins.length && nargs !== all.length) {
      throw new TypeError(`${fnName}: takes ${ins.length} inputs (and optionally ${outs.length} outputs), got ${nargs} arguments`);
    }
    const args = raw as (Tensor | number)[];
    // Pass 1: kinds, the device, and whether every broadcast operand has one shape.
    let device: Device | undefined;
    let shape: readonly number[] | undefined;
    let shapeOf: Tensor | undefined;  // the input whose shape array `shape` is
    let outShape: readonly number[] | undefined;  // of a non-raw output passed in, for when every input is raw
    let sameShape = true;
    for (let k = 0; k < nargs; k++) {
      const a = args[k];
      const p = all[k];
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
    const n = numelOf(shape);

    // Pass 2: layouts and the signature key: per operand, its dtype and layout
    // as one base-64 digit pair (NOTE [ Elementwise call path ]).
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
          if (k >= ins.length && !equalShapes(a.shape, shape)) {
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
    let plan = plans.get(key);
    if (plan === undefined) {
      plan = makePlan(args.slice(0, nargs), shape.length);
      plans.set(key, plan);
    }

    // Outputs, then the arguments: operands, n, and for strided layouts the shape and each one's strides.
    const outTensors: Tensor[] = [];
    for (let k = ins.length; k < all.length; k++) {
      outTensors.push(k < nargs ? (args[k] as Tensor) : allocate(shape, plan.outTypes[k - ins.length], device, shapeOf));
    }
    if (n > 0) {
      // Every argument as a number into the staging area, tensors by address
      // (their devices were checked above); nothing after this runs other JS before the launch.
      const values = stagingArea();
      let j = STAGED_ARGS;
      for (let k = 0; k < all.length; k++) {
        const a = k < ins.length ? args[k] : outTensors[k - ins.length];
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
          const a = k < ins.length ? args[k] : outTensors[k - ins.length];
          for (const st of broadcastStrides(a as Tensor, shape)) values[j++] = st;
        }
      }
      if (j - STAGED_ARGS !== plan.nargs) throw new Error(`${fnName}: internal error: ${j - STAGED_ARGS} arguments for a kernel of ${plan.nargs}`);
      plan.kernel.launchPrepared(device, blocksFor(n, plan.geometry), THREADS);
    }
    return outTensors.length === 1 ? outTensors[0] : outTensors;
  };
  return Object.assign(call, { kernelName: name, sources });
}

/** A raw operand is read as a flat array: it must be contiguous (a raw output cannot be copied back). */
function rawOperand(t: Tensor, p: Param, fn: string): Tensor {
  if (!t.isContiguous()) throw new TypeError(`${fn}: raw operand '${p.name}' must be contiguous (call .contiguous() first)`);
  return t;
}
