// gx.reductionKernel: CuPy's ReductionKernel for TypeScript.
//
// NOTE [ Reduction codegen ]
// A call reduces the broadcast inputs over some axes. In JS, per call, the
// problem is first coalesced: size-1 dims are dropped, the reduced dims are
// ordered by stride (largest outermost: the reduction order is free), and
// adjacent dims merge where every tensor operand is contiguous across them
// (stride[d] == stride[d+1] * shape[d+1]), kept and reduced dims separately.
// What is left is nKept kept dims (the output, contiguous, indexed by `o`)
// and nRed reduced dims (indexed by `j`); a plan, one module, is generated
// per dtype signature and (nKept, nRed, layout, index width), with code
// specialised for nKept = 0 (one output: no output index at all), nKept = 1
// (base = o * stride) and nRed = 1 (offset = base + j * stride, no division);
// more dims decompose the index with / and %.
//
// A block has GX_BLOCK = 256 threads working on S outputs with R = 256 / S
// threads each (powers of two, chosen per call). Layout A puts a thread's
// reduce lane fastest (threads of one output are neighbours: for reductions
// whose innermost reduced stride is the smallest), layout B its output lane
// (S >= 32 consecutive outputs per warp: for reductions over outer dims, the
// kept dim contiguous). Each thread strides over j by R (times G, below),
// loading U elements (8 for 4-byte inputs, more for narrower, fewer for
// wider) before combining them into up to 4 accumulators, so each thread
// keeps several independent loads in flight; the last fewer-than-U elements
// load together too (indices past the end clamped, their values dropped).
// The block then combines: A by warp shuffles (__shfl_down_sync) within the
// R lanes of an output and, for R > 32, once more across the warps through
// shared memory (one __syncthreads); B through shared memory (R <= 8 values
// per output, one __syncthreads). Shared buffers alternate between the
// block's loop iterations so none needs a second sync. Shuffles take any
// reduce type: 1- and 2-byte integers and bool go through int, __half and
// __nv_bfloat16 have overloads in their headers.
//
// The expressions become inline device functions: gx_map(inputs by name),
// gx_reduce(a, b) and gx_post(a, <output by name>, scalar inputs by name),
// with `type_reduce` (and the placeholders) as typedefs before the preamble.
//
// Kernels of a module: `<name>` applies postMapExpr and writes the output
// directly (G == 1: one kernel when the outputs alone give the GPU enough
// blocks, or the reduction is short); `<name>_partial` splits each output's
// reduced range over G blocks (j strides by G * R) into partials of the
// reduce type, and `<name>_final` (a block per output) combines the G
// partials and applies postMapExpr. The split happens when the outputs give
// less than a wave of blocks and each thread would load more than 4 * U
// elements; G is then as large as keeps the partial grid within one wave of
// resident blocks (from the kernel's registers and the SM count: a block
// beyond it would double the time) and each thread at 2 * U elements or more.
// Indices are 32-bit `int` when every size and offset fits in 2^30, else
// `long long`. Parameter lists use concrete C types only (the launcher reads
// them: NOTE [ Kernel arguments ] in raw.ts); JS numbers come in as `double`
// and are converted to their parameter's type once per thread.
//
// NOTE [ Reduction call path ]
// As in NOTE [ Elementwise call path ]: the dtype binding is cached per
// input-dtype key and the plan per geometry within it, so a repeated call
// does no codegen or placeholder binding: it coalesces (a full reduction of
// contiguous inputs skips even that), allocates the output with allocate()
// and launches through RawKernel.launchPrepared.
import type { Device } from '../device';
import { DTYPE_INFO, isDType, type DType } from '../dtype';
import { allocate } from '../creation';
import { native } from '../native';
import { Tensor } from '../tensor';
import { broadcastShapes, equalShapes, numelOf } from '../shape';
import { broadcastStrides, C_TYPES, parseParams, typeHeaders, type Param } from './params';
import { RawKernel, RawModule } from './raw';
import { checkKeys, checkOptions, optionKeys } from '../options';

export interface ReductionOptions {
  name?: string;
  /**
   * Type of the running value (a dtype or a placeholder; default: the
   * output's, except float32 for a float16 or bfloat16 output).
   */
  reduceType?: string;
  preamble?: string;
  options?: string[];
}

export interface ReduceCallOptions {
  /** Axes to reduce (default: all). Negative axes count from the end. */
  axis?: number | readonly number[];
  keepdims?: boolean;
}

export type ReductionKernel = ((...args: (Tensor | number | ReduceCallOptions)[]) => Tensor) & { readonly kernelName: string };

/** Threads per block of every generated kernel (NOTE [ Reduction codegen ]). */
const BLOCK = 256;
const LOG_BLOCK = 8;
const WARPS = BLOCK / 32;
/** Sizes and offsets up to this use 32-bit indices (headroom for j + U * step). */
const INDEX32 = 2 ** 30;
const MAX_GRID = 2 ** 31 - 1;
const NO_DIMS: readonly number[] = Object.freeze([]);

