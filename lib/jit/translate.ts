// JS functions translated to CUDA: the statements and expressions of a
// kernel (gx.jit.rawkernel), a device function (gx.jit.device) or a scalar
// function (gx.vectorize, gx.fuse), each typed, then emitted with the casts
// its types ask for. What a function refers to besides its parameters and
// locals is resolved by value (closure.ts): numbers are inlined, Math and
// gx.jit's intrinsics (intrinsics.ts) map to CUDA's, device functions are
// compiled beside the caller for the argument types of each call.
//
// NOTE [ Types in jit functions ]
// A JS number literal is a "weak" scalar, as a JS number operand of the
// built-in ops: it takes the other operand's type (x * 0.5 is float32 for a
// float32 x; i + 1 stays int32), except that a fractional literal with an
// integer makes float32; a literal written with a point (0.0) is a float.
// Number arguments of a kernel are weak too (int64 when integral, else
// float64), as are shape entries: everything that is a JS number when the
// simulator runs the kernel. Between two typed operands the wider wins and
// floating beats integer (gx.promoteTypes). `/` is true division (integers
// give float32, as gx.div); comparisons and ! give bool; Math.* of an integer
// computes in float32 (Math.min/max/abs/floor/ceil/trunc/round keep
// integers). Thread and block indices are int32, tensor elements their
// dtype's compute type (int8/int16/uint8 as int32, float16/bfloat16 as
// float32). A local (`const`, `let`) has the type that holds every value
// assigned to it (the promotion of them all, found by translating until the
// types settle: `let acc = 0; acc += x[i]` is float32 for a float32 x); one
// only ever given JS numbers stays weak. What a function returns is
// converted to its declared output dtype, or typed the same way.
import type * as acorn from 'acorn';

import { isDType, type DType } from '../dtype';
import { JitError } from './errors';
import { INTRINSICS, type AtomicOp, type Intrinsic } from './intrinsics';
import { staticValueOf, type Lookup } from './closure';
import type { ParsedFunction } from './source';
import {
  C_TYPE, cast, computeDType, elementCType, floatOf, isFloat, isInteger, literal, promote, sameTy, strong,
  type ScalarDType, type Ty, type Val,
} from './types';

type Expression = acorn.Expression | acorn.PrivateIdentifier | acorn.SpreadElement | acorn.Super | acorn.Pattern;
type Where = { start: number; end: number };

/** An array a kernel indexes: a tensor parameter, a shared or a local array. */
export interface ArrayRef {
  kind: 'array';
  label: string;
  dtype: DType;
  rank: number;
  ptr: string;
  /** C expressions of an extent and a stride (elements) of dimension d; a tensor parameter records which it was asked. */
  dim(d: number): string;
  stride(d: number): string;
}

/** A device function's result of several values, destructured where it is called. */
interface TupleVal {
  kind: 'tuple';
  items: Val[];
  /** A device function's call: the items read \`tmp.v0, tmp.v1\` of this declaration, which the destructuring emits. */
  init?: string;
}
interface ScalarRef {
  kind: 'scalar';
  v: Val;
}
/** A JS value the function refers to: a number namespace (Math), gx.jit, a device function... */
interface StaticRef {
  kind: 'static';
  value: unknown;
}
type Ref = ScalarRef | ArrayRef | TupleVal | StaticRef;

interface LocalBinding {
  kind: 'local';
  c: string;
  ty: Ty;
  key: number;
  isConst: boolean;
  /** A const holding Math.floor(...) and its kin: still usable as an index. */
  integral?: boolean;
}
type Binding = LocalBinding | ArrayRef | { kind: 'param'; c: string; ty: Ty };

/** What a scalar function returns: one value or a tuple. */
export type ReturnTy = { kind: 'scalar'; ty: Ty } | { kind: 'tuple'; tys: Ty[] };

/** gx.jit.device functions, marked so a caller's translation finds them. */
export const DEVICE = Symbol('gx.jit.device');
export interface DeviceFunctionInfo {
  readonly parsed: ParsedFunction;
  lookup(): Lookup;
}
export function deviceInfo(v: unknown): DeviceFunctionInfo | undefined {
  return typeof v === 'function' ? (v as { [DEVICE]?: DeviceFunctionInfo })[DEVICE] : undefined;
}

/** How gx.fuse's translation calls gx ops on elements (fuse.ts fills it). */
export interface OpCalls {
  /** `gx.sin(x)` or `x.sin()`: the value for an op by its function or method name, or undefined when it is not one. */
  call(name: string, args: Val[], node: Where): Val | undefined;
  /** The op name of a gx function value, if it is one. */
  nameOf(value: unknown): string | undefined;
}

/** Math.* functions: their CUDA names for float and double (and how many arguments they take). */
const MATH: Record<string, [string, string, number]> = {
  exp: ['expf', 'exp', 1], log: ['logf', 'log', 1], log1p: ['log1pf', 'log1p', 1], expm1: ['expm1f', 'expm1', 1],
  log2: ['log2f', 'log2', 1], log10: ['log10f', 'log10', 1], sqrt: ['sqrtf', 'sqrt', 1], cbrt: ['cbrtf', 'cbrt', 1],
  sin: ['sinf', 'sin', 1], cos: ['cosf', 'cos', 1], tan: ['tanf', 'tan', 1], asin: ['asinf', 'asin', 1],
  acos: ['acosf', 'acos', 1], atan: ['atanf', 'atan', 1], sinh: ['sinhf', 'sinh', 1], cosh: ['coshf', 'cosh', 1],
  tanh: ['tanhf', 'tanh', 1], asinh: ['asinhf', 'asinh', 1], acosh: ['acoshf', 'acosh', 1], atanh: ['atanhf', 'atanh', 1],
  floor: ['floorf', 'floor', 1], ceil: ['ceilf', 'ceil', 1], trunc: ['truncf', 'trunc', 1],
  round: ['gx_jit_roundf', 'gx_jit_round', 1], abs: ['fabsf', 'fabs', 1], atan2: ['atan2f', 'atan2', 2],
  pow: ['powf', 'pow', 2], hypot: ['hypotf', 'hypot', 2], min: ['gx_jit_minf', 'gx_jit_min', 2],
  max: ['gx_jit_maxf', 'gx_jit_max', 2], sign: ['gx_jit_signf', 'gx_jit_sign', 1], fround: ['', '', 1],
};
/** Math's functions by value, to recognize `Math.sin` however it is reached. */
const MATH_NAMES = new Map<unknown, string>(Object.getOwnPropertyNames(Math).map((k) => [(Math as unknown as Record<string, unknown>)[k], k]));
/** Math functions that give an integer back for integers (JS returns the same value). */
const KEEPS_INTEGERS = new Set(['min', 'max', 'abs', 'floor', 'ceil', 'trunc', 'round', 'sign']);

