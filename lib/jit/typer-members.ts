// The typer's `a.b` and `a[i]`: elements and properties of arrays, items of
// tuples, gx.jit's dim3 values, Math's constants and properties of the JS
// values a function closes over.
import type * as acorn from 'acorn';

import type { ArrayDecl, Expr } from './ir';
import { INTRINSIC_TABLE } from './intrinsic-table';
import { INTRINSICS } from './intrinsics';
import { lit } from './typing';
import { computeDType, strong } from './types';
import type { Ref, TyperContext } from './typer-calls';
import type { Expression } from './typer';

export function memberRef(t: TyperContext, e: acorn.MemberExpression): Ref {
  if (e.object.type === 'Super') t.fail('super is not supported', e);
  if (e.computed) {
    // a[i][j]: the whole chain of subscripts is one element of the array at its root.
    let root: Expression = e.object;
    while (root.type === 'MemberExpression' && root.computed) root = root.object as Expression;
    if (root.type === 'Identifier' && t.lookupName(root.name)?.kind === 'array') return elementRef(t, e);
  }
  const base = t.ref(e.object);
  if (base.kind === 'array') {
    if (!e.computed && e.property.type === 'Identifier') return arrayProperty(t, base.arr, e.property.name, e);
    return elementRef(t, e);
  }
  if (base.kind === 'tuple') {
    if (base.pre !== undefined) t.fail('destructure what a device function returns: const [a, b] = f(...)', e);
    const k = e.computed && e.property.type === 'Literal' ? e.property.value : undefined;
    if (typeof k !== 'number' || !(k >= 0 && k < base.items.length)) t.fail('index a tuple with a literal 0, 1, ...', e.property);
    return { kind: 'scalar', e: base.items[k] };
  }
  if (base.kind === 'scalar') {
    if (e.object.type === 'MemberExpression' && !e.computed) return t.fail(`${t.text(e)} is not something a kernel can read`, e);
    return t.fail(`${t.text(e.object)} is a number; it has no properties`, e);
  }
  if (e.computed) {
    if (e.property.type !== 'Literal' || typeof e.property.value !== 'string') t.fail('a computed property of a JS value must be a string literal', e.property);
    return staticMember(t, base.value, e.property.value, e);
  }
  if (e.property.type !== 'Identifier') t.fail('private names are not supported', e.property);
  return staticMember(t, base.value, e.property.name, e);
}

function elementRef(t: TyperContext, e: acorn.MemberExpression): Ref {
  const { arr, idx } = t.element(e);
  const load: Expr = { k: 'load', ty: strong(computeDType(arr.dtype)), arr, idx, at: e.start };
  return { kind: 'scalar', e: load };
}

function staticMember(t: TyperContext, value: unknown, prop: string, node: acorn.MemberExpression): Ref {
  const intr = INTRINSICS.get(value);
  const member = intr === undefined ? undefined : INTRINSIC_TABLE[intr.name].typeMember;
  if (member !== undefined) return member(t, prop, node);
  if (value === Math && prop in Math && typeof (Math as unknown as Record<string, unknown>)[prop] === 'number') {
    return { kind: 'scalar', e: lit((Math as unknown as Record<string, number>)[prop]) };
  }
  let v: unknown;
  try {
    v = (value as Record<string, unknown>)[prop];
  } catch (err) {
    t.fail(`reading ${t.text(node)} failed: ${err instanceof Error ? err.message : String(err)}`, node);
  }
  if (v === undefined) t.fail(`${t.text(node)} is undefined`, node);
  // `exports.K`: how TypeScript's CommonJS output refers to a module's own `export const K`.
  const ownExport = node.object.type === 'Identifier' && node.object.name === 'exports';
  if ((typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') && !ownExport) {
    // Inlined numbers are the ones the function closes over, read once when it is compiled; a property may change later.
    t.fail(`${t.text(node)} is a property of an object; copy it into a const the function closes over (const K = ${t.text(node)})`, node);
  }
  return t.staticRef(v, t.text(node), node);
}

function arrayProperty(t: TyperContext, a: ArrayDecl, prop: string, node: acorn.MemberExpression): Ref {
  if (prop === 'length') return { kind: 'scalar', e: { k: 'dim', ty: strong('int64'), arr: a, d: 0 } };
  if (prop === 'ndim') return { kind: 'scalar', e: lit(a.rank) };
  if (prop === 'shape' || prop === 'strides') {
    const items = Array.from({ length: a.rank }, (_, d): Expr => ({ k: prop === 'shape' ? 'dim' : 'stride', ty: strong('int64'), arr: a, d }));
    return { kind: 'tuple', items };
  }
  return t.fail(`${a.label} has length, ndim, shape and strides, and elements ${a.label}[i]`, node.property);
}
