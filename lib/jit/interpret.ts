// The interpreter of the typed IR (ir.ts), which is the CPU simulator of
// jit kernels, vectorized and device functions: each function's IR is
// compiled once into a JS function whose every operation is the one
// LANGUAGE.md defines (semantics.ts: float32 rounded at every step, integers
// wrapping in their width, int64 as BigInt, C's conversions), so the
// simulator computes what the generated CUDA computes, and refuses what it
// refuses (the typer ran first). Kernels become generators that yield at
// each barrier; every loop iteration spends one step of a budget.
import { calledFunctions, hasBarrier, type ArrayDecl, type Expr, type FnIR, type Stmt, type VarDecl } from './ir';
import { INTRINSIC_TABLE, type IntrinsicExpr, type SimFace } from './intrinsic-table';
import { mathEntry } from './math-table';
import { RUNTIME, type Runtime } from './semantics';
import type { DType } from '../core/dtype';
import type { ScalarDType } from './types';

/** A simulated array: its elements (float16 / bfloat16 as float32 values) and layout; `at` checks and flattens an index. */
export interface SimArray {
  readonly label: string;
  readonly dtype: DType;
  readonly d: Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array;
  /** Extents and strides as the kernel reads them (int64). */
  readonly N: readonly bigint[];
  readonly S: readonly bigint[];
  at(...idx: bigint[]): number;
}

/** The simulated thread: its indices (blockIdx int64, as the typer types it). */
export interface SimThread {
  tx: number; ty: number; tz: number;
  bx: bigint; by: bigint; bz: bigint;
}

/** What a launch shares with its threads: launch dimensions, the step budget, array makers, race checks. */
export interface SimState {
  readonly bd: readonly [number, number, number];
  readonly gd: readonly [bigint, bigint, bigint];
  steps: number;
  over(): never;
  local(dtype: DType, extents: readonly number[], label: string): SimArray;
  /** Debug mode: record a shared read / write at `at` (source position); both give the offset back. */
  rd(a: SimArray, off: number, at: number): number;
  wr(a: SimArray, off: number, at: number): number;
}

/** A block's shared arrays, made by the first of its threads that declares one. */
export interface SimBlock {
  shared(id: number, dtype: DType, extents: readonly number[], label: string): SimArray;
}

/** What a lane asks at a warp operation: the operation, its line (in its own function), its value and lane argument. */
export interface WarpRequest {
  op: 'down' | 'up' | 'xor' | 'sync' | 'ballot' | 'activemask';
  /** Which call it is (function and position): the lanes of a warp must all be at one. */
  site: string;
  line: number;
  v?: unknown;
  n?: number;
}
/** A kernel per thread: yields a barrier's line at syncthreads(), a request at a warp operation (resumed with its result). */
export type CompiledKernel = (T: SimThread, S: SimState, B: SimBlock, A: readonly unknown[]) => Generator<number | WarpRequest, void, unknown>;
export type CompiledScalar = (T: SimThread, S: SimState, B: SimBlock, ...args: unknown[]) => unknown;

function numText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '(-Infinity)';
  if (Object.is(v, -0)) return '(-0)';
  return v < 0 ? `(${v})` : String(v);
}

class JsEmitter {
  private readonly names = new Map<VarDecl | ArrayDecl, string>();
  readonly lines: string[] = [];
  /** Temporaries of atomics, one pair per site (an atomic's value may hold another atomic). */
  readonly temps: string[] = [];

  constructor(private readonly fn: FnIR, private readonly debug: boolean, private readonly gens: ReadonlySet<FnIR>) {
    fn.params.forEach((p, i) => this.names.set(p, 'space' in p ? `P${i}` : `v${p.id}`));
  }

  private name(d: VarDecl | ArrayDecl): string {
    let n = this.names.get(d);
    if (n === undefined) {
      n = 'space' in d ? `a${d.id}` : `v${d.id}`;
      this.names.set(d, n);
    }
    return n;
  }

