// gx.fuse: a function of gx elementwise ops (and at most a final sum, prod,
// max or min, as cupy.fuse allows) becomes one kernel. The function is
// parsed, not traced: its gx calls (`gx.sin(x)`, `x.sin()`, `gx.add(a, b)`)
// are translated on elements, with the ops' dtype rules, into a device
// function (translate.ts) run by an elementwise kernel or as the map of a
// reduction kernel (lib/rtc), compiled per input dtypes and cached like every
// run-time kernel. What cannot be fused (another call, a dtype the jit does
// not compute in, tensors on several devices) runs as the function would
// without fuse, and says why once in NODE_DEBUG=gpuext output.
import type * as acorn from 'acorn';

import { logger } from '../log';
import { checkOptions, optionKeys } from '../options';
import { Tensor } from '../tensor';
import * as ew from '../generated/elementwise';
import { clamp, max, min, prod, sum, where } from '../ops/index';
import { elementwiseKernel, type ElementwiseKernel } from '../rtc/elementwise';
import { reductionKernel, type ReductionKernel } from '../rtc/reduction';
import { closureValues, type Lookup } from './closure';
import { JitError } from './errors';
import { parseFunction, referencedNames, type ParsedFunction } from './source';
import { JIT_HELPERS, Module, scalarFunction, type OpCalls } from './translate';
import { cast, C_TYPE, floatOf, isFloat, promote, SCALAR_DTYPES, strong, type ScalarDType, type Ty, type Val } from './types';

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

const ARITH: Record<string, string> = { add: '+', sub: '-', mul: '*' };
const COMPARE: Record<string, string> = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' };
const LOGICAL: Record<string, string> = { logicalAnd: '&&', logicalOr: '||', logicalXor: '!=' };
/** Float unary ops: C for float and double, `x` standing for the operand. */
const FLOAT_UNARY: Record<string, [string, string]> = {
  exp: ['expf(x)', 'exp(x)'], log: ['logf(x)', 'log(x)'], log1p: ['log1pf(x)', 'log1p(x)'], sqrt: ['sqrtf(x)', 'sqrt(x)'],
  rsqrt: ['rsqrtf(x)', 'rsqrt(x)'], sin: ['sinf(x)', 'sin(x)'], cos: ['cosf(x)', 'cos(x)'], tanh: ['tanhf(x)', 'tanh(x)'],
  sigmoid: ['(1.f / (1.f + expf(-x)))', '(1. / (1. + exp(-x)))'],
  gelu: ['(0.5f * x * (1.f + erff(x * 0.70710678118654752440f)))', '(0.5 * x * (1. + erf(x * 0.70710678118654752440)))'],
  softplus: ['(x > 20.f ? x : log1pf(expf(x)))', '(x > 20. ? x : log1p(exp(x)))'],
};
/** Ops that keep the dtype: C for float and for integers. */
const KEEP_UNARY: Record<string, [string, string]> = {
  neg: ['(-x)', '(-x)'], abs: ['fabs(x)', '(x < 0 ? -x : x)'], floor: ['floor(x)', 'x'], ceil: ['ceil(x)', 'x'],
  round: ['rint(x)', 'x'], sign: ['((x > 0) - (x < 0))', '((x > 0) - (x < 0))'], relu: ['((x > 0 || x != x) ? x : 0)', '(x > 0 ? x : 0)'],
};
const REDUCERS = { sum, prod, max, min } as const;
type Reducer = keyof typeof REDUCERS;

/** The gx functions a fused function may call, by value. */
const FUNCTIONS = new Map<unknown, string>([
  ...Object.entries(ew).filter(([, f]) => typeof f === 'function').map(([n, f]): [unknown, string] => [f, n]),
  [where, 'where'], [clamp, 'clamp'],
]);

