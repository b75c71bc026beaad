// The kernel-argument kinds, generated into TypeScript from their one list,
// csrc/binding/arg_kinds.h (C++ reads the list directly), so the codes JS
// hands moduleGetFunction are the ones launchKernel packs by. Run through
// scripts/gen.js.
'use strict';
const { readRows, generatedHeader } = require('./rows');

const list = 'csrc/binding/arg_kinds.h';

// Rows `_(Enum, name, min, max)`; a kind's code is its place in the list.
function kindRows() {
  return readRows(list, /^\s*_\(\s*(\w+)\s*,\s*(\w+)\s*,\s*\w+\s*,\s*\w+\s*\)/gm, (m) => ({ enumName: m[1], name: m[2] }));
}

function render(rows) {
  const lines = generatedHeader(list);
  lines.push('');
  lines.push('/** A kernel argument\'s C type, as the native launcher packs it (NOTE [ Argument slots ] in csrc/binding/rtc_launch.cpp). */');
  lines.push(`export type ArgKind = ${rows.map((r) => `'${r.name}'`).join(' | ')};`);
  lines.push('');
  lines.push('/** Every kind, in code order. */');
  lines.push(`export const ARG_KINDS: readonly ArgKind[] = [${rows.map((r) => `'${r.name}'`).join(', ')}];`);
  lines.push('');
  lines.push('/** Each kind\'s code, the Int8Array value moduleGetFunction takes. */');
  lines.push('export const ARG_KIND_CODE: { readonly [K in ArgKind]: number } = {');
  rows.forEach((r, i) => lines.push(`  ${r.name}: ${i},`));
  lines.push('};');
  lines.push('');
  return lines.join('\n');
}

module.exports = {
  outputs: () => [{ path: 'lib/generated/arg-kinds.ts', text: render(kindRows()) }],
};