const OPTION_KEYS = optionKeys<ReductionOptions>({ name: true, reduceType: true, preamble: true, options: true });
const CALL_KEYS = optionKeys<ReduceCallOptions>({ axis: true, keepdims: true });

type Layout = 'A' | 'B';

/** What the input dtypes decide (cached per dtype key). */
interface Binding {
  /** Per input: its dtype (a scalar's declared or bound type). */
  types: DType[];
  /** Per input: a JS number rather than a tensor. */
  scalar: boolean[];
  bound: Map<string, DType>;
  outType: DType;
  reduceType: DType;
  /** Elements each thread loads per step of its loop. */
  unroll: number;
  plans: Map<number, Plan>;
}

/** The coalesced shape of a call, what a plan is specialised on besides dtypes. */
export interface ReductionGeometry {
  nKept: number;
  nRed: number;
  layout: Layout;
  idx32: boolean;
}

interface Plan {
  direct: RawKernel;
  partial: RawKernel;
  final: RawKernel;
  /** Resident blocks per SM of the partial kernel, per device index (computed on first use). */
  resident: number[];
}

/** The text of a kernel definition, what the generator needs besides a signature. */
interface Definition {
  name: string;
  preamble: string;
  ins: Param[];
  out: Param;
  mapExpr: string;
  reduceExpr: string;
  postMapExpr: string;
  identity: string;
}

/** @internal The generator of each kernel made here, for reductionSource. */
const generators = new WeakMap<ReductionKernel, (inputs: readonly (DType | 'number')[], geo: ReductionGeometry) => string>();

/**
 * A reduction from C expressions, like cupy.ReductionKernel.
 * @example
 * const l2 = gx.reductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', { name: 'l2norm' });
 * const rowNorms = l2(m, { axis: 1 });
 */
