// gx.elementwiseKernel: CuPy's ElementwiseKernel for TypeScript. A body of
// C code over named inputs and outputs; the kernel is generated per dtype
// binding, rank and layout, compiled through the kernel cache, and launched
// over the broadcast shape.
//
// NOTE [ Elementwise codegen ]
// Inputs are values (`const T x`), outputs references (`T& z`), and `i` (the
// linear index) and `n` (the element count) are in scope, as in CuPy. Type
// placeholders (any type name that is not a dtype) become typedefs bound from
// the tensors passed for them. Operands that are contiguous and of the full
// shape are indexed by `i`; the others (broadcast or strided) by offsets
// computed from `i` with the output shape and their strides, which the kernel
// takes as `long long` parameters.
import type { DType } from '../dtype';
import { Tensor } from '../tensor';
import { empty } from '../creation';
import { broadcastShapes } from './broadcast';
import { broadcastStrides, C_TYPES, parseParams, type Param } from './params';
import { RawKernel } from './raw';

export interface ElementwiseOptions {
  /** Kernel name (default 'elementwise_kernel'). */
  name?: string;
  /** Code placed before the kernel: helper functions, #defines. */
  preamble?: string;
  /** NVRTC options. */
  options?: string[];
}

export type ElementwiseKernel = ((...args: (Tensor | number)[]) => Tensor | Tensor[]) & {
  readonly kernelName: string;
  /** Generated sources compiled so far (for inspection). */
  readonly sources: readonly string[];
};

/**
 * An elementwise kernel from C code, like cupy.ElementwiseKernel.
 * @example
 * const squaredDiff = gx.elementwiseKernel('T x, T y', 'T z', 'z = (x - y) * (x - y)', { name: 'squared_diff' });
 * const z = squaredDiff(x, y);             // broadcasts x and y; allocates z
 */
export function elementwiseKernel(inParams: string, outParams: string, body: string, opts: ElementwiseOptions = {}): ElementwiseKernel {
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
  const kernels = new Map<string, RawKernel>();
  const sources: string[] = [];

  const call = (...args: (Tensor | number)[]): Tensor | Tensor[] => {
    if (args.length !== ins.length && args.length !== ins.length + outs.length) {
      throw new TypeError(`${fnName}: takes ${ins.length} inputs (and optionally ${outs.length} outputs), got ${args.length} arguments`);
    }
    // Bind placeholders and find the device from the tensor inputs.
    const bound = new Map<string, DType>();
    let device: Tensor['device'] | undefined;
    const bind = (p: Param, t: Tensor, role: string): void => {
      if (!p.placeholder) {
        if (t.dtype !== p.type) throw new TypeError(`${fnName}: ${role} '${p.name}' is declared ${p.type} but the tensor is ${t.dtype}`);
        return;
      }
      const prev = bound.get(p.type);
      if (prev !== undefined && prev !== t.dtype) {
        throw new TypeError(`${fnName}: ${p.type} is ${prev} from an earlier argument but '${p.name}' is ${t.dtype}`);
      }
      if (C_TYPES[t.dtype] === undefined) throw new TypeError(`${fnName}: '${p.name}' is ${t.dtype}, not supported in elementwise kernels yet`);
      bound.set(p.type, t.dtype);
    };
    ins.forEach((p, k) => {
      const a = args[k];
      if (a instanceof Tensor) {
        bind(p, a, 'input');
        if (device === undefined) device = a.device;
        else if (!device.equals(a.device)) throw new Error(`${fnName}: input '${p.name}' is on ${a.device} but an earlier one on ${device}`);
      } else if (typeof a !== 'number') {
        throw new TypeError(`${fnName}: input '${p.name}' must be a Tensor or a number, got ${typeof a}`);
      }
    });
    if (device === undefined || device.type !== 'cuda') {
      throw new TypeError(`${fnName}: needs at least one CUDA tensor input to run on`);
    }
    const tensorsIn = ins.map((_, k) => args[k]).filter((a): a is Tensor => a instanceof Tensor);
    const shape = broadcastShapes(tensorsIn.map((t) => t.shape), fnName);
    const outTensors: Tensor[] = [];
    outs.forEach((p, k) => {
      const given = args[ins.length + k];
      const typeOf = (q: Param): DType => {
        const d = q.placeholder ? bound.get(q.type) : (q.type as DType);
        if (d === undefined) throw new TypeError(`${fnName}: cannot tell the type ${q.type} of output '${q.name}' from the inputs; pass the output`);
        return d;
      };
      if (given === undefined) {
        outTensors.push(empty(shape, { dtype: typeOf(p), device }));
      } else {
        if (!(given instanceof Tensor)) throw new TypeError(`${fnName}: output '${p.name}' must be a Tensor`);
        bind(p, given, 'output');
        if (given.shape.join(',') !== shape.join(',')) {
          throw new Error(`${fnName}: output '${p.name}' has shape [${given.shape.join(', ')}] but the inputs broadcast to [${shape.join(', ')}]`);
        }
        outTensors.push(given);
      }
    });
    const n = shape.reduce((a, b) => a * b, 1);
    if (n > 0) {
      // Layout flags: 'c' = contiguous and full-shape (indexed by i), 's' = strided/broadcast.
      const operands: { p: Param; value: Tensor | number }[] = [
        ...ins.map((p, k) => ({ p, value: args[k] })),
        ...outs.map((p, k) => ({ p, value: outTensors[k] })),
      ];
      const layouts = operands.map(({ value }) =>
        typeof value === 'number' ? 'v' : value.isContiguous() && value.shape.join(',') === shape.join(',') ? 'c' : 's');
      const key = `${[...bound.entries()].map(([t, d]) => `${t}=${d}`).join(';')}|${shape.length}|${layouts.join('')}`;
      let kernel = kernels.get(key);
      if (kernel === undefined) {
        const src = generate(name, opts.preamble ?? '', body, ins, outs, bound, shape.length, layouts);
        sources.push(src);
        kernel = new RawKernel(src, name, { options: opts.options });
        kernels.set(key, kernel);
      }
      const kargs: unknown[] = [];
      operands.forEach(({ value }) => kargs.push(value));
      kargs.push(n);
      if (layouts.includes('s')) {
        for (const s of shape) kargs.push(s);
        operands.forEach(({ value }, k) => {
          if (layouts[k] !== 's') return;
          for (const st of broadcastStrides(value as Tensor, shape)) kargs.push(st);
        });
      }
      const threads = 256;
      const blocks = Math.min(Math.ceil(n / threads), 65535 * 32);
      kernel.launch([blocks], [threads], kargs);
    }
    return outTensors.length === 1 ? outTensors[0] : outTensors;
  };
  return Object.assign(call, { kernelName: name, sources });
}

