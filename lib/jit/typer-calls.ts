// The typer's calls: Math.*, gx.jit's intrinsics (grid, atomics, barriers,
// shared and local arrays), gx.jit.device functions and, in gx.fuse, gx ops
// on elements.
import type * as acorn from 'acorn';

import { isDType } from '../core/dtype';
import { staticValueOf, type Lookup } from './closure';
import type { ArrayDecl, Expr, FnIR, Stmt, VarDecl } from './ir';
import { INTRINSIC_TABLE } from './intrinsic-table';
import { INTRINSICS, type Intrinsic } from './intrinsics';
import { deviceInfo, Module, type DeviceFunctionInfo, type OpOptions } from './module';
import { castTo, math, truth } from './typing';
import { computeDType, strong, type Ty, type Val } from './types';
import type { Binding, Expression, Where } from './typer';

export { Module };

/** What an expression stands for: a scalar, an array, a tuple, or a JS value to look into. */
export type Ref =
  | { kind: 'scalar'; e: Expr; integral?: boolean }
  | { kind: 'array'; arr: ArrayDecl }
  /** Several values; `pre` declares the device function's result they are items of. */
  | { kind: 'tuple'; items: Expr[]; pre?: Stmt }
  | { kind: 'static'; value: unknown };

/** The typer as its helpers see it. */
export interface TyperContext {
  readonly f: { text: string; params: string[] };
  readonly lookup: Lookup;
  readonly module: Module;
  readonly api: string;
  readonly mode: 'kernel' | 'scalar';
  fail(what: string, node?: Where): never;
  text(n: Where): string;
  lookupName(name: string): Binding | undefined;
  ref(e: Expression): Ref;
  expr(e: Expression): Expr;
  element(e: acorn.MemberExpression): { arr: ArrayDecl; idx: Expr[] };
  indices(a: ArrayDecl, idx: acorn.Expression[], node: Where): Expr[];
  staticRef(value: unknown, name: string, node: Where): Ref;
  /** Device function `dev` typed for `args` (on first use). */
  deviceFunction(dev: DeviceFunctionInfo, args: Ty[], node: Where): FnIR;
  newTemp(name: string, ty: Ty): VarDecl;
}

/** Math's functions by value, to recognize `Math.sin` however it is reached. */
const MATH_NAMES = new Map<unknown, string>(Object.getOwnPropertyNames(Math).map((k) => [(Math as unknown as Record<string, unknown>)[k], k]));

/** A call: Math.*, an intrinsic, a device function, or (in gx.fuse) a gx op; `statement` when its value is not used. */
export function typeCall(t: TyperContext, e: acorn.CallExpression, statement: boolean): Ref | { kind: 'stmt'; s: Stmt } {
  const c = e.callee;
  if (c.type === 'Super') return t.fail('super is not supported', c);
  // x.sin(), a.add(b): methods of elements, for gx.fuse.
  if (c.type === 'MemberExpression' && !c.computed && c.property.type === 'Identifier' && t.module.ops !== undefined) {
    const base = t.ref(c.object);
    if (base.kind === 'scalar') {
      const { operands, options } = opArgs(t, c.property.name, e.arguments as Expression[]);
      const v = opCall(t, c.property.name, [base.e, ...operands], e, options);
      if (v === undefined) t.fail(`.${c.property.name}() is not an elementwise op gx.fuse can fuse`, c.property);
      return { kind: 'scalar', e: v };
    }
  }
  const callee = t.ref(c);
  if (callee.kind !== 'static') return t.fail(`${t.text(c)} is not a function a kernel can call`, c);
  const f = callee.value;
  const args = e.arguments as Expression[];
  const mathName = typeof f === 'function' ? MATH_NAMES.get(f) : undefined;
  if (mathName !== undefined) {
    if (mathName === 'random') t.fail('Math.random has no meaning in a kernel (every thread would draw its own); pass random numbers in a tensor', e.callee);
    const r = math(mathName, args.map((a) => t.expr(a)), (w) => t.fail(w, w.includes('is not supported') ? e.callee : e));
    return { kind: 'scalar', e: r.e, integral: r.integral };
  }
  const intr = INTRINSICS.get(f);
  if (intr !== undefined) return intrinsic(t, intr, args, e, statement);
  const dev = deviceInfo(f);
  if (dev !== undefined) {
    const vals = args.map((a) => t.expr(a));
    const fn = t.deviceFunction(dev, vals.map((v) => v.ty), e);
    const ret = fn.ret;
    if (ret === undefined || ret.kind === 'scalar') return { kind: 'scalar', e: { k: 'call', ty: ret?.ty ?? strong('bool'), fn, args: vals } };
    const tmp = t.newTemp('r', strong('bool'));
    return { kind: 'tuple', items: ret.tys.map((ty, i): Expr => ({ k: 'item', ty, tmp, i })), pre: { k: 'tuple', tmp, fn, args: vals } };
  }
  const op = t.module.ops?.nameOf(f);
  if (op !== undefined) {
    const { operands, options } = opArgs(t, op, args);
    const v = opCall(t, op, operands, e, options);
    if (v === undefined) t.fail(`gx.${op} is not an elementwise op gx.fuse can fuse`, c);
    return { kind: 'scalar', e: v };
  }
  return t.fail(`${t.text(c)} is not Math.*, a gx.jit intrinsic or a gx.jit.device function; a kernel cannot call it`, c);
}

/**
 * A gx op's arguments on elements: its operands, and an options object written last as literals
 * ({ roundingMode: 'floor' }: what picks the op's variant, known when the kernel is made).
 */