export function reductionKernel(inParams: string, outParams: string, mapExpr: string, reduceExpr: string,
  postMapExpr: string, identity: string, opts: ReductionOptions = {}): ReductionKernel {
  opts = checkOptions<ReductionOptions>(opts, 'gx.reductionKernel', OPTION_KEYS);
  const name = opts.name ?? 'reduction_kernel';
  const fn = `gx.reductionKernel '${name}'`;
  if (typeof name !== 'string' || !/^[A-Za-z_]\w*$/.test(name)) throw new TypeError(`${fn}: name must be a C identifier`);
  const ins = parseParams(inParams, fn, 'inParams');
  const outs = parseParams(outParams, fn, 'outParams');
  if (outs.length !== 1) throw new TypeError(`${fn}: takes exactly one output parameter, got ${outs.length}`);
  for (const [what, v] of [['mapExpr', mapExpr], ['reduceExpr', reduceExpr], ['postMapExpr', postMapExpr], ['identity', identity]] as const) {
    if (typeof v !== 'string' || v.trim() === '') throw new TypeError(`${fn}: ${what} must be a C expression`);
  }
  const names = new Set<string>();
  for (const p of [...ins, ...outs]) {
    if (p.raw) throw new TypeError(`${fn}: raw parameters are not supported in reduction kernels ('raw ${p.type} ${p.name}')`);
    if (names.has(p.name)) throw new TypeError(`${fn}: parameter '${p.name}' is declared twice`);
    names.add(p.name);
  }
  if (opts.reduceType !== undefined && !(typeof opts.reduceType === 'string' && /^[A-Za-z_]\w*$/.test(opts.reduceType))) {
    throw new TypeError(`${fn}: reduceType must be a dtype or a type placeholder, got ${String(opts.reduceType)}`);
  }
  const out = outs[0];
  const nIn = ins.length;
  const def: Definition = { name, preamble: opts.preamble ?? '', ins, out, mapExpr, reduceExpr, postMapExpr, identity };
  const bindings = new Map<string, Binding>();
  const values: number[] = [];
  const tensorIdx: number[] = [];

  /** Binds placeholders from the input dtypes (undefined: a JS number) and picks the output and reduce types. */
  const bind = (dtypes: readonly (DType | undefined)[]): Binding => {
    const bound = new Map<string, DType>();
    ins.forEach((p, k) => {
      const d = dtypes[k];
      if (d === undefined) return;
      if (!p.placeholder) {
        if (d !== p.type) throw new TypeError(`${fn}: input '${p.name}' is declared ${p.type} but the tensor is ${d}`);
        return;
      }
      const prev = bound.get(p.type);
      if (prev !== undefined && prev !== d) throw new TypeError(`${fn}: ${p.type} is ${prev} but '${p.name}' is ${d}`);
      bound.set(p.type, d);
    });
    const typeOf = (t: string, what: string): DType => {
      const d = isDType(t) ? t : bound.get(t);
      if (d === undefined) throw new TypeError(`${fn}: cannot tell the type ${t} ${what} from the input tensors`);
      return d;
    };
    const types = ins.map((p) => typeOf(p.type, `of '${p.name}'`));
    const outType = typeOf(out.type, `of '${out.name}'`);
    // CuPy would accumulate a half output in half; float keeps sums of many halves accurate.
    const reduceType = opts.reduceType !== undefined ? typeOf(opts.reduceType, '(reduceType)')
      : outType === 'float16' || outType === 'bfloat16' ? 'float32' : outType;
    let bytes = 0;
    dtypes.forEach((d) => { if (d !== undefined) bytes += DTYPE_INFO[d].itemsize; });
    // About 32 bytes of loads in flight per thread: enough, with full occupancy, to cover memory latency.
    const unroll = bytes <= 2 ? 16 : bytes <= 4 ? 8 : 4;
    return { types, scalar: dtypes.map((d) => d === undefined), bound, outType, reduceType, unroll, plans: new Map() };
  };

  const makePlan = (b: Binding, geo: ReductionGeometry): Plan => {
    const mod = new RawModule(generate(def, b, geo), { options: opts.options });
    return { direct: mod.getFunction(name), partial: mod.getFunction(`${name}_partial`), final: mod.getFunction(`${name}_final`), resident: [] };
  };

  const call = (...raw: (Tensor | number | ReduceCallOptions)[]): Tensor => {
    let nargs = raw.length;
    let axis: number | readonly number[] | undefined;
    let keepdims = false;
    const last = raw[nargs - 1];
    if (nargs > 0 && last !== null && typeof last === 'object' && !(last instanceof Tensor)) {
      checkKeys(last, fn, CALL_KEYS);
      axis = last.axis;
      keepdims = last.keepdims === true;
      nargs--;
    }
    if (nargs !== nIn) throw new TypeError(`${fn}: takes ${nIn} inputs (and an optional { axis, keepdims }), got ${nargs}`);
    const args = raw as (Tensor | number)[];

    // Inputs: the device, the dtype key, and whether the tensors share one shape and are contiguous.
    let device: Device | undefined;
    let key = '';
    let shape: readonly number[] | undefined;
    let sameShape = true;
    let contiguous = true;
    tensorIdx.length = 0;
    for (let k = 0; k < nIn; k++) {
      const a = args[k];
      if (a instanceof Tensor) {
        const d = a.device;
        if (device === undefined) device = d;
        else if (d !== device && !device.equals(d)) throw new Error(`${fn}: input '${ins[k].name}' is on ${d} but an earlier one on ${device}`);
        key += a.dtype;
        key += ',';
        const s = a.shape;
        if (shape === undefined) shape = s;
        else if (sameShape && s !== shape && !equalShapes(s, shape)) sameShape = false;
        if (contiguous && !a.isContiguous()) contiguous = false;
        tensorIdx.push(k);
      } else if (typeof a === 'number') {
        key += 'v,';
      } else {
        throw new TypeError(`${fn}: input '${ins[k].name}' must be a Tensor or a number, got ${a === null ? 'null' : typeof a}`);
      }
    }
    const needsCuda = `${fn}: needs at least one CUDA tensor input to run on`;
    if (device === undefined || shape === undefined) throw new TypeError(needsCuda);
    let b = bindings.get(key);
    if (b === undefined) {
      b = bind(args.map((a) => (a instanceof Tensor ? a.dtype : undefined)));
      bindings.set(key, b);
    }
    if (!sameShape) shape = broadcastShapes(tensorIdx.map((k) => (args[k] as Tensor).shape), fn);
    const ndim = shape.length;
    const nT = tensorIdx.length;

    // The coalesced problem (NOTE [ Reduction codegen ]).
    let outShape: readonly number[];
    let kShape: number[], rShape: number[];
    let kSt: number[][], rSt: number[][];
    let nOut: number, nRed: number;
    if (axis === undefined && sameShape && contiguous) {
      // A full reduction of contiguous inputs (the common case): one reduced dim of stride 1.
      outShape = keepdims ? new Array<number>(ndim).fill(1) : NO_DIMS;
      nOut = 1;
      nRed = numelOf(shape);
      kShape = [];
      rShape = [nRed];
      kSt = [];  // no kept dims: never read
      rSt = UNIT_STRIDES[nT] ?? tensorIdx.map(() => [1]);
    } else {
      const reduced = reducedDims(axis, ndim, fn);
      outShape = keepdims ? shape.map((s, d) => (reduced[d] ? 1 : s)) : shape.filter((_, d) => !reduced[d]);
      nOut = numelOf(outShape);
      if (nOut === 0) {
        if (device.type !== 'cuda') throw new TypeError(needsCuda);
        return allocate(outShape, b.outType, device);
      }
      const strides = tensorIdx.map((k) => broadcastStrides(args[k] as Tensor, shape as readonly number[]));
      ({ kShape, rShape, kSt, rSt, nRed } = coalesce(shape, reduced, strides));
    }
    // Checked last, so that argument errors show on any device.
    if (device.type !== 'cuda') throw new TypeError(needsCuda);
    const nk = kShape.length;
    const nr = rShape.length;
    let layout: Layout = 'A';
    if (nk > 0) {
      // Threads of one output side by side when the reduced dim is the denser one, else outputs side by side.
      let rw = 0, kw = 0;
      for (let t = 0; t < nT; t++) {
        rw += Math.abs(rSt[t][nr - 1]);
        kw += Math.abs(kSt[t][nk - 1]);
      }
      if (rw > kw) layout = 'B';
    }
    let idx32 = nRed <= INDEX32 && nOut <= INDEX32;
    for (let t = 0; idx32 && t < nT; t++) {
      let off = 0;
      for (let d = 0; d < nk; d++) off += Math.abs(kSt[t][d]) * (kShape[d] - 1);
      for (let d = 0; d < nr; d++) off += Math.abs(rSt[t][d]) * (rShape[d] - 1);
      idx32 = off <= INDEX32;
    }
    const geoKey = ((nk * 64 + nr) * 2 + (layout === 'B' ? 1 : 0)) * 2 + (idx32 ? 1 : 0);
    let plan = b.plans.get(geoKey);
    if (plan === undefined) {
      plan = makePlan(b, { nKept: nk, nRed: nr, layout, idx32 });
      b.plans.set(geoKey, plan);
    }

    // Threads per output (R), outputs per block (S), blocks, and whether to split (G).
    const U = b.unroll;
    let R: number;
    if (nk === 0) R = BLOCK;
    else if (layout === 'A') R = pow2Between(Math.ceil(nRed / U), 1, BLOCK);
    else R = pow2Between(Math.ceil(nRed / (2 * U)), 1, WARPS);
    const S = BLOCK / R;
    const blocks = Math.ceil(nOut / S);
    const perThread = Math.ceil(nRed / R);
    const info = deviceInfo(device.index);
    let G = 1;
    if (blocks < info.sms * (info.threadsPerSM / BLOCK) && perThread > 4 * U) {
      let resident = plan.resident[device.index];
      if (resident === undefined) {
        resident = residentBlocks(plan.partial, device, info);
        plan.resident[device.index] = resident;
      }
      // At most one wave: a block more than fits would double the time.
      G = Math.min(Math.floor((info.sms * resident) / blocks), Math.ceil(perThread / (2 * U)));
    }

    // Arguments: inputs, the output (or partials), then the geometry (the order of generate()'s parameters).
    values.length = 0;
    for (let k = 0; k < nIn; k++) {
      const a = args[k];
      values.push(typeof a === 'number' ? a : a.address(fn));
    }
    const outAt = values.length;
    values.push(0);
    if (nk > 0) values.push(nOut);
    values.push(nRed);
    for (let d = 1; d < nk; d++) values.push(kShape[d]);
    for (let t = 0; t < nT; t++) for (let d = 0; d < nk; d++) values.push(kSt[t][d]);
    for (let d = 1; d < nr; d++) values.push(rShape[d]);
    for (let t = 0; t < nT; t++) for (let d = 0; d < nr; d++) values.push(rSt[t][d]);
    if (nk > 0) values.push(Math.log2(R));
    const y = allocate(outShape, b.outType, device);
    try {
      if (G <= 1) {
        values[outAt] = y.address(fn);
        plan.direct.launchPrepared(device, Math.min(blocks, MAX_GRID), BLOCK, values);
        return y;
      }
      values.push(G);
      using partial = allocate([nOut * G], b.reduceType, device);
      values[outAt] = partial.address(fn);
      plan.partial.launchPrepared(device, blocks * G, BLOCK, values);
      // The final kernel: partials, output, the scalars (postMapExpr may use them), n_out, G.
      values.length = 0;
      values.push(partial.address(fn), y.address(fn));
      for (let k = 0; k < nIn; k++) {
        const a = args[k];
        if (typeof a === 'number') values.push(a);
      }
      values.push(nOut, G);
      plan.final.launchPrepared(device, Math.min(nOut, MAX_GRID), Math.max(32, pow2Between(G, 1, BLOCK)), values);
      return y;
    } catch (e) {
      y.dispose();  // a compile error at the first launch, say
      throw e;
    }
  };
  const kernel = Object.assign(call, { kernelName: name });
  generators.set(kernel, (inputs, geo) => generate(def, bind(inputs.map((d) => (d === 'number' ? undefined : d))), geo));
  return kernel;
}