/** JS's Math.round (halves up), Math.sign and NaN-propagating Math.min / Math.max, for the functions that use them. */
export const JIT_HELPERS = `__device__ __forceinline__ float gx_jit_roundf(float x) { return floorf(x + 0.5f); }
__device__ __forceinline__ double gx_jit_round(double x) { return floor(x + 0.5); }
__device__ __forceinline__ float gx_jit_signf(float x) { return x > 0.f ? 1.f : x < 0.f ? -1.f : x; }
__device__ __forceinline__ double gx_jit_sign(double x) { return x > 0. ? 1. : x < 0. ? -1. : x; }
__device__ __forceinline__ float gx_jit_minf(float a, float b) { return (a != a || b != b) ? a + b : fminf(a, b); }
__device__ __forceinline__ double gx_jit_min(double a, double b) { return (a != a || b != b) ? a + b : fmin(a, b); }
__device__ __forceinline__ float gx_jit_maxf(float a, float b) { return (a != a || b != b) ? a + b : fmaxf(a, b); }
__device__ __forceinline__ double gx_jit_max(double a, double b) { return (a != a || b != b) ? a + b : fmax(a, b); }
template <typename T> __device__ __forceinline__ T gx_jit_imin(T a, T b) { return a < b ? a : b; }
template <typename T> __device__ __forceinline__ T gx_jit_imax(T a, T b) { return a > b ? a : b; }
`;

/** Atomics for the four dtypes they work on, by bit pattern where CUDA has no overload (NOTE: gx.jit.atomic). */
export const ATOMIC_HELPERS = `typedef unsigned long long gx_u64;
__device__ __forceinline__ int gx_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ long long gx_atomic_add(long long* p, long long v) { return (long long)atomicAdd((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ float gx_atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double gx_atomic_add(double* p, double v) { return atomicAdd(p, v); }
template <typename T> __device__ __forceinline__ T gx_atomic_sub(T* p, T v) { return gx_atomic_add(p, (T)(-v)); }
__device__ __forceinline__ int gx_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ long long gx_atomic_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ __forceinline__ int gx_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ long long gx_atomic_max(long long* p, long long v) { return atomicMax(p, v); }
__device__ __forceinline__ float gx_atomic_min(float* p, float v) {
  int old = __float_as_int(*p), seen;
  do { seen = old; if (!(v < __int_as_float(seen))) break; old = atomicCAS((int*)p, seen, __float_as_int(v)); } while (old != seen);
  return __int_as_float(old);
}
__device__ __forceinline__ float gx_atomic_max(float* p, float v) {
  int old = __float_as_int(*p), seen;
  do { seen = old; if (!(v > __int_as_float(seen))) break; old = atomicCAS((int*)p, seen, __float_as_int(v)); } while (old != seen);
  return __int_as_float(old);
}
__device__ __forceinline__ double gx_atomic_min(double* p, double v) {
  long long old = __double_as_longlong(*p), seen;
  do { seen = old; if (!(v < __longlong_as_double(seen))) break; old = (long long)atomicCAS((gx_u64*)p, (gx_u64)seen, (gx_u64)__double_as_longlong(v)); } while (old != seen);
  return __longlong_as_double(old);
}
__device__ __forceinline__ double gx_atomic_max(double* p, double v) {
  long long old = __double_as_longlong(*p), seen;
  do { seen = old; if (!(v > __longlong_as_double(seen))) break; old = (long long)atomicCAS((gx_u64*)p, (gx_u64)seen, (gx_u64)__double_as_longlong(v)); } while (old != seen);
  return __longlong_as_double(old);
}
__device__ __forceinline__ int gx_atomic_exch(int* p, int v) { return atomicExch(p, v); }
__device__ __forceinline__ long long gx_atomic_exch(long long* p, long long v) { return (long long)atomicExch((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ float gx_atomic_exch(float* p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ double gx_atomic_exch(double* p, double v) { return __longlong_as_double((long long)atomicExch((gx_u64*)p, (gx_u64)__double_as_longlong(v))); }
__device__ __forceinline__ int gx_atomic_cas(int* p, int c, int v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ long long gx_atomic_cas(long long* p, long long c, long long v) { return (long long)atomicCAS((gx_u64*)p, (gx_u64)c, (gx_u64)v); }
__device__ __forceinline__ float gx_atomic_cas(float* p, float c, float v) { return __int_as_float(atomicCAS((int*)p, __float_as_int(c), __float_as_int(v))); }
__device__ __forceinline__ double gx_atomic_cas(double* p, double c, double v) { return __longlong_as_double((long long)atomicCAS((gx_u64*)p, (gx_u64)__double_as_longlong(c), (gx_u64)__double_as_longlong(v))); }
__device__ __forceinline__ int gx_atomic_and(int* p, int v) { return atomicAnd(p, v); }
__device__ __forceinline__ long long gx_atomic_and(long long* p, long long v) { return (long long)atomicAnd((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ int gx_atomic_or(int* p, int v) { return atomicOr(p, v); }
__device__ __forceinline__ long long gx_atomic_or(long long* p, long long v) { return (long long)atomicOr((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ int gx_atomic_xor(int* p, int v) { return atomicXor(p, v); }
__device__ __forceinline__ long long gx_atomic_xor(long long* p, long long v) { return (long long)atomicXor((gx_u64*)p, (gx_u64)v); }
`;

/** An index out of range, in { debug: true } kernels: the first one is recorded in gx_err and the access goes to a sink. */
export const DEBUG_HELPERS = `__device__ __forceinline__ bool gx_jit_in(long long* err, int site, int dim, long long i, long long n) {
  if (i >= 0 && i < n) return true;
  if (atomicCAS((unsigned long long*)err, 0ULL, 1ULL) == 0ULL) {
    err[1] = site; err[2] = dim; err[3] = i; err[4] = n;
    err[5] = threadIdx.x; err[6] = threadIdx.y; err[7] = threadIdx.z;
    err[8] = blockIdx.x; err[9] = blockIdx.y; err[10] = blockIdx.z;
  }
  return false;
}
`;

/** A tensor access that { debug: true } checks: its array and where it is written. */
export interface AccessSite {
  label: string;
  line: number;
}

/** What a translation produces beside its function: device functions, helpers, debug sites. */
export class Module {
  readonly functions: string[] = [];
  readonly helpers = new Set<string>();
  readonly sites: AccessSite[] = [];
  private readonly specs = new Map<DeviceFunctionInfo, Map<string, { name: string; ret: ReturnTy }>>();
  private readonly active = new Set<DeviceFunctionInfo>();
  private count = 0;

  constructor(readonly debug: boolean, readonly ops?: OpCalls) {}

  /** The C function for device function `dev` called with `args` (translated on first use). */
  deviceCall(dev: DeviceFunctionInfo, args: Ty[], fail: (what: string) => never): { name: string; ret: ReturnTy } {
    const key = args.map((t) => `${t.dtype}${t.weak ? '?' : ''}`).join(',');
    let bySig = this.specs.get(dev);
    const known = bySig?.get(key);
    if (known !== undefined) return known;
    if (this.active.has(dev)) fail(`${dev.parsed.name || 'a device function'} calls itself; recursion is not supported`);
    if (args.length !== dev.parsed.params.length) {
      fail(`${dev.parsed.name || 'the device function'} takes ${dev.parsed.params.length} argument${dev.parsed.params.length === 1 ? '' : 's'}, got ${args.length}`);
    }
    const name = `gx_dev_${(dev.parsed.name || 'fn').replace(/[^A-Za-z0-9_]/g, '_')}_${this.count++}`;
    this.active.add(dev);
    try {
      const params = dev.parsed.params.map((p, i): [string, Ty] => [p, args[i]]);
      const spec = scalarFunction(dev.parsed, name, params, undefined, dev.lookup(), this,
        `gx.jit.device(${dev.parsed.name || 'anonymous'})`);
      this.functions.push(spec.code);
      if (bySig === undefined) this.specs.set(dev, (bySig = new Map()));
      const r = { name, ret: spec.ret };
      bySig.set(key, r);
      return r;
    } finally {
      this.active.delete(dev);
    }
  }

