// The shared limits, generated into TypeScript from the one C header that
// states them, csrc/include/gpuext/limits.h (C++ includes it), so the core's
// checks and the JS-side checks never drift. Run through scripts/gen.js.
'use strict';
const { readRows, generatedHeader } = require('./rows');

const list = 'csrc/include/gpuext/limits.h';

// The limits' rows ({ name: 'MAX_DIMS', value: 16, doc }), also for the other
// generators: GX_MAX_DIMS -> MAX_DIMS, the // comment above it the JSDoc.
function limitRows() {
  return readRows(list, /((?:^\/\/[^\n]*\n)*)^#define\s+GX_(\w+)\s+(\d+)\s*$/gm, (m) => ({
    name: m[2],
    value: Number(m[3]),
    doc: m[1].split('\n').map((l) => l.replace(/^\/\/\s?/, '').trim()).filter(Boolean).join(' '),
  }));
}

function render(rows) {
  const lines = generatedHeader(list);
  for (const r of rows) {
    lines.push('');
    if (r.doc) lines.push(`/** ${r.doc} */`);
    lines.push(`export const ${r.name} = ${r.value};`);
  }
  lines.push('');
  return lines.join('\n');
}

module.exports = {
  limitRows,
  outputs: () => [{ path: 'lib/generated/limits.ts', text: render(limitRows()) }],
};
