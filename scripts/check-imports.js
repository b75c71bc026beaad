#!/usr/bin/env node
// Fails when lib/ has an import cycle: a module that, through the modules it
// imports, imports itself. Cycles make load order matter (a value read before
// its module finished loading is undefined) and tie rooms together that the
// layout keeps apart (lib/ face -> generated calls -> the addon). `npm test`
// runs it.
//
// Counted: value imports and re-exports between lib/ files (`import ... from`,
// `import './x'`, `export ... from`, `require('./x')`). Not counted:
// `import type` / `export type` (erased by tsc: no load order at run time) and
// type-only specifiers (`import { type A }` when every specifier is a type).
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const lib = path.join(root, 'lib');

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return files(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The lib/ files `file` imports at run time. */
function valueImports(file) {
  const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const deps = [];
  const statement = /^\s*(import|export)\s+(type\s+)?([^'"]*?)\s*from\s*['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (let m; (m = statement.exec(text)); ) {
    const spec = m[4] ?? m[5] ?? m[6];
    if (!spec.startsWith('.')) continue;
    if (m[2]) continue;  // import type / export type
    const clause = m[3] ?? '';
    const braces = /\{([\s\S]*)\}/.exec(clause);
    const outside = braces ? clause.replace(braces[0], '').replace(/[\s,]/g, '') : clause.replace(/\s/g, '');
    if (braces && outside === '' && braces[1].split(',').map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith('type '))) continue;
    const base = path.resolve(path.dirname(file), spec);
    const target = [`${base}.ts`, path.join(base, 'index.ts')].find((p) => fs.existsSync(p));
    if (target !== undefined) deps.push(target);
  }
  return deps;
}

const graph = new Map(files(lib).map((f) => [f, valueImports(f)]));
const rel = (f) => path.relative(root, f);

// Depth-first search; every back edge closes a cycle, reported once per set of files.
const state = new Map();  // 1: on the stack, 2: done
const stack = [];
const cycles = new Map();
function visit(f) {
  state.set(f, 1);
  stack.push(f);
  for (const d of graph.get(f) ?? []) {
    if (state.get(d) === 1) {
      const cycle = stack.slice(stack.indexOf(d));
      const key = [...cycle].sort().join('|');
      if (!cycles.has(key)) cycles.set(key, [...cycle, d].map(rel).join(' -> '));
    } else if (!state.has(d)) {
      visit(d);
    }
  }
  stack.pop();
  state.set(f, 2);
}
for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f);

if (cycles.size > 0) {
  console.error(`lib/ has ${cycles.size} import cycle${cycles.size === 1 ? '' : 's'} (a module that imports itself through others):`);
  for (const c of cycles.values()) console.error(`  ${c}`);
  console.error('Break each by moving what both sides need into a module of its own, or by importing types only (import type).');
  process.exit(1);
}
console.log(`lib/: ${graph.size} modules, no import cycles`);