/**
 * @internal The module source a call of `kernel` with these inputs (dtypes,
 * 'number' for a JS number) and coalesced geometry compiles: for tests, which
 * compile it without a GPU.
 */
export function reductionSource(kernel: ReductionKernel, inputs: readonly (DType | 'number')[], geo: ReductionGeometry): string {
  const g = generators.get(kernel);
  if (g === undefined) throw new TypeError('reductionSource: not a kernel made by gx.reductionKernel');
  return g(inputs, geo);
}

/** Strides [tensor][dim] of a full reduction of contiguous inputs, shared between calls (never modified). */
const UNIT_STRIDES: number[][][] = Array.from({ length: 9 }, (_, n) => Array.from({ length: n }, () => [1]));

/** The power of two at least `n`, clamped to [lo, hi]. */
function pow2Between(n: number, lo: number, hi: number): number {
  let p = lo;
  while (p < n && p < hi) p *= 2;
  return p;
}

/** Which dims are reduced: all for `axis` undefined; negative axes count from the end. */
function reducedDims(axis: number | readonly number[] | undefined, ndim: number, fn: string): boolean[] {
  const reduced = new Array<boolean>(ndim).fill(axis === undefined);
  if (axis === undefined) return reduced;
  const list = typeof axis === 'number' ? [axis] : Array.isArray(axis) ? axis as readonly number[] : undefined;
  if (list === undefined) throw new TypeError(`${fn}: axis must be a number or an array of numbers, got ${typeof axis}`);
  for (const a of list) {
    if (!Number.isInteger(a) || a < -ndim || a >= Math.max(ndim, 1)) {
      throw new RangeError(`${fn}: axis ${String(a)} is out of range for a ${ndim}-d input`);
    }
    const d = a < 0 ? a + ndim : a;
    if (reduced[d]) throw new RangeError(`${fn}: axis ${list.join(', ')} repeats an axis`);
    reduced[d] = true;
  }
  return reduced;
}