/** The elementwise ops on elements, with the ops' dtype rules (NOTE [ Types in jit functions ]). */
const OPS: OpCalls = {
  nameOf: (v) => FUNCTIONS.get(v),
  call(name, args): Val | undefined {
    const [a, b, c] = args;
    const two = (): Ty => {
      if (args.length !== 2) throw new TypeError(`${name} takes two operands here`);
      return promote(a.ty, b.ty);
    };
    if (name in ARITH) {
      const t = two();
      if (t.dtype === 'bool') return undefined;
      return { code: `(${cast(a, t.dtype)} ${ARITH[name]} ${cast(b, t.dtype)})`, ty: t };
    }
    if (name === 'div' || name === 'pow') {
      const t = two();
      const f = isFloat(t.dtype) ? t : floatOf(t);
      if (name === 'pow' && !isFloat(t.dtype)) return undefined;
      const fn = name === 'div' ? undefined : f.dtype === 'float32' ? 'powf' : 'pow';
      return { code: fn === undefined ? `(${cast(a, f.dtype)} / ${cast(b, f.dtype)})` : `${fn}(${cast(a, f.dtype)}, ${cast(b, f.dtype)})`, ty: f };
    }
    if (name === 'maximum' || name === 'minimum') {
      const t = two();
      const m = name === 'maximum' ? 'max' : 'min';
      const code = isFloat(t.dtype) ? `gx_jit_${m}${t.dtype === 'float32' ? 'f' : ''}(${cast(a, t.dtype)}, ${cast(b, t.dtype)})`
        : `gx_jit_i${m}<${C_TYPE[t.dtype]}>(${cast(a, t.dtype)}, ${cast(b, t.dtype)})`;
      return { code, ty: t };
    }
    if (name in COMPARE) {
      const t = two();
      return { code: `(${cast(a, t.dtype)} ${COMPARE[name]} ${cast(b, t.dtype)})`, ty: strong('bool') };
    }
    if (name in LOGICAL) {
      two();
      return { code: `((${a.code} != 0) ${LOGICAL[name]} (${b.code} != 0))`, ty: strong('bool') };
    }
    if (name in FLOAT_UNARY && args.length === 1) {
      const f = floatOf(a.ty);
      const d = f.weak ? 'float64' : f.dtype;
      return { code: FLOAT_UNARY[name][d === 'float32' ? 0 : 1].replace(/\bx\b/g, `(${cast(a, d)})`), ty: { dtype: d, weak: f.weak } };
    }
    if (name in KEEP_UNARY && args.length === 1) {
      if (a.ty.dtype === 'bool') return undefined;
      const [fl, int] = KEEP_UNARY[name];
      const code = (isFloat(a.ty.dtype) ? fl : int).replace(/\bx\b/g, `(${a.code})`);
      return { code: `((${C_TYPE[a.ty.dtype]})${code})`, ty: a.ty };
    }
    if (name === 'where' && args.length === 3) {
      const t = promote(b.ty, c.ty);
      return { code: `((${a.code}) ? ${cast(b, t.dtype)} : ${cast(c, t.dtype)})`, ty: t };
    }
    return undefined;
  },
};

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
    if (viaNamespace) {
      if (args.length === 0) return undefined;
      return { reducer: c.property.name as Reducer, inner: args[0], ...reductionArgs(args.slice(1), f, api) };
    }
    if (!f.params.includes(c.object.type === 'Identifier' ? c.object.name : '')) {
      return { reducer: c.property.name as Reducer, inner: c.object as acorn.Expression, ...reductionArgs(args, f, api) };
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

/** CPU tensors run the ops one by one (each a native loop, nothing to compile); other dtypes and mixed devices too. */
const UNFUSED_ARGS = {
  kind: 'unfused',
  why: 'the fused kernel runs on CUDA tensors of bool, int32, int64, float32 or float64 on one device (and numbers)',
} as const;

type Compiled =
  | { kind: 'elementwise'; kernel: ElementwiseKernel; source: string }
  | { kind: 'reduction'; kernel: ReductionKernel; source: string; axis: number[] | undefined; keepdims: boolean }
  | { kind: 'unfused'; why: string };

const IDENTITY: Record<Reducer, (d: ScalarDType) => string> = {
  sum: () => '0', prod: () => '1',
  max: (d) => (isFloat(d) ? '(-1.0 / 0.0)' : d === 'int32' ? '(-2147483647 - 1)' : d === 'bool' ? 'false' : '(-9223372036854775807LL - 1)'),
  min: (d) => (isFloat(d) ? '(1.0 / 0.0)' : d === 'int32' ? '2147483647' : d === 'bool' ? 'true' : '9223372036854775807LL'),
};

/**
 * Fuses a function of gx elementwise ops (and at most a final reduction)
 * into one kernel, compiled per input dtypes (cupy.fuse).
 * @example
 * const f = gx.fuse((x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) => gx.add(gx.sin(x), gx.div(gx.cos(y), gx.sqrt(z))));
 * const squaredDiffSum = gx.fuse((x, y) => gx.sum(gx.mul(gx.sub(x, y), gx.sub(x, y))));
 */
export function fuse<F extends (...args: never[]) => Tensor>(fn: F, options: FuseOptions = {}): FusedFunction<F> {
  const api = 'gx.fuse';
  checkOptions<FuseOptions>(options, api, OPTION_KEYS);
  const parsed = parseFunction(fn, api);
  if (options.name !== undefined && !/^[A-Za-z_]\w*$/.test(String(options.name))) throw new TypeError(`${api}: name must be a C identifier`);
  const name = (options.name ?? (parsed.name || 'fused')).replace(/[^A-Za-z0-9_]/g, '_');
  const label = `${api}(${name})`;
  let lookup: Lookup | undefined;
  const compiled = new Map<string, Compiled>();
  const told = new Set<string>();

  /** The key of the kernel for these arguments; undefined when it does not run them (source() asks for any device). */
  const keyOf = (args: readonly unknown[], anyDevice = false): string | undefined => {
    let key = '';
    let device: string | undefined;
    for (const a of args) {
      if (a instanceof Tensor) {
        if (!(SCALAR_DTYPES as readonly string[]).includes(a.dtype)) return undefined;
        const d = String(a.device);
        if ((a.device.type !== 'cuda' && !anyDevice) || (device !== undefined && d !== device)) return undefined;
        device = d;
        key += `${a.dtype},`;
      } else if (typeof a === 'number') {
        key += Number.isInteger(a) ? 'i,' : 'f,';
      } else {
        return undefined;
      }
    }
    return device === undefined ? undefined : key;
  };

  const compile = (args: readonly unknown[]): Compiled => {
    lookup ??= closureValues(fn, referencedNames(parsed));
    const ins: ScalarDType[] = args.map((a) => (a instanceof Tensor ? (a.dtype as ScalarDType) : Number.isInteger(a) ? 'int64' : 'float64'));
    const params = parsed.params.map((p, i) => [p, { dtype: ins[i], weak: !(args[i] instanceof Tensor) }] as const);
    const red = finalReduction(parsed, lookup, label);
    const module = new Module(false, OPS);
    module.helpers.add(JIT_HELPERS);
    const f = scalarFunction(red ? withoutReduction(parsed, red.inner) : parsed, `gx_fused_${name}`, params, undefined, lookup, module, label);
    if (f.ret.kind !== 'scalar') throw new JitError(label, 'a fused function returns one tensor', parsed.text);
    let out = f.ret.ty.dtype;
    const source = module.preamble() + f.code;
    const inParams = ins.map((d, i) => `${d} a${i}`).join(', ');
    const call = `gx_fused_${name}(${ins.map((_, i) => `a${i}`).join(', ')})`;
    if (red === undefined) {
      return { kind: 'elementwise', source, kernel: elementwiseKernel(inParams, `${out} out`, `out = ${call}`, { name: `fused_${name}`, preamble: source }) };
    }
    if ((red.reducer === 'sum' || red.reducer === 'prod') && !isFloat(out)) out = 'int64';
    const reduce = red.reducer === 'sum' ? 'a + b' : red.reducer === 'prod' ? 'a * b'
      : isFloat(out) ? `gx_jit_${red.reducer}${out === 'float32' ? 'f' : ''}(a, b)` : `gx_jit_i${red.reducer}<${C_TYPE[out]}>(a, b)`;
    const kernel = reductionKernel(inParams, `${out} y`, `(${C_TYPE[out]})(${call})`, reduce, 'y = a', IDENTITY[red.reducer](out),
      { name: `fused_${name}`, preamble: source, reduceType: out });
    return { kind: 'reduction', kernel, source, axis: red.axis, keepdims: red.keepdims };
  };

  const unfused = fn as unknown as (...a: unknown[]) => Tensor;
  const compiledFor = (key: string | undefined, args: readonly unknown[]): Compiled => {
    if (key === undefined) return UNFUSED_ARGS;
    let c = compiled.get(key);
    if (c === undefined) {
      try {
        c = compile(args);
      } catch (err) {
        if (!(err instanceof JitError)) throw err;
        c = { kind: 'unfused', why: err.message };
      }
      compiled.set(key, c);
    }
    return c;
  };
  const call = (...args: unknown[]): Tensor => {
    if (args.length !== parsed.params.length) return unfused(...args);
    const c = compiledFor(keyOf(args), args);
    switch (c.kind) {
      case 'elementwise':
        return c.kernel(...(args as (Tensor | number)[])) as Tensor;
      case 'reduction':
        return c.kernel(...(args as (Tensor | number)[]), c.axis === undefined ? { keepdims: c.keepdims } : { axis: c.axis, keepdims: c.keepdims });
      default:
        if (!told.has(c.why)) {
          told.add(c.why);
          debug(`${label} runs unfused: ${c.why}`);
        }
        return unfused(...args);
    }
  };
  const fused = call as unknown as FusedFunction<F>;
  Object.defineProperty(fused, 'name', { value: name });
  Object.defineProperty(fused, 'source', {
    value: (...args: (Tensor | number)[]): string => {
      const key = keyOf(args, true);
      const c = compiledFor(key === undefined ? undefined : `source:${key}`, args);
      if (c.kind === 'unfused') throw new JitError(label, `runs unfused: ${c.why}`, parsed.text);
      return c.source;
    },
  });
  return fused;
}

