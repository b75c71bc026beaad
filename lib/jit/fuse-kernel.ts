// gx.fuse: a function of gx elementwise ops (and at most a final sum, prod,
// max or min, as cupy.fuse allows) becomes one kernel. The function is
// parsed, not traced: its gx calls (`gx.sin(x)`, `x.sin()`, `gx.add(a, b)`)
// are translated on elements, with the ops' dtype rules and the ops' own C++
// functors (fuse-ops.ts), into a device function (translate.ts) run by an
// elementwise kernel or as the map of a reduction kernel (lib/rtc), compiled
// per input dtypes and cached like every run-time kernel. What cannot be
// fused (another call, a dtype the jit does not compute in, a 0-d tensor of
// another dtype, tensors on several devices) runs as the function would
// without fuse, and says why once in NODE_DEBUG=gpuext output; so does a call
// whose numbers an op refuses, where the eager op throws (NOTE [ Argument
// facts in fused functions ] in fuse-facts.ts). fuse.ts loads this module
// (with acorn and the translator) at the first gx.fuse().
import type * as acorn from 'acorn';

import { logger } from '../platform/log';
import { checkOptions, optionKeys } from '../core/options';
import { Tensor } from '../core/tensor';
import * as ew from '../generated/elementwise';
import { clamp, where } from '../ops/elementwise/functions';
import { prod, sum } from '../ops/reduce/functions';
import { amax, amin } from '../ops/reduce/statistics-nan';
import { lerp } from '../ops/elementwise/lerp';
import { elementwiseKernel, type ElementwiseKernel } from '../rtc/elementwise';
import { reductionKernel, type ReductionKernel } from '../rtc/reduction';
import { closureValues, type Lookup } from './closure';
import { JitError } from './errors';
import { parseFunction, referencedNames, type ParsedFunction } from './source';
import { factChecks } from './fuse-facts';
import { FUSE_PREAMBLE, fuseCompileOptions, fuseHeaders, fuseOpCalls, paramTy } from './fuse-ops';
import { JIT_HELPERS, Module, scalarFunction } from './translate';
import { C_TYPE, isFloat, type ScalarDType } from './types';
import { isDType, type DType } from '../core/dtype';
import { max, min } from '../ops/reduce/extremum';

const debug = logger('fuse');
const OPTION_KEYS = optionKeys<FuseOptions>({ name: true });

export interface FuseOptions {
  /** The kernel's name (default: the function's name, else 'fused'). */
  name?: string;
}

/** A fused function: call it as the function itself. */
export type FusedFunction<F> = F & {
  /** The CUDA device function generated for these arguments' dtypes (the kernel around it is lib/rtc's). */
  source(...args: (Tensor | number)[]): string;
};

const REDUCERS = { sum, prod, max, min, amax, amin } as const;
type Reducer = 'sum' | 'prod' | 'max' | 'min';
/** amax and amin are max and min reductions; max and min with one axis are not reductions (NOTE [ The forms of max and min ]). */
const REDUCER_OF: Record<keyof typeof REDUCERS, Reducer> = { sum: 'sum', prod: 'prod', max: 'max', min: 'min', amax: 'max', amin: 'min' };

/** The gx functions a fused function may call, by value. */
const FUNCTIONS = new Map<unknown, string>([
  ...Object.entries(ew).filter(([, f]) => typeof f === 'function').map(([n, f]): [unknown, string] => [f, n]),
  [where, 'where'], [clamp, 'clamp'], [lerp, 'lerp'],
]);

/** The elementwise ops on elements: the ops' own functors (NOTE [ Fused ops are the ops' functors ]). */
const OPS = fuseOpCalls((v) => FUNCTIONS.get(v));

/** The final reduction of a fused function's result, if its return is one. */
interface FinalReduction {
  reducer: Reducer;
  inner: acorn.Expression;
  axis: number[] | undefined;
  keepdims: boolean;
}

