// The source of a user's kernel function: its text (Function.prototype.toString,
// what a TypeScript function is by the time it runs) parsed by acorn into an
// ESTree, and errors that quote the offending line of that text with a caret,
// raised before any CUDA is generated.
import type * as acorn from 'acorn';

import { loadAcorn } from '../platform/acorn';
import { JitError } from './errors';

/** acorn, from its file (NOTE [ acorn by path ]): this module loads only with the translator. */
const parser = loadAcorn();

export type Node = acorn.AnyNode;

/** A parsed user function: its parameter names and body, with the text errors quote. */
export interface ParsedFunction {
  readonly name: string;
  readonly params: string[];
  /** An expression (an arrow's expression body) or a block. */
  readonly body: acorn.Expression | acorn.BlockStatement;
  readonly text: string;
}

/** Parses `f`; `fn` names the API in errors. Methods (`f(x) {}`) and named or anonymous functions and arrows are accepted. */
export function parseFunction(f: unknown, fn: string): ParsedFunction {
  if (typeof f !== 'function') throw new TypeError(`${fn}: expected a function, got ${typeof f}`);
  const text = Function.prototype.toString.call(f);
  if (text.includes('[native code]')) throw new TypeError(`${fn}: ${f.name || 'the function'} is a native or bound function; pass the function itself`);
  let program: acorn.Program;
  // A method's text (`name(x) { ... }`) is not an expression; parsed as an object literal's member it is.
  const candidates = [`(${text})`, `({${text}})`];
  let error: unknown;
  for (const c of candidates) {
    try {
      program = parser.parse(c, { ecmaVersion: 'latest', sourceType: 'script' });
    } catch (e) {
      // acorn recurses per nesting level: a function nested thousands deep overflows the stack, which is no syntax error.
      if ((e instanceof RangeError && /call stack/i.test(e.message)) || (e instanceof SyntaxError && /stack space/i.test(e.message))) {
        throw new TypeError(`${fn}: the function nests too deeply to be parsed (thousands of levels); split it into smaller expressions or functions`);
      }
      error = e;
      continue;
    }
    const node = functionOf(program);
    if (node === undefined) continue;
    const params = node.params.map((p) => {
      if (p.type !== 'Identifier') throw new JitError(fn, 'parameters must be plain names (no defaults, destructuring or rest)', c, p);
      return p.name;
    });
    if (node.async || node.generator) throw new JitError(fn, 'async and generator functions cannot be kernels', c, node);
    return { name: f.name, params, body: node.body, text: c };
  }
  throw new TypeError(`${fn}: cannot parse the function's source: ${error instanceof Error ? error.message : String(error)}`);
}

function functionOf(program: acorn.Program): acorn.ArrowFunctionExpression | acorn.FunctionExpression | undefined {
  const st = program.body[0];
  if (program.body.length !== 1 || st.type !== 'ExpressionStatement') return undefined;
  const e = st.expression;
  if (e.type === 'ArrowFunctionExpression' || e.type === 'FunctionExpression') return e;
  if (e.type === 'ObjectExpression' && e.properties.length === 1) {
    const p = e.properties[0];
    if (p.type === 'Property' && p.value.type === 'FunctionExpression') return p.value;
  }
  return undefined;
}

/** The names a function's body reads that may come from outside it (every identifier not a property name): what closure.ts looks up. */
export function referencedNames(f: ParsedFunction): Set<string> {
  const names = new Set<string>();
  const visit = (n: unknown, key?: string, parent?: { type?: string; computed?: boolean }): void => {
    if (Array.isArray(n)) {
      for (const x of n) visit(x, key, parent);
      return;
    }
    if (n === null || typeof n !== 'object' || typeof (n as { type?: unknown }).type !== 'string') return;
    const node = n as { type: string; name?: string } & Record<string, unknown>;
    if (node.type === 'Identifier') {
      const isProperty = key === 'property' && parent?.type === 'MemberExpression' && !parent.computed;
      const isKey = key === 'key' && parent?.type === 'Property' && !parent.computed;
      if (!isProperty && !isKey) names.add(node.name as string);
      return;
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'type' && k !== 'start' && k !== 'end') visit(v, k, node);
  };
  visit(f.body);
  for (const p of f.params) names.delete(p);
  return names;
}
