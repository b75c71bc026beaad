// The CUDA emitter: prints typed IR (ir.ts) as CUDA C++, node for node, with
// the helpers (cuda-helpers.ts) the nodes it prints need. Names are its own:
// a user's name `a` becomes `v_a` escaped (NOTE [ C names ]), so no user name
// meets a C keyword, a name of the code around it, or another's renaming.
import { elementCType, C_TYPE, isFloat, type ScalarDType } from './types';
import { calledFunctions, type ArrayDecl, type Expr, type FnIR, type Stmt, type VarDecl } from './ir';
import { DEBUG_HELPERS, HELPERS, type HelperName } from './cuda-helpers';
import { INTRINSIC_TABLE, type CudaFace, type IntrinsicExpr } from './intrinsic-table';
import { mathEntry } from './math-table';
import type { Module } from './module';

// NOTE [ C names ]
// A JS name is escaped into C: `_` becomes `__`, `$` `_S`, any other
// character but ASCII letters and digits `_u` and six hex digits. An escaped
// name thus never holds `_` followed by a digit, which is what the emitter
// appends to tell apart two declarations of one name (`v_a`, `v_a_1`): the
// user's `a_1` is `v_a__1`, never `v_a_1`.
const esc = (name: string): string => name.replace(/[^A-Za-z0-9]/gu, (ch) =>
  ch === '_' ? '__' : ch === '$' ? '_S' : `_u${(ch.codePointAt(0) ?? 0).toString(16).padStart(6, '0')}`);

/** The C name of a user's variable or parameter. */
export const cName = (name: string): string => `v_${esc(name)}`;
/** The C names of a tensor parameter's pointer, extents and strides. */
export const paramNames = (name: string): { ptr: string; dim: (d: number) => string; stride: (d: number) => string } => ({
  ptr: `p_${esc(name)}`, dim: (d) => `n_${esc(name)}_${d}`, stride: (d) => `s_${esc(name)}_${d}`,
});

/** How a kernel's tensor parameters are passed (rawkernel.ts records what the body uses). */
export interface ParamArrays {
  ptr(a: ArrayDecl): string;
  dim(a: ArrayDecl, d: number): string;
  stride(a: ArrayDecl, d: number): string;
}

/** A float literal as C reads it back to the same double. */
function floatText(v: number): string {
  if (Number.isNaN(v)) return '(0.0 / 0.0)';
  if (!Number.isFinite(v)) return v > 0 ? '(1.0 / 0.0)' : '(-1.0 / 0.0)';
  if (Object.is(v, -0)) return '(-0.0)';
  const s = String(v);
  const t = /[.e]/.test(s) ? s : `${s}.0`;
  return v < 0 ? `(${t})` : t;
}

function intText(v: bigint, d: 'int32' | 'int64'): string {
  // Negative literals in parentheses: `-K` of a K = -5 is `(-(-5LL))`, never `--5LL`.
  if (d === 'int32') return v === -2147483648n ? '(-2147483647 - 1)' : v < 0n ? `(${v})` : `${v}`;
  return v === -9223372036854775808n ? '(-9223372036854775807LL - 1)' : v < 0n ? `(${v}LL)` : `${v}LL`;
}

class Emitter {
  private readonly names = new Map<VarDecl | ArrayDecl, string>();
  private arrayCount = 0;
  readonly lines: string[] = [];

  constructor(private readonly fn: FnIR, private readonly module: Module, private readonly used: Set<string>,
    private readonly arrays: ParamArrays | undefined) {
    for (const p of fn.params) {
      if ('space' in p) continue;
      const c = cName(p.name);
      this.names.set(p, c);
      used.add(c);
    }
  }

  private helper(h: HelperName): void {
    this.module.helpers.add(HELPERS[h]);
  }

  private fresh(d: VarDecl | ArrayDecl, base: string): string {
    let c = base;
    for (let n = 1; this.used.has(c); n++) c = `${base}_${n}`;
    this.used.add(c);
    this.names.set(d, c);
    return c;
  }

  private nameOf(d: VarDecl | ArrayDecl): string {
    const c = this.names.get(d);
    if (c === undefined) throw new Error(`${this.fn.api}: internal: ${'label' in d ? d.label : d.name} used before its declaration`);
    return c;
  }

