#!/usr/bin/env node
// Fails when a hand-written source file of the library (lib/, csrc/, ops/,
// scripts/) is longer than 600 lines: a file should be small enough to read
// in one sitting, with one purpose (llm.c's llmc/ files are 20-600 lines).
// Generated files are exempt (they say "generated" in their first lines and
// live in generated/ folders or are made by scripts/gen). `npm test` runs it.
//   node scripts/check-sizes.js
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const MAX_LINES = 600;
const ROOTS = ['lib', 'csrc', 'ops', 'scripts'];
const EXTENSIONS = new Set(['.ts', '.js', '.cpp', '.h', '.cu', '.cuh', '.py']);
const SKIP_DIRS = new Set(['build', 'node_modules', 'generated']);

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

const long = [];
let count = 0;
for (const r of ROOTS) {
  for (const f of files(path.join(root, r))) {
    const text = fs.readFileSync(f, 'utf8');
    if (isGenerated(text)) continue;
    count++;
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES) long.push(`${path.relative(root, f)}: ${lines} lines (at most ${MAX_LINES}: split it by purpose)`);
  }
}
if (long.length > 0) {
  console.error(`check-sizes: ${long.length} file${long.length === 1 ? '' : 's'} too long:\n  ${long.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-sizes: ${count} files of ${ROOTS.join('/, ')}/, none over ${MAX_LINES} lines`);
