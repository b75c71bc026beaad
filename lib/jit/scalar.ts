// Scalar functions of numbers (what gx.vectorize compiles) translated to a
// CUDA __device__ function: each expression typed, then emitted with the
// casts its types ask for.
//
// NOTE [ Types in jit functions ]
// Parameters have the dtypes a signature gives. A JS number literal is a
// "weak" scalar, as a JS number operand of the built-in ops: it takes the
// other operand's type (x * 0.5 is float32 for a float32 x; i + 1 stays
// int32), except that a fractional literal with an integer makes float32.
// Between two typed operands the wider wins and floating beats integer
// (gx.promoteTypes). `/` is true division (integers give float32, as
// gx.div); comparisons and ! give bool; Math.* of an integer computes in
// float32. Locals (`const`, `let`) take the type of their first value;
// a later assignment is converted to it. Expressions of weak operands only
// (Math.sqrt(2 * Math.PI)) are computed in double and converted where they
// meet a typed value. What is returned is converted to the output dtype.
import type * as acorn from 'acorn';

import { JitError } from './errors';
import type { ParsedFunction } from './source';

/** The dtypes jit functions compute in. */
export type ScalarDType = 'bool' | 'int32' | 'int64' | 'float32' | 'float64';
export const SCALAR_DTYPES: readonly ScalarDType[] = ['bool', 'int32', 'int64', 'float32', 'float64'];

interface Ty {
  dtype: ScalarDType;
  weak: boolean;
}

const C_TYPE: Record<ScalarDType, string> = {
  bool: 'bool', int32: 'int', int64: 'long long', float32: 'float', float64: 'double',
};
const RANK: Record<ScalarDType, number> = { bool: 0, int32: 1, int64: 2, float32: 3, float64: 4 };
const isFloat = (d: ScalarDType): boolean => d === 'float32' || d === 'float64';

/** The C name of a user's variable: prefixed, so no JS name meets a C keyword or a name of the kernel around it. */
const cName = (name: string): string => `v_${name}`;

/** An expression: its C text and its type. */
interface Val {
  code: string;
  ty: Ty;
}

/** Math.* functions: their CUDA names for float and double (and how many arguments they take). */
const MATH: Record<string, [string, string, number]> = {
  exp: ['expf', 'exp', 1], log: ['logf', 'log', 1], log1p: ['log1pf', 'log1p', 1], expm1: ['expm1f', 'expm1', 1],
  log2: ['log2f', 'log2', 1], log10: ['log10f', 'log10', 1], sqrt: ['sqrtf', 'sqrt', 1], cbrt: ['cbrtf', 'cbrt', 1],
  sin: ['sinf', 'sin', 1], cos: ['cosf', 'cos', 1], tan: ['tanf', 'tan', 1], asin: ['asinf', 'asin', 1],
  acos: ['acosf', 'acos', 1], atan: ['atanf', 'atan', 1], sinh: ['sinhf', 'sinh', 1], cosh: ['coshf', 'cosh', 1],
  tanh: ['tanhf', 'tanh', 1], floor: ['floorf', 'floor', 1], ceil: ['ceilf', 'ceil', 1], trunc: ['truncf', 'trunc', 1],
  round: ['gx_jit_roundf', 'gx_jit_round', 1], abs: ['fabsf', 'fabs', 1], atan2: ['atan2f', 'atan2', 2],
  pow: ['powf', 'pow', 2], hypot: ['hypotf', 'hypot', 2], min: ['fminf', 'fmin', 2], max: ['fmaxf', 'fmax', 2],
  sign: ['gx_jit_signf', 'gx_jit_sign', 1],
};
const MATH_CONSTANTS: Record<string, number> = {
  PI: Math.PI, E: Math.E, LN2: Math.LN2, LN10: Math.LN10, LOG2E: Math.LOG2E, LOG10E: Math.LOG10E, SQRT2: Math.SQRT2,
  SQRT1_2: Math.SQRT1_2,
};
/** JS's Math.round (halves up) and Math.sign, for the functions that use them. */
export const JIT_HELPERS = `__device__ __forceinline__ float gx_jit_roundf(float x) { return floorf(x + 0.5f); }
__device__ __forceinline__ double gx_jit_round(double x) { return floor(x + 0.5); }
__device__ __forceinline__ float gx_jit_signf(float x) { return x > 0.f ? 1.f : x < 0.f ? -1.f : x; }
__device__ __forceinline__ double gx_jit_sign(double x) { return x > 0. ? 1. : x < 0. ? -1. : x; }
`;

