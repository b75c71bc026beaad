// The PTX emitter: prints a kernel's typed IR (ir.ts) as PTX, node for node,
// beside the CUDA emitter (emit-cuda.ts), from the same IR.
//
// NOTE [ PTX path ]
// NVRTC's first compile in a process costs 200-330 ms on the H200's host
// (its own start-up, before the kernel), so a jit kernel's first call could
// not come near Numba's or CuPy's. PTX is what NVRTC would have made: the
// driver compiles it itself when the module loads (cuModuleLoadData; 8-11
// ms for a one-line kernel on the H200's host, more as the code grows, and
// the driver keeps its own cache of the result). So a kernel whose every
// node has a PTX face is printed here too (a vectorized function's
// elementwise kernel by ptx-elementwise.ts), and loaded as PTX on a device
// that runs its target (sm_80 and later: bfloat16 stores need it); its CUDA
// source stays the reference and the route of every other kernel: library
// math without the build's jit-math.ptx (ptx-library.ts), gx.fuse's op
// calls, { debug: true } kernels and kernels compiled with NVRTC options of
// the user's. Both routes compute the same bits
// (test/jit-ptx.test.ts runs each PTX kernel against the simulator and
// against its NVRTC twin): every add, sub and mul carries .rn (never
// contracted, as --fmad=false), division and square root are IEEE's, and
// each helper's semantics (cuda-helpers.ts) is written out as instructions
// (ptx-isa.ts, ptx-math.ts, ptx-intrinsics.ts). A PTX module the driver
// refuses is compiled from the CUDA source instead, with a note under
// NODE_DEBUG=gpuext (raw.ts).
//
// What the driver's JIT costs on the H200's host (bench:jit's driver line,
// bench/jit-driver-floor.ts): the process's first module 16-18 ms (the JIT's
// own start), an empty kernel 8.5-9.6 ms, one float32 division 17-21 ms
// (div.rn.f32's slow path comes with the first), vectorize's gaussian_pdf
// 33-58 ms from one process to the next. A lower CU_JIT_OPTIMIZATION_LEVEL
// saves little (level 0: 41 ms for the gaussian, and its kernel 3.6x slower)
// and CU_JIT_SPLIT_COMPILE nothing, so a cold first call of a kernel that
// divides cannot come under 50 ms this way.
import type { DType } from '../core/dtype';
import { calledFunctions, type ArrayDecl, type Expr, type FnIR, type Stmt, type VarDecl } from './ir';
import { INTRINSIC_TABLE } from './intrinsic-table';
import { mathEntry } from './math-table';
import { arith, BIT_TYPE, classOf, PTX_TYPE, compare, convert, elementSize, literal, loadElement, REG_PREFIX, storeElement, unsupported, type Out, type RegClass } from './ptx-isa';
import { hasLibrary, inlineLibrary, libraryName, linkLibrary } from './ptx-library';
import { constantOf, foldLibrary } from './ptx-fold';
import type { PtxFace } from './ptx-intrinsics';
import { C_TYPE, computeDType, isFloat, SCALAR_DTYPES, type ScalarDType } from './types';

/** The compute capability the modules' target needs (sm_80: cvt.rn.bf16.f32); the math library is built for it too (scripts/build-jit-math.js). */
export const PTX_MIN_CAPABILITY = 80;
/** The PTX module header: that target's ISA, loadable by any CUDA 11+ driver. */
export const PTX_HEADER = `.version 7.0\n.target sm_${PTX_MIN_CAPABILITY}\n.address_size 64\n`;

/** How a kernel's tensor parameters reach its body: registers of the pointer, extents and strides (recording which it used). */
export interface PtxParams {
  ptr(a: ArrayDecl): string;
  dim(a: ArrayDecl, d: number): string;
  /** A non-contiguous array's stride register. */
  stride(a: ArrayDecl, d: number): string;
  /** A number parameter's register. */
  value(v: VarDecl): string;
}

const pad = (n: number): string => `\t${' '.repeat(n)}`;

/** What a caller that writes an entry's skeleton itself gets (ptxEntry): the instruction selector's Out, and the entry's function inlined. */
export interface PtxBody extends Out {
  /** The entry's scalar function inlined on argument registers (NVRTC inlines a __device__ function so); the register of its result. */
  inline(args: readonly string[]): string;
}

