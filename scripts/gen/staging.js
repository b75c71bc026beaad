// The staging area's layout, generated into TypeScript from the one list of
// its regions, csrc/binding/staging_slots.h (C++ derives its offsets from the
// same list), so JS writes each value where the core reads it. Run through
// scripts/gen.js.
'use strict';
const { limitRows } = require('./limits');
const { readRows, generatedHeader } = require('./rows');

const list = 'csrc/binding/staging_slots.h';

// Rows `_(Name, slots) /* what */`; slots a number or a GX_ limit.
function regionRows() {
  const limits = new Map(limitRows().map((r) => [`GX_${r.name}`, r.value]));
  return readRows(list, /^\s*_\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\/\*\s*(.*?)\s*\*\//gm, (m) => {
    const slots = /^\d+$/.test(m[2]) ? Number(m[2]) : limits.get(m[2]);
    if (slots === undefined) throw new Error(`${list}: region ${m[1]} has ${m[2]} slots, which is neither a number nor a GX_ limit`);
    return { name: m[1], slots, doc: m[3] };
  });
}

// LaunchDims -> LAUNCH_DIMS
const upper = (name) => name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();

function render(rows) {
  const lines = generatedHeader(list);
  lines.push('// The staging area\'s regions (NOTE [ Staging area ] in csrc/binding/staging.h):');
  lines.push('// STAGED_<REGION> is where a region starts, STAGED_<REGION>_SLOTS how many doubles it has.');
  let offset = 0;
  for (const r of rows) {
    lines.push('');
    lines.push(`/** ${r.doc[0].toUpperCase()}${r.doc.slice(1)}: where the region starts, and its slots. */`);
    lines.push(`export const STAGED_${upper(r.name)} = ${offset};`);
    lines.push(`export const STAGED_${upper(r.name)}_SLOTS = ${r.slots};`);
    offset += r.slots;
  }
  lines.push('');
  lines.push('/** The whole area, in doubles. */');
  lines.push(`export const STAGED_SIZE = ${offset};`);
  lines.push('');
  return lines.join('\n');
}

module.exports = {
  outputs: () => [{ path: 'lib/generated/staging.ts', text: render(regionRows()) }],
};