/**
 * @internal Kept and reduced dims with size-1 dims dropped, the reduced ones ordered by
 * stride (largest outermost), and neighbours merged where every tensor is
 * contiguous across them. An empty reduced extent is one dim of size 0, no
 * reduced dim at all one of size 1 (stride 0).
 */
export function coalesce(shape: readonly number[], reduced: readonly boolean[], strides: readonly (readonly number[])[]): {
  kShape: number[]; rShape: number[]; kSt: number[][]; rSt: number[][]; nRed: number;
} {
  const kept: number[] = [];
  const red: number[] = [];
  let nRed = 1;
  for (let d = 0; d < shape.length; d++) {
    if (reduced[d]) nRed *= shape[d];
    if (shape[d] !== 1) (reduced[d] ? red : kept).push(d);
  }
  const weight = (d: number): number => strides.reduce((p, st) => p + Math.abs(st[d]), 0);
  if (red.length > 1) red.sort((x, y) => weight(y) - weight(x));
  const merge = (dims: number[]): { sh: number[]; st: number[][] } => {
    const sh: number[] = [];
    const st: number[][] = strides.map(() => []);
    for (const d of dims) {
      const n = sh.length;
      if (n > 0 && strides.every((s, t) => st[t][n - 1] === s[d] * shape[d])) {
        sh[n - 1] *= shape[d];
        strides.forEach((s, t) => { st[t][n - 1] = s[d]; });
      } else {
        sh.push(shape[d]);
        strides.forEach((s, t) => st[t].push(s[d]));
      }
    }
    return { sh, st };
  };
  const k = merge(kept);
  let r = merge(red);
  if (nRed === 0) r = { sh: [0], st: strides.map(() => [0]) };
  else if (r.sh.length === 0) r = { sh: [1], st: strides.map(() => [0]) };
  return { kShape: k.sh, rShape: r.sh, kSt: k.st, rSt: r.st, nRed };
}

interface DeviceInfo {
  sms: number;
  threadsPerSM: number;
}

const devices = new Map<number, DeviceInfo>();
function deviceInfo(index: number): DeviceInfo {
  let d = devices.get(index);
  if (d === undefined) {
    const limits = native.deviceLimits(index);
    const [major, minor] = limits.computeCapability;
    // Resident threads per SM by compute capability (the CUDA occupancy tables).
    const threadsPerSM = major === 7 && minor === 5 ? 1024 : (major === 8 && minor !== 0) || major === 12 ? 1536 : 2048;
    d = { sms: limits.multiProcessorCount, threadsPerSM };
    devices.set(index, d);
  }
  return d;
}

/** Blocks of BLOCK threads of `k` resident at once on one SM (registers and threads; its shared memory is small). */
function residentBlocks(k: RawKernel, device: Device, info: DeviceInfo): number {
  const regs = Math.max(8, Math.ceil(native.functionAttributes(k.function(device)).numRegs / 8) * 8);
  return Math.max(1, Math.min(Math.floor(65536 / (regs * BLOCK)), Math.floor(info.threadsPerSM / BLOCK)));
}

/** The warp shuffle of a reduce type: 1- and 2-byte integers and bool through int, the rest (halves included) as they are. */
function shuffle(t: DType): string {
  switch (t) {
    case 'bool':
    case 'int8':
    case 'uint8':
    case 'int16':
      return '(type_reduce)__shfl_down_sync(0xffffffffu, (int)v, off)';
    default:
      return '__shfl_down_sync(0xffffffffu, v, off)';
  }
}