export class PtxFunction implements PtxBody {
  private readonly counts: Record<RegClass, number> = { pred: 0, b16: 0, s32: 0, s64: 0, f32: 0, f64: 0 };
  private labels = 0;
  readonly lines: string[] = [];
  private readonly vars = new Map<VarDecl, string>();
  private readonly arrays = new Map<ArrayDecl, string>();
  private readonly loops: { brk: string; cont: string }[] = [];
  /** The inlined calls being emitted, innermost last: where a `return` puts its value and jumps. */
  private readonly frames: { r: string; d: ScalarDType; end: string }[] = [];
  /** Module-scope declarations this function needs (its shared arrays). */
  readonly globals: string[] = [];
  /** Function-scope declarations (local arrays). */
  readonly locals: string[] = [];
  private readonly face: PtxFace;

  /** `library`: the names of the library's functions (ptx-library.ts) the module's functions call, collected. */
  constructor(private readonly fn: FnIR, private readonly params: PtxParams | undefined, private readonly exit: string,
    private readonly library: Set<string>) {
    this.face = { out: this, expr: (e) => this.expr(e), address: (a, idx) => this.address(a, idx) };
  }

  reg(c: RegClass): string {
    return `${REG_PREFIX[c]}${this.counts[c]++}`;
  }

  ins(text: string): void {
    this.lines.push(`${pad(0)}${text}`);
  }

  label(): string {
    return `$L_${this.fn.name}_${this.labels++}`;
  }

  place(label: string): void {
    this.lines.push(`${label}:`);
  }

  /** The `.reg` lines of every class used. */
  declarations(): string[] {
    return (Object.keys(this.counts) as RegClass[]).filter((c) => this.counts[c] > 0)
      .map((c) => `\t.reg .${c === 'b16' ? 'b16' : c} ${REG_PREFIX[c]}<${this.counts[c]}>;`);
  }

  /** A variable's register, made at its declaration (or for a parameter, given). */
  bind(v: VarDecl, r: string): void {
    this.vars.set(v, r);
  }

  private varReg(v: VarDecl): string {
    const r = this.vars.get(v);
    if (r === undefined) throw new Error(`${this.fn.api}: internal: ${v.name} used before its declaration`);
    return r;
  }

  /** A copy of `r` in a fresh register: a value read now, which a later assignment to its variable must not change. */
  private copy(d: ScalarDType, r: string): string {
    const c = this.reg(classOf(d));
    this.ins(`mov.${BIT_TYPE[d]} ${c}, ${r};`);
    return c;
  }

