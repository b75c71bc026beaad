// The dtypes, generated into TypeScript from the one dtype list,
// csrc/include/gpuext/dtype_list.h (C++ reads the list directly), so C++ and
// TypeScript never drift. Run through scripts/gen.js.
'use strict';
const { readRows, generatedHeader } = require('./rows');

const LIST = 'csrc/include/gpuext/dtype_list.h';

function dtypeRows() {
  const rows = readRows(LIST, /^\s*_\(\s*(\w+)\s*,\s*(\w+)\s*,\s*([fiub])\s*,\s*(\d+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w[\w ]*?)\s*,\s*(\w+)\s*,\s*([<|]\w+|none)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)/gm,
    (m) => ({
      enumName: m[1], name: m[2], kind: m[3], itemsize: Number(m[4]), storage: m[5], value: m[6], cppType: m[7], kernelType: m[8],
      computeType: m[9], npy: m[10] === 'none' ? undefined : m[10], safetensors: m[11], nccl: m[12] === 'none' ? undefined : m[12],
    }));
  // The compute type is named by its C++ type; the dtype of that C++ type is the compute dtype TS speaks of.
  for (const r of rows) {
    const c = rows.find((o) => o.cppType === r.computeType);
    if (c === undefined) throw new Error(`${LIST}: ${r.name}'s compute type ${r.computeType} is no dtype's C++ type`);
    r.computeDType = c.name;
  }
  return rows;
}

// NOTE [ Type promotion ] (torch.promote_types), written once here: categories bool < integer < floating; within a
// category the larger type; float16 with bfloat16 float32; uint8 with a signed type the next signed type wider than
// 8 bits. Both faces read the table this makes: lib/ops/promotion.ts (PROMOTION in lib/generated/dtypes.ts) and
// the extensions' gx::ops (kPromotion in gpuext/promotion_table.h).
function promotePair(a, b) {
  if (a.name === b.name) return a;
  if (a.kind === 'b') return b;
  if (b.kind === 'b') return a;
  const category = (r) => (r.kind === 'f' ? 2 : 1);
  const ca = category(a), cb = category(b);
  if (ca !== cb) return ca > cb ? a : b;
  if (ca === 2 && a.itemsize === b.itemsize) return { name: 'float32' };
  if (a.name === 'uint8' || b.name === 'uint8') {
    const other = a.name === 'uint8' ? b : a;
    return other.name === 'int8' ? { name: 'int16' } : other;
  }
  return a.itemsize > b.itemsize ? a : b;
}

/** The promotion of every pair, as dtype codes indexed [a][b]. */
function promotionCodes(rows) {
  const code = new Map(rows.map((r, i) => [r.name, i]));
  return rows.map((a) => rows.map((b) => code.get(promotePair(a, b).name)));
}

function renderPromotionHeader(rows) {
  const codes = promotionCodes(rows);
  return [...generatedHeader(LIST),
    '// The promotion of every pair of dtypes (NOTE [ Type promotion ] in scripts/gen/dtypes.js), as dtype codes',
    '// indexed [a][b], for the extensions\' gx::ops (gpuext/ops_support.h).',
    '#pragma once',
    '#include <cstdint>',
    '',
    '#include "gpuext/abi.h"',
    '',
    'namespace gx::dtype_table {',
    '',
    `inline constexpr int8_t kPromotion[GX_NUM_DTYPES][GX_NUM_DTYPES] = {`,
    ...codes.map((row, i) => `    {${row.join(', ')}},  // ${rows[i].name}`),
    '};',
    '',
    '}  // namespace gx::dtype_table',
    ''].join('\n');
}

