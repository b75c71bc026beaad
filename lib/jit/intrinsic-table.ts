// gx.jit's intrinsics, one entry each: the typer's rule (which IR a use
// makes, what it refuses), the CUDA spelling of its IR node (emit-cuda.ts)
// and the simulator's JavaScript for it (interpret.ts). The values a kernel
// refers to are intrinsics.ts's; INTRINSICS there maps each to its entry.
//
// NOTE [ One intrinsic table ]
// An intrinsic is one entry here: adding one is an entry (and its value in
// intrinsics.ts), never a case in three files joined by a string. Every entry
// has a type rule (typeCall / typeMember) and either both device faces of its
// node (cuda, sim), or `lowered`: its rule makes only nodes of other entries
// and plain arithmetic (grid(1) is blockIdx.x * blockDim.x + threadIdx.x;
// sharedArray declares an array). `suspends` says the simulator's thread
// yields at the node (a barrier, a warp operation), so its function runs as a
// generator (ir.ts: hasBarrier). Math's functions follow the same rule in
// math-table.ts. test/jit-intrinsics.test.ts checks that each entry has its
// faces and that a kernel using it types, emits, compiles and runs.
import type * as acorn from 'acorn';

import type { ArrayDecl, AtomicOp, Expr, IntrinsicName, Stmt } from './ir';
import { ATOMIC_HELPERS } from './cuda-helpers';
import { atomic, laneId, ptxCoordinate, ptxLanes, shuffle, type PtxFace } from './ptx-intrinsics';
import { castTo, truth } from './typing';
import { computeDType, strong } from './types';
import type { Ref, TyperContext } from './typer-calls';
import type { Expression } from './typer';

export type IntrinsicExpr = Extract<Expr, { k: 'intrinsic' }>;

/** A call of an intrinsic as the typer meets it; `statement` when its value is not used. */
export interface IntrinsicCall {
  args: Expression[];
  e: acorn.CallExpression;
  statement: boolean;
  variant: string | undefined;
}

export type Typed = Ref | { kind: 'stmt'; s: Stmt };

/** What the CUDA emitter lends an entry's face. */
export interface CudaFace {
  expr(e: Expr): string;
  /** The element of `a` at `idx` as a C lvalue (checked in { debug: true }). */
  element(a: ArrayDecl, idx: Expr[], at: number): string;
  addHelper(text: string): void;
}

/** What the simulator's code generator lends an entry's face. */
export interface SimFace {
  expr(e: Expr): string;
  /** The flat offset of an element of `a` (checked; recorded for the race check in debug mode). */
  offset(a: ArrayDecl, idx: readonly Expr[], at: number, how: 'rd' | 'wr'): string;
  name(a: ArrayDecl): string;
  /** A fresh temporary of the generated function. */
  temp(prefix: string): string;
  line(at: number): number;
  /** Which warp operation of which function this is (the lanes of a warp must all be at one). */
  site(at: number): string;
}

export interface IntrinsicEntry {
  /** The typer's rule for a call (absent: it cannot be called). */
  typeCall?(t: TyperContext, c: IntrinsicCall): Typed;
  /** The typer's rule for a property read, `threadIdx.x` (absent: it has none a kernel reads). */
  typeMember?(t: TyperContext, prop: string, node: acorn.MemberExpression): Ref;
  /** The node's faces, or why the entry has none of its own. */
  node: {
    cuda(f: CudaFace, e: IntrinsicExpr): string;
    sim(f: SimFace, e: IntrinsicExpr): string;
    /** The PTX emitter's instructions (ptx-intrinsics.ts): the register of the value ('' for a statement). */
    ptx(f: PtxFace, e: IntrinsicExpr): string;
    suspends: boolean;
  } | { lowered: string };
}

const DIMS = ['x', 'y', 'z'] as const;
type Axis = (typeof DIMS)[number];
const SIM_AXIS: Record<Axis, number> = { x: 0, y: 1, z: 2 };