  /** The helpers and device functions, to put before the kernel. */
  preamble(): string {
    return [...this.helpers].join('') + this.functions.join('');
  }
}

/** The C name of a user's variable: prefixed, so no JS name meets a C keyword or a name of the code around it. */
export const cName = (name: string): string => `v_${name}`;

const describeNode = (t: string): string => t.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

class Translator {
  private scopes: Map<string, Binding>[] = [];
  private readonly lines: string[] = [];
  private returns = 0;
  private names = new Map<string, number>();
  private loops = 0;
  /** Whether this pass widened a local's or the return's type (then the translation runs again). */
  changed = false;
  /** The return type found so far (starting from the previous pass's). */
  ret: ReturnTy | undefined;

  constructor(
    private readonly f: ParsedFunction,
    private readonly lookup: Lookup,
    private readonly module: Module,
    private readonly api: string,
    private readonly mode: 'kernel' | 'scalar',
    private readonly types: Map<number, Ty>,
    private readonly declared: ReturnTy | undefined,
    prevRet: ReturnTy | undefined,
  ) {
    this.ret = prevRet;
  }

  private fail(what: string, node?: Where): never {
    throw new JitError(this.api, what, this.f.text, node);
  }

  private bind(name: string, b: Binding): void {
    this.scopes[this.scopes.length - 1].set(name, b);
  }

  /** Translates the body; params are bound by the caller in the outer scope. */
  run(params: Map<string, Binding>): string[] {
    this.scopes = [params, new Map()];
    const b = this.f.body;
    if (b.type !== 'BlockStatement') {
      if (this.mode === 'kernel') this.fail('a kernel needs a block body { ... }', b);
      this.returnValue(b, '  ');
      return this.lines;
    }
    for (const st of b.body) this.statement(st, '  ');
    if (this.mode === 'scalar') {
      if (this.returns === 0) this.fail('the function returns nothing; it must return its value', b);
      const r = this.declared ?? this.ret;
      if (r !== undefined) this.lines.push(`  return ${r.kind === 'scalar' ? `(${C_TYPE[r.ty.dtype]})0` : '{}'};  // not reached when every path returns`);
    }
    return this.lines;
  }