/** A number or array of numbers written as literals, or an { axis, keepdims } options literal. */
function reductionArgs(args: acorn.Expression[], f: ParsedFunction, api: string): { axis: number[] | undefined; keepdims: boolean } {
  const lit = (e: acorn.Expression): number[] => {
    if (e.type === 'Literal' && typeof e.value === 'number') return [e.value];
    if (e.type === 'UnaryExpression' && e.operator === '-' && e.argument.type === 'Literal' && typeof e.argument.value === 'number') return [-e.argument.value];
    if (e.type === 'ArrayExpression') return e.elements.flatMap((x) => lit(x as acorn.Expression));
    throw new JitError(api, 'the axis of a fused reduction must be written as a number or an array of numbers', f.text, e);
  };
  let axis: number[] | undefined;
  let keepdims = false;
  for (const a of args) {
    if (a.type === 'ObjectExpression') {
      for (const p of a.properties) {
        if (p.type !== 'Property' || p.key.type !== 'Identifier') throw new JitError(api, 'write the options as { axis, keepdims }', f.text, p);
        if (p.key.name === 'axis') axis = lit(p.value as acorn.Expression);
        else if (p.key.name === 'keepdims' && p.value.type === 'Literal' && typeof p.value.value === 'boolean') keepdims = p.value.value;
        else throw new JitError(api, `a fused reduction takes { axis, keepdims } (literals), not ${p.key.name}`, f.text, p);
      }
    } else {
      axis = lit(a);
    }
  }
  return { axis, keepdims };
}

/** max / min given one axis (a number, or { axis: number }) give { values, indices }: not a fusable reduction. */
function oneAxisRefused(name: string, args: acorn.Expression[], f: ParsedFunction, api: string): void {
  if (name !== 'max' && name !== 'min') return;
  const isNumber = (e: acorn.Expression | undefined): boolean => e !== undefined && ((e.type === 'Literal' && typeof e.value === 'number')
    || (e.type === 'UnaryExpression' && e.operator === '-' && e.argument.type === 'Literal'));
  const axisProp = (e: acorn.Expression): acorn.Expression | undefined => (e.type === 'ObjectExpression'
    ? e.properties.flatMap((p) => (p.type === 'Property' && p.key.type === 'Identifier' && p.key.name === 'axis' ? [p.value as acorn.Expression] : []))[0] : undefined);
  const a = args[0];
  if (isNumber(a) || (a !== undefined && isNumber(axisProp(a)))) {
    throw new JitError(api, `${name} along one axis gives { values, indices }; fuse gx.a${name}(x, axis), the reduction`, f.text, a);
  }
}

/** `return gx.sum(e, axis)` or `return e.sum(axis)`: the final reduction, found by value. */
function finalReduction(f: ParsedFunction, lookup: Lookup, api: string): FinalReduction | undefined {
  const body = f.body;
  const last = body.type === 'BlockStatement' ? body.body[body.body.length - 1] : undefined;
  const ret = body.type === 'BlockStatement' ? (last?.type === 'ReturnStatement' ? last.argument : undefined) : body;
  if (ret === undefined || ret === null || ret.type !== 'CallExpression') return undefined;
  const c = ret.callee;
  const args = ret.arguments as acorn.Expression[];
  if (c.type === 'MemberExpression' && !c.computed && c.property.type === 'Identifier' && c.property.name in REDUCERS) {
    const value = c.object.type === 'Identifier' ? lookup(c.object.name).value : undefined;
    const viaNamespace = value !== null && typeof value === 'object' && (value as Record<string, unknown>)[c.property.name] === REDUCERS[c.property.name as Reducer];
    const name = c.property.name as keyof typeof REDUCERS;
    if (viaNamespace) {
      if (args.length === 0) return undefined;
      oneAxisRefused(name, args.slice(1), f, api);
      return { reducer: REDUCER_OF[name], inner: args[0], ...reductionArgs(args.slice(1), f, api) };
    }
    if (!f.params.includes(c.object.type === 'Identifier' ? c.object.name : '')) {
      oneAxisRefused(name, args, f, api);
      return { reducer: REDUCER_OF[name], inner: c.object as acorn.Expression, ...reductionArgs(args, f, api) };
    }
  }
  return undefined;
}