  expr(e: Expr): string {
    switch (e.k) {
      case 'lit': return literal(this, e.ty.dtype, e.v);
      case 'var': return this.copy(e.ty.dtype, this.varReg(e.v));
      case 'cast': return convert(this, this.expr(e.x), e.x.ty.dtype, e.ty.dtype);
      case 'truth': return convert(this, this.expr(e.x), e.x.ty.dtype, 'bool');
      case 'arith': {
        const d = e.ty.dtype;
        if ((d === 'float32' || d === 'float64') && (e.op === '%' || e.op === '**')) {
          const fn = e.op === '%' ? 'fmod' : 'pow';
          return this.libraryCall(libraryName(fn, d), d, fn, [e.a, e.b]);
        }
        if (d === 'float32' || d === 'float64') {
          const simple = this.foldFloat(e.op, d, e.a, e.b);
          if (simple !== undefined) return simple;
        }
        const a = this.expr(e.a);
        // One node for both operands is a pure square (typing.ts): computed once, as NVRTC's CSE would.
        return arith(this, e.op, d, a, e.b === e.a ? a : this.expr(e.b));
      }
      case 'cmp': {
        const a = this.expr(e.a);
        return compare(this, e.op, e.a.ty.dtype, a, this.expr(e.b));
      }
      case 'neg': {
        if (e.ty.dtype === 'bool') return unsupported('negation of a bool');
        const r = this.reg(classOf(e.ty.dtype));
        this.ins(`neg.${classOf(e.ty.dtype)} ${r}, ${this.expr(e.x)};`);
        return r;
      }
      case 'not': {
        const r = this.reg('pred');
        this.ins(`not.pred ${r}, ${this.expr(e.x)};`);
        return r;
      }
      case 'bitnot': {
        const r = this.reg(classOf(e.ty.dtype));
        this.ins(`not.${BIT_TYPE[e.ty.dtype]} ${r}, ${this.expr(e.x)};`);
        return r;
      }
      case 'logic': return this.logic(e.op, e.a, e.b);
      case 'select': return this.select(e.ty.dtype, e.c, e.a, e.b);
      case 'math': return this.math(e);
      case 'intrinsic': {
        const node = INTRINSIC_TABLE[e.name].node;
        if (!('ptx' in node)) throw new Error(`${this.fn.api}: internal: ${e.name} is lowered by its type rule`);
        return node.ptx(this.face, e);
      }
      case 'load': {
        const { addr, space } = this.address(e.arr, e.idx);
        const r = loadElement(this, space, e.arr.dtype, computeDType(e.arr.dtype), addr);
        return convert(this, r, computeDType(e.arr.dtype), e.ty.dtype);
      }
      case 'dim': return this.dim(e.arr, e.d);
      case 'stride': return this.stride(e.arr, e.d);
      case 'assign': {
        const r = this.varReg(e.v);
        this.ins(`mov.${BIT_TYPE[e.ty.dtype]} ${r}, ${this.expr(e.x)};`);
        return this.copy(e.ty.dtype, r);
      }
      case 'update': return this.update(e.v, e.op, e.prefix);
      case 'call': return this.call(e.fn, e.args);
      case 'item': return unsupported('a device function returning several values');
      case 'foreign': return unsupported("gx.fuse's op calls");
    }
  }

  /**
   * What NVRTC's optimizer makes of float arithmetic on constants, so both
   * routes run the same code (a grid-stride `(x - 0) / 1` kernel ran at 0.58x
   * NVRTC's speed unfolded): two constants computed here (+ - * / of two
   * doubles, rounded once to float32, is the float32 operation), and the
   * exact identities x * 1, 1 * x, x / 1, x - (+0), x + (-0). Undefined when
   * none applies.
   */
  private foldFloat(op: string, d: 'float32' | 'float64', a: Expr, b: Expr): string | undefined {
    if (op !== '+' && op !== '-' && op !== '*' && op !== '/') return undefined;
    const ca = constantOf(a), cb = constantOf(b);
    if (ca !== undefined && cb !== undefined) {
      const v = op === '+' ? ca + cb : op === '-' ? ca - cb : op === '*' ? ca * cb : ca / cb;
      return literal(this, d, d === 'float32' ? Math.fround(v) : v);
    }
    if ((op === '*' || op === '/') && cb === 1) return this.expr(a);
    if (op === '*' && ca === 1) return this.expr(b);
    if ((op === '-' && cb === 0 && !Object.is(cb, -0)) || (op === '+' && Object.is(cb, -0))) return this.expr(a);
    return undefined;
  }

  private logic(op: '&&' | '||', a: Expr, b: Expr): string {
    // Short-circuit, as C: b runs only when a does not decide.
    const r = this.reg('pred');
    const end = this.label();
    this.ins(`mov.pred ${r}, ${this.expr(a)};`);
    this.ins(`${op === '&&' ? '@!' : '@'}${r} bra ${end};`);
    this.ins(`mov.pred ${r}, ${this.expr(b)};`);
    this.place(end);
    return r;
  }

  private select(d: ScalarDType, c: Expr, a: Expr, b: Expr): string {
    // Only the chosen operand runs (it may assign or call).
    const r = this.reg(classOf(d));
    const other = this.label(), end = this.label();
    this.ins(`@!${this.expr(c)} bra ${other};`);
    this.ins(`mov.${BIT_TYPE[d]} ${r}, ${this.expr(a)};`);
    this.ins(`bra.uni ${end};`);
    this.place(other);
    this.ins(`mov.${BIT_TYPE[d]} ${r}, ${this.expr(b)};`);
    this.place(end);
    return r;
  }

