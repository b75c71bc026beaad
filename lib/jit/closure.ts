// What a user's kernel function refers to besides its parameters and locals
// (a `const SQRT_2PI` beside it, `gx` or `jit` imported by its module, a
// gx.jit.device function), read through the inspector as V8 sees the
// function's scopes ([[Scopes]]): numbers are inlined into the generated
// CUDA as Numba inlines globals, gx.jit's objects become intrinsics, device
// functions are compiled beside the kernel, and the CPU simulator rebuilds
// the function with the same values. Read once per kernel object, when it is
// first compiled; names not in a closure are looked up on globalThis.
//
// NOTE [ Closure reads ]
// Only the inspector can read a closure: a free name of a function defined in
// a module (`jit` from `const { jit } = gx`, a `const K` beside it) is bound
// in a scope no other JS can reach, so there is no reading without it; what
// the reads cost is kept down instead. One session serves the process
// (inspector-session.ts; connected at the first read and kept); each read's
// handles are one object group, released when it ends, so the kept session
// holds no value alive; the scopes are read from the innermost out and no
// further than the last name wanted. The values are not remembered per
// function object: a closed-over `let` may change between two kernels of one
// function (the inspector does not say which bindings are const), and each
// kernel is keyed and translated with the values of its time
// (test/jit-cache.test.ts).
// The session is Node's own connection class, the one inspector.Session wraps
// (process.binding('inspector').Connection: `new Connection(onMessage)`,
// `dispatch(JSON)`, each answer handed to onMessage before dispatch returns).
// A warm first call is mostly this read, and require('inspector') loads
// worker_threads (and with it streams), which a read does not use:
// connecting that way cost ~1.5 ms on the 2-core machine and ~3.3 ms on the
// GPU host, the connection class ~0.2 ms and no module.
// inspector.Session stays the route (test/closure-session.test.ts reads the
// same values both ways) when process.binding is missing or throws (a Node
// without the inspector, a permission model), when its connection does not
// answer a probe synchronously, when process.binding would print DEP0111
// (--pending-deprecation on the command line or in NODE_OPTIONS, or
// NODE_PENDING_DEPRECATION=1, under which Node wraps it in util.deprecate),
// and when GPUEXT_CLOSURE_SESSION=inspector asks for it (the tests' switch).
import { closureSession } from './inspector-session';

interface RemoteObject {
  type?: string;
  value?: unknown;
  /** Infinity, -Infinity, NaN, -0 and bigints, which JSON cannot carry in `value`. */
  unserializableValue?: string;
  objectId?: string;
  description?: string;
}
interface PropertyDescriptor {
  name: string;
  value?: RemoteObject;
}

/** How a free name of a function resolves: `found` false when neither a closure nor globalThis has it. */
export type Lookup = (name: string) => { found: boolean; value: unknown };

/** A node of a function's source, as far as staticValueOf looks at it. */
interface ChainNode {
  type: string;
  name?: string;
  computed?: boolean;
  object?: ChainNode;
  property?: ChainNode;
  expressions?: ChainNode[];
}

/**
 * The JS value a free name or an a.b.c chain of one stands for (undefined
 * when it is not one): how the translator and the simulator recognize
 * gx.jit's intrinsics whatever the module calls them (`jit.grid`,
 * `gx.jit.grid`, TypeScript's `(0, lib_1.grid)`). `isLocal` names the
 * function's own variables, which shadow the closure. A dim3 object
 * (`opaque`) is not looked into: its x / y / z are read per thread.
 */