  private cast(x: Expr, to: ScalarDType): string {
    const from = x.ty.dtype;
    const c = this.expr(x);
    if (from === to) return c;
    if (to === 'bool') {
      if (isFloat(from)) {
        this.helper('truth');
        return `gx_jit_truth(${c})`;
      }
      return `((${c}) != 0)`;
    }
    if (isFloat(from) && (to === 'int32' || to === 'int64')) {
      this.helper('f2i');
      return `${to === 'int32' ? 'gx_jit_f2i' : 'gx_jit_f2l'}(${c})`;
    }
    return `((${C_TYPE[to]})(${c}))`;
  }

  expr(e: Expr): string {
    switch (e.k) {
      case 'lit': {
        const d = e.ty.dtype;
        if (typeof e.v === 'boolean') return e.v ? 'true' : 'false';
        if (d === 'int32' || d === 'int64') return intText(BigInt(e.v), d);
        const t = floatText(Number(e.v));
        return d === 'float32' ? `((float)${t})` : t;
      }
      case 'var': return this.nameOf(e.v);
      case 'cast': return this.cast(e.x, e.ty.dtype);
      case 'arith': return this.arith(e);
      case 'cmp': return `(${this.expr(e.a)} ${e.op} ${this.expr(e.b)})`;
      case 'neg': return `(-${this.expr(e.x)})`;
      case 'not': return `(!(${this.expr(e.x)}))`;
      case 'bitnot': return `(~${this.expr(e.x)})`;
      case 'truth': return this.cast(e.x, 'bool');
      case 'logic': return `(${this.expr(e.a)} ${e.op} ${this.expr(e.b)})`;
      case 'select': return `(${this.expr(e.c)} ? ${this.expr(e.a)} : ${this.expr(e.b)})`;
      case 'math': return this.math(e);
      case 'intrinsic': return this.intrinsic(e);
      case 'load': return `((${C_TYPE[e.ty.dtype]})(${this.element(e.arr, e.idx, e.at)}))`;
      case 'dim': return this.dim(e.arr, e.d);
      case 'stride': return this.stride(e.arr, e.d);
      case 'assign': return `(${this.nameOf(e.v)} = ${this.expr(e.x)})`;
      case 'update': {
        const n = this.nameOf(e.v);
        const op = e.op === '+' ? '++' : '--';
        return e.prefix ? `${op}${n}` : `${n}${op}`;
      }
      case 'call': return `${e.fn.name}(${e.args.map((a) => this.expr(a)).join(', ')})`;
      case 'item': return `${this.nameOf(e.tmp)}.v${e.i}`;
      case 'foreign': {
        const args = e.args.map((a) => this.expr(a));
        return e.code.replace(/\u0001(\d+)\u0001/g, (_, k: string) => args[Number(k)]);
      }
    }
  }

  /** An intrinsic: its entry's CUDA face (NOTE [ One intrinsic table ]). */
  private intrinsic(e: IntrinsicExpr): string {
    const node = INTRINSIC_TABLE[e.name].node;
    if (!('cuda' in node)) throw new Error(`${this.fn.api}: internal: ${e.name} is lowered by its type rule`);
    return node.cuda(this.face, e);
  }

  private readonly face: CudaFace = {
    expr: (x) => this.expr(x),
    element: (a, idx, at) => this.element(a, idx, at),
    addHelper: (text) => { this.module.helpers.add(text); },
  };

  private arith(e: Extract<Expr, { k: 'arith' }>): string {
    const d = e.ty.dtype;
    const a = this.expr(e.a), b = this.expr(e.b);
    const int = d === 'int32' || d === 'int64';
    const [u, mask] = d === 'int64' ? ['unsigned long long', 63] : ['unsigned', 31];
    switch (e.op) {
      case '%':
        if (int && this.module.debug && this.arrays !== undefined && e.at !== undefined) {
          // { debug: true }: a remainder by zero is recorded as an error (site, dimension -1) and gives 0.
          const site = this.module.sites.length;
          this.module.sites.push({ label: '%', line: this.fn.text.slice(0, e.at).split('\n').length });
          this.module.helpers.add(DEBUG_HELPERS);
          return `gx_jit_rem_checked(gx_err, ${site}, ${a}, ${b})`;
        }
        if (int) {
          this.helper('rem');
          return `gx_jit_rem(${a}, ${b})`;
        }
        return `${d === 'float32' ? 'fmodf' : 'fmod'}(${a}, ${b})`;
      case '**':
        if (int) {
          this.helper('ipow');
          return `gx_jit_ipow(${a}, ${b})`;
        }
        return `${d === 'float32' ? 'powf' : 'pow'}(${a}, ${b})`;
      case '<<': return `((${C_TYPE[d]})((${u})(${a}) << ((${b}) & ${mask})))`;
      case '>>': return `((${a}) >> ((${b}) & ${mask}))`;
      case '>>>': return `((${C_TYPE[d]})((${u})(${a}) >> ((${b}) & ${mask})))`;
      default: return `(${a} ${e.op} ${b})`;
    }
  }