function render(rows) {
  const lines = generatedHeader(LIST);
  lines.push('');
  lines.push('/** A tensor element type. */');
  lines.push(`export type DType = ${rows.map((r) => `'${r.name}'`).join(' | ')};`);
  lines.push('');
  lines.push('/** Every dtype, indexed by its code in the C ABI (gx_dtype). */');
  lines.push(`export const DTYPES: readonly DType[] = [${rows.map((r) => `'${r.name}'`).join(', ')}];`);
  lines.push('');
  lines.push("/** f = floating point, i = signed integer, u = unsigned integer, b = bool. */");
  lines.push("export type DTypeKind = 'f' | 'i' | 'u' | 'b';");
  lines.push('');
  const floats = rows.filter((r) => r.kind === 'f');
  const ints = rows.filter((r) => r.kind === 'i' || r.kind === 'u');
  lines.push('/** The floating-point dtypes. */');
  lines.push(`export type FloatDType = ${floats.map((r) => `'${r.name}'`).join(' | ')};`);
  lines.push('/** The integer dtypes (signed and unsigned). */');
  lines.push(`export type IntegerDType = ${ints.map((r) => `'${r.name}'`).join(' | ')};`);
  lines.push('');
  lines.push(`export const FLOAT_DTYPES: readonly FloatDType[] = [${floats.map((r) => `'${r.name}'`).join(', ')}];`);
  lines.push(`export const INTEGER_DTYPES: readonly IntegerDType[] = [${ints.map((r) => `'${r.name}'`).join(', ')}];`);
  lines.push('');
  lines.push('/** Each integer dtype\'s range, [min, max]. */');
  lines.push('export const INTEGER_RANGE: { readonly [K in IntegerDType]: readonly [bigint, bigint] } = {');
  for (const r of ints) {
    const bits = BigInt(r.itemsize * 8);
    const [lo, hi] = r.kind === 'u' ? [0n, 2n ** bits - 1n] : [-(2n ** (bits - 1n)), 2n ** (bits - 1n) - 1n];
    lines.push(`  ${r.name}: [${lo}n, ${hi}n],`);
  }
  lines.push('};');
  lines.push('');
  lines.push('export interface DTypeInfo {');
  lines.push('  readonly name: DType;');
  lines.push('  readonly code: number;');
  lines.push('  readonly kind: DTypeKind;');
  lines.push('  readonly itemsize: number;');
  lines.push('}');
  lines.push('');
  lines.push('export const DTYPE_INFO: { readonly [K in DType]: DTypeInfo } = {');
  rows.forEach((r, i) => {
    lines.push(`  ${r.name}: { name: '${r.name}', code: ${i}, kind: '${r.kind}', itemsize: ${r.itemsize} },`);
  });
  lines.push('};');
  lines.push('');
  lines.push('/**');
  lines.push(' * NOTE [ Dtype lookups ]: DTYPE_INFO[d] at a call site that sees several');
  lines.push(' * dtypes is a keyed load by several names, which V8 makes megamorphic: each');
  lines.push(' * one probes a stub cache shared by the whole program, and a miss is a call');
  lines.push(' * into the runtime (node --log-ic lists such sites on the ops\' path after a');
  lines.push(' * varied program). On a lent H200 a one-element op\'s host time over the');
  lines.push(' * launch floor rose from 1.3 to 2.4 us once the process had run other code');
  lines.push(' * (bench:autograd\'s fits), the floor itself unchanged. The ops\' paths find');
  lines.push(' * a dtype\'s facts by dtypeInfo(d) instead: a switch, whose');
  lines.push(' * cases compare interned strings by identity (a Map lookup cost ~50');
  lines.push(' * instructions, and an op makes several).');
  lines.push(' */');
  lines.push('const INFO_LIST: readonly DTypeInfo[] = Object.values(DTYPE_INFO);');
  lines.push('');
  lines.push('/** DTYPE_INFO[d] (NOTE [ Dtype lookups ]); undefined for a name that is no dtype. */');
  lines.push('export function dtypeInfo(d: DType): DTypeInfo {');
  lines.push('  switch (d) {');
  rows.forEach((r, i) => lines.push(`    case '${r.name}': return INFO_LIST[${i}];`));
  lines.push('    default: return undefined as unknown as DTypeInfo;');
  lines.push('  }');
  lines.push('}');
  lines.push('');
  lines.push('/** The C type of each dtype in run-time kernels\' CUDA source. */');
  lines.push('export const KERNEL_C_TYPES: { readonly [K in DType]: string } = {');
  for (const r of rows) lines.push(`  ${r.name}: '${r.kernelType}',`);
  lines.push('};');
  lines.push('');
  lines.push('/** The typed array that views a tensor\'s raw bytes, per dtype. */');
  lines.push('export interface StorageArrayMap {');
  for (const r of rows) lines.push(`  ${r.name}: ${r.storage};`);
  lines.push('}');
  lines.push('');
  lines.push('/** The typed array `toArray()` returns, per dtype (float16/bfloat16 decode to float32). */');
  lines.push('export interface ValueArrayMap {');
  for (const r of rows) lines.push(`  ${r.name}: ${r.value};`);
  lines.push('}');
  lines.push('');
  lines.push('export const STORAGE_ARRAY = {');
  for (const r of rows) lines.push(`  ${r.name}: ${r.storage},`);
  lines.push('} as const;');
  lines.push('');
  lines.push('export const VALUE_ARRAY = {');
  for (const r of rows) lines.push(`  ${r.name}: ${r.value},`);
  lines.push('} as const;');
  lines.push('');
  lines.push('/** The dtype whose C++ type the built-in ops compute each dtype in (NOTE [ Compute types ] in ops/common/hd.h): float32 for the 16-bit floats. */');
  lines.push('export const COMPUTE_DTYPE: { readonly [K in DType]: DType } = {');
  for (const r of rows) lines.push(`  ${r.name}: '${r.computeDType}',`);
  lines.push('};');
  lines.push('');
  lines.push('/** NumPy\'s typestr of each dtype NumPy has (not bfloat16). */');
  lines.push('export const NPY_TYPESTR: { readonly [K in DType]?: string } = {');
  for (const r of rows) if (r.npy !== undefined) lines.push(`  ${r.name}: '${r.npy}',`);
  lines.push('};');
  lines.push('');
  lines.push('/** Each dtype\'s name in a .safetensors header. */');
  lines.push('export const SAFETENSORS_NAME: { readonly [K in DType]: string } = {');
  for (const r of rows) lines.push(`  ${r.name}: '${r.safetensors}',`);
  lines.push('};');
  lines.push('');
  lines.push('/** The dtype each typed array stands for (the first dtype the list views through it without decoding). */');
  lines.push('export const TYPED_ARRAY_DTYPE: readonly (readonly [abstract new (...args: never[]) => ArrayBufferView, DType])[] = [');
  const seen = new Set();
  for (const r of rows) {
    if (r.storage !== r.value || seen.has(r.storage)) continue;
    seen.add(r.storage);
    lines.push(`  [${r.storage}, '${r.name}'],`);
  }
  lines.push('];');
  lines.push('');
  lines.push('/** The promotion of every pair of dtypes, indexed by code [a][b] (NOTE [ Type promotion ] in scripts/gen/dtypes.js). */');
  lines.push('export const PROMOTION: readonly (readonly DType[])[] = [');
  for (const row of promotionCodes(rows)) lines.push(`  [${row.map((c) => `'${rows[c].name}'`).join(', ')}],`);
  lines.push('];');
  lines.push('');
  return lines.join('\n');
}

module.exports = {
  dtypeRows,
  outputs: () => [
    { path: 'lib/generated/dtypes.ts', text: render(dtypeRows()) },
    { path: 'csrc/include/gpuext/promotion_table.h', text: renderPromotionHeader(dtypeRows()) },
  ],
};
