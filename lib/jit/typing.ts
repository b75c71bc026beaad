// The typing rules of operators and Math.* (NOTE [ Types in jit functions ]
// in typer.ts): each builds the IR node of an operation on typed operands,
// with the casts the rules ask for made explicit.
import type { ArithOp, Expr } from './ir';
import { isPure } from './ir-walk';
import { isMathFn, mathEntry } from './math-table';
import { floatOf, isFloat, isInteger, plain, promote, strong, type ScalarDType, type Ty } from './types';

type Fail = (what: string) => never;

/** `e` converted to `d` (nothing when it already is). */
export function castTo(e: Expr, d: ScalarDType): Expr {
  if (e.ty.dtype === d) return e;
  return { k: 'cast', ty: { dtype: d, weak: e.ty.weak && d !== 'bool' }, x: e };
}

/** A condition: bools as they are, numbers by JS truthiness (NaN is false). */
export function truth(e: Expr): Expr {
  return e.ty.dtype === 'bool' ? e : { k: 'truth', ty: strong('bool'), x: e };
}

/** A weak JS number or boolean as a literal (NOTE [ Types in jit functions ]); `float`: written with a point. */
export function lit(v: number | boolean | bigint, float = false): Expr {
  if (typeof v === 'boolean') return { k: 'lit', ty: { dtype: 'bool', weak: true }, v };
  if (typeof v === 'bigint') return { k: 'lit', ty: { dtype: 'int64', weak: true }, v: BigInt.asIntN(64, v) };
  if (!float && Number.isInteger(v) && !Object.is(v, -0) && Math.abs(v) <= Number.MAX_SAFE_INTEGER) return { k: 'lit', ty: { dtype: 'int64', weak: true }, v };
  return { k: 'lit', ty: { dtype: 'float64', weak: true }, v };
}

const intOrInt64 = (t: Ty): Ty => (t.dtype === 'bool' ? { dtype: 'int64', weak: t.weak } : t);

/** `a op b` for the arithmetic and bitwise operators. */
export function arith(op: ArithOp, a: Expr, b: Expr, fail: Fail, at?: number): Expr {
  const t = plain(promote(a.ty, b.ty));
  switch (op) {
    case '+': case '-': case '*': case '%': {
      const r = intOrInt64(t);
      return { k: 'arith', ty: r, op, a: castTo(a, r.dtype), b: castTo(b, r.dtype), at };
    }
    case '/': {
      // True division: integers give float32 (weak ones float64), as gx.div.
      const f = isFloat(t.dtype) ? t : t.weak ? { dtype: 'float64' as const, weak: true } : strong('float32');
      return { k: 'arith', ty: f, op, a: castTo(a, f.dtype), b: castTo(b, f.dtype) };
    }
    case '**': {
      const r = intOrInt64(t);
      if (isFloat(r.dtype) && b.k === 'lit' && b.ty.weak) {
        // x ** 2, the common square, as a product; x ** 0.5 as sqrt (powf is a library call, and not exact).
        // The product reads x twice: only an x without effects (`(i++) ** 2` increments once).
        const x = castTo(a, r.dtype);
        if (b.v === 2 && isPure(x)) return { k: 'arith', ty: r, op: '*', a: x, b: x };
        if (b.v === 0.5) return { k: 'math', ty: r, fn: 'sqrt', args: [x] };
      }
      return { k: 'arith', ty: r, op, a: castTo(a, r.dtype), b: castTo(b, r.dtype) };
    }
    case '&': case '|': case '^': case '<<': case '>>': case '>>>': {
      // As in JS, a float operand is truncated to an integer first (x | 0).
      const r: Ty = isInteger(t.dtype) ? t : { dtype: 'int32', weak: t.weak };
      return { k: 'arith', ty: r, op, a: castTo(a, r.dtype), b: castTo(b, r.dtype) };
    }
    default:
      return fail(`the operator ${String(op)} is not supported here`);
  }
}

/** A comparison: both operands in their promoted type. */
export function compare(op: string, a: Expr, b: Expr): Expr {
  const c = op.startsWith('==') ? '==' : op.startsWith('!=') ? '!=' : (op as '<' | '<=' | '>' | '>=');
  const t = promote(a.ty, b.ty);
  return { k: 'cmp', ty: strong('bool'), op: c, a: castTo(a, t.dtype), b: castTo(b, t.dtype) };
}

export function negate(x: Expr): Expr {
  const t: Ty = x.ty.dtype === 'bool' ? { dtype: 'int32', weak: x.ty.weak } : plain(x.ty);
  return { k: 'neg', ty: t, x: castTo(x, t.dtype) };
}

export { isMathFn };

/** Math.name(args): floats compute in their type, integers in float32 (weak: float64) but for the ones that keep integers. */
export function math(name: string, args: Expr[], fail: Fail): { e: Expr; integral: boolean } {
  if (name === 'fround') {
    if (args.length !== 1) fail('Math.fround takes 1 argument here');
    return { e: castTo(args[0], 'float32'), integral: false };
  }
  if (!isMathFn(name)) return fail(`Math.${name} is not supported in a kernel`);
  const entry = mathEntry(name);
  const arity = entry.arity;
  if (args.length !== arity) fail(`Math.${name} takes ${arity} argument${arity === 1 ? '' : 's'} here`);
  const t = plain(args.length === 2 ? promote(args[0].ty, args[1].ty) : args[0].ty);
  if (entry.int !== undefined && isInteger(t.dtype)) {
    if (entry.int === 'identity') return { e: castTo(args[0], t.dtype), integral: false };
    return { e: { k: 'math', ty: t, fn: name, args: args.map((a) => castTo(a, t.dtype)) }, integral: false };
  }
  const ft = floatOf(t);
  // floor, ceil, trunc, round: a float known to hold an integer (usable as an index).
  const integral = entry.int === 'identity';
  return { e: { k: 'math', ty: ft, fn: name, args: args.map((a) => castTo(a, ft.dtype)) }, integral };
}
