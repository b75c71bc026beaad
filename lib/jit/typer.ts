// The typer: a parsed JS function (source.ts) becomes typed IR (ir.ts), once
// per argument types, refusing what the language does not have (every refusal
// a gx.JitError quoting the line) before anything is emitted or run. What a
// function refers to besides its parameters and locals is resolved by value
// (closure.ts): numbers become literals, Math and gx.jit's intrinsics
// (intrinsics.ts) become nodes, device functions are typed for the argument
// types of each call (typer-calls.ts).
//
// NOTE [ Types in jit functions ]
// A JS number literal is a "weak" scalar, as a JS number operand of the
// built-in ops: it takes the other operand's type (x * 0.5 is float32 for a
// float32 x; i + 1 stays int32), except that a fractional literal with an
// integer makes float32; a literal written with a point (0.0) is a float.
// Fractional number arguments of a kernel are weak float64; integral ones
// are int64 (strong: a run-time bound is never cut to a narrower counter's
// type), as are extents and strides. Between two typed operands the wider
// wins and floating beats integer (gx.promoteTypes). `/` is true division
// (integers give float32, as gx.div); comparisons and ! give bool; Math.* of
// an integer computes in float32 (Math.min/max/abs/floor/ceil/trunc/round
// keep integers). threadIdx and blockDim are int32, blockIdx, gridDim,
// grid() and gridsize() int64 (their products pass 2^31), tensor elements
// their dtype's compute type (int8/int16/uint8 as int32, float16/bfloat16 as
// float32). A local (`const`, `let`) has the type that holds every value
// assigned to it (the promotion of them all, found by typing until the types
// settle: `let acc = 0; acc += x[i]` is float32 for a float32 x); one only
// ever given JS numbers stays weak; a `let` compared with an int64 becomes
// int64 (a loop counter reaches its bound). What a function returns is
// converted to its declared output dtype, or typed the same way.
import type * as acorn from 'acorn';

import { JitError } from './errors';
import type { ArrayDecl, Expr, FnIR, ReturnTy, Stmt, VarDecl } from './ir';
import type { Lookup } from './closure';
import type { ParsedFunction } from './source';
import { arith, castTo, compare, lit, negate, truth } from './typing';
import { computeDType, promote, sameTy, strong, type Ty } from './types';
import { typeCall, arrayMaker, arrayDeclaration, type Ref, type TyperContext } from './typer-calls';
import type { DeviceFunctionInfo, Module } from './module';
import { memberRef } from './typer-members';

export type Expression = acorn.Expression | acorn.PrivateIdentifier | acorn.SpreadElement | acorn.Super | acorn.Pattern;
export type Where = { start: number; end: number };

export type Binding =
  | { kind: 'var'; v: VarDecl; key: number; param: boolean; integral?: boolean }
  | { kind: 'array'; arr: ArrayDecl };

/** How deep expressions and blocks may nest: deeper ones are refused, not a stack overflow. */
export const MAX_DEPTH = 256;

const describeNode = (t: string): string => t.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

let nextId = 1;
export const newId = (): number => nextId++;

/** One typing pass over a function (the caller repeats it until the locals' types settle). */
export class Typer implements TyperContext {
  private scopes: Map<string, Binding>[] = [];
  private returns = 0;
  private loops = 0;
  private depth = 0;
  private readonly keys = new Map<VarDecl, number>();
  /** Whether this pass widened a local's or the return's type (then the typing runs again). */
  changed = false;
  ret: ReturnTy | undefined;

  constructor(
    readonly f: ParsedFunction,
    readonly lookup: Lookup,
    readonly module: Module,
    readonly api: string,
    readonly mode: 'kernel' | 'scalar',
    private readonly types: Map<number, Ty>,
    readonly declared: ReturnTy | undefined,
    prevRet: ReturnTy | undefined,
    private readonly typeDevice: (dev: DeviceFunctionInfo, args: Ty[], fail: (what: string) => never) => FnIR,
  ) {
    this.ret = prevRet;
  }

  fail(what: string, node?: Where): never {
    throw new JitError(this.api, what, this.f.text, node);
  }

  text(n: Where): string {
    return this.f.text.slice(n.start, n.end);
  }

