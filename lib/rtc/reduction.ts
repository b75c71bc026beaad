// gx.reductionKernel: CuPy's ReductionKernel for TypeScript.
//
// NOTE [ Reduction codegen ]
// Two generated kernels. `<name>_partial`: block b reduces chunk b % G of the
// reduced elements of output b / G (mapExpr per element, reduceExpr with `a`
// and `b` to combine, a shared-memory tree in the block) into a partial of
// the reduce type. `<name>_final`: one block per output combines its G
// partials and applies postMapExpr (`a` the result, the output by name).
// G is chosen so that even a full reduction (one output) spreads over the
// whole GPU. Operands are read through the kept and reduced strides of their
// broadcast view, so any layout works.
import { isDType, type DType } from '../dtype';
import { empty } from '../creation';
import { native } from '../native';
import { Tensor } from '../tensor';
import { broadcastShapes } from './broadcast';
import { broadcastStrides, C_TYPES, parseParams, type Param } from './params';
import { RawKernel, RawModule } from './raw';

export interface ReductionOptions {
  name?: string;
  /** Type of the running value (a dtype or a placeholder; default: the output's). */
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

/**
 * A reduction from C expressions, like cupy.ReductionKernel.
 * @example
 * const l2 = gx.reductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', { name: 'l2norm' });
 * const rowNorms = l2(m, { axis: 1 });
 */
export function reductionKernel(inParams: string, outParams: string, mapExpr: string, reduceExpr: string,
  postMapExpr: string, identity: string, opts: ReductionOptions = {}): ReductionKernel {
  const name = opts.name ?? 'reduction_kernel';
  const fn = `gx.reductionKernel '${name}'`;
  const ins = parseParams(inParams, fn, 'inParams');
  const outs = parseParams(outParams, fn, 'outParams');
  if (outs.length !== 1) throw new TypeError(`${fn}: takes exactly one output parameter, got ${outs.length}`);
  for (const [what, v] of [['mapExpr', mapExpr], ['reduceExpr', reduceExpr], ['postMapExpr', postMapExpr], ['identity', identity]] as const) {
    if (typeof v !== 'string' || v.trim() === '') throw new TypeError(`${fn}: ${what} must be a C expression`);
  }
  const out = outs[0];
  const compiled = new Map<string, { partial: RawKernel; final: RawKernel }>();

  const call = (...raw: (Tensor | number | ReduceCallOptions)[]): Tensor => {
    let callOpts: ReduceCallOptions = {};
    const last = raw[raw.length - 1];
    const args = raw.slice();
    if (last !== undefined && !(last instanceof Tensor) && typeof last === 'object') {
      callOpts = last;
      args.pop();
    }
    if (args.length !== ins.length) throw new TypeError(`${fn}: takes ${ins.length} inputs (and an optional { axis, keepdims }), got ${args.length}`);
    const bound = new Map<string, DType>();
    let device: Tensor['device'] | undefined;
    ins.forEach((p, k) => {
      const a = args[k];
      if (a instanceof Tensor) {
        if (C_TYPES[a.dtype] === undefined) throw new TypeError(`${fn}: '${p.name}' is ${a.dtype}, not supported in reduction kernels yet`);
        if (p.placeholder) {
          const prev = bound.get(p.type);
          if (prev !== undefined && prev !== a.dtype) throw new TypeError(`${fn}: ${p.type} is ${prev} but '${p.name}' is ${a.dtype}`);
          bound.set(p.type, a.dtype);
        } else if (a.dtype !== p.type) {
          throw new TypeError(`${fn}: input '${p.name}' is declared ${p.type} but the tensor is ${a.dtype}`);
        }
        if (device === undefined) device = a.device;
        else if (!device.equals(a.device)) throw new Error(`${fn}: input '${p.name}' is on ${a.device} but an earlier one on ${device}`);
      } else if (typeof a !== 'number') {
        throw new TypeError(`${fn}: input '${p.name}' must be a Tensor or a number`);
      }
    });
    if (device === undefined || device.type !== 'cuda') throw new TypeError(`${fn}: needs at least one CUDA tensor input to run on`);
    const typeOf = (t: string): DType => {
      const d = isDType(t) ? t : bound.get(t);
      if (d === undefined || C_TYPES[d] === undefined) throw new TypeError(`${fn}: cannot tell the type ${t} from the inputs`);
      return d;
    };
    const outType = typeOf(out.type);
    const reduceType = typeOf(opts.reduceType ?? out.type);
    const tensors = ins.map((_, k) => args[k]).filter((a): a is Tensor => a instanceof Tensor);
    const shape = broadcastShapes(tensors.map((t) => t.shape), fn);
    const ndim = shape.length;
    const axes = normalizeAxes(callOpts.axis, ndim, fn);
    const kept = shape.map((_, d) => d).filter((d) => !axes.includes(d));
    const outShape = callOpts.keepdims ? shape.map((s, d) => (axes.includes(d) ? 1 : s)) : kept.map((d) => shape[d]);
    const nOut = kept.reduce((p, d) => p * shape[d], 1);
    const nRed = axes.reduce((p, d) => p * shape[d], 1);
    const y = empty(outShape, { dtype: outType, device });
    if (nOut === 0) return y;

    const layouts = ins.map((_, k) => (args[k] instanceof Tensor ? 's' : 'v'));
    const key = `${[...bound.entries()].map(([t, d]) => `${t}=${d}`).join(';')}|${outType}|${reduceType}|${kept.length}|${axes.length}|${layouts.join('')}`;
    let kernels = compiled.get(key);
    if (kernels === undefined) {
      const mod = new RawModule(generate(name, opts.preamble ?? '', ins, out, mapExpr, reduceExpr, postMapExpr, identity,
        bound, outType, reduceType, kept.length, axes.length, layouts), { options: opts.options });
      kernels = { partial: mod.getFunction(`${name}_partial`), final: mod.getFunction(`${name}_final`) };
      compiled.set(key, kernels);
    }
    const sms = smCount(device.index);
    const G = Math.max(1, Math.min(Math.ceil(nRed / 2048), Math.ceil((sms * 8) / nOut)));
    const chunk = Math.max(1, Math.ceil(nRed / G));
    using partial = empty([nOut * G], { dtype: reduceType, device });
    const kargs: unknown[] = [];
    ins.forEach((_, k) => kargs.push(args[k]));
    kargs.push(partial, nOut, nRed, G, chunk);
    for (const d of kept) kargs.push(shape[d]);
    for (const d of axes) kargs.push(shape[d]);
    ins.forEach((_, k) => {
      const a = args[k];
      if (!(a instanceof Tensor)) return;
      const st = broadcastStrides(a, shape);
      for (const d of kept) kargs.push(st[d]);
      for (const d of axes) kargs.push(st[d]);
    });
    kernels.partial.launch([Math.min(nOut * G, 2 ** 31 - 1)], [256], kargs);
    const finalThreads = G >= 256 ? 256 : Math.max(32, 2 ** Math.ceil(Math.log2(G)));
    kernels.final.launch([Math.min(nOut, 2 ** 31 - 1)], [finalThreads], [partial, y, nOut, G]);
    return y;
  };
  return Object.assign(call, { kernelName: name });
}

const sms = new Map<number, number>();
function smCount(device: number): number {
  let n = sms.get(device);
  if (n === undefined) {
    n = native.deviceLimits(device).multiProcessorCount;
    sms.set(device, n);
  }
  return n;
}

function normalizeAxes(axis: number | readonly number[] | undefined, ndim: number, fn: string): number[] {
  if (axis === undefined) return Array.from({ length: ndim }, (_, d) => d);
  const list = typeof axis === 'number' ? [axis] : [...axis];
  const out = list.map((a) => {
    if (!Number.isInteger(a) || a < -ndim || a >= Math.max(ndim, 1)) {
      throw new RangeError(`${fn}: axis ${a} is out of range for a ${ndim}-d input`);
    }
    return a < 0 ? a + ndim : a;
  });
  if (new Set(out).size !== out.length) throw new RangeError(`${fn}: axis ${list.join(', ')} repeats an axis`);
  return out.sort((a, b) => a - b);
}

function generate(name: string, preamble: string, ins: Param[], out: Param, mapExpr: string, reduceExpr: string,
  postMapExpr: string, identity: string, bound: Map<string, DType>, outType: DType, reduceType: DType,
  nKept: number, nRed: number, layouts: string[]): string {
  const ctype = (t: string): string => C_TYPES[(isDType(t) ? t : bound.get(t)) as DType] as string;
  const typedefs = [...bound.entries()].map(([t, d]) => `typedef ${C_TYPES[d]} ${t};`).join('\n');
  const R = C_TYPES[reduceType] as string;
  const params: string[] = ins.map((p, k) => (layouts[k] === 'v' ? `${ctype(p.type)} ${p.name}_value` : `const ${ctype(p.type)}* __restrict__ ${p.name}_ptr`));
  params.push(`${R}* __restrict__ partial`, 'long long n_out', 'long long n_red', 'long long G', 'long long chunk');
  for (let d = 0; d < nKept; d++) params.push(`long long kshape${d}`);
  for (let d = 0; d < nRed; d++) params.push(`long long rshape${d}`);
  const tensorsIn = ins.filter((_, k) => layouts[k] === 's');
  for (const p of tensorsIn) {
    for (let d = 0; d < nKept; d++) params.push(`long long ${p.name}_kst${d}`);
    for (let d = 0; d < nRed; d++) params.push(`long long ${p.name}_rst${d}`);
  }
  const decompose = (what: string, idx: string, dims: number, shape: string, st: string): string[] => {
    const lines = [`{ long long rem = ${idx};`];
    for (let d = dims - 1; d >= 0; d--) {
      lines.push(`  { const long long q = rem % ${shape}${d}; rem /= ${shape}${d};`);
      for (const p of tensorsIn) lines.push(`    ${p.name}_${what} += q * ${p.name}_${st}${d};`);
      lines.push('  }');
    }
    lines.push('}');
    return lines;
  };
  const loads = ins.map((p, k) => (layouts[k] === 'v'
    ? `const ${ctype(p.type)} ${p.name} = ${p.name}_value;`
    : `const ${ctype(p.type)} ${p.name} = ${p.name}_ptr[${p.name}_off];`));
  return `${typedefs}
typedef ${R} type_reduce;
${preamble}
#define GX_REDUCE(a, b) (${reduceExpr})
extern "C" __global__ void ${name}_partial(${params.join(', ')}) {
  __shared__ type_reduce sdata[256];
  for (long long blk = blockIdx.x; blk < n_out * G; blk += gridDim.x) {
    const long long o = blk / G, c = blk % G;
    ${tensorsIn.map((p) => `long long ${p.name}_base = 0;`).join(' ')}
    ${decompose('base', 'o', nKept, 'kshape', 'kst').join('\n    ')}
    type_reduce acc = (type_reduce)(${identity});
    const long long r1 = (c + 1) * chunk < n_red ? (c + 1) * chunk : n_red;
    for (long long r = c * chunk + threadIdx.x; r < r1; r += blockDim.x) {
      ${tensorsIn.map((p) => `long long ${p.name}_off = ${p.name}_base;`).join(' ')}
      ${decompose('off', 'r', nRed, 'rshape', 'rst').join('\n      ')}
      ${loads.join('\n      ')}
      const type_reduce mapped = (type_reduce)(${mapExpr});
      acc = GX_REDUCE(acc, mapped);
    }
    sdata[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) sdata[threadIdx.x] = GX_REDUCE(sdata[threadIdx.x], sdata[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) partial[blk] = sdata[0];
    __syncthreads();
  }
}
extern "C" __global__ void ${name}_final(const type_reduce* __restrict__ partial, ${C_TYPES[outType]}* __restrict__ out_ptr, long long n_out, long long G) {
  __shared__ type_reduce sdata[256];
  for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {
    type_reduce acc = (type_reduce)(${identity});
    for (long long g = threadIdx.x; g < G; g += blockDim.x) acc = GX_REDUCE(acc, partial[o * G + g]);
    sdata[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) sdata[threadIdx.x] = GX_REDUCE(sdata[threadIdx.x], sdata[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      const type_reduce a = sdata[0];
      ${C_TYPES[outType]}& ${out.name} = out_ptr[o];
      ${postMapExpr};
    }
    __syncthreads();
  }
}
`;
}