  private math(e: Extract<Expr, { k: 'math' }>): string {
    const d = e.ty.dtype;
    const entry = mathEntry(e.fn);
    if ((d === 'float32' || d === 'float64') && entry.ptx === undefined) return this.libraryCall(libraryName(e.fn, d), d, e.fn, e.args);
    const args = e.args.map((a) => this.expr(a));
    if (d === 'int32' || d === 'int64') {
      const int = entry.int;
      if (int === undefined || int === 'identity') throw new Error(`${this.fn.api}: internal: Math.${e.fn} of ${d}`);
      return int.ptx(this, d, args);
    }
    if ((d !== 'float32' && d !== 'float64') || entry.ptx === undefined) throw new Error(`${this.fn.api}: internal: Math.${e.fn} of ${d}`);
    return entry.ptx(this, d, args);
  }

  private update(v: VarDecl, op: '+' | '-', prefix: boolean): string {
    const d = v.ty.dtype;
    const r = this.varReg(v);
    const before = prefix ? '' : this.copy(d, r);
    if (d === 'bool') return unsupported('++ on a bool');
    const float = d === 'float32' || d === 'float64';
    const one = float ? literal(this, d, 1) : '1';
    this.ins(`${op === '+' ? 'add' : 'sub'}${float ? '.rn' : ''}.${classOf(d)} ${r}, ${r}, ${one};`);
    return prefix ? this.copy(d, r) : before;
  }

  private inlined = 0;

  /**
   * A function of CUDA's math library (ptx-library.ts), its body inlined as
   * NVRTC inlines it; on literal arguments, its value folded here as NVRTC's
   * compiler folds it (with the simulator's JS: correctly rounded, where the
   * run-time function may be an ulp away).
   */
  private libraryCall(name: string, d: 'float32' | 'float64', fn: string, args: readonly Expr[]): string {
    if (!hasLibrary()) return unsupported('library math (the build made no jit-math.ptx)');
    const folded = foldLibrary(fn, d, args);
    if (folded !== undefined) return literal(this, d, folded);
    const vals = args.map((a) => this.expr(a));
    const r = this.reg(classOf(d));
    const body = inlineLibrary(name, vals, r, `${this.fn.name}_m${this.inlined++}_`);
    this.locals.push(...body.decls);
    this.lines.push(...body.lines);
    for (const n of body.deps) this.library.add(n);
    return r;
  }

  private call(fn: FnIR, args: readonly Expr[]): string {
    const ret = fn.ret;
    const name = fn.name;
    if (ret !== undefined && ret.kind !== 'scalar') return unsupported('a device function returning several values');
    const vals = args.map((a) => ({ r: this.expr(a), d: a.ty.dtype }));
    this.ins('{');
    const names = vals.map((v, i) => {
      const p = `gx_arg${i}`;
      this.ins(`.param .b${paramBits(v.d)} ${p};`);
      this.ins(`st.param.b${paramBits(v.d)} [${p}], ${asParam(this, v.d, v.r)};`);
      return p;
    });
    let r = '';
    if (ret !== undefined) {
      const d = ret.ty.dtype;
      this.ins(`.param .b${paramBits(d)} gx_ret;`);
      this.ins(`call.uni (gx_ret), ${name}, (${names.join(', ')});`);
      r = fromParam(this, d, (w) => this.ins(`ld.param.b${paramBits(d)} ${w}, [gx_ret];`));
    } else {
      this.ins(`call.uni ${name}, (${names.join(', ')});`);
    }
    this.ins('}');
    return r;
  }

  inline(args: readonly string[]): string {
    const { fn } = this;
    const ret = fn.ret;
    if (ret === undefined || ret.kind !== 'scalar') return unsupported('a function returning several values');
    fn.params.forEach((p, i) => {
      // A copy: the body may assign its parameter, and the caller's register is read again by the next element.
      if ('space' in p) unsupported('an array parameter');
      else this.bind(p, this.copy(p.ty.dtype, args[i]));
    });
    const frame = { r: this.reg(classOf(ret.ty.dtype)), d: ret.ty.dtype, end: this.label() };
    this.frames.push(frame);
    this.stmts(fn.body);
    this.frames.pop();
    this.place(frame.end);
    return frame.r;
  }

  private dim(a: ArrayDecl, d: number): string {
    if (a.space === 'param') return this.paramsOf().dim(a, d);
    return literal(this, 'int64', (a.extents ?? [])[d]);
  }