  private lookupName(name: string): Binding | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const b = this.scopes[i].get(name);
      if (b !== undefined) return b;
    }
    return undefined;
  }

  private freshName(name: string): string {
    const n = this.names.get(name) ?? 0;
    this.names.set(name, n + 1);
    return n === 0 ? cName(name) : `${cName(name)}_${n}`;
  }

  private statement(st: acorn.Statement | acorn.ModuleDeclaration, ind: string): void {
    switch (st.type) {
      case 'VariableDeclaration':
        this.declaration(st, ind);
        return;
      case 'ExpressionStatement':
        this.lines.push(`${ind}${this.effect(st.expression)};`);
        return;
      case 'ReturnStatement':
        if (this.mode === 'kernel') {
          if (st.argument) this.fail('a kernel returns nothing; write its results into a tensor', st.argument);
          this.lines.push(`${ind}return;`);
          return;
        }
        if (!st.argument) this.fail('return a value', st);
        this.returnValue(st.argument, ind);
        return;
      case 'IfStatement':
        this.lines.push(`${ind}if (${this.condition(st.test)}) {`);
        this.block(st.consequent, `${ind}  `);
        if (st.alternate) {
          this.lines.push(`${ind}} else {`);
          this.block(st.alternate, `${ind}  `);
        }
        this.lines.push(`${ind}}`);
        return;
      case 'BlockStatement':
        this.lines.push(`${ind}{`);
        this.block(st, `${ind}  `);
        this.lines.push(`${ind}}`);
        return;
      case 'ForStatement': {
        this.scopes.push(new Map());
        let init = '';
        if (st.init) {
          if (st.init.type === 'VariableDeclaration') {
            const before = this.lines.length;
            this.declaration(st.init, '');
            if (this.lines.length !== before + 1) this.fail('declare one loop variable here', st.init);
            init = (this.lines.pop() as string).replace(/;$/, '');
          } else {
            init = this.effect(st.init);
          }
        }
        const test = st.test ? this.condition(st.test) : '';
        const update = st.update ? this.effect(st.update) : '';
        this.lines.push(`${ind}for (${init}; ${test}; ${update}) {`);
        this.loopBody(st.body, `${ind}  `);
        this.lines.push(`${ind}}`);
        this.scopes.pop();
        return;
      }
      case 'WhileStatement':
        this.lines.push(`${ind}while (${this.condition(st.test)}) {`);
        this.loopBody(st.body, `${ind}  `);
        this.lines.push(`${ind}}`);
        return;
      case 'DoWhileStatement':
        this.lines.push(`${ind}do {`);
        this.loopBody(st.body, `${ind}  `);
        this.lines.push(`${ind}} while (${this.condition(st.test)});`);
        return;
      case 'BreakStatement':
      case 'ContinueStatement':
        if (st.label) this.fail('labels are not supported', st.label);
        if (this.loops === 0) this.fail(`${st.type === 'BreakStatement' ? 'break' : 'continue'} outside a loop`, st);
        this.lines.push(`${ind}${st.type === 'BreakStatement' ? 'break' : 'continue'};`);
        return;
      case 'EmptyStatement':
        return;
      default:
        this.fail(`${describeNode(st.type)} is not supported in a ${this.mode === 'kernel' ? 'kernel' : 'jit function'}`, st);
    }
  }

  private loopBody(st: acorn.Statement, ind: string): void {
    this.loops++;
    this.block(st, ind);
    this.loops--;
  }

  private block(st: acorn.Statement, ind: string): void {
    this.scopes.push(new Map());
    if (st.type === 'BlockStatement') for (const s of st.body) this.statement(s, ind);
    else this.statement(st, ind);
    this.scopes.pop();
  }

  private declaration(st: acorn.VariableDeclaration, ind: string): void {
    if (st.kind === 'var') this.fail('use const or let, not var', st);
    for (const d of st.declarations) {
      if (d.init === null || d.init === undefined) {
        this.fail(`${d.id.type === 'Identifier' ? d.id.name : 'a variable'} needs a value where it is declared (its type starts from it)`, d);
      }
      if (d.id.type === 'ArrayPattern') {
        this.destructure(d.id, this.ref(d.init), st.kind === 'const', ind, d.init);
        continue;
      }
      if (d.id.type !== 'Identifier') this.fail('only names and [a, b] can be declared here', d.id);
      const name = d.id.name;
      if (this.scopes[this.scopes.length - 1].has(name)) this.fail(`${name} is declared twice`, d.id);
      const maker = this.arrayMaker(d.init);
      if (maker !== undefined) {
        if (st.kind !== 'const') this.fail(`${name} holds an array; declare it with const`, d.id);
        this.bind(name, this.arrayDeclaration(maker, name, (d.init as acorn.CallExpression).arguments as Expression[], d.init, ind));
        continue;
      }
      const r = this.ref(d.init);
      if (r.kind === 'array') {
        if (st.kind !== 'const') this.fail(`${name} holds an array; declare it with const`, d.id);
        this.bind(name, r);
        continue;
      }
      if (r.kind === 'tuple') this.fail(`${name} would hold ${r.items.length} values; destructure them: const [a, b] = ...`, d.id);
      this.declareScalar(name, this.scalarOf(r, d.init), st.kind === 'const', d.id.start, ind, d.id);
    }
  }

  private declareScalar(name: string, v: Val, isConst: boolean, key: number, ind: string, node: Where): void {
    if (this.scopes[this.scopes.length - 1].has(name)) this.fail(`${name} is declared twice`, node);
    const ty = isConst ? v.ty : this.types.get(key) ?? v.ty;
    if (!isConst && !this.types.has(key)) this.types.set(key, ty);
    const c = this.freshName(name);
    this.bind(name, { kind: 'local', c, ty, key, isConst, integral: isConst && v.integral === true });
    this.lines.push(`${ind}${isConst ? 'const ' : ''}${C_TYPE[ty.dtype]} ${c} = ${cast(v, ty.dtype)};`);
  }

  private destructure(p: acorn.ArrayPattern, r: Ref, isConst: boolean, ind: string, node: Where): void {
    if (r.kind !== 'tuple') this.fail('only a device function\'s tuple, grid(2) / gridsize(2) or a shape can be destructured', node);
    if (p.elements.length > r.items.length) this.fail(`the value has ${r.items.length} items; the pattern takes ${p.elements.length}`, p);
    if (r.init !== undefined) this.lines.push(`${ind}${r.init}`);
    r.items.forEach((v, i) => {
      const e = p.elements[i];
      if (e === null || e === undefined) return;
      if (e.type !== 'Identifier') this.fail('only names can be destructured here', e);
      this.declareScalar(e.name, v, isConst, e.start, ind, e);
    });
  }

  private returnValue(e: acorn.Expression, ind: string): void {
    this.returns++;
    const r = this.ref(e);
    let got: ReturnTy;
    if (r.kind === 'tuple' || (e.type === 'ArrayExpression')) {
      const items = r.kind === 'tuple' ? r.items : [];
      got = { kind: 'tuple', tys: items.map((v) => v.ty) };
      const want = this.declared ?? this.ret;
      if (this.declared !== undefined && this.declared.kind !== 'tuple') this.fail('return one value here', e);
      const tys = want?.kind === 'tuple' && want.tys.length === items.length ? want.tys : got.tys;
      this.lines.push(`${ind}return {${items.map((v, i) => cast(v, tys[i].dtype)).join(', ')}};`);
    } else {
      const v = this.scalarOf(r, e);
      got = { kind: 'scalar', ty: v.ty };
      const want = this.declared ?? this.ret;
      if (want?.kind === 'tuple') this.fail('every return of a function returns the same number of values', e);
      this.lines.push(`${ind}return ${cast(v, (want ?? got).ty.dtype)};`);
    }
    if (this.declared !== undefined) return;
    if (this.ret === undefined) {
      this.ret = got;
      this.changed = true;
      return;
    }
    if (this.ret.kind !== got.kind || (got.kind === 'tuple' && this.ret.kind === 'tuple' && got.tys.length !== this.ret.tys.length)) {
      this.fail('every return of a function returns the same number of values', e);
    }
    if (got.kind === 'scalar' && this.ret.kind === 'scalar') {
      const j = promote(this.ret.ty, got.ty);
      if (!sameTy(j, this.ret.ty)) {
        this.ret = { kind: 'scalar', ty: j };
        this.changed = true;
      }
    } else if (got.kind === 'tuple' && this.ret.kind === 'tuple') {
      const prev = this.ret.tys;
      const tys = prev.map((t, i) => promote(t, got.tys[i]));
      if (tys.some((t, i) => !sameTy(t, prev[i]))) {
        this.ret = { kind: 'tuple', tys };
        this.changed = true;
      }
    }
  }

  private condition(e: acorn.Expression): string {
    const v = this.expr(e);
    return v.ty.dtype === 'bool' ? v.code : `((${v.code}) != 0)`;
  }

  /** An expression evaluated for its effect: an assignment, ++ / --, a call. */
  private effect(e: acorn.Expression): string {
    switch (e.type) {
      case 'AssignmentExpression':
        return this.assign(e);
      case 'UpdateExpression':
        return this.update(e);
      case 'CallExpression':
        return this.call(e, true).code;
      case 'SequenceExpression':
        return e.expressions.map((x) => this.effect(x)).join(', ');
      default:
        return this.fail('only assignments, ++ / -- and calls can stand alone as statements', e);
    }
  }

  private assign(e: acorn.AssignmentExpression): string {
    const op = e.operator === '=' ? undefined : e.operator.slice(0, -1);
    if (op === '&&' || op === '||' || op === '??') this.fail(`${e.operator} is not supported`, e);
    if (e.left.type === 'Identifier') {
      const b = this.local(e.left.name, e.left);
      const cur: Val = { code: b.c, ty: b.ty };
      const rhs = op === undefined ? this.expr(e.right) : this.binary(op, cur, this.expr(e.right), e);
      this.widen(b, rhs.ty);
      return `${b.c} = ${cast(rhs, b.ty.dtype)}`;
    }
    if (e.left.type === 'MemberExpression') {
      const el = this.element(e.left);
      const rhs = op === undefined ? this.expr(e.right) : this.binary(op, el.read, this.expr(e.right), e);
      return `${el.lvalue} = (${elementCType(el.dtype)})(${cast(rhs, computeDType(el.dtype))})`;
    }
    return this.fail('only local variables and array elements can be assigned', e.left);
  }

  private update(e: acorn.UpdateExpression): string {
    const op = e.operator === '++' ? '+' : '-';
    if (e.argument.type === 'Identifier') {
      const b = this.local(e.argument.name, e.argument);
      if (b.ty.dtype === 'bool') this.fail(`${e.operator} of a boolean`, e);
      return e.prefix ? `${e.operator}${b.c}` : `${b.c}${e.operator}`;
    }
    if (e.argument.type === 'MemberExpression') {
      const el = this.element(e.argument);
      const rhs = this.binary(op, el.read, literal(1), e);
      return `${el.lvalue} = (${elementCType(el.dtype)})(${cast(rhs, computeDType(el.dtype))})`;
    }
    return this.fail(`${e.operator} of something not a local or an array element`, e.argument);
  }

  /** A local that may be assigned. */
  private local(name: string, node: Where): LocalBinding {
    const b = this.lookupName(name);
    if (b === undefined || b.kind !== 'local') {
      if (b?.kind === 'param') this.fail(`${name} is a parameter; copy it into a local (let) first`, node);
      if (b?.kind === 'array') this.fail(`${name} is an array; assign its elements (${name}[i] = ...)`, node);
      this.fail(`${name} is not a local variable of the function`, node);
    }
    if (b.isConst) this.fail(`${name} is a const`, node);
    return b;
  }

  /** A local assigned a value of type `t`: its type grows to hold it, and the translation runs again. */
  private widen(b: LocalBinding, t: Ty): void {
    const j = promote(b.ty, t);
    if (!sameTy(j, b.ty) && !sameTy(j, this.types.get(b.key) ?? b.ty)) {
      this.types.set(b.key, j);
      this.changed = true;
    }
  }

  /** What an expression stands for: a scalar, an array, a tuple, or a JS value to look into. */
  private ref(e: Expression): Ref {
    switch (e.type) {
      case 'Identifier': {
        const b = this.lookupName(e.name);
        if (b !== undefined) {
          if (b.kind === 'array') return b;
          return { kind: 'scalar', v: { code: b.c, ty: b.ty, integral: b.kind === 'local' && b.integral === true } };
        }
        if (e.name === 'undefined') this.fail('undefined has no value in a kernel', e);
        const g = this.lookup(e.name);
        if (!g.found) this.fail(`${e.name} is not a parameter, a local, or something the function closes over`, e);
        return this.staticRef(g.value, e.name, e);
      }
      case 'MemberExpression': {
        if (e.object.type === 'Super') this.fail('super is not supported', e);
        if (e.computed) {
          // a[i][j]: the whole chain of subscripts is one element of the array at its root.
          let root: Expression = e.object;
          while (root.type === 'MemberExpression' && root.computed) root = root.object as Expression;
          if (root.type === 'Identifier' && this.lookupName(root.name)?.kind === 'array') return this.elementRef(e);
        }
        const base = this.ref(e.object);
        if (base.kind === 'array') {
          if (!e.computed && e.property.type === 'Identifier') return this.arrayProperty(base, e.property.name, e);
          return this.elementRef(e);
        }
        if (base.kind === 'tuple') {
          if (base.init !== undefined) this.fail('destructure what a device function returns: const [a, b] = f(...)', e);
          const k = e.computed && e.property.type === 'Literal' ? e.property.value : undefined;
          if (typeof k !== 'number' || !(k >= 0 && k < base.items.length)) this.fail('index a tuple with a literal 0, 1, ...', e.property);
          return { kind: 'scalar', v: base.items[k] };
        }
        if (base.kind === 'scalar') {
          if (e.object.type === 'MemberExpression' && !e.computed) return this.fail(`${this.text(e)} is not something a kernel can read`, e);
          return this.fail(`${this.text(e.object)} is a number; it has no properties`, e);
        }
        if (e.computed) {
          if (e.property.type !== 'Literal' || typeof e.property.value !== 'string') this.fail('a computed property of a JS value must be a string literal', e.property);
          return this.staticMember(base, e.property.value, e);
        }
        if (e.property.type !== 'Identifier') this.fail('private names are not supported', e.property);
        return this.staticMember(base, e.property.name, e);
      }
      case 'ArrayExpression':
        return {
          kind: 'tuple',
          items: e.elements.map((x) => {
            if (x === null || x.type === 'SpreadElement') return this.fail('write each value of a tuple', x ?? e);
            return this.expr(x);
          }),
        };
      case 'SequenceExpression':
        // (0, f): how TypeScript and bundlers call an imported function.
        if (e.expressions.length === 2 && e.expressions[0].type === 'Literal') return this.ref(e.expressions[1]);
        return this.fail('the comma operator is not supported here', e);
      case 'CallExpression':
        return this.call(e, false);
      default:
        return { kind: 'scalar', v: this.expr(e) };
    }
  }

  private text(n: Where): string {
    return this.f.text.slice(n.start, n.end);
  }

  private staticRef(value: unknown, name: string, node: Where): Ref {
    if (typeof value === 'number' || typeof value === 'boolean') return { kind: 'scalar', v: literal(value) };
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
      this.fail(`${name} is ${value === null ? 'null' : `a ${typeof value}`}; a kernel can use numbers, Math, gx.jit's intrinsics and gx.jit.device functions`, node);
    }
    return { kind: 'static', value };
  }

  private staticMember(base: StaticRef, prop: string, node: acorn.MemberExpression): Ref {
    const intr = INTRINSICS.get(base.value);
    if (intr?.kind === 'dim3') {
      if (prop !== 'x' && prop !== 'y' && prop !== 'z') this.fail(`${intr.c} has x, y and z`, node.property);
      return { kind: 'scalar', v: { code: `((int)${intr.c}.${prop})`, ty: strong('int32') } };
    }
    if (base.value === Math && prop in Math && typeof (Math as unknown as Record<string, unknown>)[prop] === 'number') {
      return { kind: 'scalar', v: literal((Math as unknown as Record<string, number>)[prop]) };
    }
    let v: unknown;
    try {
      v = (base.value as Record<string, unknown>)[prop];
    } catch (err) {
      this.fail(`reading ${this.text(node)} failed: ${err instanceof Error ? err.message : String(err)}`, node);
    }
    if (v === undefined) this.fail(`${this.text(node)} is undefined`, node);
    // `exports.K`: how TypeScript's CommonJS output refers to a module's own `export const K`.
    const ownExport = node.object.type === 'Identifier' && node.object.name === 'exports';
    if ((typeof v === 'number' || typeof v === 'boolean') && !ownExport) {
      // Inlined numbers are the ones the function closes over, read once when it is compiled; a property may change later.
      this.fail(`${this.text(node)} is a property of an object; copy it into a const the function closes over (const K = ${this.text(node)})`, node);
    }
    return this.staticRef(v, this.text(node), node);
  }

  private arrayProperty(a: ArrayRef, prop: string, node: acorn.MemberExpression): Ref {
    if (prop === 'length') return { kind: 'scalar', v: { code: a.dim(0), ty: { dtype: 'int64', weak: true } } };
    if (prop === 'ndim') return { kind: 'scalar', v: literal(a.rank) };
    if (prop === 'shape' || prop === 'strides') {
      const items = Array.from({ length: a.rank }, (_, d): Val => ({ code: prop === 'shape' ? a.dim(d) : a.stride(d), ty: { dtype: 'int64', weak: true } }));
      return { kind: 'tuple', items };
    }
    return this.fail(`${a.label} has length, ndim, shape and strides, and elements ${a.label}[i]`, node.property);
  }

  /** The indices of `a[i][j]` or `a[i, j]` and the array indexed. */
  private indices(e: acorn.MemberExpression): { array: ArrayRef; idx: acorn.Expression[] } {
    const idx: acorn.Expression[] = [];
    let cur: Expression = e;
    while (cur.type === 'MemberExpression' && cur.computed) {
      const p = cur.property as acorn.Expression;
      idx.unshift(...(p.type === 'SequenceExpression' ? p.expressions : [p]));
      cur = cur.object as Expression;
    }
    const base = this.ref(cur);
    if (base.kind !== 'array') this.fail(`${this.text(cur)} is not an array; only tensors and shared or local arrays are indexed`, cur);
    return { array: base, idx };
  }

  /** An element of an array: the C lvalue and its value in the element's compute type. */
  private element(e: acorn.MemberExpression): { lvalue: string; read: Val; dtype: DType } {
    const { array, idx } = this.indices(e);
    if (!e.computed) this.fail(`only elements of ${array.label} can be written`, e);
    const { lvalue } = this.offset(array, idx, e);
    return { lvalue, read: { code: `((${C_TYPE[computeDType(array.dtype)]})(${lvalue}))`, ty: strong(computeDType(array.dtype)) }, dtype: array.dtype };
  }

  private elementRef(e: acorn.MemberExpression): Ref {
    return { kind: 'scalar', v: this.element(e).read };
  }

  /** The element of `a` at `idx` as a C lvalue (checked in { debug: true }). */
  private offset(a: ArrayRef, idx: acorn.Expression[], node: Where): { lvalue: string; off: string } {
    if (idx.length !== a.rank) {
      this.fail(`${a.label} has ${a.rank} dimension${a.rank === 1 ? '' : 's'}; index it with ${a.rank} ind${a.rank === 1 ? 'ex' : 'ices'} (${a.label}${a.rank === 1 ? '[i]' : '[i][j]'}), got ${idx.length}`, node);
    }
    const is = idx.map((x) => {
      const v = this.expr(x);
      if (v.integral === true) return { code: `((long long)(${v.code}))`, ty: strong('int64') };
      if (!isInteger(v.ty.dtype)) this.fail(`an index must be an integer; this one is ${v.ty.dtype === 'bool' ? 'a boolean' : `${v.ty.dtype} (Math.floor it, or keep the index arithmetic in integers)`}`, x);
      return v;
    });
    const terms = is.map((v, d) => {
      const s = a.stride(d);
      return s === '1' ? `(long long)(${v.code})` : `(long long)(${v.code}) * ${s}`;
    });
    const off = terms.join(' + ');
    if (!this.module.debug) return { lvalue: `${a.ptr}[${off}]`, off };
    const site = this.module.sites.length;
    this.module.sites.push({ label: a.label, line: this.f.text.slice(0, node.start).split('\n').length });
    this.module.helpers.add(DEBUG_HELPERS);
    const checks = is.map((v, d) => `gx_jit_in(gx_err, ${site}, ${d}, (long long)(${v.code}), ${a.dim(d)})`).join(' && ');
    const sink = `gx_sink_${C_TYPE[computeDType(a.dtype)].replace(' ', '_')}_${a.dtype}`;
    this.module.helpers.add(`__device__ ${elementCType(a.dtype)} ${sink};\n`);
    return { lvalue: `(*((${checks}) ? &${a.ptr}[${off}] : &${sink}))`, off };
  }

  private scalarOf(r: Ref, node: Where): Val {
    if (r.kind === 'scalar') return r.v;
    if (r.kind === 'array') return this.fail(`${r.label} is an array; read an element (${r.label}[i])`, node);
    if (r.kind === 'tuple') return this.fail(`this has ${r.items.length} values; destructure them: const [a, b] = ...`, node);
    return this.fail(`${this.text(node)} is ${typeof r.value === 'function' ? 'a function' : 'an object'}, not a number`, node);
  }

  private expr(e: Expression): Val {
    switch (e.type) {
      case 'Literal':
        if (typeof e.value === 'number') return literal(e.value, /^[0-9]*\.|^[0-9.]+e/i.test(e.raw ?? ''));
        if (typeof e.value === 'boolean') return literal(e.value);
        return this.fail('only number and boolean literals are supported', e);
      case 'Identifier': case 'MemberExpression': case 'CallExpression': case 'SequenceExpression': case 'ArrayExpression':
        return this.scalarOf(this.ref(e), e);
      case 'UnaryExpression': {
        const v = this.expr(e.argument);
        if (e.operator === '-') {
          const t = v.ty.dtype === 'bool' ? { dtype: 'int32' as const, weak: v.ty.weak } : v.ty;
          return { code: `(-${cast(v, t.dtype)})`, ty: t };
        }
        if (e.operator === '+') return v;
        if (e.operator === '!') return { code: `(!(${v.code}))`, ty: strong('bool') };
        if (e.operator === '~') {
          if (v.integral === true) return { code: `((long long)(${v.code}))`, ty: strong('int64') };
      if (!isInteger(v.ty.dtype)) this.fail('~ takes an integer', e);
          return { code: `(~${v.code})`, ty: v.ty };
        }
        return this.fail(`the operator ${e.operator} is not supported here`, e);
      }
      case 'BinaryExpression':
        if (e.left.type === 'PrivateIdentifier') return this.fail('private names are not supported', e.left);
        return this.binary(e.operator, this.expr(e.left), this.expr(e.right), e);
      case 'LogicalExpression':
        if (e.operator === '??') return this.fail('?? is not supported here', e);
        return { code: `(${this.condition(e.left)} ${e.operator} ${this.condition(e.right)})`, ty: strong('bool') };
      case 'ConditionalExpression': {
        const a = this.expr(e.consequent);
        const b = this.expr(e.alternate);
        const t = promote(a.ty, b.ty);
        return { code: `(${this.condition(e.test)} ? ${cast(a, t.dtype)} : ${cast(b, t.dtype)})`, ty: t };
      }
      case 'AssignmentExpression':
        if (e.left.type !== 'Identifier') return this.fail('assign array elements as a statement', e);
        return { code: `(${this.assign(e)})`, ty: this.local(e.left.name, e.left).ty };
      case 'UpdateExpression':
        if (e.argument.type !== 'Identifier') return this.fail('++ / -- of an array element only as a statement', e);
        return { code: `(${this.update(e)})`, ty: this.local(e.argument.name, e.argument).ty };
      default:
        return this.fail(`${describeNode(e.type)} is not supported in a ${this.mode === 'kernel' ? 'kernel' : 'jit function'}`, e);
    }
  }

  private binary(op: string, a: Val, b: Val, node: Where): Val {
    const t = promote(a.ty, b.ty);
    switch (op) {
      case '+': case '-': case '*': {
        const d: ScalarDType = t.dtype === 'bool' ? 'int64' : t.dtype;
        return { code: `(${cast(a, d)} ${op} ${cast(b, d)})`, ty: { dtype: d, weak: t.weak } };
      }
      case '/': {
        const f = isFloat(t.dtype) ? t : t.weak ? { dtype: 'float64' as const, weak: true } : strong('float32');
        return { code: `(${cast(a, f.dtype)} / ${cast(b, f.dtype)})`, ty: f };
      }
      case '%': {
        if (isFloat(t.dtype)) return { code: `${t.dtype === 'float32' ? 'fmodf' : 'fmod'}(${cast(a, t.dtype)}, ${cast(b, t.dtype)})`, ty: t };
        const d: ScalarDType = t.dtype === 'bool' ? 'int64' : t.dtype;
        return { code: `(${cast(a, d)} % ${cast(b, d)})`, ty: { dtype: d, weak: t.weak } };
      }
      case '**': {
        // x ** 2, the common square, as a product (powf is a library call).
        if (isFloat(t.dtype) && b.ty.weak && b.code === '2LL') return { code: `(${cast(a, t.dtype)} * ${cast(a, t.dtype)})`, ty: t };
        if (isFloat(t.dtype) && b.ty.weak && (b.code === '0.5')) return { code: `${t.dtype === 'float32' ? 'sqrtf' : 'sqrt'}(${cast(a, t.dtype)})`, ty: t };
        if (isFloat(t.dtype)) return { code: `${t.dtype === 'float32' ? 'powf' : 'pow'}(${cast(a, t.dtype)}, ${cast(b, t.dtype)})`, ty: t };
        const d: ScalarDType = t.dtype === 'bool' ? 'int64' : t.dtype;
        return { code: `((${C_TYPE[d]})pow((double)(${a.code}), (double)(${b.code})))`, ty: { dtype: d, weak: t.weak } };
      }
      case '<': case '<=': case '>': case '>=': case '==': case '===': case '!=': case '!==': {
        const c = op.startsWith('==') ? '==' : op.startsWith('!=') ? '!=' : op;
        return { code: `(${cast(a, t.dtype)} ${c} ${cast(b, t.dtype)})`, ty: strong('bool') };
      }
      case '&': case '|': case '^': case '<<': case '>>': case '>>>': {
        // As in JS, a float operand is truncated to an integer first (x | 0).
        const d: ScalarDType = isInteger(t.dtype) ? t.dtype : 'int32';
        if (op === '>>>') return { code: `((${C_TYPE[d]})((unsigned ${C_TYPE[d]})(${cast(a, d)}) >> (${cast(b, d)})))`, ty: { dtype: d, weak: t.weak } };
        return { code: `(${cast(a, d)} ${op} ${cast(b, d)})`, ty: { dtype: d, weak: t.weak } };
      }
      default:
        return this.fail(`the operator ${op} is not supported here`, node);
    }
  }

  /** A call: Math.*, an intrinsic, a device function, or (in gx.fuse) a gx op; `statement` when its value is not used. */
  private call(e: acorn.CallExpression, statement: boolean): Ref & { code: string } {
    const c = e.callee;
    if (c.type === 'Super') return this.fail('super is not supported', c);
    // x.sin(), a.add(b): methods of elements, for gx.fuse.
    if (c.type === 'MemberExpression' && !c.computed && c.property.type === 'Identifier' && this.module.ops !== undefined) {
      const base = this.ref(c.object);
      if (base.kind === 'scalar') {
        const v = this.module.ops.call(c.property.name, [base.v, ...e.arguments.map((a) => this.expr(a as Expression))], e);
        if (v === undefined) this.fail(`.${c.property.name}() is not an elementwise op gx.fuse can fuse`, c.property);
        return { kind: 'scalar', v, code: v.code };
      }
    }
    const callee = this.ref(c);
    if (callee.kind !== 'static') return this.fail(`${this.text(c)} is not a function a kernel can call`, c);
    const f = callee.value;
    const args = e.arguments as Expression[];
    const mathName = typeof f === 'function' ? MATH_NAMES.get(f) : undefined;
    if (mathName !== undefined) {
      const v = this.math(mathName, args, e);
      return { kind: 'scalar', v, code: v.code };
    }
    const intr = INTRINSICS.get(f);
    if (intr !== undefined) return this.intrinsic(intr, args, e, statement);
    const dev = deviceInfo(f);
    if (dev !== undefined) {
      const vals = args.map((a) => this.expr(a));
      const { name, ret } = this.module.deviceCall(dev, vals.map((v) => v.ty), (what) => this.fail(what, e));
      const code = `${name}(${vals.map((v) => v.code).join(', ')})`;
      if (ret.kind === 'scalar') return { kind: 'scalar', v: { code, ty: ret.ty }, code };
      const tmp = `gx_r${e.start}`;
      return { kind: 'tuple', items: ret.tys.map((ty, i) => ({ code: `${tmp}.v${i}`, ty })), code, init: `const auto ${tmp} = ${code};` };
    }
    const op = this.module.ops?.nameOf(f);
    if (op !== undefined) {
      const v = this.module.ops?.call(op, args.map((a) => this.expr(a)), e);
      if (v === undefined) this.fail(`gx.${op} is not an elementwise op gx.fuse can fuse`, c);
      return { kind: 'scalar', v, code: v.code };
    }
    return this.fail(`${this.text(c)} is not Math.*, a gx.jit intrinsic or a gx.jit.device function; a kernel cannot call it`, c);
  }

  private math(name: string, args: Expression[], node: acorn.CallExpression): Val {
    const m = MATH[name];
    if (m === undefined) this.fail(`Math.${name} is not supported in a kernel`, node.callee);
    const [f32, f64, arity] = m;
    if (args.length !== arity) this.fail(`Math.${name} takes ${arity} argument${arity === 1 ? '' : 's'} here`, node);
    const vals = args.map((a) => this.expr(a));
    const t = vals.length === 2 ? promote(vals[0].ty, vals[1].ty) : vals[0].ty;
    if (name === 'fround') return { code: cast(vals[0], 'float32'), ty: strong('float32') };
    if (KEEPS_INTEGERS.has(name) && isInteger(t.dtype)) {
      const d = t.dtype;
      const xs = vals.map((v) => cast(v, d));
      if (name === 'min' || name === 'max') return { code: `gx_jit_i${name}<${C_TYPE[d]}>(${xs.join(', ')})`, ty: t };
      if (name === 'abs') return { code: `(${xs[0]} < 0 ? -${xs[0]} : ${xs[0]})`, ty: t };
      if (name === 'sign') return { code: `((${C_TYPE[d]})((${xs[0]} > 0) - (${xs[0]} < 0)))`, ty: t };
      return { code: xs[0], ty: t };
    }
    const ft = floatOf(t);
    this.module.helpers.add(JIT_HELPERS);
    const integral = name === 'floor' || name === 'ceil' || name === 'trunc' || name === 'round';
    return { code: `${ft.dtype === 'float32' ? f32 : f64}(${vals.map((v) => cast(v, ft.dtype)).join(', ')})`, ty: ft, integral };
  }

  private intrinsic(intr: Intrinsic, args: Expression[], e: acorn.CallExpression, statement: boolean): Ref & { code: string } {
    const none = (code: string): Ref & { code: string } => {
      if (!statement) this.fail(`${this.text(e.callee)}() gives no value`, e);
      return { kind: 'scalar', v: { code, ty: strong('bool') }, code };
    };
    switch (intr.kind) {
      case 'syncthreads':
        return none('__syncthreads()');
      case 'threadfence':
        return none('__threadfence()');
      case 'grid': case 'gridsize': {
        const n = args.length === 1 && args[0].type === 'Literal' ? args[0].value : undefined;
        if (n !== 1 && n !== 2 && n !== 3) this.fail(`${intr.kind}() takes a literal 1, 2 or 3`, e);
        const items = (['x', 'y', 'z'] as const).slice(0, n).map((a): Val => ({
          code: intr.kind === 'grid' ? `((int)(blockIdx.${a} * blockDim.${a} + threadIdx.${a}))` : `((int)(gridDim.${a} * blockDim.${a}))`,
          ty: strong('int32'),
        }));
        if (n === 1) return { kind: 'scalar', v: items[0], code: items[0].code };
        return { kind: 'tuple', items, code: '' };
      }
      case 'sharedArray': case 'localArray':
        return this.fail(`${intr.kind}() makes an array; declare it: const tile = jit.${intr.kind}([32, 33], 'float32')`, e);
      case 'atomic': {
        const arity = intr.op === 'cas' ? 4 : 3;
        if (args.length !== arity) this.fail(`atomic.${intr.op} takes ${intr.op === 'cas' ? '(array, index, compare, value)' : '(array, index, value)'}`, e);
        const arr = this.ref(args[0]);
        if (arr.kind !== 'array') this.fail(`atomic.${intr.op}: the first argument must be a tensor or a shared array`, args[0]);
        const dt = arr.dtype;
        const ok = intr.op === 'and' || intr.op === 'or' || intr.op === 'xor' ? ['int32', 'int64'] : ['int32', 'int64', 'float32', 'float64'];
        if (!ok.includes(dt)) this.fail(`atomic.${intr.op} works on ${ok.join(', ')} arrays; ${arr.label} is ${dt}`, args[0]);
        const idxNode = args[1];
        const idx = idxNode.type === 'ArrayExpression' ? idxNode.elements.map((x) => {
          if (x === null || x.type === 'SpreadElement') return this.fail('write each index', idxNode);
          return x;
        }) : [idxNode as acorn.Expression];
        const { lvalue } = this.offset(arr, idx, idxNode);
        const cd = computeDType(dt);
        const vals = args.slice(2).map((a) => cast(this.expr(a), cd));
        this.module.helpers.add(ATOMIC_HELPERS);
        const code = `gx_atomic_${intr.op as AtomicOp}(&${lvalue}, ${vals.join(', ')})`;
        return { kind: 'scalar', v: { code, ty: strong(cd) }, code };
      }
      default:
        return this.fail(`${this.text(e.callee)} cannot be called here`, e);
    }
  }

  /** Whether `init` is a call of sharedArray / localArray (found by value, without translating). */
  private arrayMaker(init: acorn.Expression): 'sharedArray' | 'localArray' | undefined {
    if (init.type !== 'CallExpression') return undefined;
    const value = staticValueOf(init.callee, this.lookup, (n) => this.lookupName(n) !== undefined, (v) => INTRINSICS.get(v)?.kind === 'dim3');
    const intr = INTRINSICS.get(value);
    return intr?.kind === 'sharedArray' || intr?.kind === 'localArray' ? intr.kind : undefined;
  }

  /** `const tile = jit.sharedArray(shape, dtype)`: declared where the kernel declares it. */
  private arrayDeclaration(kind: 'sharedArray' | 'localArray', name: string, args: Expression[], node: Where, ind: string): ArrayRef {
    if (args.length !== 2) this.fail(`${kind} takes (shape, dtype)`, node);
    const shapeNode = args[0];
    const dims = (shapeNode.type === 'ArrayExpression' ? shapeNode.elements : [shapeNode]).map((x) => {
      if (x === null || x.type === 'SpreadElement') return this.fail('write each extent', shapeNode);
      const v = this.constant(x as Expression);
      if (!Number.isInteger(v) || v < 1) this.fail(`an extent of ${kind} must be a positive integer known when the kernel is compiled, got ${v}`, x);
      return v;
    });
    const dtNode = args[1];
    // A literal, or a dtype name held by a constant beside the kernel (a module's, or the function that made the kernel).
    const dtype: unknown = dtNode.type === 'Literal' ? dtNode.value
      : staticValueOf(dtNode as Parameters<typeof staticValueOf>[0], this.lookup, (n) => this.lookupName(n) !== undefined);
    if (typeof dtype !== 'string' || !isDType(dtype)) this.fail(`${kind}'s dtype must be a dtype name like 'float32'`, dtNode);
    const c = `${kind === 'sharedArray' ? 's' : 'l'}_${name}_${this.lines.length}`;
    const total = dims.reduce((a, b) => a * b, 1);
    if (kind === 'sharedArray' && this.mode !== 'kernel') this.fail('shared arrays belong in the kernel itself', node);
    this.lines.push(`${ind}${kind === 'sharedArray' ? '__shared__ ' : ''}${elementCType(dtype)} ${c}[${total}];`);
    const strides = dims.map((_, d) => dims.slice(d + 1).reduce((a, b) => a * b, 1));
    return { kind: 'array', label: name, dtype, rank: dims.length, ptr: c, dim: (d) => `${dims[d]}LL`, stride: (d) => (strides[d] === 1 ? '1' : `${strides[d]}LL`) };
  }

  /** A number known when the kernel is compiled: literals, numbers closed over, and arithmetic of them. */
  private constant(e: Expression): number {
    const v = this.expr(e);
    const arithmetic = v.code.replace(/LL/g, '');
    // Literals and closed-over numbers are inlined as digits: what is left is arithmetic JS computes the same.
    if (!v.ty.weak || !/^[\d\s.eE()+\-*/%]+$/.test(arithmetic)) {
      this.fail('this must be a number known when the kernel is compiled (a literal or a number the function closes over)', e);
    }
    // eslint-disable-next-line no-new-func
    return Number(Function(`"use strict"; return (${arithmetic});`)());
  }
}

