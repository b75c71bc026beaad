#!/usr/bin/env node
// Fails when a hand-written file is longer than 600 lines (lib/, csrc/, ops/,
// scripts/, test/, bench/), or a function of lib/ longer than 80: a file
// should be small enough to read in one sitting, with one purpose (llm.c's
// llmc/ files are 20-600 lines), and a function small enough to hold in mind.
// Generated files are exempt (they say "generated ... do not edit" in their
// first lines, or live in generated/ folders). The exceptions are listed
// below, each with its reason. `npm test` runs it.
//   node scripts/check-sizes.js
'use strict';
const fs = require('fs');
const path = require('path');
const ts = require('typescript');

const root = path.resolve(__dirname, '..');
const MAX_LINES = 600;
const MAX_FUNCTION_LINES = 80;
const ROOTS = ['lib', 'csrc', 'ops', 'scripts', 'test', 'bench'];
const EXTENSIONS = new Set(['.ts', '.js', '.cpp', '.h', '.cu', '.cuh', '.py']);
const SKIP_DIRS = new Set(['build', 'node_modules', 'generated']);

// Files over MAX_LINES, by path, and why they may be.
const LONG_FILES = {};

// Functions of lib/ over MAX_FUNCTION_LINES, as 'path:name' (a method as
// 'Class.method', a function stored in a variable or property by that name),
// and why they may be.
const REWORKED = 'being reworked (its folder is being rebuilt around classes)';
const LONG_FUNCTIONS = {
  'lib/ops/linalg/einsum.ts:planEinsum': REWORKED,
};

function* files(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) yield* files(full);
    } else if (EXTENSIONS.has(path.extname(e.name)) && !e.name.endsWith('.d.ts')) {
      yield full;
    }
  }
}

const isGenerated = (text) => /generated\b[^\n]*do not edit/i.test(text.split('\n', 4).join('\n'));

/** A function's name as LONG_FUNCTIONS spells it. */
function functionName(node, sf) {
  const own = node.name ? node.name.getText(sf) : ts.isConstructorDeclaration(node) ? 'constructor' : undefined;
  const parent = node.parent;
  if (own !== undefined) {
    const cls = parent && (ts.isClassDeclaration(parent) || ts.isClassExpression(parent)) && parent.name ? `${parent.name.getText(sf)}.` : '';
    return cls + own;
  }
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) {
    return parent.name.getText(sf);
  }
  return '<anonymous>';
}

/** Every function of a TypeScript file with a body, with its first line and its length in lines. */
function functionsOf(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.end).line;
      found.push({ name: functionName(node, sf), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const problems = [];
const allowedSeen = new Set();
let count = 0;
let functions = 0;
for (const r of ROOTS) {
  for (const f of files(path.join(root, r))) {
    const text = fs.readFileSync(f, 'utf8');
    if (isGenerated(text)) continue;
    count++;
    const rel = path.relative(root, f).split(path.sep).join('/');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES) {
      if (rel in LONG_FILES) allowedSeen.add(rel);
      else problems.push(`${rel}: ${lines} lines (at most ${MAX_LINES}: split it by purpose)`);
    }
    if (r !== 'lib' || !f.endsWith('.ts')) continue;
    for (const fn of functionsOf(f, text)) {
      functions++;
      if (fn.lines <= MAX_FUNCTION_LINES) continue;
      const key = `${rel}:${fn.name}`;
      if (key in LONG_FUNCTIONS) allowedSeen.add(key);
      else problems.push(`${rel}:${fn.line}: function '${fn.name}' is ${fn.lines} lines (at most ${MAX_FUNCTION_LINES}: split it)`);
    }
  }
}
if (problems.length > 0) {
  console.error(`check-sizes: ${problems.length} too long:\n  ${problems.join('\n  ')}`);
  console.error('Split them (or, with a reason, list them in LONG_FILES / LONG_FUNCTIONS of scripts/check-sizes.js).');
  process.exit(1);
}
const stale = [...Object.keys(LONG_FILES), ...Object.keys(LONG_FUNCTIONS)].filter((k) => !allowedSeen.has(k));
if (stale.length > 0) console.log(`check-sizes: no longer too long, remove from the lists: ${stale.join(', ')}`);
console.log(`check-sizes: ${count} files of ${ROOTS.join('/, ')}/, none over ${MAX_LINES} lines; ` +
  `${functions} functions of lib/, none over ${MAX_FUNCTION_LINES} lines (but ${allowedSeen.size} listed with their reason)`);