  private math(e: Extract<Expr, { k: 'math' }>): string {
    const d = e.ty.dtype;
    const args = e.args.map((a) => this.expr(a));
    const entry = mathEntry(e.fn);
    if (d === 'int32' || d === 'int64') {
      const int = entry.int;
      if (int === undefined || int === 'identity') throw new Error(`${this.fn.api}: internal: Math.${e.fn} of ${d}`);
      this.helper(int.helper);
      return int.cuda(C_TYPE[d], args.join(', '));
    }
    if (entry.helper !== undefined) this.helper(entry.helper);
    const f = entry.cuda === undefined ? (d === 'float32' ? `${e.fn}f` : e.fn) : entry.cuda[d === 'float32' ? 0 : 1];
    return `${f}(${args.join(', ')})`;
  }

  private dim(a: ArrayDecl, d: number): string {
    if (a.space === 'param') return this.paramArrays().dim(a, d);
    return `${(a.extents ?? [])[d]}LL`;
  }

  private stride(a: ArrayDecl, d: number): string {
    if (a.space === 'param') return this.paramArrays().stride(a, d);
    const s = (a.extents ?? []).slice(d + 1).reduce((x, y) => x * y, 1);
    return s === 1 ? '1' : `${s}LL`;
  }

  private paramArrays(): ParamArrays {
    if (this.arrays === undefined) throw new Error(`${this.fn.api}: internal: a tensor parameter outside a kernel`);
    return this.arrays;
  }

  /** The element of `a` at `idx` as a C lvalue (checked in { debug: true }). */
  private element(a: ArrayDecl, idx: Expr[], at: number): string {
    const is = idx.map((x) => this.expr(x));
    const terms = is.map((v, d) => {
      const s = this.stride(a, d);
      return s === '1' ? `(long long)(${v})` : `(long long)(${v}) * ${s}`;
    });
    const ptr = a.space === 'param' ? this.paramArrays().ptr(a) : this.nameOf(a);
    const off = terms.join(' + ');
    // Device functions have no gx_err to record into (and index only local arrays of static extents).
    if (!this.module.debug || this.arrays === undefined) return `${ptr}[${off}]`;
    const site = this.module.sites.length;
    this.module.sites.push({ label: a.label, line: this.fn.text.slice(0, at).split('\n').length });
    this.module.helpers.add(DEBUG_HELPERS);
    const checks = is.map((v, d) => `gx_jit_in(gx_err, ${site}, ${d}, (long long)(${v}), ${this.dim(a, d)})`).join(' && ');
    const sink = `gx_sink_${a.dtype}`;
    this.module.helpers.add(`__device__ ${elementCType(a.dtype)} ${sink};\n`);
    return `(*((${checks}) ? &${ptr}[${off}] : &${sink}))`;
  }

  stmts(list: readonly Stmt[], ind: string): void {
    for (const s of list) this.stmt(s, ind);
  }

  private block(list: readonly Stmt[], ind: string): void {
    this.stmts(list, `${ind}  `);
  }

  private decl(s: Extract<Stmt, { k: 'decl' }>): string {
    const c = this.fresh(s.v, cName(s.v.name));
    return `${s.v.isConst ? 'const ' : ''}${C_TYPE[s.v.ty.dtype]} ${c} = ${this.expr(s.init)}`;
  }

  private effect(x: Expr): string {
    if (x.k === 'assign') return `${this.nameOf(x.v)} = ${this.expr(x.x)}`;
    return this.expr(x);
  }