  private stride(a: ArrayDecl, d: number): string {
    if (a.space === 'param' && !a.contiguous) return this.paramsOf().stride(a, d);
    if (a.space !== 'param') return literal(this, 'int64', (a.extents ?? []).slice(d + 1).reduce((x, y) => x * y, 1));
    // A contiguous tensor's stride is the product of the extents after d.
    let s = literal(this, 'int64', 1);
    for (let k = d + 1; k < a.rank; k++) s = arith(this, '*', 'int64', s, this.paramsOf().dim(a, k));
    return s;
  }

  private paramsOf(): PtxParams {
    if (this.params === undefined) throw new Error(`${this.fn.api}: internal: a tensor parameter outside a kernel`);
    return this.params;
  }

  /** The byte address of an element: base + (sum of index * stride) * size, in the array's state space. */
  address(a: ArrayDecl, idx: readonly Expr[]): { addr: string; space: string } {
    let off: string | undefined;
    idx.forEach((x, d) => {
      const i = convert(this, this.expr(x), x.ty.dtype, 'int64');
      const term = d === idx.length - 1 && (a.space !== 'param' || a.contiguous) ? i : arith(this, '*', 'int64', i, this.stride(a, d));
      off = off === undefined ? term : arith(this, '+', 'int64', off, term);
    });
    const base = a.space === 'param' ? this.paramsOf().ptr(a) : this.arrayBase(a);
    const addr = this.reg('s64');
    if (off === undefined) this.ins(`mov.b64 ${addr}, ${base};`);
    else this.ins(`mad.lo.s64 ${addr}, ${off}, ${elementSize(a.dtype)}, ${base};`);
    return { addr, space: a.space === 'param' ? '.global' : a.space === 'shared' ? '.shared' : '.local' };
  }

  private arrayBase(a: ArrayDecl): string {
    const name = this.arrays.get(a);
    if (name === undefined) throw new Error(`${this.fn.api}: internal: ${a.label} used before its declaration`);
    const r = this.reg('s64');
    this.ins(`mov.u64 ${r}, ${name};`);
    return r;
  }

  private declareArray(a: ArrayDecl): void {
    const bytes = (a.extents ?? []).reduce((x, y) => x * y, 1) * elementSize(a.dtype);
    const name = `${a.space === 'shared' ? 'gx_s' : 'gx_l'}_${this.fn.name}_${this.arrays.size}`;
    this.arrays.set(a, name);
    const decl = `.${a.space === 'shared' ? 'shared' : 'local'} .align 16 .b8 ${name}[${Math.max(bytes, 1)}];`;
    if (a.space === 'shared') this.globals.push(decl);
    else this.locals.push(`\t${decl}`);
  }

  stmts(list: readonly Stmt[]): void {
    for (const s of list) this.stmt(s);
  }

  private cond(c: Expr, falseTo: string): void {
    this.ins(`@!${this.expr(c)} bra ${falseTo};`);
  }

