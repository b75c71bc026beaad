// The typer's calls: Math.*, gx.jit's intrinsics (grid, atomics, barriers,
// shared and local arrays), gx.jit.device functions and, in gx.fuse, gx ops
// on elements.
import type * as acorn from 'acorn';

import { isDType } from '../core/dtype';
import { staticValueOf, type Lookup } from './closure';
import type { ArrayDecl, Expr, FnIR, Stmt, VarDecl } from './ir';
import { INTRINSICS, type Intrinsic } from './intrinsics';
import { deviceInfo, Module, type DeviceFunctionInfo } from './module';
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
      const v = opCall(t, c.property.name, [base.e, ...e.arguments.map((a) => t.expr(a as Expression))], e);
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
    const v = opCall(t, op, args.map((a) => t.expr(a)), e);
    if (v === undefined) t.fail(`gx.${op} is not an elementwise op gx.fuse can fuse`, c);
    return { kind: 'scalar', e: v };
  }
  return t.fail(`${t.text(c)} is not Math.*, a gx.jit intrinsic or a gx.jit.device function; a kernel cannot call it`, c);
}

/** A gx op on elements (gx.fuse): fuse.ts's C text, its operands standing in as \u0001k\u0001. */
function opCall(t: TyperContext, name: string, args: Expr[], node: Where): Expr | undefined {
  const vals = args.map((a, k): Val => ({ code: `\u0001${k}\u0001`, ty: a.ty }));
  const v = t.module.ops?.call(name, vals, node);
  if (v === undefined) return undefined;
  return { k: 'foreign', ty: v.ty, code: v.code, args };
}

function intrinsic(t: TyperContext, intr: Intrinsic, args: Expression[], e: acorn.CallExpression, statement: boolean): Ref | { kind: 'stmt'; s: Stmt } {
  const none = (s: Stmt): { kind: 'stmt'; s: Stmt } => {
    if (!statement) t.fail(`${t.text(e.callee)}() gives no value`, e);
    return { kind: 'stmt', s };
  };
  switch (intr.kind) {
    case 'syncthreads':
      return none({ k: 'sync', at: e.start });
    case 'threadfence':
      return none({ k: 'fence' });
    case 'grid': case 'gridsize': {
      const n = args.length === 1 && args[0].type === 'Literal' ? args[0].value : undefined;
      if (n !== 1 && n !== 2 && n !== 3) t.fail(`${intr.kind}() takes a literal 1, 2 or 3`, e);
      // 64-bit: a grid of 2^31 - 1 blocks of 1024 threads passes int32 (Numba's cuda.grid is 64-bit too).
      const items = (['x', 'y', 'z'] as const).slice(0, n).map((axis): Expr => {
        const sp = (what: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim'): Expr =>
          castTo({ k: 'special', ty: strong(what === 'blockIdx' || what === 'gridDim' ? 'int64' : 'int32'), what, axis }, 'int64');
        const i64 = strong('int64');
        if (intr.kind === 'gridsize') return { k: 'arith', ty: i64, op: '*', a: sp('gridDim'), b: sp('blockDim') };
        return { k: 'arith', ty: i64, op: '+', a: { k: 'arith', ty: i64, op: '*', a: sp('blockIdx'), b: sp('blockDim') }, b: sp('threadIdx') };
      });
      if (n === 1) return { kind: 'scalar', e: items[0] };
      return { kind: 'tuple', items };
    }
    case 'sharedArray': case 'localArray':
      return t.fail(`${intr.kind}() makes an array; declare it: const tile = jit.${intr.kind}([32, 33], 'float32')`, e);
    case 'atomic': {
      const arity = intr.op === 'cas' ? 4 : 3;
      if (args.length !== arity) t.fail(`atomic.${intr.op} takes ${intr.op === 'cas' ? '(array, index, compare, value)' : '(array, index, value)'}`, e);
      const arr = t.ref(args[0]);
      if (arr.kind !== 'array') return t.fail(`atomic.${intr.op}: the first argument must be a tensor or a shared array`, args[0]);
      const dt = arr.arr.dtype;
      const ok = intr.op === 'and' || intr.op === 'or' || intr.op === 'xor' ? ['int32', 'int64'] : ['int32', 'int64', 'float32', 'float64'];
      if (!ok.includes(dt)) t.fail(`atomic.${intr.op} works on ${ok.join(', ')} arrays; ${arr.arr.label} is ${dt}`, args[0]);
      const idxNode = args[1];
      const nodes = idxNode.type === 'ArrayExpression' ? idxNode.elements.map((x) => {
        if (x === null || x.type === 'SpreadElement') return t.fail('write each index', idxNode);
        return x;
      }) : [idxNode as acorn.Expression];
      const idx = t.indices(arr.arr, nodes, idxNode);
      const cd = computeDType(dt);
      const vals = args.slice(2).map((a) => castTo(t.expr(a), cd));
      return { kind: 'scalar', e: { k: 'atomic', ty: strong(cd), op: intr.op, arr: arr.arr, idx, vals, at: e.start } };
    }
    case 'laneId':
      if (args.length !== 0) t.fail('laneId() takes no arguments', e);
      return { kind: 'scalar', e: { k: 'lane', ty: strong('int32') } };
    case 'shfl': {
      if (args.length !== 2) t.fail(`shfl.${intr.mode}(value, ${intr.mode === 'sync' ? 'srcLane' : intr.mode === 'xor' ? 'laneMask' : 'delta'}) takes 2 arguments`, e);
      const v = t.expr(args[0]);
      const value = v.ty.dtype === 'bool' ? castTo(v, 'int32') : v;
      const n = castTo(t.expr(args[1]), 'int32');
      return { kind: 'scalar', e: { k: 'warp', ty: { dtype: value.ty.dtype, weak: false }, op: intr.mode, args: [castTo(value, value.ty.dtype), n], at: e.start } };
    }
    case 'ballot': case 'activemask': {
      const want = intr.kind === 'ballot' ? 1 : 0;
      if (args.length !== want) t.fail(`${intr.kind}(${want === 1 ? 'predicate' : ''}) takes ${want} argument${want === 1 ? '' : 's'}`, e);
      const a = args.map((x) => truth(t.expr(x)));
      // The lanes as bits of an int64 (lane 31 set is no negative number).
      return { kind: 'scalar', e: { k: 'warp', ty: strong('int64'), op: intr.kind, args: a, at: e.start } };
    }
    default:
      return t.fail(`${t.text(e.callee)} cannot be called here`, e);
  }
}

/** Whether `init` is a call of sharedArray / localArray (found by value, without typing). */
export function arrayMaker(t: TyperContext, init: acorn.Expression): 'sharedArray' | 'localArray' | undefined {
  if (init.type !== 'CallExpression') return undefined;
  const value = staticValueOf(init.callee, t.lookup, (n) => t.lookupName(n) !== undefined, (v) => INTRINSICS.get(v)?.kind === 'dim3');
  const intr = INTRINSICS.get(value);
  return intr?.kind === 'sharedArray' || intr?.kind === 'localArray' ? intr.kind : undefined;
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