  lookupName(name: string): Binding | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const b = this.scopes[i].get(name);
      if (b !== undefined) return b;
    }
    return undefined;
  }

  newTemp(name: string, ty: Ty): VarDecl {
    return { id: newId(), name, ty, isConst: true };
  }

  deviceFunction(dev: DeviceFunctionInfo, args: Ty[], node: Where): FnIR {
    return this.typeDevice(dev, args, (what) => this.fail(what, node));
  }

  private bind(name: string, b: Binding): void {
    this.scopes[this.scopes.length - 1].set(name, b);
  }

  /** Types the body; params are bound by the caller in the outer scope. */
  run(params: Map<string, Binding>): Stmt[] {
    this.scopes = [params, new Map()];
    const b = this.f.body;
    if (b.type !== 'BlockStatement') {
      if (this.mode === 'kernel') this.fail('a kernel needs a block body { ... }', b);
      return [this.returnValue(b)];
    }
    const out = this.statements(b.body);
    if (this.mode === 'scalar' && this.returns === 0) this.fail('the function returns nothing; it must return its value', b);
    return out;
  }

  private statements(list: readonly (acorn.Statement | acorn.ModuleDeclaration)[]): Stmt[] {
    const out: Stmt[] = [];
    for (const st of list) this.statement(st, out);
    return out;
  }

  private nested<T>(node: Where, f: () => T): T {
    if (++this.depth > MAX_DEPTH) this.fail(`this nests more than ${MAX_DEPTH} levels deep; split it into smaller expressions or functions`, node);
    try {
      return f();
    } finally {
      this.depth--;
    }
  }

  private statement(st: acorn.Statement | acorn.ModuleDeclaration, out: Stmt[]): void {
    this.nested(st, () => this.statementIn(st, out));
  }

  private statementIn(st: acorn.Statement | acorn.ModuleDeclaration, out: Stmt[]): void {
    switch (st.type) {
      case 'VariableDeclaration':
        this.declaration(st, out);
        return;
      case 'ExpressionStatement':
        this.effect(st.expression, out);
        return;
      case 'ReturnStatement':
        if (this.mode === 'kernel') {
          if (st.argument) this.fail('a kernel returns nothing; write its results into a tensor', st.argument);
          out.push({ k: 'return' });
          return;
        }
        if (!st.argument) this.fail('return a value', st);
        out.push(this.returnValue(st.argument));
        return;
      case 'IfStatement': {
        const c = this.condition(st.test);
        out.push({ k: 'if', c, then: this.block(st.consequent), else: st.alternate ? this.block(st.alternate) : undefined });
        return;
      }
      case 'BlockStatement':
        out.push({ k: 'block', body: this.block(st) });
        return;
      case 'ForStatement': {
        this.scopes.push(new Map());
        const init: Stmt[] = [];
        if (st.init) {
          if (st.init.type === 'VariableDeclaration') {
            this.declaration(st.init, init);
            if (init.length !== 1 || init[0].k !== 'decl') this.fail('declare one loop variable here', st.init);
          } else {
            this.effect(st.init, init);
          }
        }
        const c = st.test ? this.condition(st.test) : undefined;
        const upd: Stmt[] = [];
        if (st.update) this.effect(st.update, upd);
        const update = upd.map((s) => (s.k === 'expr' ? s.x : this.fail('only assignments and ++ / -- in a loop\'s update', st.update as Where)));
        const body = this.loopBody(st.body);
        this.scopes.pop();
        out.push({ k: 'for', init, c, update, body, at: st.start });
        return;
      }
      case 'WhileStatement':
        out.push({ k: 'while', c: this.condition(st.test), body: this.loopBody(st.body), at: st.start });
        return;
      case 'DoWhileStatement': {
        const body = this.loopBody(st.body);
        out.push({ k: 'do', c: this.condition(st.test), body, at: st.start });
        return;
      }
      case 'BreakStatement':
      case 'ContinueStatement':
        if (st.label) this.fail('labels are not supported', st.label);
        if (this.loops === 0) this.fail(`${st.type === 'BreakStatement' ? 'break' : 'continue'} outside a loop`, st);
        out.push({ k: st.type === 'BreakStatement' ? 'break' : 'continue' });
        return;
      case 'EmptyStatement':
        return;
      default:
        this.fail(`${describeNode(st.type)} is not supported in a ${this.mode === 'kernel' ? 'kernel' : 'jit function'}`, st);
    }
  }

  private loopBody(st: acorn.Statement): Stmt[] {
    this.loops++;
    try {
      return this.block(st);
    } finally {
      this.loops--;
    }
  }

  private block(st: acorn.Statement): Stmt[] {
    this.scopes.push(new Map());
    try {
      const out: Stmt[] = [];
      if (st.type === 'BlockStatement') for (const s of st.body) this.statement(s, out);
      else this.statement(st, out);
      return out;
    } finally {
      this.scopes.pop();
    }
  }

  private declaration(st: acorn.VariableDeclaration, out: Stmt[]): void {
    if (st.kind === 'var') this.fail('use const or let, not var', st);
    for (const d of st.declarations) {
      if (d.init === null || d.init === undefined) {
        this.fail(`${d.id.type === 'Identifier' ? d.id.name : 'a variable'} needs a value where it is declared (its type starts from it)`, d);
      }
      if (d.id.type === 'ArrayPattern') {
        this.destructure(d.id, this.ref(d.init), st.kind === 'const', d.init, out);
        continue;
      }
      if (d.id.type !== 'Identifier') this.fail('only names and [a, b] can be declared here', d.id);
      const name = d.id.name;
      if (this.scopes[this.scopes.length - 1].has(name)) this.fail(`${name} is declared twice`, d.id);
      const maker = arrayMaker(this, d.init);
      if (maker !== undefined) {
        if (st.kind !== 'const') this.fail(`${name} holds an array; declare it with const`, d.id);
        const arr = arrayDeclaration(this, maker, name, (d.init as acorn.CallExpression).arguments as Expression[], d.init);
        out.push({ k: 'array', arr });
        this.bind(name, { kind: 'array', arr });
        continue;
      }
      const r = this.ref(d.init);
      if (r.kind === 'array') {
        if (st.kind !== 'const') this.fail(`${name} holds an array; declare it with const`, d.id);
        this.bind(name, r);
        continue;
      }
      if (r.kind === 'tuple') this.fail(`${name} would hold ${r.items.length} values; destructure them: const [a, b] = ...`, d.id);
      const v = this.scalarOf(r, d.init);
      this.declareScalar(name, v.e, v.integral === true, st.kind === 'const', d.id.start, d.id, out);
    }
  }

  private declareScalar(name: string, init: Expr, integral: boolean, isConst: boolean, key: number, node: Where, out: Stmt[]): void {
    if (this.scopes[this.scopes.length - 1].has(name)) this.fail(`${name} is declared twice`, node);
    const ty = isConst ? init.ty : this.types.get(key) ?? init.ty;
    if (!isConst && !this.types.has(key)) this.types.set(key, ty);
    const v: VarDecl = { id: newId(), name, ty, isConst };
    this.keys.set(v, key);
    this.bind(name, { kind: 'var', v, key, param: false, integral: isConst && integral });
    out.push({ k: 'decl', v, init: castTo(init, ty.dtype) });
  }

  private destructure(p: acorn.ArrayPattern, r: Ref, isConst: boolean, node: Where, out: Stmt[]): void {
    if (r.kind !== 'tuple') this.fail('only a device function\'s tuple, grid(2) / gridsize(2) or a shape can be destructured', node);
    if (p.elements.length > r.items.length) this.fail(`the value has ${r.items.length} items; the pattern takes ${p.elements.length}`, p);
    if (r.pre !== undefined) out.push(r.pre);
    r.items.forEach((item, i) => {
      const e = p.elements[i];
      if (e === null || e === undefined) return;
      if (e.type !== 'Identifier') this.fail('only names can be destructured here', e);
      this.declareScalar(e.name, item, false, isConst, e.start, e, out);
    });
  }

  private returnValue(e: acorn.Expression): Stmt {
    this.returns++;
    const r = this.ref(e);
    const want = this.declared ?? this.ret;
    let got: ReturnTy;
    let s: Stmt;
    if (r.kind === 'tuple' || e.type === 'ArrayExpression') {
      if (r.kind !== 'tuple') return this.fail('return one value or a tuple of values', e);
      if (r.pre !== undefined) this.fail('return the values themselves: const [a, b] = f(...); return [a, b]', e);
      got = { kind: 'tuple', tys: r.items.map((v) => v.ty) };
      if (this.declared !== undefined && this.declared.kind !== 'tuple') this.fail('return one value here', e);
      const tys = want?.kind === 'tuple' && want.tys.length === r.items.length ? want.tys : got.tys;
      s = { k: 'return', items: r.items.map((v, i) => castTo(v, tys[i].dtype)) };
    } else {
      const v = this.scalarOf(r, e).e;
      got = { kind: 'scalar', ty: v.ty };
      if (want?.kind === 'tuple') this.fail('every return of a function returns the same number of values', e);
      s = { k: 'return', x: castTo(v, (want ?? got).ty.dtype) };
    }
    if (this.declared === undefined) this.settleReturn(got, e);
    return s;
  }

  private settleReturn(got: ReturnTy, e: Where): void {
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

  condition(e: acorn.Expression): Expr {
    return truth(this.expr(e));
  }

  /** An expression evaluated for its effect: an assignment, ++ / --, a call. */
  private effect(e: acorn.Expression, out: Stmt[]): void {
    switch (e.type) {
      case 'AssignmentExpression':
        out.push(this.assign(e));
        return;
      case 'UpdateExpression':
        out.push(this.update(e));
        return;
      case 'CallExpression': {
        const r = typeCall(this, e, true);
        if (r.kind === 'stmt') out.push(r.s);
        else if (r.kind === 'scalar') out.push({ k: 'expr', x: r.e });
        else if (r.kind === 'tuple' && r.pre !== undefined) out.push(r.pre);
        return;
      }
      case 'SequenceExpression':
        for (const x of e.expressions) this.effect(x, out);
        return;
      default:
        this.fail('only assignments, ++ / -- and calls can stand alone as statements', e);
    }
  }

  private assign(e: acorn.AssignmentExpression): Stmt {
    const op = e.operator === '=' ? undefined : e.operator.slice(0, -1);
    if (op === '&&' || op === '||' || op === '??') this.fail(`${e.operator} is not supported`, e);
    if (e.left.type === 'Identifier') return { k: 'expr', x: this.assignLocal(e, op) };
    if (e.left.type === 'MemberExpression') {
      const { arr, idx } = this.element(e.left);
      const rhs = this.expr(e.right);
      const load: Expr = { k: 'load', ty: strong(computeDType(arr.dtype)), arr, idx, at: e.left.start };
      const x = op === undefined ? rhs : this.binary(op, load, rhs, e);
      return { k: 'store', arr, idx, x: castTo(x, computeDType(arr.dtype)), at: e.left.start };
    }
    return this.fail('only local variables and array elements can be assigned', e.left);
  }

  private assignLocal(e: acorn.AssignmentExpression, op: string | undefined): Expr {
    const left = e.left as acorn.Identifier;
    const b = this.local(left.name, left);
    const rhs = op === undefined ? this.expr(e.right) : this.binary(op, { k: 'var', ty: b.v.ty, v: b.v }, this.expr(e.right), e);
    this.widen(b, rhs.ty);
    return { k: 'assign', ty: b.v.ty, v: b.v, x: castTo(rhs, b.v.ty.dtype) };
  }

  private update(e: acorn.UpdateExpression): Stmt {
    const op = e.operator === '++' ? '+' : '-';
    if (e.argument.type === 'Identifier') return { k: 'expr', x: this.updateLocal(e) };
    if (e.argument.type === 'MemberExpression') {
      const { arr, idx } = this.element(e.argument);
      const load: Expr = { k: 'load', ty: strong(computeDType(arr.dtype)), arr, idx, at: e.argument.start };
      return { k: 'store', arr, idx, x: castTo(this.binary(op, load, lit(1), e), computeDType(arr.dtype)), at: e.argument.start };
    }
    return this.fail(`${e.operator} of something not a local or an array element`, e.argument);
  }

  private updateLocal(e: acorn.UpdateExpression): Expr {
    const id = e.argument as acorn.Identifier;
    const b = this.local(id.name, id);
    if (b.v.ty.dtype === 'bool') this.fail(`${e.operator} of a boolean`, e);
    return { k: 'update', ty: b.v.ty, v: b.v, op: e.operator === '++' ? '+' : '-', prefix: e.prefix };
  }

  /** A local that may be assigned. */
  private local(name: string, node: Where): Extract<Binding, { kind: 'var' }> {
    const b = this.lookupName(name);
    if (b === undefined || b.kind !== 'var' || b.param) {
      if (b?.kind === 'var') this.fail(`${name} is a parameter; copy it into a local (let) first`, node);
      if (b?.kind === 'array') this.fail(`${name} is an array; assign its elements (${name}[i] = ...)`, node);
      this.fail(`${name} is not a local variable of the function`, node);
    }
    if (b.v.isConst) this.fail(`${name} is a const`, node);
    return b;
  }

  /** A local assigned a value of type `t`: its type grows to hold it, and the typing runs again. */
  private widen(b: Extract<Binding, { kind: 'var' }>, t: Ty): void {
    const j = promote(b.v.ty, t);
    if (!sameTy(j, b.v.ty) && !sameTy(j, this.types.get(b.key) ?? b.v.ty)) {
      this.types.set(b.key, j);
      this.changed = true;
    }
  }

  /** A `let` compared with an int64 becomes int64 (NOTE [ Types in jit functions ]). */
  private widenCounter(a: Expr, b: Expr): void {
    if (a.k !== 'var' || a.v.isConst || a.ty.dtype !== 'int32' || b.ty.dtype !== 'int64' || b.ty.weak) return;
    const key = this.keys.get(a.v);
    if (key === undefined) return;
    const cur = this.types.get(key);
    if (cur?.dtype !== 'int64') {
      this.types.set(key, strong('int64'));
      this.changed = true;
    }
  }

  ref(e: Expression): Ref {
    return this.nested(e, () => this.refIn(e));
  }

  private refIn(e: Expression): Ref {
    switch (e.type) {
      case 'Identifier': {
        const b = this.lookupName(e.name);
        if (b !== undefined) {
          if (b.kind === 'array') return { kind: 'array', arr: b.arr };
          return { kind: 'scalar', e: { k: 'var', ty: b.v.ty, v: b.v }, integral: b.integral === true };
        }
        if (e.name === 'undefined') this.fail('undefined has no value in a kernel', e);
        const g = this.lookup(e.name);
        if (!g.found) this.fail(`${e.name} is not a parameter, a local, or something the function closes over`, e);
        return this.staticRef(g.value, e.name, e);
      }
      case 'MemberExpression':
        return memberRef(this, e);
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
      case 'CallExpression': {
        const r = typeCall(this, e, false);
        if (r.kind === 'stmt') return this.fail(`${this.text(e.callee)}() gives no value`, e);
        return r;
      }
      default:
        return { kind: 'scalar', e: this.exprIn(e) };
    }
  }

  staticRef(value: unknown, name: string, node: Where): Ref {
    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return { kind: 'scalar', e: lit(value) };
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
      this.fail(`${name} is ${value === null ? 'null' : `a ${typeof value}`}; a kernel can use numbers, Math, gx.jit's intrinsics and gx.jit.device functions`, node);
    }
    return { kind: 'static', value };
  }

  /** The indices of `a[i][j]` or `a[i, j]` (int64) and the array indexed. */
  element(e: acorn.MemberExpression): { arr: ArrayDecl; idx: Expr[] } {
    const nodes: acorn.Expression[] = [];
    let cur: Expression = e;
    while (cur.type === 'MemberExpression' && cur.computed) {
      const p = cur.property as acorn.Expression;
      nodes.unshift(...(p.type === 'SequenceExpression' ? p.expressions : [p]));
      cur = cur.object as Expression;
    }
    const base = this.ref(cur);
    if (base.kind !== 'array') this.fail(`${this.text(cur)} is not an array; only tensors and shared or local arrays are indexed`, cur);
    if (!e.computed) this.fail(`only elements of ${base.arr.label} can be written`, e);
    return { arr: base.arr, idx: this.indices(base.arr, nodes, e) };
  }

  indices(a: ArrayDecl, idx: acorn.Expression[], node: Where): Expr[] {
    if (idx.length !== a.rank) {
      this.fail(`${a.label} has ${a.rank} dimension${a.rank === 1 ? '' : 's'}; index it with ${a.rank} ind${a.rank === 1 ? 'ex' : 'ices'} (${a.label}${a.rank === 1 ? '[i]' : '[i][j]'}), got ${idx.length}`, node);
    }
    return idx.map((x) => {
      const r = this.ref(x);
      const v = this.scalarOf(r, x);
      if (v.integral === true) return castTo(v.e, 'int64');
      if (v.e.ty.dtype !== 'int32' && v.e.ty.dtype !== 'int64') {
        this.fail(`an index must be an integer; this one is ${v.e.ty.dtype === 'bool' ? 'a boolean' : `${v.e.ty.dtype} (Math.floor it, or keep the index arithmetic in integers)`}`, x);
      }
      return castTo(v.e, 'int64');
    });
  }

  scalarOf(r: Ref, node: Where): { e: Expr; integral?: boolean } {
    if (r.kind === 'scalar') return r;
    if (r.kind === 'array') return this.fail(`${r.arr.label} is an array; read an element (${r.arr.label}[i])`, node);
    if (r.kind === 'tuple') return this.fail(`this has ${r.items.length} values; destructure them: const [a, b] = ...`, node);
    return this.fail(`${this.text(node)} is ${typeof r.value === 'function' ? 'a function' : 'an object'}, not a number`, node);
  }

  expr(e: Expression): Expr {
    return this.nested(e, () => this.exprIn(e));
  }

  binary(op: string, a: Expr, b: Expr, node: Where): Expr {
    switch (op) {
      case '<': case '<=': case '>': case '>=': case '==': case '===': case '!=': case '!==':
        this.widenCounter(a, b);
        this.widenCounter(b, a);
        return compare(op, a, b);
      case '+': case '-': case '*': case '/': case '%': case '**': case '&': case '|': case '^': case '<<': case '>>': case '>>>':
        return arith(op, a, b, (w) => this.fail(w, node), node.start);
      default:
        return this.fail(`the operator ${op} is not supported here`, node);
    }
  }

  private exprIn(e: Expression): Expr {
    switch (e.type) {
      case 'Literal':
        if (typeof e.value === 'bigint') return lit(e.value);
        if (typeof e.value === 'number') return lit(e.value, /^[0-9]*\.|^[0-9.]+e/i.test(e.raw ?? ''));
        if (typeof e.value === 'boolean') return lit(e.value);
        return this.fail('only number and boolean literals are supported', e);
      case 'Identifier': case 'MemberExpression': case 'CallExpression': case 'SequenceExpression': case 'ArrayExpression':
        return this.scalarOf(this.refIn(e), e).e;
      case 'UnaryExpression': {
        const r = this.scalarOf(this.ref(e.argument), e.argument);
        const v = r.e;
        if (e.operator === '-') return negate(v);
        if (e.operator === '+') return v;
        if (e.operator === '!') return { k: 'not', ty: strong('bool'), x: truth(v) };
        if (e.operator === '~') {
          if (r.integral === true) return { k: 'bitnot', ty: strong('int64'), x: castTo(v, 'int64') };
          if (v.ty.dtype !== 'int32' && v.ty.dtype !== 'int64') this.fail('~ takes an integer', e);
          return { k: 'bitnot', ty: v.ty, x: v };
        }
        return this.fail(`the operator ${e.operator} is not supported here`, e);
      }
      case 'BinaryExpression':
        if (e.left.type === 'PrivateIdentifier') return this.fail('private names are not supported', e.left);
        return this.binary(e.operator, this.expr(e.left), this.expr(e.right), e);
      case 'LogicalExpression':
        if (e.operator === '??') return this.fail('?? is not supported here', e);
        return { k: 'logic', ty: strong('bool'), op: e.operator, a: this.condition(e.left), b: this.condition(e.right) };
      case 'ConditionalExpression': {
        const c = this.condition(e.test);
        const a = this.expr(e.consequent);
        const b = this.expr(e.alternate);
        const t = promote(a.ty, b.ty);
        return { k: 'select', ty: t, c, a: castTo(a, t.dtype), b: castTo(b, t.dtype) };
      }
      case 'AssignmentExpression': {
        if (e.left.type !== 'Identifier') return this.fail('assign array elements as a statement', e);
        const op = e.operator === '=' ? undefined : e.operator.slice(0, -1);
        if (op === '&&' || op === '||' || op === '??') this.fail(`${e.operator} is not supported`, e);
        return this.assignLocal(e, op);
      }
      case 'UpdateExpression':
        if (e.argument.type !== 'Identifier') return this.fail('++ / -- of an array element only as a statement', e);
        return this.updateLocal(e);
      default:
        return this.fail(`${describeNode(e.type)} is not supported in a ${this.mode === 'kernel' ? 'kernel' : 'jit function'}`, e);
    }
  }
}