  cast(x: Expr, to: ScalarDType): string {
    const from = x.ty.dtype;
    const c = this.expr(x);
    if (from === to) return c;
    switch (from) {
      case 'bool': return to === 'int64' ? `(${c} ? 1n : 0n)` : `(${c} ? 1 : 0)`;
      case 'int32': return to === 'int64' ? `BigInt(${c})` : to === 'float32' ? `F(${c})` : to === 'bool' ? `(${c} !== 0)` : c;
      case 'int64': return to === 'int32' ? `Number(BigInt.asIntN(32, ${c}))` : to === 'float64' ? `Number(${c})` : to === 'float32' ? `R.l2f(${c})` : `(${c} !== 0n)`;
      default:
        return to === 'int32' ? `R.f2i(${c})` : to === 'int64' ? `R.f2l(${c})` : to === 'bool' ? `R.truth(${c})` : to === 'float32' ? `F(${c})` : c;
    }
  }

  expr(e: Expr): string {
    switch (e.k) {
      case 'lit': {
        const d = e.ty.dtype;
        if (typeof e.v === 'boolean') return String(e.v);
        if (d === 'int64') return `(${BigInt(e.v)}n)`;
        if (d === 'int32') return numText(Number(e.v) | 0);
        return numText(d === 'float32' ? Math.fround(Number(e.v)) : Number(e.v));
      }
      case 'var': return this.name(e.v);
      case 'cast': return this.cast(e.x, e.ty.dtype);
      case 'arith': return this.arith(e);
      case 'cmp': return `(${this.expr(e.a)} ${e.op === '==' ? '===' : e.op === '!=' ? '!==' : e.op} ${this.expr(e.b)})`;
      case 'neg': {
        const x = this.expr(e.x);
        return e.ty.dtype === 'int32' ? `((-${x}) | 0)` : e.ty.dtype === 'int64' ? `BigInt.asIntN(64, -${x})` : `(-${x})`;
      }
      case 'not': return `(!${this.expr(e.x)})`;
      case 'bitnot': return `(~${this.expr(e.x)})`;
      case 'truth': return this.cast(e.x, 'bool');
      case 'logic': return `(${this.expr(e.a)} ${e.op} ${this.expr(e.b)})`;
      case 'select': return `(${this.expr(e.c)} ? ${this.expr(e.a)} : ${this.expr(e.b)})`;
      case 'math': return this.math(e);
      case 'intrinsic': return this.intrinsic(e);
      case 'load': {
        const v = `${this.name(e.arr)}.d[${this.offset(e.arr, e.idx, e.at, 'rd')}]`;
        return e.arr.dtype === 'bool' ? `(${v} !== 0)` : v;
      }
      case 'dim': return e.arr.space === 'param' ? `${this.name(e.arr)}.N[${e.d}]` : `(${BigInt((e.arr.extents ?? [])[e.d])}n)`;
      case 'stride': return `${this.name(e.arr)}.S[${e.d}]`;
      case 'assign': return `(${this.name(e.v)} = ${this.expr(e.x)})`;
      case 'update': {
        const n = this.name(e.v);
        const d = e.ty.dtype;
        const next = d === 'int32' ? `((${n} ${e.op} 1) | 0)` : d === 'int64' ? `BigInt.asIntN(64, ${n} ${e.op} 1n)`
          : d === 'float32' ? `F(${n} ${e.op} 1)` : `(${n} ${e.op} 1)`;
        return e.prefix ? `(${n} = ${next})` : `(_u = ${n}, ${n} = ${next}, _u)`;
      }
      case 'call': {
        const c = `${e.fn.name}(T, S, B${e.args.map((a) => `, ${this.expr(a)}`).join('')})`;
        return this.gens.has(e.fn) ? `(yield* ${c})` : c;
      }
      case 'item': return `${this.name(e.tmp)}[${e.i}]`;
      case 'foreign': throw new Error(`${this.fn.api}: gx.fuse's op calls run on CUDA only`);
    }
  }

  /** An intrinsic: its entry's simulator face (NOTE [ One intrinsic table ]). */
  private intrinsic(e: IntrinsicExpr): string {
    const node = INTRINSIC_TABLE[e.name].node;
    if (!('sim' in node)) throw new Error(`${this.fn.api}: internal: ${e.name} is lowered by its type rule`);
    return node.sim(this.face, e);
  }

  private readonly face: SimFace = {
    expr: (x) => this.expr(x),
    offset: (a, idx, at, how) => this.offset(a, idx, at, how),
    name: (a) => this.name(a),
    temp: (prefix) => {
      const n = `${prefix}${this.temps.length}`;
      this.temps.push(n);
      return n;
    },
    line: (at) => this.line(at),
    site: (at) => `${this.fn.name}:${at}`,
  };