/** What a function refers to besides its parameters and locals: numbers it closes over, by name. */
export type Constants = (name: string) => number | boolean | undefined;

function literal(v: number | boolean): Val {
  if (typeof v === 'boolean') return { code: v ? 'true' : 'false', ty: { dtype: 'bool', weak: true } };
  if (Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER) {
    return { code: Object.is(v, -0) ? '0' : `${v}LL`, ty: { dtype: 'int64', weak: true } };
  }
  if (Number.isNaN(v)) return { code: '(0.0 / 0.0)', ty: { dtype: 'float64', weak: true } };
  if (!Number.isFinite(v)) return { code: v > 0 ? '(1.0 / 0.0)' : '(-1.0 / 0.0)', ty: { dtype: 'float64', weak: true } };
  const s = String(v);
  return { code: /[.e]/.test(s) ? s : `${s}.0`, ty: { dtype: 'float64', weak: true } };
}

/** The type two operands compute in (NOTE [ Types in jit functions ]). */
function promote(a: Ty, b: Ty): Ty {
  if (a.weak && b.weak) return { dtype: RANK[a.dtype] >= RANK[b.dtype] ? a.dtype : b.dtype, weak: true };
  if (a.weak || b.weak) {
    const [w, s] = a.weak ? [a, b] : [b, a];
    if (isFloat(w.dtype) && !isFloat(s.dtype)) return { dtype: 'float32', weak: false };
    if (s.dtype === 'bool' && w.dtype !== 'bool') return { dtype: w.dtype === 'int64' ? 'int64' : 'float32', weak: false };
    return s;
  }
  return RANK[a.dtype] >= RANK[b.dtype] ? a : b;
}

function cast(v: Val, to: ScalarDType): string {
  return v.ty.dtype === to ? v.code : `((${C_TYPE[to]})(${v.code}))`;
}

/** A floating type for math of `t`: floats keep theirs; integers and bool give float32 (weak ones double). */
function floatOf(t: Ty): Ty {
  if (isFloat(t.dtype)) return t;
  return t.weak ? { dtype: 'float64', weak: true } : { dtype: 'float32', weak: false };
}

class Translator {
  private readonly locals = new Map<string, ScalarDType>();
  private readonly lines: string[] = [];
  private returns = 0;

  constructor(
    private readonly f: ParsedFunction,
    private readonly params: Map<string, ScalarDType>,
    private readonly out: ScalarDType,
    private readonly constants: Constants,
    private readonly api: string,
  ) {}

  private fail(what: string, node: { start: number; end: number }): never {
    throw new JitError(this.api, what, this.f.text, node);
  }

  body(): string[] {
    const b = this.f.body;
    if (b.type !== 'BlockStatement') {
      this.lines.push(`  return ${cast(this.expr(b), this.out)};`);
      return this.lines;
    }
    for (const st of b.body) this.statement(st, '  ');
    if (this.returns === 0) this.fail('the function returns nothing; a vectorized function returns its value', b);
    this.lines.push(`  return ${C_TYPE[this.out]}(0);  // not reached when every path returns`);
    return this.lines;
  }

