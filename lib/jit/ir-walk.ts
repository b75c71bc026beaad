// Walking the typed IR (ir.ts): every node of a body visited, and what a
// walk decides of an expression. Apart from ir.ts so that the typer's
// helpers (typing.ts) can ask without importing the intrinsic table.
import type { Expr, Stmt } from './ir';

/** Visits every expression and statement of `body`. */
export function walk(body: readonly Stmt[], onExpr: (e: Expr) => void, onStmt: (s: Stmt) => void = () => undefined): void {
  const ex = (e: Expr | undefined): void => {
    if (e === undefined) return;
    onExpr(e);
    switch (e.k) {
      case 'cast': case 'neg': case 'not': case 'bitnot': case 'truth': case 'assign': ex(e.x); break;
      case 'arith': case 'cmp': case 'logic': ex(e.a); ex(e.b); break;
      case 'select': ex(e.c); ex(e.a); ex(e.b); break;
      case 'math': case 'call': case 'foreign': e.args.forEach(ex); break;
      case 'load': e.idx.forEach(ex); break;
      case 'intrinsic': e.idx?.forEach(ex); e.args.forEach(ex); break;
      default: break;
    }
  };
  const st = (s: Stmt): void => {
    onStmt(s);
    switch (s.k) {
      case 'decl': ex(s.init); break;
      case 'expr': ex(s.x); break;
      case 'store': s.idx.forEach(ex); ex(s.x); break;
      case 'if': ex(s.c); s.then.forEach(st); s.else?.forEach(st); break;
      case 'for': s.init.forEach(st); ex(s.c); s.update.forEach(ex); s.body.forEach(st); break;
      case 'while': case 'do': ex(s.c); s.body.forEach(st); break;
      case 'return': ex(s.x); s.items?.forEach(ex); break;
      case 'block': s.body.forEach(st); break;
      case 'tuple': s.args.forEach(ex); break;
      default: break;
    }
  };
  body.forEach(st);
}

/**
 * Whether evaluating `e` has no effect but its value (no assignment, update,
 * call, intrinsic or op call in it): such a node may be evaluated twice, or
 * once for two uses, with the same result.
 */
export function isPure(e: Expr): boolean {
  let pure = true;
  walk([{ k: 'expr', x: e }], (x) => {
    if (x.k === 'assign' || x.k === 'update' || x.k === 'call' || x.k === 'intrinsic' || x.k === 'foreign' || x.k === 'item') pure = false;
  });
  return pure;
}