/** `f` with its returned reduction replaced by what it reduces. */
function withoutReduction(f: ParsedFunction, inner: acorn.Expression): ParsedFunction {
  if (f.body.type !== 'BlockStatement') return { ...f, body: inner };
  const stmts = f.body.body.slice(0, -1);
  const ret = { type: 'ReturnStatement', argument: inner, start: inner.start, end: inner.end } as acorn.ReturnStatement;
  return { ...f, body: { ...f.body, body: [...stmts, ret] } };
}

interface Unfused { kind: 'unfused'; why: string }

/** CPU tensors run the ops one by one (each a native loop, nothing to compile); other dtypes and mixed devices too. */
const UNFUSED_ARGS: Unfused = {
  kind: 'unfused',
  why: 'the fused kernel runs on CUDA tensors on one device (and numbers)',
};

// A 0-d tensor of another dtype than the others' does not promote as their
// dtype would (PyTorch's rule: within a category, dimensioned tensors decide),
// and the jit's types know no 0-d tensors: such calls run unfused.
const UNFUSED_ZERO_DIM: Unfused = {
  kind: 'unfused',
  why: 'a 0-d tensor of another dtype than the other tensors (0-d tensors promote by PyTorch\'s zero-dim rule, which fused code does not follow)',
};

/** Why a call's numbers are refused by its ops' facts, or undefined (NOTE [ Argument facts in fused functions ] in fuse-facts.ts). */
type ArgFault = (args: readonly unknown[]) => string | undefined;

type Compiled =
  | { kind: 'elementwise'; kernel: ElementwiseKernel; source: string; fault?: ArgFault }
  | { kind: 'reduction'; kernel: ReductionKernel; source: string; axis: number[] | undefined; keepdims: boolean; fault?: ArgFault }
  | Unfused;

const IDENTITY: Record<Reducer, (d: ScalarDType) => string> = {
  sum: () => '0', prod: () => '1',
  max: (d) => (isFloat(d) ? '(-1.0 / 0.0)' : d === 'int32' ? '(-2147483647 - 1)' : d === 'bool' ? 'false' : '(-9223372036854775807LL - 1)'),
  min: (d) => (isFloat(d) ? '(1.0 / 0.0)' : d === 'int32' ? '2147483647' : d === 'bool' ? 'true' : '9223372036854775807LL'),
};

const KERNELS = new WeakMap<object, (args: readonly unknown[]) => ElementwiseKernel | ReductionKernel | undefined>();

/** @internal The kernel a fused function runs for these arguments (any device; undefined when unfused): for tests, which compile its source without a GPU. */
export function fusedKernel(f: object, ...args: (Tensor | number)[]): ElementwiseKernel | ReductionKernel | undefined {
  return KERNELS.get(f)?.(args);
}

/** One gx.fuse: the parsed function and its kernels per argument dtypes (or why they run unfused). */
class Fused {
  readonly name: string;
  readonly label: string;
  private readonly parsed: ParsedFunction;
  private lookupMemo: Lookup | undefined;
  private readonly compiled = new Map<string, Compiled>();
  /** The reasons already logged (NODE_DEBUG=gpuext says each once). */
  private readonly told = new Set<string>();

  constructor(private readonly fn: Function, options: FuseOptions) {
    const api = 'gx.fuse';
    checkOptions<FuseOptions>(options, api, OPTION_KEYS);
    this.parsed = parseFunction(fn, api);
    if (options.name !== undefined && !/^[A-Za-z_]\w*$/.test(String(options.name))) throw new TypeError(`${api}: name must be a C identifier`);
    this.name = (options.name ?? (this.parsed.name || 'fused')).replace(/[^A-Za-z0-9_]/g, '_');
    this.label = `${api}(${this.name})`;
  }