  private stmt(s: Stmt): void {
    switch (s.k) {
      case 'decl': {
        const r = this.reg(classOf(s.v.ty.dtype));
        this.ins(`mov.${BIT_TYPE[s.v.ty.dtype]} ${r}, ${this.expr(s.init)};`);
        this.bind(s.v, r);
        return;
      }
      case 'expr': this.expr(s.x); return;
      case 'store': {
        const c = computeDType(s.arr.dtype);
        const narrow: DType[] = ['float16', 'bfloat16'];
        if (s.x.ty.dtype !== c && (narrow.includes(s.arr.dtype) || !(isFloat(s.x.ty.dtype) && isFloat(c)))) {
          return unsupported(`a store of ${s.x.ty.dtype} into ${s.arr.dtype}`);
        }
        const x = convert(this, this.expr(s.x), s.x.ty.dtype, c);
        const { addr, space } = this.address(s.arr, s.idx);
        storeElement(this, space, s.arr.dtype, x, addr);
        return;
      }
      case 'if': {
        const other = this.label(), end = this.label();
        this.cond(s.c, other);
        this.stmts(s.then);
        this.ins(`bra.uni ${end};`);
        this.place(other);
        if (s.else !== undefined) this.stmts(s.else);
        this.place(end);
        return;
      }
      case 'for': {
        this.stmts(s.init);
        const top = this.label(), cont = this.label(), end = this.label();
        this.place(top);
        if (s.c !== undefined) this.cond(s.c, end);
        this.loop(s.body, end, cont);
        this.place(cont);
        for (const u of s.update) this.expr(u);
        this.ins(`bra.uni ${top};`);
        this.place(end);
        return;
      }
      case 'while': {
        const top = this.label(), end = this.label();
        this.place(top);
        this.cond(s.c, end);
        this.loop(s.body, end, top);
        this.ins(`bra.uni ${top};`);
        this.place(end);
        return;
      }
      case 'do': {
        const top = this.label(), cont = this.label(), end = this.label();
        this.place(top);
        this.loop(s.body, end, cont);
        this.place(cont);
        this.ins(`@${this.expr(s.c)} bra ${top};`);
        this.place(end);
        return;
      }
      case 'break': this.ins(`bra.uni ${this.innermost().brk};`); return;
      case 'continue': this.ins(`bra.uni ${this.innermost().cont};`); return;
      case 'return': return this.ret(s);
      case 'block': this.stmts(s.body); return;
      case 'array': this.declareArray(s.arr); return;
      case 'tuple': unsupported('a device function returning several values');
    }
  }

  private loop(body: readonly Stmt[], brk: string, cont: string): void {
    this.loops.push({ brk, cont });
    this.stmts(body);
    this.loops.pop();
  }

  private innermost(): { brk: string; cont: string } {
    const l = this.loops[this.loops.length - 1];
    if (l === undefined) throw new Error(`${this.fn.api}: internal: break outside a loop`);
    return l;
  }

  private ret(s: Extract<Stmt, { k: 'return' }>): void {
    if (s.items !== undefined) return unsupported('a device function returning several values');
    const frame = this.frames[this.frames.length - 1];
    if (frame !== undefined) {
      if (s.x === undefined || s.x.ty.dtype !== frame.d) throw new Error(`${this.fn.api}: internal: a return of ${s.x?.ty.dtype ?? 'nothing'} from a ${frame.d} function`);
      this.ins(`mov.${BIT_TYPE[frame.d]} ${frame.r}, ${this.expr(s.x)};`);
      this.ins(`bra.uni ${frame.end};`);
      return;
    }
    if (s.x !== undefined) {
      const d = s.x.ty.dtype;
      this.ins(`st.param.b${paramBits(d)} [gx_retval], ${asParam(this, d, this.expr(s.x))};`);
    }
    this.ins(`bra.uni ${this.exit};`);
  }
}


const paramBits = (d: ScalarDType): number => (d === 'int64' || d === 'float64' ? 64 : 32);

/** A value as a parameter's bits (a bool as 0 or 1 in 32 bits). */
function asParam(o: Out, d: ScalarDType, r: string): string {
  return d === 'bool' ? convert(o, r, 'bool', 'int32') : r;
}

/** A parameter's value read by `load` into a register of `d`. */
function fromParam(o: Out, d: ScalarDType, load: (reg: string) => void): string {
  if (d !== 'bool') {
    const r = o.reg(classOf(d));
    load(r);
    return r;
  }
  const w = o.reg('s32');
  load(w);
  return convert(o, w, 'int32', 'bool');
}

/** A device function as a PTX `.func`; `out` collects the module-scope declarations. */
function deviceFunction(fn: FnIR, globals: string[], library: Set<string>): string {
  const ret = fn.ret;
  if (ret !== undefined && ret.kind !== 'scalar') return unsupported('a device function returning several values');
  const exit = `$L_${fn.name}_exit`;
  const f = new PtxFunction(fn, undefined, exit, library);
  const params = fn.params.map((p, i) => {
    if ('space' in p) return unsupported('an array parameter of a device function');
    f.bind(p, fromParam(f, p.ty.dtype, (w) => f.ins(`ld.param.b${paramBits(p.ty.dtype)} ${w}, [gx_param_${i}];`)));
    return `.param .b${paramBits(p.ty.dtype)} gx_param_${i}`;
  });
  f.stmts(fn.body);
  globals.push(...f.globals);
  const head = ret === undefined ? '' : `(.param .b${paramBits(ret.ty.dtype)} gx_retval) `;
  return `.func ${head}${fn.name}(${params.join(', ')})\n{\n${[...f.declarations(), ...f.locals, ...f.lines].join('\n')}\n${exit}:\n\tret;\n}\n`;
}

