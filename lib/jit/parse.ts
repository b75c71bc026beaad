// A jit function's parse (source.ts) and its description for the
// translation cache: its parameters and the static chains its body reads.
// A module of its own so a kernel object's construction, which parses a text
// the cache has not seen, loads acorn and no part of the typer or the
// emitters (the first call loads those it needs).
import { closureValues, type Lookup } from './closure';
import { parseFunction, referencedNames, type Node, type ParsedFunction } from './source';
import type { FunctionInfo } from './translation-cache';

/** A parsed function with the lookup of the names it closes over (read once, when first needed). */
export interface Parsed {
  parsed: ParsedFunction;
  lookup(): Lookup;
}

/**
 * Parses `fn` (errors name `api`) and describes it for the cache: its
 * parameters and the static chains it reads. `lookup` is the caller's read
 * of the closure when it has one (the cache key's), so the closure is read
 * once; it must cover the names the body reads.
 */
export function parse(fn: Function, api: string, lookup?: () => Lookup): { p: Parsed; info: FunctionInfo } {
  const parsed = parseFunction(fn, api);
  const chains = staticChains(parsed);
  const names = referencedNames(parsed);
  const roots = new Set(chains.map((c) => c.split('.')[0]));
  let own: Lookup | undefined;
  const covered = lookup !== undefined && [...names].every((n) => roots.has(n));
  const p: Parsed = { parsed, lookup: covered ? lookup : () => (own ??= closureValues(fn, names)) };
  return { p, info: { params: parsed.params, chains } };
}

/**
 * Every `a`, `a.b.c` a function's body reads whose root is not a parameter,
 * each as long as it goes (`jit.blockIdx.x`, not `jit` too; `lib_1.grid` in
 * TypeScript's `(0, lib_1.grid)`): what the typer can resolve through the
 * closure (closure.ts's staticValueOf), so what the cache key must cover.
 */
function staticChains(f: ParsedFunction): string[] {
  const out = new Set<string>();
  const params = new Set(f.params);
  const chainOf = (n: Node): string | undefined => {
    if (n.type === 'Identifier') return n.name;
    if (n.type !== 'MemberExpression' || n.computed || n.property.type !== 'Identifier' || n.object.type === 'Super') return undefined;
    const base = chainOf(n.object);
    return base === undefined ? undefined : `${base}.${n.property.name}`;
  };
  const visit = (n: unknown, key?: string, parent?: { type?: string; computed?: boolean }): void => {
    if (Array.isArray(n)) {
      for (const x of n) visit(x, key, parent);
      return;
    }
    if (n === null || typeof n !== 'object' || typeof (n as { type?: unknown }).type !== 'string') return;
    const node = n as Node;
    const isName = (key === 'property' && parent?.type === 'MemberExpression' && !parent.computed) ||
      (key === 'key' && parent?.type === 'Property' && !parent.computed);
    if (isName) return;
    if (node.type === 'Identifier' || node.type === 'MemberExpression') {
      const chain = chainOf(node);
      if (chain !== undefined) {
        if (!params.has(chain.split('.')[0])) out.add(chain);
        return;
      }
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'type' && k !== 'start' && k !== 'end') visit(v, k, node);
  };
  visit(f.body);
  return [...out].sort();
}