function generate(def: Definition, b: Binding, geo: ReductionGeometry): string {
  const { name, ins, out } = def;
  const { nKept: nk, nRed: nr, layout } = geo;
  if (!(Number.isInteger(nk) && nk >= 0 && Number.isInteger(nr) && nr >= 1)) throw new RangeError(`reduction geometry ${nk} kept, ${nr} reduced dims`);
  const I = geo.idx32 ? 'int' : 'long long';
  const C = (k: number): string => C_TYPES[b.types[k]];
  const O = C_TYPES[b.outType];
  const U = b.unroll;
  const A = Math.min(U, 4);
  const tensors = ins.filter((_, k) => !b.scalar[k]);
  const scalars = ins.filter((_, k) => b.scalar[k]);
  const id = `(type_reduce)(${def.identity})`;

  // Parameters: inputs, output or partials, then the geometry (the call pushes values in this order).
  const inParams = ins.map((p, k) => (b.scalar[k] ? `double ${p.name}_value` : `const ${C(k)}* __restrict__ ${p.name}_ptr`));
  const geoParams: string[] = [];
  if (nk > 0) geoParams.push(`${I} gx_n_out`);
  geoParams.push(`${I} gx_n_red`);
  for (let d = 1; d < nk; d++) geoParams.push(`${I} gx_kshape${d}`);
  for (const p of tensors) for (let d = 0; d < nk; d++) geoParams.push(`${I} ${p.name}_kst${d}`);
  for (let d = 1; d < nr; d++) geoParams.push(`${I} gx_rshape${d}`);
  for (const p of tensors) for (let d = 0; d < nr; d++) geoParams.push(`${I} ${p.name}_rst${d}`);
  if (nk > 0) geoParams.push('int gx_r_shift');
  const scalarLocals = ins.map((p, k) => (b.scalar[k] ? `const ${C(k)} ${p.name} = (${C(k)})${p.name}_value;` : '')).filter((s) => s !== '');
  const scalarArgs = scalars.map((p) => `, ${p.name}`).join('');

  // Index decomposition: `idx` over dims 0..n-1 (shapes `shape1..`, the outermost needs none) into per-tensor offsets.
  const offsets = (idx: string, n: number, shape: string, st: string, into: (p: Param) => string): string[] => {
    if (n === 1) return tensors.map((p) => `${into(p)} += ${idx} * ${p.name}_${st}0;`);
    const lines = [`{ ${I} gx_rem = ${idx};`];
    for (let d = n - 1; d >= 1; d--) {
      lines.push(`  { const ${I} gx_q = gx_rem % ${shape}${d}; gx_rem /= ${shape}${d};`);
      for (const p of tensors) lines.push(`    ${into(p)} += gx_q * ${p.name}_${st}${d};`);
      lines.push('  }');
    }
    for (const p of tensors) lines.push(`  ${into(p)} += gx_rem * ${p.name}_${st}0;`);
    lines.push('}');
    return lines;
  };
  // Loads element `j` of every tensor input into `<name>_<u>`, then the mapped value is `gx_map(...)`.
  const load = (j: string, u: number): string[] => {
    const lines: string[] = [];
    if (nr === 1) {
      for (const p of tensors) lines.push(`const ${C(ins.indexOf(p))} ${p.name}_${u} = ${p.name}_ptr[${p.name}_base + (${j}) * ${p.name}_rst0];`);
      return lines;
    }
    for (const p of tensors) lines.push(`${I} ${p.name}_off${u} = ${p.name}_base;`);
    lines.push(...offsets(`(${j})`, nr, 'gx_rshape', 'rst', (p) => `${p.name}_off${u}`));
    for (const p of tensors) lines.push(`const ${C(ins.indexOf(p))} ${p.name}_${u} = ${p.name}_ptr[${p.name}_off${u}];`);
    return lines;
  };
  const mapped = (u: number): string => `gx_map(${ins.map((p, k) => (b.scalar[k] ? p.name : `${p.name}_${u}`)).join(', ')})`;

  const body = (partial: boolean): string => {
    const emit = (o: string, v: string): string => (partial ? `gx_partial[(long long)(${o}) * gx_G + gx_c] = ${v};` : `gx_post(${v}, gx_out[${o}]${scalarArgs});`);
    const L: string[] = [];
    L.push(layout === 'A' ? 'const int gx_tid = threadIdx.x, gx_lane = gx_tid & 31, gx_warp = gx_tid >> 5;' : 'const int gx_tid = threadIdx.x;');
    L.push(...scalarLocals);
    if (nk === 0) {
      L.push(`const ${I} gx_n_out = 1;`, 'const int gx_R = GX_BLOCK, gx_S = 1, gx_r_lane = gx_tid, gx_o_lane = 0;');
    } else if (layout === 'A') {
      L.push('const int gx_R = 1 << gx_r_shift, gx_S = GX_BLOCK >> gx_r_shift;', 'const int gx_r_lane = gx_tid & (gx_R - 1), gx_o_lane = gx_tid >> gx_r_shift;');
    } else {
      L.push('const int gx_R = 1 << gx_r_shift, gx_S = GX_BLOCK >> gx_r_shift;', 'const int gx_o_lane = gx_tid & (gx_S - 1), gx_r_lane = gx_tid >> (GX_LOG_BLOCK - gx_r_shift);');
    }
    L.push(`const ${I} gx_G = ${partial ? 'gx_groups' : '1'};`);
    L.push(`const ${I} gx_n_tasks = (gx_n_out + gx_S - 1) / gx_S * gx_G;`);
    L.push(`const ${I} gx_step = gx_G * gx_R;`);
    const smem = layout === 'A' ? 'GX_WARPS' : 'GX_BLOCK';
    L.push(`__shared__ type_reduce gx_smem[2][${smem}];`, 'int gx_buf = 0;');
    L.push(`for (${I} gx_task = blockIdx.x; gx_task < gx_n_tasks; gx_task += gridDim.x) {`);
    const T: string[] = [];
    T.push(partial ? `const ${I} gx_og = gx_task / gx_G, gx_c = gx_task - gx_og * gx_G;` : `const ${I} gx_og = gx_task, gx_c = 0;`);
    T.push(`const ${I} gx_o = gx_og * gx_S + gx_o_lane;`);
    for (let a = 0; a < A; a++) T.push(`type_reduce gx_acc${a} = ${id};`);
    T.push('if (gx_o < gx_n_out) {');
    const W: string[] = [];
    for (const p of tensors) W.push(`${I} ${p.name}_base = 0;`);
    if (nk > 0) W.push(...offsets('gx_o', nk, 'gx_kshape', 'kst', (p) => `${p.name}_base`));
    W.push(`${I} gx_j = gx_c * gx_R + gx_r_lane;`);
    // Main loop: U loads issued before any is combined.
    W.push(`for (; gx_j + ${U - 1} * gx_step < gx_n_red; gx_j += ${U} * gx_step) {`);
    const M: string[] = [];
    for (let u = 0; u < U; u++) M.push(...load(u === 0 ? 'gx_j' : `gx_j + ${u} * gx_step`, u));
    for (let u = 0; u < U; u++) M.push(`gx_acc${u % A} = gx_reduce(gx_acc${u % A}, ${mapped(u)});`);
    W.push(...indent(M), '}');
    // Tail: fewer than U left. Loads past the end read element gx_j again and
    // are not combined: no load waits behind a branch, all are in flight at once.
    const tail: string[] = [];
    for (let u = 1; u < U - 1; u++) tail.push(`const ${I} gx_j${u} = gx_j + ${u} * gx_step < gx_n_red ? gx_j + ${u} * gx_step : gx_j;`);
    for (let u = 0; u < U - 1; u++) tail.push(...load(u === 0 ? 'gx_j' : `gx_j${u}`, u));
    tail.push(`gx_acc0 = gx_reduce(gx_acc0, ${mapped(0)});`);
    for (let u = 1; u < U - 1; u++) tail.push(`gx_acc${u % A} = gx_reduce(gx_acc${u % A}, gx_j + ${u} * gx_step < gx_n_red ? ${mapped(u)} : ${id});`);
    W.push('if (gx_j < gx_n_red) {', ...indent(tail), '}');
    T.push(...indent(W), '}');
    T.push(`type_reduce gx_acc = ${A === 1 ? 'gx_acc0' : A === 2 ? 'gx_reduce(gx_acc0, gx_acc1)' : 'gx_reduce(gx_reduce(gx_acc0, gx_acc1), gx_reduce(gx_acc2, gx_acc3))'};`);
    if (layout === 'A') {
      T.push(
        '// The R lanes of an output are neighbours: shuffles within a warp, then across the warps of an output.',
        'for (int gx_off = (gx_R < 32 ? gx_R : 32) >> 1; gx_off > 0; gx_off >>= 1) gx_acc = gx_reduce(gx_acc, gx_shfl_down(gx_acc, gx_off));',
        'if (gx_R <= 32) {',
        `  if (gx_r_lane == 0 && gx_o < gx_n_out) ${emit('gx_o', 'gx_acc')}`,
        '} else {',
        '  if (gx_lane == 0) gx_smem[gx_buf][gx_warp] = gx_acc;',
        '  __syncthreads();',
        '  if (gx_warp == 0) {',
        '    const int gx_wpo = gx_R >> 5;  // warps per output',
        `    type_reduce gx_v = gx_lane < GX_WARPS ? gx_smem[gx_buf][gx_lane] : ${id};`,
        '    for (int gx_off = gx_wpo >> 1; gx_off > 0; gx_off >>= 1) gx_v = gx_reduce(gx_v, gx_shfl_down(gx_v, gx_off));',
        `    const ${I} gx_o2 = gx_og * gx_S + gx_lane / gx_wpo;`,
        `    if (gx_lane < GX_WARPS && (gx_lane & (gx_wpo - 1)) == 0 && gx_o2 < gx_n_out) ${emit('gx_o2', 'gx_v')}`,
        '  }',
        '  gx_buf ^= 1;',
        '}',
      );
    } else {
      T.push(
        '// Outputs side by side (S >= 32): the R <= 8 values of output gx_tid through shared memory.',
        'if (gx_R > 1) {',
        '  gx_smem[gx_buf][gx_tid] = gx_acc;',
        '  __syncthreads();',
        '  if (gx_tid < gx_S) for (int gx_k = 1; gx_k < gx_R; gx_k++) gx_acc = gx_reduce(gx_acc, gx_smem[gx_buf][gx_tid + gx_k * gx_S]);',
        '  gx_buf ^= 1;',
        '}',
        `if (gx_tid < gx_S && gx_o < gx_n_out) ${emit('gx_o', 'gx_acc')}`,
      );
    }
    L.push(...indent(T), '}');
    return indent(L).join('\n');
  };

  const finalBody = [
    'const int gx_tid = threadIdx.x, gx_lane = gx_tid & 31, gx_warp = gx_tid >> 5;',
    ...scalarLocals,
    '__shared__ type_reduce gx_smem[2][GX_WARPS];',
    'int gx_buf = 0;',
    `for (${I} gx_o = blockIdx.x; gx_o < gx_n_out; gx_o += gridDim.x) {`,
    '  const type_reduce* gx_p = gx_partial + (long long)gx_o * gx_G;',
    `  type_reduce gx_acc = ${id};`,
    `  for (${I} gx_g = gx_tid; gx_g < gx_G; gx_g += blockDim.x) gx_acc = gx_reduce(gx_acc, gx_p[gx_g]);`,
    '  for (int gx_off = 16; gx_off > 0; gx_off >>= 1) gx_acc = gx_reduce(gx_acc, gx_shfl_down(gx_acc, gx_off));',
    '  if (blockDim.x > 32) {',
    '    if (gx_lane == 0) gx_smem[gx_buf][gx_warp] = gx_acc;',
    '    __syncthreads();',
    '    if (gx_warp == 0) {',
    `      gx_acc = gx_lane < (int)(blockDim.x >> 5) ? gx_smem[gx_buf][gx_lane] : ${id};`,
    '      for (int gx_off = GX_WARPS >> 1; gx_off > 0; gx_off >>= 1) gx_acc = gx_reduce(gx_acc, gx_shfl_down(gx_acc, gx_off));',
    '    }',
    '    gx_buf ^= 1;',
    '  }',
    `  if (gx_tid == 0) gx_post(gx_acc, gx_out[gx_o]${scalarArgs});`,
    '}',
  ];

  // Placeholders become typedefs; parameter lists use concrete C types (the launcher reads them: NOTE [ Kernel arguments ]).
  const typedefs = [...b.bound.entries()].map(([t, d]) => `typedef ${C_TYPES[d]} ${t};\n`).join('');
  const R = C_TYPES[b.reduceType];
  const mapParams = ins.map((p, k) => `const ${C(k)} ${p.name}`).join(', ');
  const postParams = [`const type_reduce a`, `${O}& ${out.name}`, ...scalars.map((p) => `const ${C(ins.indexOf(p))} ${p.name}`)].join(', ');
  const kernelHead = (suffix: string, params: string[]): string =>
    `extern "C" __global__ void __launch_bounds__(GX_BLOCK) ${name}${suffix}(${params.join(', ')})`;
  return `${typeHeaders([...b.types, b.outType, b.reduceType])}${typedefs}typedef ${R} type_reduce;
${def.preamble}
#define GX_BLOCK ${BLOCK}
#define GX_LOG_BLOCK ${LOG_BLOCK}
#define GX_WARPS ${WARPS}
__device__ __forceinline__ type_reduce gx_map(${mapParams}) { return (type_reduce)(${def.mapExpr}); }
__device__ __forceinline__ type_reduce gx_reduce(const type_reduce a, const type_reduce b) { return (type_reduce)(${def.reduceExpr}); }
__device__ __forceinline__ void gx_post(${postParams}) { ${def.postMapExpr}; }
__device__ __forceinline__ type_reduce gx_shfl_down(const type_reduce v, const unsigned off) { return ${shuffle(b.reduceType)}; }

// Reduces the outputs in one pass and applies postMapExpr.
${kernelHead('', [...inParams, `${O}* __restrict__ gx_out`, ...geoParams])} {
${body(false)}
}

// Reduces G chunks of each output's reduced range, one partial each.
${kernelHead('_partial', [...inParams, `${R}* __restrict__ gx_partial`, ...geoParams, `${I} gx_groups`])} {
${body(true)}
}

// Combines each output's G partials and applies postMapExpr.
${kernelHead('_final', [`const ${R}* __restrict__ gx_partial`, `${O}* __restrict__ gx_out`, ...scalars.map((p) => `double ${p.name}_value`), `${I} gx_n_out`, `${I} gx_G`])} {
${indent(finalBody).join('\n')}
}
`;
}

function indent(lines: string[]): string[] {
  return lines.map((l) => `  ${l}`);
}
