#!/usr/bin/env node
// Fails when lib/ has an import cycle: a module that, through the modules it
// imports, imports itself. Cycles make load order matter (a value read before
// its module finished loading is undefined) and tie rooms together that the
// layout keeps apart (lib/ face -> generated calls -> the addon). `npm test`
// runs it.
//
// Also fails, naming file and line, when the run-time imports the build tool:
// a value import from the run-time (lib/ but lib/toolkit/, lib/cli/ and the
// entry point lib/index.ts, which faces every layer) into lib/toolkit/ or
// lib/cli/. What both need lives below them, in lib/platform/ (its README).
// The package must load, and run-time kernels compile, without the build's
// code; scripts/check-layers.js keeps csrc/ layered the same way.
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

/** The lib/ files `file` imports at run time, each with the line of its import. */
function valueImports(file) {
  // Comments are blanked, not removed, so line numbers stay right.
  const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, '')).replace(/^\s*\/\/.*$/gm, '');
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
    const line = text.slice(0, m.index + m[0].lastIndexOf(spec)).split('\n').length;
    if (target !== undefined) deps.push({ target, line });
  }
  return deps;
}

const imports = new Map(files(lib).map((f) => [f, valueImports(f)]));
const graph = new Map([...imports].map(([f, deps]) => [f, deps.map((d) => d.target)]));
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

// The build tool's folders, and the run-time files that may still import them, each with its reason.
const BUILD_TOOL = ['lib/toolkit/', 'lib/cli/'];
const ENTRY = 'lib/index.ts';
const RUNTIME_EXCEPTIONS = {
  'lib/toolkit/load.ts': 'gx.load builds an extension on first use (torch.utils.cpp_extension.load): the toolkit\'s face at run time',
};
const inBuildTool = (r) => BUILD_TOOL.some((d) => r.startsWith(d));
const upward = [];
for (const [f, deps] of imports) {
  const from = rel(f).split(path.sep).join('/');
  if (inBuildTool(from) || from === ENTRY || from in RUNTIME_EXCEPTIONS) continue;
  for (const { target, line } of deps) {
    const to = rel(target).split(path.sep).join('/');
    if (inBuildTool(to)) upward.push(`${from}:${line}: imports ${to}, the build tool's`);
  }
}
if (upward.length > 0) {
  console.error(`check-imports: ${upward.length} run-time import${upward.length === 1 ? '' : 's'} of the build tool (${BUILD_TOOL.join(', ')}):`);
  for (const u of upward) console.error(`  ${u}`);
  console.error('Import it from lib/platform/ (move it there when both need it), or import types only (import type).');
  process.exit(1);
}
console.log(`lib/: ${graph.size} modules, no import cycles, no run-time import of ${BUILD_TOOL.join(' or ')} ` +
  `(but ${Object.keys(RUNTIME_EXCEPTIONS).join(', ')}: see RUNTIME_EXCEPTIONS)`);
