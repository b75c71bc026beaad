// The typed intermediate form of a jit function (parse -> type -> IR): what
// typer.ts makes of a kernel, a device function or a scalar function, and
// what both emit-cuda.ts (the CUDA source) and interpret.ts (the CPU
// simulator) read. Every value carries its type; every conversion is an
// explicit `cast`; every intrinsic is a node. Nothing here is C or JS text,
// but for gx.fuse's `foreign` op calls, which only the CUDA side runs. The
// meaning of every node is lib/jit/LANGUAGE.md.
import type { DType } from '../core/dtype';
import { INTRINSIC_TABLE } from './intrinsic-table';
import type { MathFn } from './math-table';
import type { ScalarDType, Ty } from './types';
import { walk } from './ir-walk';

export { isPure, walk } from './ir-walk';

export type { ScalarDType, Ty };

/** A local variable or parameter of a function. */
export interface VarDecl {
  readonly id: number;
  /** The user's name (the emitters make names of their own from it). */
  readonly name: string;
  ty: Ty;
  readonly isConst: boolean;
}

/** An array a kernel indexes: a tensor parameter, or a shared or local array with static extents. */
export interface ArrayDecl {
  readonly id: number;
  readonly label: string;
  readonly dtype: DType;
  readonly rank: number;
  readonly space: 'param' | 'shared' | 'local';
  /** Parameter arrays: the parameter's position and whether it is contiguous. */
  readonly param?: number;
  readonly contiguous: boolean;
  /** Shared and local arrays: their extents. */
  readonly extents?: readonly number[];
}

export type { MathFn };

export type ArithOp = '+' | '-' | '*' | '/' | '%' | '**' | '&' | '|' | '^' | '<<' | '>>' | '>>>';
export type CompareOp = '<' | '<=' | '>' | '>=' | '==' | '!=';
export type AtomicOp = 'add' | 'sub' | 'min' | 'max' | 'exch' | 'cas' | 'and' | 'or' | 'xor';
export type WarpOp = 'down' | 'up' | 'xor' | 'sync' | 'ballot' | 'activemask';
export type Special = 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim';
/** gx.jit's intrinsics: the entries of intrinsic-table.ts (NOTE [ One intrinsic table ]). */
export type IntrinsicName = Special | 'grid' | 'gridsize' | 'syncthreads' | 'threadfence' | 'sharedArray' | 'localArray' | 'atomic'
  | 'laneId' | 'shfl' | 'ballot' | 'activemask';

/** Source position of a node, for errors and debug records. */
export type At = number;

export type Expr =
  | { k: 'lit'; ty: Ty; v: number | bigint | boolean }
  | { k: 'var'; ty: Ty; v: VarDecl }
  /** A conversion (NOTE: LANGUAGE.md "Conversions"). */
  | { k: 'cast'; ty: Ty; x: Expr }
  /** Arithmetic of two operands of type `ty` (already cast). */
  | { k: 'arith'; ty: Ty; op: ArithOp; a: Expr; b: Expr; at?: At }
  /** A comparison of two operands of one type; bool. */
  | { k: 'cmp'; ty: Ty; op: CompareOp; a: Expr; b: Expr }
  | { k: 'neg'; ty: Ty; x: Expr }
  | { k: 'not'; ty: Ty; x: Expr }
  | { k: 'bitnot'; ty: Ty; x: Expr }
  /** JS truthiness of a number: nonzero and not NaN; bool. */
  | { k: 'truth'; ty: Ty; x: Expr }
  /** && / || of two bools, short-circuit; bool. */
  | { k: 'logic'; ty: Ty; op: '&&' | '||'; a: Expr; b: Expr }
  | { k: 'select'; ty: Ty; c: Expr; a: Expr; b: Expr }
  /** Math.* on operands of type `ty` (floats, or integers for min/max/abs/sign). */
  | { k: 'math'; ty: Ty; fn: MathFn; args: Expr[] }
  /** An element of an array in its compute type; indices are int64. */
  | { k: 'load'; ty: Ty; arr: ArrayDecl; idx: Expr[]; at: At }
  | { k: 'dim'; ty: Ty; arr: ArrayDecl; d: number }
  | { k: 'stride'; ty: Ty; arr: ArrayDecl; d: number }
  /** Assignment to a local; the value assigned (already of the local's type). */
  | { k: 'assign'; ty: Ty; v: VarDecl; x: Expr }
  | { k: 'update'; ty: Ty; v: VarDecl; op: '+' | '-'; prefix: boolean }
  | { k: 'call'; ty: Ty; fn: FnIR; args: Expr[] }
  /** Item i of a tuple temporary (a device function's several results). */
  | { k: 'item'; ty: Ty; tmp: VarDecl; i: number }
  /**
   * An intrinsic: a thread coordinate (variant: the axis), a barrier, an
   * atomic (variant: its op; the element of arr at idx), a warp operation
   * (variant: the shuffle's mode). Its faces are its entry's in
   * intrinsic-table.ts; statement intrinsics stand in an `expr` statement.
   */
  | { k: 'intrinsic'; ty: Ty; name: IntrinsicName; variant?: string; args: Expr[]; arr?: ArrayDecl; idx?: Expr[]; at: At }
  /**
   * gx.fuse's op calls: C text with \u0001k\u0001 standing for the k-th argument
   * (CUDA only), and the facts the eager op checks of its number operands,
   * their operands as expressions (NOTE [ Argument facts in fused functions ] in fuse-facts.ts).
   */
  | { k: 'foreign'; ty: Ty; code: string; args: Expr[]; facts?: readonly ForeignFact[] };