  private arith(e: Extract<Expr, { k: 'arith' }>): string {
    const a = this.expr(e.a), b = this.expr(e.b);
    switch (e.ty.dtype) {
      case 'float32':
        if (e.op === '**') return `F(R.pow(${a}, ${b}))`;
        return `F(${a} ${e.op} ${b})`;
      case 'float64':
        if (e.op === '**') return `R.pow(${a}, ${b})`;
        return `(${a} ${e.op} ${b})`;
      case 'int32':
        switch (e.op) {
          case '*': return `Math.imul(${a}, ${b})`;
          case '%': return this.debug && e.at !== undefined ? `R.rem32(${a}, R.nonzero(${b}, ${this.line(e.at)}))` : `R.rem32(${a}, ${b})`;
          case '**': return `R.pow32(${a}, ${b})`;
          case '<<': case '>>': return `(${a} ${e.op} (${b} & 31))`;
          case '>>>': return `((${a} >>> (${b} & 31)) | 0)`;
          case '&': case '|': case '^': return `(${a} ${e.op} ${b})`;
          default: return `((${a} ${e.op} ${b}) | 0)`;
        }
      case 'int64':
        switch (e.op) {
          case '%': return this.debug && e.at !== undefined ? `R.rem64(${a}, R.nonzero(${b}, ${this.line(e.at)}))` : `R.rem64(${a}, ${b})`;
          case '**': return `R.pow64(${a}, ${b})`;
          case '>>': return `(${a} >> (${b} & 63n))`;
          case '<<': return `BigInt.asIntN(64, ${a} << (${b} & 63n))`;
          case '>>>': return `BigInt.asIntN(64, BigInt.asUintN(64, ${a}) >> (${b} & 63n))`;
          case '&': case '|': case '^': return `(${a} ${e.op} ${b})`;
          default: return `BigInt.asIntN(64, ${a} ${e.op} ${b})`;
        }
      default:
        throw new Error(`${this.fn.api}: internal: ${e.op} of bool`);
    }
  }

  private line(at: number): number {
    return this.fn.text.slice(0, at).split('\n').length;
  }

  private math(e: Extract<Expr, { k: 'math' }>): string {
    const d = e.ty.dtype;
    const args = e.args.map((a) => this.expr(a)).join(', ');
    const entry = mathEntry(e.fn);
    if (d === 'int32' || d === 'int64') {
      const int = entry.int;
      if (int === undefined || int === 'identity') throw new Error(`${this.fn.api}: internal: Math.${e.fn} of ${d}`);
      return int.sim(d === 'int32' ? '32' : '64', args);
    }
    const c = `${entry.sim[d === 'float32' ? 0 : 1]}(${args})`;
    return d === 'float32' ? `F(${c})` : c;
  }

  /** The flat offset of an element (every index checked), recorded for the race check of shared arrays in debug mode. */
  private offset(a: ArrayDecl, idx: readonly Expr[], at: number, how: 'rd' | 'wr'): string {
    const off = `${this.name(a)}.at(${idx.map((i) => this.expr(i)).join(', ')})`;
    return this.debug && a.space === 'shared' ? `S.${how}(${this.name(a)}, ${off}, ${at})` : off;
  }

  private store(s: Extract<Stmt, { k: 'store' }>): string {
    const x = this.expr(s.x);
    const v = s.arr.dtype === 'float16' ? `R.half(${x})` : s.arr.dtype === 'bfloat16' ? `R.bf16(${x})` : s.arr.dtype === 'bool' ? `(${x} ? 1 : 0)` : x;
    return `${this.name(s.arr)}.d[${this.offset(s.arr, s.idx, s.at, 'wr')}] = ${v};`;
  }

  stmts(list: readonly Stmt[], ind: string): void {
    for (const s of list) this.stmt(s, ind);
  }

  private effect(x: Expr): string {
    return x.k === 'assign' ? `${this.name(x.v)} = ${this.expr(x.x)}` : this.expr(x);
  }