function opArgs(t: TyperContext, name: string, args: Expression[]): { operands: Expr[]; options?: OpOptions } {
  const last = args.at(-1);
  if (last?.type !== 'ObjectExpression') return { operands: args.map((a) => t.expr(a)) };
  const options: Record<string, string | number | boolean | null> = {};
  for (const p of last.properties) {
    const key = p.type === 'Property' && !p.computed && p.key.type === 'Identifier' ? p.key.name : undefined;
    if (key === undefined || p.type !== 'Property' || p.value.type !== 'Literal' || p.value.value instanceof RegExp || typeof p.value.value === 'bigint') {
      return t.fail(`gx.${name}'s options in a fused function are written as literals, e.g. { roundingMode: 'floor' }`, p);
    }
    options[key] = p.value.value ?? null;
  }
  return { operands: args.slice(0, -1).map((a) => t.expr(a)), options };
}

/** A gx op on elements (gx.fuse): fuse.ts's C text, its operands standing in as \u0001k\u0001. */
function opCall(t: TyperContext, name: string, args: Expr[], node: Where, options?: OpOptions): Expr | undefined {
  const vals = args.map((a, k): Val => ({ code: `\u0001${k}\u0001`, ty: a.ty }));
  const v = t.module.ops?.call(name, vals, node, options);
  if (v === undefined) return undefined;
  const facts = v.facts?.map((f) => ({ op: f.op, args: f.operands.map((k) => args[k]), fault: f.fault }));
  return { k: 'foreign', ty: v.ty, code: v.code, args, ...(facts !== undefined && facts.length > 0 ? { facts } : {}) };
}

/** An intrinsic's call: its entry's type rule (NOTE [ One intrinsic table ]). */
function intrinsic(t: TyperContext, intr: Intrinsic, args: Expression[], e: acorn.CallExpression, statement: boolean): Ref | { kind: 'stmt'; s: Stmt } {
  const entry = INTRINSIC_TABLE[intr.name];
  if (entry.typeCall === undefined) return t.fail(`${t.text(e.callee)} cannot be called here`, e);
  return entry.typeCall(t, { args, e, statement, variant: intr.variant });
}

/** Whether `v` is an intrinsic a kernel reads properties of (threadIdx): staticValueOf stops there. */
function readByMember(v: unknown): boolean {
  const intr = INTRINSICS.get(v);
  return intr !== undefined && INTRINSIC_TABLE[intr.name].typeMember !== undefined;
}

/** Whether `init` is a call of sharedArray / localArray (found by value, without typing). */
export function arrayMaker(t: TyperContext, init: acorn.Expression): 'sharedArray' | 'localArray' | undefined {
  if (init.type !== 'CallExpression') return undefined;
  const value = staticValueOf(init.callee, t.lookup, (n) => t.lookupName(n) !== undefined, readByMember);
  const intr = INTRINSICS.get(value);
  return intr?.name === 'sharedArray' || intr?.name === 'localArray' ? intr.name : undefined;
}

let nextArray = 0;

/** `const tile = jit.sharedArray(shape, dtype)`: declared where the kernel declares it. */
export function arrayDeclaration(t: TyperContext, kind: 'sharedArray' | 'localArray', name: string, args: Expression[], node: Where): ArrayDecl {
  if (args.length !== 2) t.fail(`${kind} takes (shape, dtype)`, node);
  const shapeNode = args[0];
  const extents = (shapeNode.type === 'ArrayExpression' ? shapeNode.elements : [shapeNode]).map((x) => {
    if (x === null || x.type === 'SpreadElement') return t.fail('write each extent', shapeNode);
    const v = constant(t, x as Expression);
    if (!Number.isInteger(v) || v < 1) t.fail(`an extent of ${kind} must be a positive integer known when the kernel is compiled, got ${v}`, x);
    return v;
  });
  const dtNode = args[1];
  // A literal, or a dtype name held by a constant beside the kernel (a module's, or the function that made the kernel).
  const dtype: unknown = dtNode.type === 'Literal' ? dtNode.value
    : staticValueOf(dtNode as Parameters<typeof staticValueOf>[0], t.lookup, (n) => t.lookupName(n) !== undefined);
  if (typeof dtype !== 'string' || !isDType(dtype)) return t.fail(`${kind}'s dtype must be a dtype name like 'float32'`, dtNode);
  if (kind === 'sharedArray' && t.mode !== 'kernel') t.fail('shared arrays belong in the kernel itself', node);
  const total = extents.reduce((a, b) => a * b, 1);
  if (total > (1 << 24)) t.fail(`${kind} of ${total} elements is larger than a block can hold`, node);
  return { id: nextArray++, label: name, dtype, rank: extents.length, space: kind === 'sharedArray' ? 'shared' : 'local', contiguous: true, extents };
}

/** A number known when the kernel is compiled: literals, numbers closed over, and arithmetic of them. */
function constant(t: TyperContext, e: Expression): number {
  const v = fold(t.expr(e));
  if (v === undefined) return t.fail('this must be a number known when the kernel is compiled (a literal or a number the function closes over)', e);
  return v;
}

function fold(e: Expr): number | undefined {
  if (!e.ty.weak) return undefined;
  switch (e.k) {
    case 'lit': return typeof e.v === 'boolean' ? undefined : Number(e.v);
    case 'neg': { const x = fold(e.x); return x === undefined ? undefined : -x; }
    case 'cast': return fold(e.x);
    case 'arith': {
      const a = fold(e.a), b = fold(e.b);
      if (a === undefined || b === undefined) return undefined;
      switch (e.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return a / b;
        case '%': return a % b;
        default: return undefined;
      }
    }
    default: return undefined;
  }
}