  private lookup(): Lookup {
    return (this.lookupMemo ??= closureValues(this.fn, referencedNames(this.parsed)));
  }

  /** The plan: the key of the kernel for these arguments, or why it does not run them (source() asks for any device). */
  keyOf(args: readonly unknown[], anyDevice = false): string | Unfused {
    let key = '';
    let device: string | undefined;
    const zeroDim = new Set<string>(), dims = new Set<string>();
    for (const a of args) {
      if (a instanceof Tensor) {
        if (!isDType(a.dtype)) return UNFUSED_ARGS;
        const d = String(a.device);
        if ((a.device.type !== 'cuda' && !anyDevice) || (device !== undefined && d !== device)) return UNFUSED_ARGS;
        device = d;
        key += `${a.dtype},`;
        (a.ndim === 0 ? zeroDim : dims).add(a.dtype);
      } else if (typeof a === 'number') {
        key += Number.isInteger(a) ? 'i,' : 'f,';
      } else {
        return UNFUSED_ARGS;
      }
    }
    if (dims.size > 0 && [...zeroDim].some((d) => !dims.has(d) || dims.size > 1)) return UNFUSED_ZERO_DIM;
    return device === undefined ? UNFUSED_ARGS : key;
  }

  /** The kernel (elementwise, or a reduction's map) for these arguments' dtypes. */
  private compile(args: readonly unknown[]): Compiled {
    const { parsed, name, label } = this;
    const lookup = this.lookup();
    const ins: DType[] = args.map((a) => (a instanceof Tensor ? a.dtype : Number.isInteger(a) ? 'int64' : 'float64'));
    const params = parsed.params.map((p, i) => [p, args[i] instanceof Tensor ? paramTy(ins[i]) : { dtype: ins[i] as ScalarDType, weak: true }] as const);
    const red = finalReduction(parsed, lookup, label);
    const module = new Module(false, OPS);
    const headers = fuseHeaders(ins);
    if (headers !== '') module.helpers.add(headers);
    module.helpers.add(FUSE_PREAMBLE);
    module.helpers.add(JIT_HELPERS);
    const f = scalarFunction(red ? withoutReduction(parsed, red.inner) : parsed, `gx_fused_${name}`, params, undefined, lookup, module, label);
    if (f.ret.kind !== 'scalar') throw new JitError(label, 'a fused function returns one tensor', parsed.text);
    // The facts the eager ops check of their numbers: of constants now, of the arguments on every call.
    const facts = factChecks(f.fn);
    if (facts.kind === 'unfused') return facts;
    const fault = facts.kind === 'check' ? facts.fault : undefined;
    const narrow = f.ret.ty.store;
    let out: DType = f.ret.ty.dtype;
    const source = module.preamble() + f.code;
    const inParams = ins.map((d, i) => `${d} a${i}`).join(', ');
    const call = `gx_fused_${name}(${ins.map((_, i) => `a${i}`).join(', ')})`;
    if (red === undefined) {
      out = narrow ?? out;  // the value is already rounded to it (NOTE [ Fused ops round where the eager ops store ])
      return { kind: 'elementwise', source, fault, kernel: elementwiseKernel(inParams, `${out} out`, `out = ${call}`, { name: `fused_${name}`, preamble: source, options: fuseCompileOptions() }) };
    }
    if (narrow !== undefined) return { kind: 'unfused', why: `a fused reduction of ${narrow} values (the eager reduction's accumulation is not the fused one's)` };
    if ((red.reducer === 'sum' || red.reducer === 'prod') && !isFloat(f.ret.ty.dtype)) out = 'int64';
    const reduce = red.reducer === 'sum' ? 'a + b' : red.reducer === 'prod' ? 'a * b'
      : isFloat(out) ? `gx_jit_${red.reducer}${out === 'float32' ? 'f' : ''}(a, b)` : `gx_jit_i${red.reducer}<${C_TYPE[out]}>(a, b)`;
    const kernel = reductionKernel(inParams, `${out} y`, `(${C_TYPE[out]})(${call})`, reduce, 'y = a', IDENTITY[red.reducer](out),
      { name: `fused_${name}`, preamble: source, reduceType: out, options: fuseCompileOptions() });
    return { kind: 'reduction', kernel, source, axis: red.axis, keepdims: red.keepdims, fault };
  }