  private stmt(s: Stmt, ind: string): void {
    const L = this.lines;
    const inner = `${ind}  `;
    const step = `${inner}if (--S.steps < 0) S.over();`;
    switch (s.k) {
      case 'decl': L.push(`${ind}let ${this.name(s.v)} = ${this.expr(s.init)};`); return;
      case 'expr': L.push(`${ind}${this.effect(s.x)};`); return;
      case 'store': L.push(`${ind}${this.store(s)}`); return;
      case 'if':
        L.push(`${ind}if (${this.expr(s.c)}) {`);
        this.stmts(s.then, inner);
        if (s.else !== undefined) {
          L.push(`${ind}} else {`);
          this.stmts(s.else, inner);
        }
        L.push(`${ind}}`);
        return;
      case 'for': {
        const init = s.init.map((i) => (i.k === 'decl' ? `let ${this.name(i.v)} = ${this.expr(i.init)}` : i.k === 'expr' ? this.effect(i.x) : '')).join(', ');
        L.push(`${ind}for (${init}; ${s.c === undefined ? '' : this.expr(s.c)}; ${s.update.map((u) => this.effect(u)).join(', ')}) {`, step);
        this.stmts(s.body, inner);
        L.push(`${ind}}`);
        return;
      }
      case 'while':
        L.push(`${ind}while (${this.expr(s.c)}) {`, step);
        this.stmts(s.body, inner);
        L.push(`${ind}}`);
        return;
      case 'do':
        L.push(`${ind}do {`, step);
        this.stmts(s.body, inner);
        L.push(`${ind}} while (${this.expr(s.c)});`);
        return;
      case 'break': L.push(`${ind}break;`); return;
      case 'continue': L.push(`${ind}continue;`); return;
      case 'return':
        if (s.items !== undefined) L.push(`${ind}return [${s.items.map((x) => this.expr(x)).join(', ')}];`);
        else L.push(s.x === undefined ? `${ind}return;` : `${ind}return ${this.expr(s.x)};`);
        return;
      case 'block':
        L.push(`${ind}{`);
        this.stmts(s.body, inner);
        L.push(`${ind}}`);
        return;
      case 'array': {
        const a = s.arr;
        const args = `'${a.dtype}', [${(a.extents ?? []).join(', ')}], ${JSON.stringify(a.label)}`;
        L.push(`${ind}const ${this.name(a)} = ${a.space === 'shared' ? `B.shared(${a.id}, ${args})` : `S.local(${args})`};`);
        return;
      }
      case 'tuple': {
        const c = `${s.fn.name}(T, S, B${s.args.map((a) => `, ${this.expr(a)}`).join('')})`;
        L.push(`${ind}const ${this.name(s.tmp)} = ${this.gens.has(s.fn) ? `yield* ${c}` : c};`);
        return;
      }
    }
  }
}

function functionText(fn: FnIR, debug: boolean, gens: ReadonlySet<FnIR>, kernel: boolean): string {
  const em = new JsEmitter(fn, debug, gens);
  em.stmts(fn.body, '  ');
  const star = gens.has(fn) || kernel ? '*' : '';
  const params = kernel ? 'T, S, B, A' : ['T', 'S', 'B', ...fn.params.map((_, i) => `v${(fn.params[i] as VarDecl).id}`)].join(', ');
  const unpack = kernel ? fn.params.map((p, i) => `  const ${'space' in p ? `P${i}` : `v${p.id}`} = A[${i}];\n`).join('') : '';
  const temps = ['_u', ...em.temps].join(', ');
  return `function${star} ${kernel ? 'kernel' : fn.name}(${params}) {\n  let ${temps};\n${unpack}${em.lines.join('\n')}\n}\n`;
}

/** The JS of `fn` and the device functions it calls, made once per typed function. */
function compile(fn: FnIR, debug: boolean, kernel: boolean): unknown {
  const memo = new Map<FnIR, boolean>();
  const callees = calledFunctions(fn);
  const gens = new Set([fn, ...callees].filter((g) => hasBarrier(g, memo)));
  const text = `"use strict";\nconst F = R.F;\n${callees.map((g) => functionText(g, debug, gens, false)).join('')}` +
    `return ${functionText(fn, debug, gens, kernel)}`;
  // eslint-disable-next-line no-new-func
  return new Function('R', text)(RUNTIME satisfies Runtime);
}

/** Kernel `fn` as a generator per thread (yielding the barrier's source position at each syncthreads()). */
export function compileKernel(fn: FnIR, debug: boolean): CompiledKernel {
  return compile(fn, debug, true) as CompiledKernel;
}

/** A device or scalar function as a JS function of (T, S, B, ...args) (not waiting at barriers). */
export function compileScalar(fn: FnIR): CompiledScalar {
  if (hasBarrier(fn)) throw new Error(`${fn.api}: syncthreads() and warp operations outside a kernel have no block to wait for`);
  return compile(fn, false, false) as CompiledScalar;
}