/** A fact of a foreign op call's number operands: the operands, and why their values are refused (or undefined). */
export interface ForeignFact {
  readonly op: string;
  readonly args: readonly Expr[];
  fault(values: readonly (number | bigint | boolean)[]): string | undefined;
}

export type Stmt =
  | { k: 'decl'; v: VarDecl; init: Expr }
  | { k: 'expr'; x: Expr }
  | { k: 'store'; arr: ArrayDecl; idx: Expr[]; x: Expr; at: At }
  | { k: 'if'; c: Expr; then: Stmt[]; else?: Stmt[] }
  | { k: 'for'; init: Stmt[]; c?: Expr; update: Expr[]; body: Stmt[]; at: At }
  | { k: 'while'; c: Expr; body: Stmt[]; at: At }
  | { k: 'do'; c: Expr; body: Stmt[]; at: At }
  | { k: 'break' }
  | { k: 'continue' }
  | { k: 'return'; x?: Expr; items?: Expr[] }
  | { k: 'block'; body: Stmt[] }
  | { k: 'array'; arr: ArrayDecl }
  /** `const tmp = f(...)` of a device function returning several values. */
  | { k: 'tuple'; tmp: VarDecl; fn: FnIR; args: Expr[] };

/** What a function returns: one value or a tuple. */
export type ReturnTy = { kind: 'scalar'; ty: Ty } | { kind: 'tuple'; tys: Ty[] };

/** A typed function: a kernel (no return), a device function or a scalar function. */
export interface FnIR {
  readonly kind: 'kernel' | 'device';
  /** The C name (device functions) or the kernel's. */
  readonly name: string;
  /** The name errors and debug records give (gx.jit.rawkernel(name)). */
  readonly api: string;
  readonly text: string;
  readonly params: readonly (VarDecl | ArrayDecl)[];
  readonly body: Stmt[];
  readonly ret?: ReturnTy;
}

/** The device functions `f` calls, callees first, each once. */
export function calledFunctions(f: FnIR): FnIR[] {
  const out: FnIR[] = [];
  const seen = new Set<FnIR>();
  const visitFn = (g: FnIR): void => {
    if (seen.has(g)) return;
    seen.add(g);
    walk(g.body, (e) => { if (e.k === 'call') visitFn(e.fn); }, (s) => { if (s.k === 'tuple') visitFn(s.fn); });
    if (g !== f) out.push(g);
  };
  visitFn(f);
  return out;
}

/** Whether `f` (or a function it calls) waits at a barrier or a warp operation: the simulator then steps its threads in turns. */
export function hasBarrier(f: FnIR, memo = new Map<FnIR, boolean>()): boolean {
  const known = memo.get(f);
  if (known !== undefined) return known;
  memo.set(f, false);
  let found = false;
  walk(f.body, (e) => { if ((e.k === 'call' && hasBarrier(e.fn, memo)) || (e.k === 'intrinsic' && suspends(e.name))) found = true; },
    (s) => { if (s.k === 'tuple' && hasBarrier(s.fn, memo)) found = true; });
  memo.set(f, found);
  return found;
}

/** Whether the simulator's thread yields at intrinsic `name` (a barrier, a warp operation). */
function suspends(name: IntrinsicName): boolean {
  const n = INTRINSIC_TABLE[name].node;
  return 'suspends' in n && n.suspends;
}