  private statement(st: acorn.Statement | acorn.ModuleDeclaration, ind: string): void {
    switch (st.type) {
      case 'VariableDeclaration': {
        if (st.kind === 'var') this.fail('use const or let, not var', st);
        for (const d of st.declarations) {
          if (d.id.type !== 'Identifier') this.fail('destructuring is not supported here', d.id);
          if (d.init === null || d.init === undefined) this.fail(`${d.id.name} needs a value where it is declared (its type is the value's)`, d);
          if (this.locals.has(d.id.name) || this.params.has(d.id.name)) this.fail(`${d.id.name} is declared twice`, d.id);
          const v = this.expr(d.init);
          const dt = v.ty.weak && v.ty.dtype === 'int64' ? 'int64' : v.ty.dtype;
          this.locals.set(d.id.name, dt);
          this.lines.push(`${ind}${st.kind === 'const' ? 'const ' : ''}${C_TYPE[dt]} ${cName(d.id.name)} = ${cast(v, dt)};`);
        }
        return;
      }
      case 'ExpressionStatement': {
        const e = st.expression;
        if (e.type !== 'AssignmentExpression') this.fail('only assignments can stand alone as statements', e);
        if (e.left.type !== 'Identifier') this.fail('only local variables can be assigned', e.left);
        const name = e.left.name;
        const t = this.locals.get(name);
        if (t === undefined) this.fail(this.params.has(name) ? `${name} is a parameter; copy it into a local first` : `${name} is not a local variable`, e.left);
        const op = e.operator === '=' ? undefined : e.operator.slice(0, -1);
        const rhs = op === undefined ? this.expr(e.right) : this.binary(op, { code: cName(name), ty: { dtype: t, weak: false } }, this.expr(e.right), e);
        this.lines.push(`${ind}${cName(name)} = ${cast(rhs, t)};`);
        return;
      }
      case 'ReturnStatement': {
        if (st.argument === null || st.argument === undefined) this.fail('return a value', st);
        this.returns++;
        this.lines.push(`${ind}return ${cast(this.expr(st.argument), this.out)};`);
        return;
      }
      case 'IfStatement': {
        this.lines.push(`${ind}if (${this.condition(st.test)}) {`);
        this.block(st.consequent, `${ind}  `);
        if (st.alternate) {
          this.lines.push(`${ind}} else {`);
          this.block(st.alternate, `${ind}  `);
        }
        this.lines.push(`${ind}}`);
        return;
      }
      case 'BlockStatement':
        this.lines.push(`${ind}{`);
        this.block(st, `${ind}  `);
        this.lines.push(`${ind}}`);
        return;
      default:
        this.fail(`${st.type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()} is not supported in a vectorized function`, st);
    }
  }

  private block(st: acorn.Statement, ind: string): void {
    if (st.type === 'BlockStatement') for (const s of st.body) this.statement(s, ind);
    else this.statement(st, ind);
  }

  private condition(e: acorn.Expression): string {
    const v = this.expr(e);
    return v.ty.dtype === 'bool' ? v.code : `(${v.code}) != 0`;
  }

  private expr(e: acorn.Expression | acorn.PrivateIdentifier | acorn.SpreadElement | acorn.Super): Val {
    switch (e.type) {
      case 'Literal':
        if (typeof e.value === 'number' || typeof e.value === 'boolean') return literal(e.value);
        return this.fail('only number and boolean literals are supported', e);
      case 'Identifier': {
        const p = this.params.get(e.name) ?? this.locals.get(e.name);
        if (p !== undefined) return { code: cName(e.name), ty: { dtype: p, weak: false } };
        if (e.name === 'Infinity' || e.name === 'NaN') return literal(e.name === 'NaN' ? NaN : Infinity);
        const c = this.constants(e.name);
        if (c === undefined) return this.fail(`${e.name} is not a parameter, a local or a number the function closes over`, e);
        return literal(c);
      }
      case 'MemberExpression': {
        if (e.object.type === 'Identifier' && e.object.name === 'Math' && e.property.type === 'Identifier' && !e.computed &&
          e.property.name in MATH_CONSTANTS) return literal(MATH_CONSTANTS[e.property.name]);
        return this.fail('only Math constants (Math.PI, Math.E, ...) can be read as properties here', e);
      }
      case 'CallExpression': {
        const c = e.callee;
        if (c.type !== 'MemberExpression' || c.object.type !== 'Identifier' || c.object.name !== 'Math' ||
          c.property.type !== 'Identifier' || !(c.property.name in MATH)) {
          return this.fail('only Math functions (Math.exp, Math.sqrt, ...) can be called here', e);
        }
        const [f32, f64, arity] = MATH[c.property.name];
        if (e.arguments.length !== arity) this.fail(`Math.${c.property.name} takes ${arity} argument${arity === 1 ? '' : 's'} here`, e);
        const args = e.arguments.map((a) => this.expr(a));
        let t = floatOf(args[0].ty);
        if (args.length === 2) t = floatOf(promote(args[0].ty, args[1].ty));
        const name = t.dtype === 'float32' ? f32 : f64;
        return { code: `${name}(${args.map((a) => cast(a, t.dtype)).join(', ')})`, ty: t };
      }
      case 'UnaryExpression': {
        const v = this.expr(e.argument);
        if (e.operator === '-') return { code: `(-${cast(v, v.ty.dtype === 'bool' ? 'int32' : v.ty.dtype)})`, ty: v.ty.dtype === 'bool' ? { dtype: 'int32', weak: v.ty.weak } : v.ty };
        if (e.operator === '+') return v;
        if (e.operator === '!') return { code: `(!(${v.code}))`, ty: { dtype: 'bool', weak: false } };
        return this.fail(`the operator ${e.operator} is not supported here`, e);
      }
      case 'BinaryExpression':
        if (e.left.type === 'PrivateIdentifier') return this.fail('private names are not supported', e.left);
        return this.binary(e.operator, this.expr(e.left), this.expr(e.right), e);
      case 'LogicalExpression': {
        if (e.operator === '??') return this.fail('?? is not supported here', e);
        return { code: `(${this.condition(e.left)} ${e.operator} ${this.condition(e.right)})`, ty: { dtype: 'bool', weak: false } };
      }
      case 'ConditionalExpression': {
        const a = this.expr(e.consequent);
        const b = this.expr(e.alternate);
        const t = promote(a.ty, b.ty);
        return { code: `(${this.condition(e.test)} ? ${cast(a, t.dtype)} : ${cast(b, t.dtype)})`, ty: t };
      }
      default:
        return this.fail(`${e.type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()} is not supported in a vectorized function`, e);
    }
  }

