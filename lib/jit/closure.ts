// The numbers a user's function closes over (`const SQRT_2PI = ...` beside a
// vectorized function), read through the inspector as V8 sees the function's
// scopes ([[Scopes]]), so they can be inlined into the generated CUDA as
// Numba inlines globals. Read once, when a function is first compiled; only
// numbers and booleans are taken (anything else referenced is an error at
// translation, naming it).
import * as inspector from 'inspector';

import type { Constants } from './scalar';

interface RemoteObject {
  type?: string;
  value?: unknown;
  objectId?: string;
  description?: string;
}
interface PropertyDescriptor {
  name: string;
  value?: RemoteObject;
}

/** The numbers and booleans visible to `f` through its closures (not the global scope), by name; inner scopes first. */
export function closureConstants(f: Function): Constants {
  const found = new Map<string, number | boolean>();
  const session = new inspector.Session();
  session.connect();
  const key = `__gx_jit_closure_${process.pid}`;
  const g = globalThis as Record<string, unknown>;
  g[key] = f;
  // A session in this thread answers synchronously: every callback below has run when post() returns.
  const props = (objectId: string, own: boolean): PropertyDescriptor[] => {
    let out: PropertyDescriptor[] = [];
    session.post('Runtime.getProperties', { objectId, ownProperties: own }, (err, r) => {
      if (!err) out = [...(r.result as PropertyDescriptor[]), ...((r.internalProperties ?? []) as PropertyDescriptor[])];
    });
    return out;
  };
  try {
    let fnId: string | undefined;
    session.post('Runtime.evaluate', { expression: `globalThis[${JSON.stringify(key)}]` }, (err, r) => {
      if (!err) fnId = (r.result as RemoteObject).objectId;
    });
    const scopes = fnId === undefined ? undefined : props(fnId, false).find((p) => p.name === '[[Scopes]]')?.value?.objectId;
    if (scopes !== undefined) {
      for (const scope of props(scopes, true)) {
        const id = scope.value?.objectId;
        if (id === undefined || scope.value?.description === 'Global') continue;
        for (const v of props(id, true)) {
          const x = v.value?.value;
          if ((typeof x === 'number' || typeof x === 'boolean') && !found.has(v.name)) found.set(v.name, x);
        }
      }
    }
  } finally {
    delete g[key];
    session.disconnect();
  }
  return (name) => found.get(name);
}