  /** The compiled kernel for `key`, compiled once; a construct the jit refuses makes it unfused. */
  compiledFor(key: string | Unfused, args: readonly unknown[]): Compiled {
    if (typeof key !== 'string') return key;
    let c = this.compiled.get(key);
    if (c === undefined) {
      try {
        c = this.compile(args);
      } catch (err) {
        if (!(err instanceof JitError)) throw err;
        c = { kind: 'unfused', why: err.message };
      }
      this.compiled.set(key, c);
    }
    return c;
  }

  /** The compiled kernel for these arguments, or why this call runs unfused: a fact of its numbers fails (the eager op then refuses them). */
  private forCall(key: string | Unfused, args: readonly unknown[]): Compiled {
    const c = this.compiledFor(key, args);
    const why = c.kind === 'unfused' ? undefined : c.fault?.(args);
    return why === undefined ? c : { kind: 'unfused', why };
  }

  /** Check and launch: the fused kernel for these arguments, else the function itself. */
  call(args: unknown[]): Tensor {
    const unfused = (): Tensor => Reflect.apply(this.fn, undefined, args) as Tensor;
    if (args.length !== this.parsed.params.length) return unfused();
    const c = this.forCall(this.keyOf(args), args);
    switch (c.kind) {
      case 'elementwise':
        return c.kernel(...(args as (Tensor | number)[])) as Tensor;
      case 'reduction':
        return c.kernel(...(args as (Tensor | number)[]), c.axis === undefined ? { keepdims: c.keepdims } : { axis: c.axis, keepdims: c.keepdims });
      default:
        if (!this.told.has(c.why)) {
          this.told.add(c.why);
          debug(`${this.label} runs unfused: ${c.why}`);
        }
        return unfused();
    }
  }

  /** The kernel for these arguments on any device (tests compile it without a GPU), or undefined when unfused. */
  kernelFor(args: readonly unknown[]): Compiled {
    const key = this.keyOf(args, true);
    return this.forCall(typeof key === 'string' ? `source:${key}` : key, args);
  }

  source(args: readonly unknown[]): string {
    const c = this.kernelFor(args);
    if (c.kind === 'unfused') throw new JitError(this.label, `runs unfused: ${c.why}`, this.parsed.text);
    return c.source;
  }
}

/**
 * Fuses a function of gx elementwise ops (and at most a final reduction)
 * into one kernel, compiled per input dtypes (cupy.fuse).
 * @example
 * const f = gx.fuse((x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) => gx.add(gx.sin(x), gx.div(gx.cos(y), gx.sqrt(z))));
 * const squaredDiffSum = gx.fuse((x, y) => gx.sum(gx.mul(gx.sub(x, y), gx.sub(x, y))));
 */
export function fuse<F extends (...args: never[]) => Tensor>(fn: F, options: FuseOptions = {}): FusedFunction<F> {
  const f = new Fused(fn, options);
  const fused = ((...args: unknown[]): Tensor => f.call(args)) as unknown as FusedFunction<F>;
  KERNELS.set(fused, (args) => {
    const c = f.kernelFor(args);
    return c.kind === 'unfused' ? undefined : c.kernel;
  });
  Object.defineProperty(fused, 'name', { value: f.name });
  Object.defineProperty(fused, 'source', { value: (...args: (Tensor | number)[]): string => f.source(args) });
  return fused;
}
