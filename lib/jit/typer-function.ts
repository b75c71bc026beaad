// A whole function typed: the typer's passes repeated until the types of its
// locals and returns settle, device functions it calls typed once per
// argument types (recursion refused), parameters bound.
import { JitError } from './errors';
import type { ArrayDecl, FnIR, ReturnTy, Stmt, VarDecl } from './ir';
import type { Lookup } from './closure';
import { Module, type DeviceFunctionInfo } from './module';
import type { ParsedFunction } from './source';
import { MAX_DEPTH, newId, Typer, type Binding } from './typer';
import type { Ty } from './types';

/** Types until the types of locals and returns settle (each pass may widen them). */
function settle(pass: (types: Map<number, Ty>, ret: ReturnTy | undefined) => { t: Typer; body: Stmt[] }): { t: Typer; body: Stmt[] } {
  const types = new Map<number, Ty>();
  let ret: ReturnTy | undefined;
  for (let i = 0; ; i++) {
    const r = pass(types, ret);
    if (!r.t.changed || i >= 8) return r;
    ret = r.t.ret;
  }
}

/** A parameter of a function as the typer sees it. */
export type ParamSpec = { kind: 'number'; ty: Ty } | { kind: 'array'; arr: ArrayDecl };

/** Types `f` for parameters `params`: a kernel (no return) or a device / scalar function returning `out` (or what its returns have). */
export function typeFunction(f: ParsedFunction, kind: 'kernel' | 'device', name: string, params: readonly ParamSpec[],
  out: Ty | undefined, lookup: Lookup, module: Module, api: string): FnIR {
  if (params.length !== f.params.length) {
    const what = kind === 'kernel' ? 'the kernel' : f.name || 'the function';
    throw new JitError(api, `${what} takes ${f.params.length} argument${f.params.length === 1 ? '' : 's'}, got ${params.length}`, f.text);
  }
  const declared: ReturnTy | undefined = out === undefined ? undefined : { kind: 'scalar', ty: out };
  let decls: (VarDecl | ArrayDecl)[] = [];
  const { t, body } = settle((types, ret) => {
    const t = new Typer(f, lookup, module, api, kind === 'kernel' ? 'kernel' : 'scalar', types, declared, ret,
      (dev, args, fail) => deviceFunction(module, dev, args, fail));
    decls = params.map((s, i): VarDecl | ArrayDecl => (s.kind === 'array' ? s.arr : { id: newId(), name: f.params[i], ty: s.ty, isConst: true }));
    const bound = new Map<string, Binding>(f.params.map((p, i) => {
      const d = decls[i];
      return [p, 'space' in d ? { kind: 'array', arr: d } : { kind: 'var', v: d, key: -1 - i, param: true }];
    }));
    return { t, body: t.run(bound) };
  });
  const ret = kind === 'kernel' ? undefined : declared ?? t.ret;
  if (kind !== 'kernel' && ret === undefined) throw new JitError(api, 'the function returns nothing; it must return its value', f.text);
  if (kind !== 'kernel' && !alwaysReturns(body)) {
    // A path falling off the end gave undefined (NaN) on the CPU, 0 from the CUDA source and an unset register from the PTX.
    throw new JitError(api, `${f.name || 'the function'} can reach its end without returning a value; every path must end in a return`, f.text);
  }
  return { kind, name, api, text: f.text, params: decls, body, ret };
}

/** Device function `dev` typed for arguments `args` (once per types; `fail` quotes the caller). */
function deviceFunction(m: Module, dev: DeviceFunctionInfo, args: Ty[], fail: (what: string) => never): FnIR {
  const key = Module.key(args);
  let bySig = m.specs.get(dev);
  const known = bySig?.get(key);
  if (known !== undefined) return known;
  const label = dev.parsed.name || 'the device function';
  if (m.active.has(dev)) fail(`${dev.parsed.name || 'a device function'} calls itself; recursion is not supported`);
  if (m.active.size >= MAX_DEPTH) fail(`device functions call each other more than ${MAX_DEPTH} deep`);
  if (args.length !== dev.parsed.params.length) {
    fail(`${label} takes ${dev.parsed.params.length} argument${dev.parsed.params.length === 1 ? '' : 's'}, got ${args.length}`);
  }
  const name = `gx_dev_${(dev.parsed.name || 'fn').replace(/[^A-Za-z0-9_]/g, '_')}_${m.count++}`;
  m.active.add(dev);
  try {
    const fn = typeFunction(dev.parsed, 'device', name, args.map((ty) => ({ kind: 'number', ty })), undefined, dev.lookup(), m,
      `gx.jit.device(${dev.parsed.name || 'anonymous'})`);
    if (bySig === undefined) m.specs.set(dev, (bySig = new Map()));
    bySig.set(key, fn);
    return fn;
  } finally {
    m.active.delete(dev);
  }
}

/** Whether `s` is a loop that only a return leaves: for (;;) or while (true), with no break of its own. */
function endless(s: Stmt): boolean {
  const always = s.k === 'for' ? s.c === undefined || (s.c.k === 'lit' && s.c.v === true) : s.k === 'while' && s.c.k === 'lit' && s.c.v === true;
  return always && !breaksOut((s as { body: Stmt[] }).body);
}

/** Whether a break in `body` (outside loops nested in it) leaves the loop whose body it is. */
function breaksOut(body: readonly Stmt[]): boolean {
  return body.some((s) => s.k === 'break' || (s.k === 'if' && (breaksOut(s.then) || (s.else !== undefined && breaksOut(s.else)))) ||
    (s.k === 'block' && breaksOut(s.body)));
}

/** Whether every way through `body` ends in a return (or a loop only a return leaves): C's rule, JS gives undefined. */
export function alwaysReturns(body: readonly Stmt[]): boolean {
  return body.some((s) => s.k === 'return' || endless(s) || (s.k === 'block' && alwaysReturns(s.body)) ||
    (s.k === 'if' && s.else !== undefined && alwaysReturns(s.then) && alwaysReturns(s.else)));
}
