// gx.fuse's checks of the numbers its ops take: the facts the eager ops
// apply to their number operands, worked out on the host from the fused
// function's arguments before its kernel is launched.
//
// NOTE [ Argument facts in fused functions ]
// The eager ops refuse some values of their number operands: hardtanh a
// minVal above its maxVal (the op list's `ordered`, ops/op-list.js), an op
// computing in an integer dtype a number outside that dtype's range, pow an
// integer to a negative number. In a fused function those numbers are
// literals, numbers the function closes over, or its own number arguments and
// arithmetic of them: known when the kernel is made, or only at the call. So
// each op call the typer makes keeps its facts (fuse-ops.ts, which asks the
// eager ops' own rules in lib/ops/elementwise/elementwise.ts: one rule for
// both), and once the function is typed gx.fuse works its facts' operands out
// on the host: the same typed IR the kernel runs, compiled to JS by
// interpret.ts (the language's semantics, as the simulator runs it), from the
// function's number arguments. A fact of constants is decided when the kernel
// is made; one of arguments on every call, before the launch. A fact that
// fails makes that call run unfused, where the eager op refuses it with its
// own error (RangeError: gx.hardtanh: minVal cannot be greater than maxVal,
// ...): every argument error of a fused function surfaces so, from the eager
// op, naming it (a bool operand of gx.sub, a dtype the op refuses). A fact of
// an op in a branch the call does not take costs that call its fusion only.
// A fact whose operands the host cannot work out (a number computed from
// elements, a `let` the function changes, a device function's parameter)
// leaves the function unfused, saying why.
import { compileScalar, type SimBlock, type SimState, type SimThread } from './interpret';
import { calledFunctions, walk, type Expr, type FnIR, type ForeignFact, type Stmt, type VarDecl } from './ir';

/** What the facts of a fused function ask: nothing, a fault already (constants), or a check of each call's arguments. */
export type FactChecks =
  | { kind: 'none' }
  | { kind: 'unfused'; why: string }
  | { kind: 'check'; fault(args: readonly unknown[]): string | undefined };

type Decl = Extract<Stmt, { k: 'decl' }>;
type FactValue = number | bigint | boolean;

// A host computation of facts reads no thread, launch or block (HOST_NODES has no loop, intrinsic or array).
const NO_THREAD: SimThread = { tx: 0, ty: 0, tz: 0, bx: 0n, by: 0n, bz: 0n };
const none = (): never => { throw new Error('gpuext internal error: a fact of a fused function reached the simulator\'s launch state'); };
const NO_STATE: SimState = { bd: [1, 1, 1], gd: [1n, 1n, 1n], steps: 0, over: none, local: none, rd: none, wr: none };
const NO_BLOCK: SimBlock = { shared: none };

/** Expressions the host computes as the kernel does: no element, call, op or assignment in them. */
const HOST_NODES = new Set<Expr['k']>(['lit', 'var', 'cast', 'arith', 'cmp', 'neg', 'not', 'bitnot', 'truth', 'logic', 'select', 'math']);

/** The facts of `fn`'s op calls (and of the device functions it calls), checked on the host (NOTE [ Argument facts in fused functions ]). */
export function factChecks(fn: FnIR): FactChecks {
  const own: ForeignFact[] = [];
  const inner: ForeignFact[] = [];
  walk(fn.body, (e) => { if (e.k === 'foreign' && e.facts !== undefined) own.push(...e.facts); });
  for (const g of calledFunctions(fn)) walk(g.body, (e) => { if (e.k === 'foreign' && e.facts !== undefined) inner.push(...e.facts); });
  if (own.length === 0 && inner.length === 0) return { kind: 'none' };
  // The function's number arguments (its tensors are elements here), and its consts at its top level: their values are their initializers.
  const numbers = new Set<unknown>(fn.params.filter((p) => !('space' in p) && p.ty.weak));
  const consts = new Map<VarDecl, Decl>();
  for (const s of fn.body) if (s.k === 'decl' && s.v.isConst) consts.set(s.v, s);
  /** Whether the host can compute `e` (`top`: an expression of fn's own body), and whether it reads an argument; the consts it reads go into `used`. */
  const known = (e: Expr, top: boolean, used: Set<Decl>): { host: boolean; reads: boolean } => {
    let host = true, reads = false;
    walk([{ k: 'expr', x: e }], (x) => {
      if (!HOST_NODES.has(x.k)) host = false;
      if (x.k !== 'var' || !host) return;
      const d = top ? consts.get(x.v) : undefined;
      if (top && numbers.has(x.v)) {
        reads = true;
      } else if (d !== undefined) {
        const r = known(d.init, true, used);
        host &&= r.host;
        reads ||= r.reads;
        used.add(d);
      } else {
        host = false;
      }
    });
    return { host, reads };
  };
  const now: ForeignFact[] = [], later: ForeignFact[] = [];
  const usedNow = new Set<Decl>(), usedLater = new Set<Decl>();
  for (const [facts, top] of [[own, true], [inner, false]] as const) {
    for (const f of facts) {
      const used = new Set<Decl>();
      const ks = f.args.map((a) => known(a, top, used));
      if (ks.some((k) => !k.host)) {
        return { kind: 'unfused', why: `the numbers ${f.op} checks must be known on the host at the call (literals, numbers closed over, the function's number arguments and consts of them)` };
      }
      const reads = ks.some((k) => k.reads);
      (reads ? later : now).push(f);
      for (const d of used) (reads ? usedLater : usedNow).add(d);
    }
  }
  const constant = evaluator(fn, usedNow, now)([]);
  if (constant !== undefined) return { kind: 'unfused', why: constant };
  return later.length === 0 ? { kind: 'none' } : { kind: 'check', fault: evaluator(fn, usedLater, later) };
}

/** The first fault of `facts` for a call's arguments: their operands computed by the typed IR (with the consts `used`), as interpret.ts runs it. */
function evaluator(fn: FnIR, used: ReadonlySet<Decl>, facts: readonly ForeignFact[]): (args: readonly unknown[]) => string | undefined {
  if (facts.length === 0) return () => undefined;
  const items = facts.flatMap((f) => f.args);
  const decls = fn.body.filter((s): s is Decl => s.k === 'decl' && used.has(s));
  const host = compileScalar({
    kind: 'device', name: 'gx_fuse_facts', api: fn.api, text: fn.text, params: fn.params,
    body: [...decls, { k: 'return', items: [...items] }], ret: { kind: 'tuple', tys: items.map((x) => x.ty) },
  });
  // A JS number argument as the IR holds its parameter's type (int64 as a BigInt); tensors are never read.
  const int64 = fn.params.map((p) => !('space' in p) && p.ty.dtype === 'int64');
  return (args) => {
    const values = host(NO_THREAD, NO_STATE, NO_BLOCK, ...args.map((a, i) => (int64[i] && typeof a === 'number' ? BigInt(a) : a))) as FactValue[];
    let at = 0;
    for (const f of facts) {
      const why = f.fault(values.slice(at, at + f.args.length));
      if (why !== undefined) return `${f.op}: ${why}`;
      at += f.args.length;
    }
    return undefined;
  };
}