export function staticValueOf(e: ChainNode, lookup: Lookup, isLocal: (name: string) => boolean = () => false,
  opaque: (v: unknown) => boolean = () => false): unknown {
  if (e.type === 'Identifier') return isLocal(e.name as string) ? undefined : lookup(e.name as string).value;
  if (e.type === 'SequenceExpression' && e.expressions?.length === 2) return staticValueOf(e.expressions[1], lookup, isLocal, opaque);
  if (e.type === 'MemberExpression' && !e.computed && e.property?.type === 'Identifier' && e.object !== undefined) {
    const base = staticValueOf(e.object, lookup, isLocal, opaque);
    if (base === null || (typeof base !== 'object' && typeof base !== 'function') || opaque(base)) return undefined;
    try {
      return (base as Record<string, unknown>)[e.property.name as string];
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The values of `names` as `f` sees them through its closures (inner scopes first), then globalThis. */
export function closureValues(f: Function, names: Iterable<string>): Lookup {
  const wanted = new Set(names);
  const found = new Map<string, unknown>();
  if (wanted.size > 0) readScopes(f, wanted, found);
  const g = globalThis as Record<string, unknown>;
  return (name) => {
    if (found.has(name)) return { found: true, value: found.get(name) };
    if (name in g) return { found: true, value: g[name] };
    return { found: false, value: undefined };
  };
}

/** The inspector's handles of one read: released together when the read ends, so a kept session holds no value alive. */
const GROUP = 'gx-jit-closure';

function readScopes(f: Function, wanted: Set<string>, found: Map<string, unknown>): void {
  const s = closureSession();
  const key = `__gx_jit_closure_${process.pid}`;
  const g = globalThis as Record<string, unknown>;
  const sink: unknown[] = [];
  g[key] = { f, sink };
  // A session in this thread answers synchronously: every callback below has run when post() returns.
  const props = (objectId: string, own: boolean): PropertyDescriptor[] => {
    let out: PropertyDescriptor[] = [];
    s.post('Runtime.getProperties', { objectId, ownProperties: own }, (err, r) => {
      if (!err) out = [...(r.result as PropertyDescriptor[]), ...((r.internalProperties ?? []) as PropertyDescriptor[])];
    });
    return out;
  };
  /** An object's value in this realm: the inspector hands it to a function that stores it. */
  const valueOf = (o: RemoteObject): { ok: boolean; value?: unknown } => {
    if (o.objectId === undefined) {
      if (o.unserializableValue !== undefined) return unserializable(o.unserializableValue);
      return { ok: true, value: o.type === 'undefined' ? undefined : o.value };
    }
    sink.length = 0;
    s.post('Runtime.callFunctionOn', {
      objectId: o.objectId,
      functionDeclaration: `function () { globalThis[${JSON.stringify(key)}].sink.push(this); }`,
    }, () => undefined);
    return sink.length === 1 ? { ok: true, value: sink[0] } : { ok: false };
  };
  try {
    let fnId: string | undefined;
    s.post('Runtime.evaluate', { expression: `globalThis[${JSON.stringify(key)}].f`, objectGroup: GROUP }, (err, r) => {
      if (!err) fnId = (r.result as RemoteObject).objectId;
    });
    // [[Scopes]] is an internal property: the function's own properties carry it (its prototype chain's would only cost).
    const scopes = fnId === undefined ? undefined : props(fnId, true).find((p) => p.name === '[[Scopes]]')?.value?.objectId;
    if (scopes === undefined) return;
    for (const scope of props(scopes, true)) {
      if (found.size === wanted.size) break; // the outer scopes' bindings of these names are shadowed
      const id = scope.value?.objectId;
      if (id === undefined || scope.value?.description === 'Global') continue;
      for (const v of props(id, true)) {
        if (!wanted.has(v.name) || found.has(v.name) || v.value === undefined) continue;
        const r = valueOf(v.value);
        if (r.ok) found.set(v.name, r.value);
      }
    }
  } finally {
    delete g[key];
    s.post('Runtime.releaseObjectGroup', { objectGroup: GROUP }, () => undefined);
  }
}

/** The value of a CDP `unserializableValue`: Infinity, -Infinity, NaN, -0 or a bigint (`123n`). */
function unserializable(v: string): { ok: boolean; value?: unknown } {
  switch (v) {
    case 'Infinity': return { ok: true, value: Infinity };
    case '-Infinity': return { ok: true, value: -Infinity };
    case 'NaN': return { ok: true, value: NaN };
    case '-0': return { ok: true, value: -0 };
    default: return /^-?\d+n$/.test(v) ? { ok: true, value: BigInt(v.slice(0, -1)) } : { ok: false };
  }
}