/** A thread coordinate: blockIdx and gridDim reach 2^31 - 1, so they are int64 (their products with blockDim never wrap). */
const coordinate = (what: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim', axis: Axis): IntrinsicExpr =>
  ({ k: 'intrinsic', ty: strong(what === 'blockIdx' || what === 'gridDim' ? 'int64' : 'int32'), name: what, variant: axis, args: [], at: 0 });

function dim3(what: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim', sim: (axis: Axis) => string): IntrinsicEntry {
  return {
    typeMember(t: TyperContext, prop: string, node: acorn.MemberExpression): Ref {
      if (prop !== 'x' && prop !== 'y' && prop !== 'z') t.fail(`${what} has x, y and z`, node.property);
      return { kind: 'scalar', e: coordinate(what, prop) };
    },
    node: {
      cuda: (_f, e) => (e.ty.dtype === 'int64' ? `((long long)${what}.${String(e.variant)})` : `((int)${what}.${String(e.variant)})`),
      sim: (_f, e) => sim(e.variant as Axis),
      ptx: (f, e) => ptxCoordinate(f.out, what, String(e.variant), e.ty.dtype),
      suspends: false,
    },
  };
}

/** grid(n) / gridsize(n): 64-bit (a grid of 2^31 - 1 blocks of 1024 threads passes int32; Numba's cuda.grid is 64-bit too). */
function gridLike(kind: 'grid' | 'gridsize'): IntrinsicEntry {
  return {
    typeCall(t: TyperContext, { args, e }: IntrinsicCall): Typed {
      const n = args.length === 1 && args[0].type === 'Literal' ? args[0].value : undefined;
      if (n !== 1 && n !== 2 && n !== 3) t.fail(`${kind}() takes a literal 1, 2 or 3`, e);
      const i64 = strong('int64');
      const items = DIMS.slice(0, n).map((axis): Expr => {
        const sp = (what: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim'): Expr => castTo(coordinate(what, axis), 'int64');
        if (kind === 'gridsize') return { k: 'arith', ty: i64, op: '*', a: sp('gridDim'), b: sp('blockDim') };
        return { k: 'arith', ty: i64, op: '+', a: { k: 'arith', ty: i64, op: '*', a: sp('blockIdx'), b: sp('blockDim') }, b: sp('threadIdx') };
      });
      if (n === 1) return { kind: 'scalar', e: items[0] };
      return { kind: 'tuple', items };
    },
    node: { lowered: 'threadIdx, blockIdx, blockDim, gridDim and int64 arithmetic' },
  };
}

/** A statement intrinsic (a barrier, a fence): an expression statement whose value no one may use. */
function statementOnly(name: IntrinsicName, t: TyperContext, c: IntrinsicCall): Typed {
  if (!c.statement) t.fail(`${t.text(c.e.callee)}() gives no value`, c.e);
  return { kind: 'stmt', s: { k: 'expr', x: { k: 'intrinsic', ty: strong('bool'), name, args: [], at: c.e.start } } };
}

function arrayMaker(kind: 'sharedArray' | 'localArray'): IntrinsicEntry {
  return {
    typeCall: (t, { e }) => t.fail(`${kind}() makes an array; declare it: const tile = jit.${kind}([32, 33], 'float32')`, e),
    node: { lowered: 'an array declaration (typer-calls.ts: arrayDeclaration)' },
  };
}

function warpShuffle(): IntrinsicEntry {
  return {
    typeCall(t: TyperContext, { args, e, variant }: IntrinsicCall): Typed {
      const mode = String(variant);
      if (args.length !== 2) t.fail(`shfl.${mode}(value, ${mode === 'sync' ? 'srcLane' : mode === 'xor' ? 'laneMask' : 'delta'}) takes 2 arguments`, e);
      const v = t.expr(args[0]);
      const value = v.ty.dtype === 'bool' ? castTo(v, 'int32') : v;
      const n = castTo(t.expr(args[1]), 'int32');
      return { kind: 'scalar', e: { k: 'intrinsic', ty: { dtype: value.ty.dtype, weak: false }, name: 'shfl', variant: mode, args: [castTo(value, value.ty.dtype), n], at: e.start } };
    },
    node: {
      // Over the lanes that reach the call (LANGUAGE.md "Warps").
      cuda: (f, e) => `__shfl${e.variant === 'sync' ? '' : `_${String(e.variant)}`}_sync(__activemask(), ${f.expr(e.args[0])}, ${f.expr(e.args[1])})`,
      sim: (f, e) => warpRequest(f, e, String(e.variant)),
      ptx: (f, e) => shuffle(f, String(e.variant), e.args[0], e.args[1]),
      suspends: true,
    },
  };
}

/** Suspends the lane until every lane of its warp reaches a warp operation (simulator.ts steps them in lockstep). */
function warpRequest(f: SimFace, e: IntrinsicExpr, op: string): string {
  return `(yield { op: '${op}', site: '${f.site(e.at)}', line: ${f.line(e.at)}${e.args.map((a, i) => `, ${i === 0 ? 'v' : 'n'}: ${f.expr(a)}`).join('')} })`;
}

function lanes(kind: 'ballot' | 'activemask'): IntrinsicEntry {
  return {
    typeCall(t: TyperContext, { args, e }: IntrinsicCall): Typed {
      const want = kind === 'ballot' ? 1 : 0;
      if (args.length !== want) t.fail(`${kind}(${want === 1 ? 'predicate' : ''}) takes ${want} argument${want === 1 ? '' : 's'}`, e);
      // The lanes as bits of an int64 (lane 31 set is no negative number).
      return { kind: 'scalar', e: { k: 'intrinsic', ty: strong('int64'), name: kind, args: args.map((x) => truth(t.expr(x))), at: e.start } };
    },
    node: {
      cuda: (f, e) => (kind === 'activemask' ? '((long long)__activemask())' : `((long long)__ballot_sync(__activemask(), ${f.expr(e.args[0])}))`),
      sim: (f, e) => warpRequest(f, e, kind),
      ptx: (f, e) => ptxLanes(f, kind, e.args[0]),
      suspends: true,
    },
  };
}

const atomicEntry: IntrinsicEntry = {
  typeCall(t: TyperContext, { args, e, variant }: IntrinsicCall): Typed {
    const op = variant as AtomicOp;
    const arity = op === 'cas' ? 4 : 3;
    if (args.length !== arity) t.fail(`atomic.${op} takes ${op === 'cas' ? '(array, index, compare, value)' : '(array, index, value)'}`, e);
    const arr = t.ref(args[0]);
    if (arr.kind !== 'array') return t.fail(`atomic.${op}: the first argument must be a tensor or a shared array`, args[0]);
    const dt = arr.arr.dtype;
    const ok = op === 'and' || op === 'or' || op === 'xor' ? ['int32', 'int64'] : ['int32', 'int64', 'float32', 'float64'];
    if (!ok.includes(dt)) t.fail(`atomic.${op} works on ${ok.join(', ')} arrays; ${arr.arr.label} is ${dt}`, args[0]);
    const idxNode = args[1];
    const nodes = idxNode.type === 'ArrayExpression' ? idxNode.elements.map((x) => {
      if (x === null || x.type === 'SpreadElement') return t.fail('write each index', idxNode);
      return x;
    }) : [idxNode as acorn.Expression];
    const idx = t.indices(arr.arr, nodes, idxNode);
    const cd = computeDType(dt);
    const vals = args.slice(2).map((a) => castTo(t.expr(a), cd));
    return { kind: 'scalar', e: { k: 'intrinsic', ty: strong(cd), name: 'atomic', variant: op, arr: arr.arr, idx, args: vals, at: e.start } };
  },
  node: {
    cuda(f, e) {
      f.addHelper(ATOMIC_HELPERS);
      return `gx_atomic_${String(e.variant)}(&${f.element(e.arr as ArrayDecl, e.idx ?? [], e.at)}, ${e.args.map((v) => f.expr(v)).join(', ')})`;
    },
    sim(f, e) {
      const arr = e.arr as ArrayDecl;
      const a = f.name(arr);
      const [v, c] = e.variant === 'cas' ? [e.args[1], e.args[0]] : [e.args[0], undefined];
      const cs = c === undefined ? 'undefined' : f.expr(c);
      const k = f.temp('_k'), o = f.temp('_o');
      return `(${k} = ${f.offset(arr, e.idx ?? [], e.at, 'wr')}, ${o} = ${a}.d[${k}], ${a}.d[${k}] = R.atomic('${String(e.variant)}', '${arr.dtype}', ${o}, ${f.expr(v)}, ${cs}), ${o})`;
    },
    ptx: (f, e) => atomic(f, String(e.variant), e.arr as ArrayDecl, e.idx ?? [], e.args, e.ty.dtype),
    suspends: false,
  },
};

/** Every intrinsic, by name (NOTE [ One intrinsic table ]). */
export const INTRINSIC_TABLE: { readonly [K in IntrinsicName]: IntrinsicEntry } = {
  threadIdx: dim3('threadIdx', (a) => `T.t${a}`),
  blockIdx: dim3('blockIdx', (a) => `T.b${a}`),
  blockDim: dim3('blockDim', (a) => `S.bd[${SIM_AXIS[a]}]`),
  gridDim: dim3('gridDim', (a) => `S.gd[${SIM_AXIS[a]}]`),
  grid: gridLike('grid'),
  gridsize: gridLike('gridsize'),
  syncthreads: {
    typeCall: (t, c) => statementOnly('syncthreads', t, c),
    node: { cuda: () => '__syncthreads()', sim: (f, e) => `(yield ${f.line(e.at)})`, ptx: (f) => (f.out.ins('bar.sync 0;'), ''), suspends: true },
  },
  threadfence: {
    typeCall: (t, c) => statementOnly('threadfence', t, c),
    // The simulator runs a block's threads in turns: every write is seen by the next reader already.
    node: { cuda: () => '__threadfence()', sim: () => 'undefined', ptx: (f) => (f.out.ins('membar.gl;'), ''), suspends: false },
  },
  sharedArray: arrayMaker('sharedArray'),
  localArray: arrayMaker('localArray'),
  atomic: atomicEntry,
  laneId: {
    typeCall(t: TyperContext, { args, e }: IntrinsicCall): Typed {
      if (args.length !== 0) t.fail('laneId() takes no arguments', e);
      return { kind: 'scalar', e: { k: 'intrinsic', ty: strong('int32'), name: 'laneId', args: [], at: e.start } };
    },
    node: {
      cuda: () => '((int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31))',
      sim: () => '((T.tx + S.bd[0] * (T.ty + S.bd[1] * T.tz)) & 31)',
      ptx: (f) => laneId(f.out),
      suspends: false,
    },
  },
  shfl: warpShuffle(),
  ballot: lanes('ballot'),
  activemask: lanes('activemask'),
};