  private binary(op: string, a: Val, b: Val, node: { start: number; end: number }): Val {
    const t = promote(a.ty, b.ty);
    switch (op) {
      case '+': case '-': case '*': {
        const d: ScalarDType = t.dtype === 'bool' ? 'int64' : t.dtype;
        return { code: `(${cast(a, d)} ${op} ${cast(b, d)})`, ty: { dtype: d, weak: t.weak } };
      }
      case '/': {
        const f = isFloat(t.dtype) ? t : t.weak ? { dtype: 'float64' as const, weak: true } : { dtype: 'float32' as const, weak: false };
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
        if (isFloat(t.dtype)) return { code: `${t.dtype === 'float32' ? 'powf' : 'pow'}(${cast(a, t.dtype)}, ${cast(b, t.dtype)})`, ty: t };
        const d: ScalarDType = t.dtype === 'bool' ? 'int64' : t.dtype;
        return { code: `((${C_TYPE[d]})pow((double)(${a.code}), (double)(${b.code})))`, ty: { dtype: d, weak: t.weak } };
      }
      case '<': case '<=': case '>': case '>=': case '==': case '===': case '!=': case '!==': {
        const c = op.startsWith('==') ? '==' : op.startsWith('!=') ? '!=' : op;
        return { code: `(${cast(a, t.dtype)} ${c} ${cast(b, t.dtype)})`, ty: { dtype: 'bool', weak: false } };
      }
      default:
        return this.fail(`the operator ${op} is not supported here`, node);
    }
  }
}

/**
 * The __device__ function `name` computing `f` for parameters of the given
 * dtypes, returning `out`; `api` names the caller in errors.
 */
export function deviceFunction(f: ParsedFunction, name: string, params: readonly ScalarDType[], out: ScalarDType,
  constants: Constants, api: string): string {
  if (params.length !== f.params.length) {
    throw new JitError(api, `the signature has ${params.length} parameter${params.length === 1 ? '' : 's'} but the function takes ${f.params.length}`, f.text);
  }
  const map = new Map(f.params.map((p, i) => [p, params[i]]));
  const body = new Translator(f, map, out, constants, api).body();
  const list = f.params.map((p, i) => `${C_TYPE[params[i]]} ${cName(p)}`).join(', ');
  return `__device__ __forceinline__ ${C_TYPE[out]} ${name}(${list}) {\n${body.join('\n')}\n}\n`;
}
