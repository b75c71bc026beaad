#!/usr/bin/env node
// Generates every file made from the project's one-per-fact lists (the dtype
// list, the built-in ops' schema list, ...): each module in scripts/gen/
// returns the files it makes, and this writes them, or with --check fails
// when a committed one is not current (npm test runs that, so CI catches a
// list edited without `npm run gen`).
//   node scripts/gen.js          regenerate
//   node scripts/gen.js --check  exit 1 when a generated file is not current
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const GENERATORS = ['dtypes', 'limits', 'staging', 'arg-kinds', 'schema-types', 'ops', 'cxx-ops', 'collectives'];

const check = process.argv.includes('--check');
const stale = [];
for (const name of GENERATORS) {
  for (const { path: rel, text } of require(`./gen/${name}`).outputs()) {
    const file = path.join(root, rel);
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
    if (current === text) continue;
    if (check) {
      stale.push(rel);
    } else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      console.log(`wrote ${rel}`);
    }
  }
}
if (stale.length > 0) {
  console.error(`out of date with their lists: ${stale.join(', ')}; run \`npm run gen\` and commit them.`);
  process.exit(1);
}
