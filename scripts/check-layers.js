#!/usr/bin/env node
// Keeps csrc/ layered from the bottom up: a folder may include its own headers
// and those of lower layers, never a higher layer's or a sibling's (cuda/ and
// cache/ stand side by side on base/). The public headers (csrc/include/gpuext/)
// sit below everything and include nothing of csrc. Run by `npm test`; a
// violation fails with file:line so the include can be moved or the code
// inverted (an interface in the lower layer) before it grows roots.
//   node scripts/check-layers.js
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const csrc = path.join(root, 'csrc');

// Folder (under csrc/, or 'gpuext' for the public headers) -> layer; a higher
// number may include a lower one.
const LAYERS = { gpuext: 0, compat: 0, base: 1, cuda: 2, cache: 2, core: 3, rtc: 4, binding: 5 };

const ORDER = 'gpuext, compat < base < cuda, cache < core < rtc < binding';

function folderOf(rel) {
  // rel is relative to csrc/; public headers are included as "gpuext/..." and live in include/gpuext/.
  const parts = rel.split('/');
  return parts[0] === 'include' ? parts[1] : parts[0];
}

function* sources(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(full);
    else if (/\.(h|cpp|cu|cuh)$/.test(entry.name)) yield full;
  }
}

const problems = [];
for (const file of sources(csrc)) {
  const rel = path.relative(csrc, file).split(path.sep).join('/');
  const from = folderOf(rel);
  if (!(from in LAYERS)) {
    problems.push(`csrc/${rel}: folder '${from}' has no layer; add it to LAYERS in scripts/check-layers.js`);
    continue;
  }
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    const m = /^\s*#\s*include\s+"([^"]+)"/.exec(line);
    if (!m) return;
    const target = m[1];
    // Same-folder includes without a folder (the public headers' "gpuext/x.h" style is the norm).
    const to = target.includes('/') ? target.split('/')[0] : from;
    if (!(to in LAYERS)) {
      problems.push(`csrc/${rel}:${i + 1}: includes "${target}", which is in no layer`);
    } else if (to !== from && LAYERS[to] >= LAYERS[from]) {
      problems.push(`csrc/${rel}:${i + 1}: ${from}/ (layer ${LAYERS[from]}) includes "${target}" ` +
        `(${to}/, layer ${LAYERS[to]}); a layer includes only lower ones (${ORDER})`);
    }
  });
}
if (problems.length > 0) {
  console.error(`check-layers: ${problems.length} include(s) break the csrc layers:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