/** A kernel parameter: its PTX declaration and the register it is read into. */
export interface PtxParam {
  /** The parameter's C type, as the CUDA source declares it. */
  type: string;
  /** The register the body reads (declared by name). */
  reg: string;
}

/** A kernel parameter's PTX type and register class, from its C type (a pointer, or a scalar dtype's C_TYPE). */
function paramType(c: string): { param: string; reg: string } {
  if (c.endsWith('*')) return { param: 'u64', reg: 's64' };
  const d = SCALAR_DTYPES.find((x) => C_TYPE[x] === c) ?? unsupported(`a parameter of C type ${c}`);
  return d === 'bool' ? { param: 'u8', reg: 'b16' } : { param: PTX_TYPE[d], reg: PTX_TYPE[d] };
}

/**
 * A kernel as a PTX module: `body` is typed IR, `params` what PtxParams
 * handed out (in the order of the CUDA source's parameter list, which the
 * launch plan follows). Throws PtxUnsupported for a node without a PTX face.
 */
export function emitPtxKernel(fn: FnIR, name: string, params: PtxParams, list: () => readonly PtxParam[]): string {
  return ptxEntry(fn, name, params, (f) => {
    for (const p of fn.params) if (!('space' in p)) f.bind(p, params.value(p));
    f.stmts(fn.body);
  }, list);
}

/**
 * An entry `name` whose body `write` emits (a kernel's statements, or a
 * skeleton of the caller's that inlines `fn`), in a module with the device
 * functions `fn` calls and the library math it uses; `list` (called after
 * `write`) is its parameters in order; `directives` go before its body
 * (`.maxntid`, as NVRTC prints __launch_bounds__).
 */
export function ptxEntry(fn: FnIR, name: string, params: PtxParams | undefined, write: (f: PtxFunction) => void,
  list: () => readonly PtxParam[], directives = ''): string {
  const globals: string[] = [];
  const library = new Set<string>();
  const functions = calledFunctions(fn).map((g) => deviceFunction(g, globals, library));
  const exit = `$L_${name}_exit`;
  const f = new PtxFunction(fn, params, exit, library);
  write(f);
  globals.push(...f.globals);
  const ps = list();
  const decls: string[] = [];
  const loads = ps.map((p, i) => {
    const t = paramType(p.type);
    decls.push(`.param .${t.param} gx_param_${i}`);
    if (t.param === 'u8') {
      // A bool argument: one byte, read as a predicate register of its name.
      return [`\t.reg .b16 ${p.reg}_b;`, `\t.reg .pred ${p.reg};`, `\tld.param.u8 ${p.reg}_b, [gx_param_${i}];`, `\tsetp.ne.u16 ${p.reg}, ${p.reg}_b, 0;`].join('\n');
    }
    const load = `\t.reg .${t.reg} ${p.reg};\n\tld.param.${t.param} ${p.reg}, [gx_param_${i}];`;
    // A tensor's pointer is a global address (as NVRTC takes a kernel's pointer parameters): its elements load as .global.
    return p.type.endsWith('*') ? `${load}\n\tcvta.to.global.u64 ${p.reg}, ${p.reg};` : load;
  });
  const entry = `.visible .entry ${name}(\n\t${decls.join(',\n\t')}\n)${directives === '' ? '' : `\n${directives}`}\n{\n${[...f.declarations(), ...f.locals, ...loads, ...f.lines].join('\n')}\n${exit}:\n\tret;\n}\n`;
  // Library math brings its own header (the toolkit's PTX version; the same target).
  const lib = library.size > 0 ? linkLibrary(library) : undefined;
  const header = lib === undefined ? PTX_HEADER : `${lib.header}\n`;
  const libText = lib === undefined ? '' : `${lib.text}\n\n`;
  return `${header}\n${globals.join('\n')}${globals.length > 0 ? '\n' : ''}${libText}${functions.join('\n')}${entry}`;
}