  private stmt(s: Stmt, ind: string): void {
    const L = this.lines;
    switch (s.k) {
      case 'decl': L.push(`${ind}${this.decl(s)};`); return;
      case 'expr': L.push(`${ind}${this.effect(s.x)};`); return;
      case 'store': {
        const lv = this.element(s.arr, s.idx, s.at);
        L.push(`${ind}${lv} = (${elementCType(s.arr.dtype)})(${this.expr(s.x)});`);
        return;
      }
      case 'if':
        L.push(`${ind}if (${this.expr(s.c)}) {`);
        this.block(s.then, ind);
        if (s.else !== undefined) {
          L.push(`${ind}} else {`);
          this.block(s.else, ind);
        }
        L.push(`${ind}}`);
        return;
      case 'for': {
        const init = s.init.map((i) => (i.k === 'decl' ? this.decl(i) : i.k === 'expr' ? this.effect(i.x) : '')).join(', ');
        L.push(`${ind}for (${init}; ${s.c === undefined ? '' : this.expr(s.c)}; ${s.update.map((u) => this.effect(u)).join(', ')}) {`);
        this.block(s.body, ind);
        L.push(`${ind}}`);
        return;
      }
      case 'while':
        L.push(`${ind}while (${this.expr(s.c)}) {`);
        this.block(s.body, ind);
        L.push(`${ind}}`);
        return;
      case 'do':
        L.push(`${ind}do {`);
        this.block(s.body, ind);
        L.push(`${ind}} while (${this.expr(s.c)});`);
        return;
      case 'break': L.push(`${ind}break;`); return;
      case 'continue': L.push(`${ind}continue;`); return;
      case 'return':
        if (s.items !== undefined) L.push(`${ind}return {${s.items.map((x) => this.expr(x)).join(', ')}};`);
        else L.push(s.x === undefined ? `${ind}return;` : `${ind}return ${this.expr(s.x)};`);
        return;
      case 'block':
        L.push(`${ind}{`);
        this.block(s.body, ind);
        L.push(`${ind}}`);
        return;
      case 'array': {
        // Numbered per function, not by the array's id: the same kernel gives the same source (the compile cache's key) in any process.
        const c = this.fresh(s.arr, `${s.arr.space === 'shared' ? 's' : 'l'}_${esc(s.arr.label)}_${this.arrayCount++}`);
        const total = (s.arr.extents ?? []).reduce((x, y) => x * y, 1);
        L.push(`${ind}${s.arr.space === 'shared' ? '__shared__ ' : ''}${elementCType(s.arr.dtype)} ${c}[${total}];`);
        return;
      }
      case 'tuple': {
        const c = this.fresh(s.tmp, 'gx_r');
        L.push(`${ind}const auto ${c} = ${s.fn.name}(${s.args.map((a) => this.expr(a)).join(', ')});`);
        return;
      }
    }
  }
}

/** The C return type of a device function, and the struct of a tuple's. */
function returnType(fn: FnIR): { type: string; struct: string } {
  const r = fn.ret;
  if (r === undefined) return { type: 'void', struct: '' };
  if (r.kind === 'scalar') return { type: C_TYPE[r.ty.dtype], struct: '' };
  const type = `${fn.name}_t`;
  return { type, struct: `struct ${type} { ${r.tys.map((ty, i) => `${C_TYPE[ty.dtype]} v${i};`).join(' ')} };\n` };
}

/** A device function `fn` as C; the device functions it calls go into `module.functions` first. */
export function emitDevice(fn: FnIR, module: Module): string {
  emitCallees(fn, module);
  const em = new Emitter(fn, module, new Set(), undefined);
  em.stmts(fn.body, '  ');
  const { type, struct } = returnType(fn);
  const r = fn.ret;
  // C++ wants a return at the end of a non-void function even when every path returns.
  if (r !== undefined && fn.body[fn.body.length - 1]?.k !== 'return') {
    em.lines.push(`  return ${r.kind === 'scalar' ? `(${C_TYPE[r.ty.dtype]})0` : '{}'};  // not reached when every path returns`);
  }
  const list = fn.params.map((p) => ('space' in p ? '' : `${C_TYPE[p.ty.dtype]} ${cName(p.name)}`)).join(', ');
  return `${struct}__device__ __forceinline__ ${type} ${fn.name}(${list}) {\n${em.lines.join('\n')}\n}\n`;
}

function emitCallees(fn: FnIR, module: Module): void {
  for (const g of calledFunctions(fn)) {
    if (module.emitted.has(g)) continue;
    module.emitted.add(g);
    module.functions.push(emitDevice(g, module));
  }
}

/** The body of kernel `fn`; `reserved` holds the C names of its parameters (no local takes one). */
export function emitKernelBody(fn: FnIR, module: Module, arrays: ParamArrays, reserved: Set<string>): string[] {
  emitCallees(fn, module);
  const em = new Emitter(fn, module, new Set(reserved), arrays);
  em.stmts(fn.body, '  ');
  return em.lines;
}
