// The inspector session closure.ts reads closures through: Node's own
// connection class behind inspector.Session when it can be had quietly,
// else inspector.Session itself (NOTE [ Closure reads ] in closure.ts says
// why and when). Both answer a post() synchronously, in this thread.
import type * as Inspector from 'inspector';

/** A CDP answer's `result`. */
export type Answer = Record<string, unknown>;

/** What closure reads use of inspector.Session: a post() whose callback has run when it returns. */
export interface ClosureSession {
  post(method: string, params: object, cb: (err: Error | null, result: Answer) => void): void;
}

/** Which session serves the process: Node's connection class ('binding') or inspector.Session ('inspector'). */
export type SessionRoute = 'binding' | 'inspector';

/** node:internal's inspector Connection, as inspector.Session uses it (lib/inspector.js). */
interface Connection {
  dispatch(message: string): void;
  disconnect?(): void;
}

/** One answer of the connection: `result`, or `error` for a command it refused. */
interface Reply {
  id: number;
  result?: Answer;
  error?: { code?: unknown; message?: unknown };
}

const isReply = (v: unknown): v is Reply => typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'number';

const isConnection = (v: unknown): v is Connection =>
  typeof v === 'object' && v !== null && typeof (v as { dispatch?: unknown }).dispatch === 'function';

/**
 * Whether process.binding would print DEP0111: Node wraps it in util.deprecate
 * (a function named `deprecated`) under --pending-deprecation, given on the
 * command line, in NODE_OPTIONS or as NODE_PENDING_DEPRECATION=1.
 */
export function bindingDeprecated(binding: Function, execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  // Plain string tests: a regular expression is compiled at its first run (~20 us; the process's first one ~0.13 ms).
  const flag = (a: string): boolean => a === '--pending-deprecation' || a === '--pending_deprecation';
  return binding.name === 'deprecated' || execArgv.some(flag) || (env.NODE_OPTIONS ?? '').split(' ').some(flag) ||
    env.NODE_PENDING_DEPRECATION === '1';
}

/** A session over process.binding('inspector').Connection, or undefined when there is none to be had without a warning or a throw. */
function bindingSession(): ClosureSession | undefined {
  const binding: unknown = Reflect.get(process, 'binding');
  if (typeof binding !== 'function' || bindingDeprecated(binding)) return undefined;
  /** What the connection said during the current dispatch (its answers come before dispatch() returns). */
  const inbox: string[] = [];
  let conn: unknown;
  try {
    const Ctor: unknown = Reflect.get(Object(binding.call(process, 'inspector')), 'Connection');
    if (typeof Ctor !== 'function') return undefined;
    conn = Reflect.construct(Ctor, [(message: string) => inbox.push(message)]);
  } catch {
    return undefined; // no inspector built in, or the binding refused (a permission model)
  }
  if (!isConnection(conn)) return undefined;
  const c = conn;
  let nextId = 0;
  /** The answer to one command; undefined when none came before dispatch() returned. */
  const send = (method: string, params: object): Reply | undefined => {
    const id = ++nextId;
    inbox.length = 0;
    c.dispatch(JSON.stringify({ id, method, params }));
    for (const text of inbox) {
      const r: unknown = JSON.parse(text);
      if (isReply(r) && r.id === id) return r;
    }
    return undefined;
  };
  // The answers must come synchronously, as inspector.Session's do in this thread: one harmless command proves it.
  let answered = false;
  try {
    answered = send('Runtime.releaseObjectGroup', { objectGroup: 'gx-probe' })?.result !== undefined;
  } catch {
    // a connection that cannot dispatch: inspector.Session's turn
  }
  if (!answered) {
    c.disconnect?.();
    return undefined;
  }
  return {
    post(method, params, cb) {
      const r = send(method, params);
      if (r?.result !== undefined) return cb(null, r.result);
      const e = r?.error;
      cb(new Error(e === undefined ? `Inspector: no answer to ${method}` : `Inspector error ${String(e.code)}: ${String(e.message)}`), {});
    },
  };
}

/** inspector.Session, connected (loading node:inspector, which loads worker_threads and streams). */
function inspectorSession(): ClosureSession {
  // inspector loads with the first closure read, not with gpuext (NOTE [ Lazy entry ] in lib/README.md).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const s = new (require('inspector') as typeof Inspector).Session();
  s.connect();
  return { post: (method, params, cb) => s.post(method, params, (err, r) => cb(err, (r ?? {}) as Answer)) };
}

let memo: { session: ClosureSession; route: SessionRoute } | undefined;

/** The process's session, connected at the first call and kept; GPUEXT_CLOSURE_SESSION=inspector takes inspector.Session (tests). */
export function closureSession(): ClosureSession {
  if (memo !== undefined) return memo.session;
  const fast = process.env.GPUEXT_CLOSURE_SESSION === 'inspector' ? undefined : bindingSession();
  memo = fast !== undefined ? { session: fast, route: 'binding' } : { session: inspectorSession(), route: 'inspector' };
  return memo.session;
}

/** The route the process's session took; undefined before the first closure read. */
export function closureSessionRoute(): SessionRoute | undefined {
  return memo?.route;
}
