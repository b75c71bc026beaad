#!/usr/bin/env node
// Fails when lib/ has an import cycle (a module that, through the modules it
// imports, imports itself) or a value import that goes up a layer or sideways
// (NOTE [ lib layers ] below; lib/README.md shows the table), naming file and
// line. Cycles make load order matter (a value read before its module finished
// loading is undefined); a layer that imports a higher one ties rooms together
// that the layout keeps apart (the run-time loading the build tool, the ops
// loading autograd's engine). scripts/check-layers.js keeps csrc/ layered the
// same way. `npm test` runs both.
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

// NOTE [ lib layers ]
// Folder (under lib/) -> layer, from the bottom up; a module may import its own
// folder and any lower layer, never a higher one or a sibling of its layer
// (rtc, io and profiler stand side by side; so do jit, distributed and nn).
// The generated files sit with their readers: the tables at the bottom, the
// ops' faces with the ops, the derivative formulas with autograd. The entry
// files (lib/index.ts, lib/register.ts) are '.'.
const LAYERS = {
  generated: 0, platform: 1, core: 2, tape: 3, extension: 4, ops: 5, autograd: 6,
  rtc: 7, io: 7, profiler: 7, jit: 8, distributed: 8, nn: 8, optim: 9, toolkit: 10, '.': 11, cli: 12,
};
const GENERATED_LAYER = { 'ops.ts': 'ops', 'elementwise.ts': 'ops', 'derivatives.ts': 'autograd', 'collective-functions.ts': 'distributed' };

/** The layer name of a lib/ file: its first folder ('.' for the entry files), or a generated file's readers'. */
function layerOf(file) {
  const parts = path.relative(lib, file).split(path.sep);
  if (parts.length === 1) return '.';
  if (parts[0] === 'generated') return GENERATED_LAYER[parts[1]] ?? 'generated';
  return parts[0];
}

const upward = [];
for (const [f, deps] of imports) {
  const from = layerOf(f);
  if (!(from in LAYERS)) { upward.push(`${rel(f)}: folder lib/${from}/ has no layer in scripts/check-imports.js's LAYERS`); continue; }
  for (const { target, line } of deps) {
    const to = layerOf(target);
    if (to === from || LAYERS[to] < LAYERS[from]) continue;
    upward.push(`${rel(f)}:${line}: layer ${LAYERS[from]} (lib/${from === '.' ? '' : `${from}/`}) imports ${rel(target)} (layer ${LAYERS[to]})`);
  }
}
// Every folder's README says which layer it is.
for (const [folder, layer] of Object.entries(LAYERS)) {
  if (folder === '.' || !fs.existsSync(path.join(lib, folder))) continue;
  const readme = path.join(lib, folder, 'README.md');
  if (!fs.existsSync(readme) || !new RegExp(`\\bLayer ${layer}\\b`).test(fs.readFileSync(readme, 'utf8'))) {
    upward.push(`${rel(readme)}: missing, or does not say "Layer ${layer}"`);
  }
}
if (upward.length > 0) {
  console.error(`check-imports: ${upward.length} import${upward.length === 1 ? '' : 's'} going up a layer or sideways (NOTE [ lib layers ] in scripts/check-imports.js):`);
  for (const u of upward) console.error(`  ${u}`);
  console.error('Move what both sides need down a layer, invert the dependency (a hook the lower layer exposes), or import types only (import type).');
  process.exit(1);
}
const used = new Set([...graph.keys()].map(layerOf));
console.log(`lib/: ${graph.size} modules in ${used.size} folders on ${new Set([...used].map((l) => LAYERS[l])).size} layers, no import cycles, none going up`);