/** Translates until the types of locals and returns settle (each pass may widen them). */
function settle<T>(pass: (types: Map<number, Ty>, ret: ReturnTy | undefined) => { t: Translator; out: T }): { t: Translator; out: T } {
  const types = new Map<number, Ty>();
  let ret: ReturnTy | undefined;
  for (let i = 0; ; i++) {
    const r = pass(types, ret);
    if (!r.t.changed || i >= 8) return r;
    ret = r.t.ret;
  }
}

/**
 * A __device__ function `name` computing `f` for parameters of the given
 * types, returning `out` (or the type its returns have); `api` names the
 * caller in errors. Device functions it calls go into `module`.
 */
export function scalarFunction(f: ParsedFunction, name: string, params: readonly (readonly [string, Ty])[], out: ScalarDType | undefined,
  lookup: Lookup, module: Module, api: string): { code: string; ret: ReturnTy } {
  const declared: ReturnTy | undefined = out === undefined ? undefined : { kind: 'scalar', ty: strong(out) };
  const { t, out: body } = settle((types, ret) => {
    const t = new Translator(f, lookup, module, api, 'scalar', types, declared, ret);
    const bound = new Map<string, Binding>(params.map(([p, ty]) => [p, { kind: 'param', c: cName(p), ty }]));
    return { t, out: t.run(bound) };
  });
  const ret = declared ?? t.ret;
  if (ret === undefined) throw new JitError(api, 'the function returns nothing; it must return its value', f.text);
  const list = params.map(([p, ty]) => `${C_TYPE[ty.dtype]} ${cName(p)}`).join(', ');
  let retType: string;
  let struct = '';
  if (ret.kind === 'scalar') retType = C_TYPE[ret.ty.dtype];
  else {
    retType = `${name}_t`;
    struct = `struct ${retType} { ${ret.tys.map((ty, i) => `${C_TYPE[ty.dtype]} v${i};`).join(' ')} };\n`;
  }
  return { code: `${struct}__device__ __forceinline__ ${retType} ${name}(${list}) {\n${body.join('\n')}\n}\n`, ret };
}

/** A kernel parameter as the translation sees it. */
export type KernelParamSpec =
  | { kind: 'number'; ty: Ty }
  | { kind: 'array'; array: ArrayRef };

/** The body of a kernel of `f` (its params already described); device functions and helpers go into `module`. */
export function kernelBody(f: ParsedFunction, params: readonly KernelParamSpec[], lookup: Lookup, module: Module, api: string): string[] {
  if (params.length !== f.params.length) {
    throw new JitError(api, `the kernel takes ${f.params.length} argument${f.params.length === 1 ? '' : 's'}, got ${params.length}`, f.text);
  }
  const { out } = settle((types) => {
    const t = new Translator(f, lookup, module, api, 'kernel', types, undefined, undefined);
    const bound = new Map<string, Binding>(f.params.map((p, i) => {
      const s = params[i];
      return [p, s.kind === 'array' ? s.array : { kind: 'param', c: cName(p), ty: s.ty }];
    }));
    return { t, out: t.run(bound) };
  });
  return out;
}