function generate(name: string, preamble: string, body: string, ins: Param[], outs: Param[], bound: Map<string, DType>,
  ndim: number, layouts: string[]): string {
  // Concrete C types everywhere, placeholders resolved: the launcher reads the
  // parameter types from this source (NOTE [ Kernel arguments ]).
  const ctype = (p: Param): string => C_TYPES[(p.placeholder ? bound.get(p.type) : p.type) as DType] as string;
  const all = [...ins, ...outs];
  const params: string[] = all.map((p, k) => {
    const isOut = k >= ins.length;
    if (layouts[k] === 'v') return `${ctype(p)} ${p.name}_value`;
    return `${isOut ? '' : 'const '}${ctype(p)}* __restrict__ ${p.name}_ptr`;
  });
  params.push('long long n');
  const strided = all.map((p, k) => ({ p, k })).filter(({ k }) => layouts[k] === 's');
  if (strided.length > 0) {
    for (let d = 0; d < ndim; d++) params.push(`long long shape${d}`);
    for (const { p } of strided) for (let d = 0; d < ndim; d++) params.push(`long long ${p.name}_stride${d}`);
  }
  const lines: string[] = [];
  if (strided.length > 0) {
    lines.push('long long rem = i;');
    for (const { p } of strided) lines.push(`long long ${p.name}_off = 0;`);
    for (let d = ndim - 1; d >= 0; d--) {
      lines.push(`{ const long long idx = rem % shape${d}; rem /= shape${d};`);
      for (const { p } of strided) lines.push(`  ${p.name}_off += idx * ${p.name}_stride${d};`);
      lines.push('}');
    }
  }
  all.forEach((p, k) => {
    const isOut = k >= ins.length;
    const index = layouts[k] === 's' ? `${p.name}_off` : 'i';
    if (layouts[k] === 'v') lines.push(`const ${ctype(p)} ${p.name} = ${p.name}_value;`);
    else if (isOut) lines.push(`${ctype(p)}& ${p.name} = ${p.name}_ptr[${index}];`);
    else lines.push(`const ${ctype(p)} ${p.name} = ${p.name}_ptr[${index}];`);
  });
  // Placeholders must be declared before the parameter list uses them.
  const globalTypedefs = [...bound.entries()].map(([t, d]) => `typedef ${C_TYPES[d]} ${t};`).join('\n');
  return `${globalTypedefs}
${preamble}
extern "C" __global__ void ${name}(${params.join(', ')}) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    ${lines.join('\n    ')}
    ${body};
  }
}
`;
}
