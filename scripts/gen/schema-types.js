// The schema types (DESIGN.md decision 3), written once: what each type of an
// op schema is in every face that spells it. The generators of the built-in
// ops (scripts/gen/ops.js: C++ entry points and lib/generated/ops.ts;
// scripts/gen/cxx-ops.js: gpuext/ops_raw.h) read SCHEMA_TYPES here, and
// lib/generated/schema-types.ts, made from it, gives it to lib/: the codegen
// of users' bindings (lib/toolkit/codegen.ts), the typed `gx.load`
// (lib/extension/schema-types.ts) and the extension runtime (lib/extension/runtime.ts). The
// core's parser (csrc/core/schema.cpp) reads the same spellings; a test
// (test/schema-types.test.ts) checks it accepts exactly these.
// Run through scripts/gen.js.
'use strict';
const { generatedHeader } = require('./rows');

// Columns (absent: the face has no such type, and its generator refuses a schema using it):
//   ts, tsReturn         the TypeScript of an argument / a result in users' faces (generated bindings, OpsOf)
//   native, nativeReturn what lib/generated/ops.ts's calls of the built-in ops take / give
//   nativeArg            how such a call passes the argument to native.callOp (`$` is it), when not as it is
//   cpp, cppReturn       the built-in ops' C++ entry points' parameter / return (ops/generated/entry_points.h)
//   cxx, cxxBox          gpuext/ops_raw.h's parameter, and how it is boxed into a gx_value (`$` is its name)
//   convert              the extension runtime's function that checks and converts an argument (lib/extension/runtime.ts)
//   wrap                 the extension runtime's function that converts a result
//   stage                how a staged call passes the argument (NOTE [ Staged op calls ] in csrc/binding/op_values.cpp):
//                        'tensor' as a JS value, else the slot form: 'float', 'bool', 'dtype' (the value), 'int',
//                        'optional' (a tag and the value); a type without one makes its ops keep callOp
const BASE = {
  Tensor: {
    ts: 'Tensor', tsReturn: 'Tensor', native: 'NativeTensor', nativeReturn: 'NativeTensor', cpp: 'const Tensor&', cppReturn: 'Tensor',
    cxx: 'const Tensor&', cxxBox: 'gx::detail::box($)', convert: 'tensor', wrap: 'wrap', stage: 'tensor',
  },
  'Tensor[]': {
    ts: 'readonly Tensor[]', tsReturn: 'Tensor[]', native: 'readonly NativeTensor[]', cpp: 'const std::vector<Tensor>&',
    cxx: 'TensorList', cxxBox: '$_.value()', convert: 'tensorList', wrap: 'wrapList',
  },
  // A JS number or a bigint; a result is a number (a bigint beyond 2^53, which no count the built-in ops return reaches).
  int: { ts: 'number | bigint', tsReturn: 'number', native: 'number | bigint', nativeReturn: 'number', cpp: 'int64_t', cppReturn: 'int64_t', cxx: 'int64_t', cxxBox: 'gx::detail::box($)', stage: 'int' },
  // One int stands for a one-element list, as in PyTorch (the core reads both).
  'int[]': { ts: 'readonly number[] | number', native: 'readonly number[] | number', cpp: 'IntArrayRef', cxx: 'IntArrayRef', cxxBox: 'gx::detail::box($)' },
  float: { ts: 'number', tsReturn: 'number', native: 'number', cpp: 'double', cxx: 'double', cxxBox: 'gx::detail::box($)', stage: 'float' },
  bool: { ts: 'boolean', tsReturn: 'boolean', native: 'boolean', nativeReturn: 'boolean', cpp: 'bool', cppReturn: 'bool', cxx: 'bool', cxxBox: 'gx::detail::box($)', stage: 'bool' },
  str: { ts: 'string', tsReturn: 'string', native: 'string', nativeReturn: 'string', cpp: 'std::string', cppReturn: 'std::string', cxx: 'const char*', cxxBox: 'gx::detail::box($)' },
  // The built-in ops' calls pass a dtype's code: no string for the core to read per call.
  ScalarType: { ts: 'DType', tsReturn: 'DType', native: 'DType', nativeArg: 'dtypeInfo($).code', cpp: 'ScalarType', cxx: 'ScalarType', cxxBox: 'gx::detail::box($)', stage: 'dtype' },
  // NOTE [ Handles and devices in schemas ] in csrc/core/schema.h.
  Handle: { ts: 'OpaqueHandle', tsReturn: 'OpaqueHandle', native: 'OpaqueHandle', nativeReturn: 'OpaqueHandle', cpp: 'Handle', cppReturn: 'Handle' },
  Device: {
    ts: 'DeviceLike', tsReturn: 'Device', native: 'Device', nativeReturn: 'string', nativeArg: '$.toString()', cpp: 'Device', cppReturn: 'Device',
    convert: 'device', wrap: 'wrapDevice',
  },
};

// `T?` (None allowed) of every base but Tensor[] (the core refuses `Tensor[]?`): only `Tensor?` may be a result.
const OPTIONAL = {
  Tensor: {
    tsReturn: 'Tensor | undefined', cpp: 'const std::optional<Tensor>&', cxx: 'const Tensor*', cxxBox: 'gx::detail::box($)',
    convert: 'optionalTensor', wrap: 'wrapOptional', stage: 'tensor',
  },
  float: { cpp: 'std::optional<double>', cxx: 'const double*', cxxBox: '$ ? gx::detail::box(*$) : gx::detail::box_none()', stage: 'optional' },
  int: { stage: 'optional' }, 'int[]': {}, bool: { stage: 'optional' }, str: {}, ScalarType: {}, Handle: {},
  Device: { nativeArg: '$ === null ? null : $.toString()', convert: 'optionalDevice' },
};

function optional(base, over) {
  const b = BASE[base];
  const row = { ts: `${b.ts} | null`, native: `${b.native} | null` };
  return { ...row, ...over };
}

/** Every schema type by its spelling: the bases, then their optional forms. */
const SCHEMA_TYPES = Object.freeze({
  ...BASE,
  ...Object.fromEntries(Object.entries(OPTIONAL).map(([base, over]) => [`${base}?`, optional(base, over)])),
});

function render() {
  const q = (v) => `'${v}'`;
  const lines = [...generatedHeader('scripts/gen/schema-types.js'),
    '// The schema types of op schemas, one row each, for lib/ (the generators of the built-in',
    '// ops read the same rows): the TypeScript of each in users\' faces, as values for the codegen',
    '// of bindings and as types for OpsOf, and the extension runtime\'s converters.',
    "import type { Device, DeviceLike } from '../core/device';",
    "import type { OpaqueHandle } from '../core/native';",
    "import type { Tensor } from '../core/tensor';",
    "import type { DType } from './dtypes';",
    ''];
  const converts = [...new Set(Object.values(SCHEMA_TYPES).map((r) => r.convert).filter(Boolean))];
  const wraps = [...new Set(Object.values(SCHEMA_TYPES).map((r) => r.wrap).filter(Boolean))];
  lines.push(`/** A schema type's spelling. */`, `export type SchemaType = ${Object.keys(SCHEMA_TYPES).map(q).join(' | ')};`, '');
  lines.push(`/** The extension runtime's argument converters (lib/extension/runtime.ts implements each). */`, `export type ArgConverter = ${converts.map(q).join(' | ')};`);
  lines.push(`/** The extension runtime's result converters. */`, `export type ResultConverter = ${wraps.map(q).join(' | ')};`, '');
  lines.push('export interface SchemaTypeRow {',
    '  /** The TypeScript of an argument in a generated binding. */', '  readonly ts: string;',
    '  /** The TypeScript of a result, when the type may be one. */', '  readonly tsReturn?: string;',
    '  /** The runtime function that converts an argument, when it is not passed as it is. */', '  readonly convert?: ArgConverter;',
    '  /** The runtime function that converts a result, when it is not returned as it is. */', '  readonly wrap?: ResultConverter;',
    '  /** How a staged call passes it (NOTE [ Staged op calls ] in csrc/binding/op_values.cpp); none: its ops keep callOp. */',
    `  readonly stage?: ${[...new Set(Object.values(SCHEMA_TYPES).map((r) => r.stage).filter(Boolean))].map(q).join(' | ')};`, '}', '');
  lines.push('/** Every schema type by its spelling. */', 'export const SCHEMA_TYPES: { readonly [K in SchemaType]: SchemaTypeRow } = {');
  for (const [name, r] of Object.entries(SCHEMA_TYPES)) {
    const cols = ['ts', 'tsReturn', 'convert', 'wrap', 'stage'].filter((c) => r[c] !== undefined).map((c) => `${c}: ${q(r[c])}`);
    lines.push(`  ${q(name)}: { ${cols.join(', ')} },`);
  }
  lines.push('};', '');
  lines.push('/** Whether `type` is a schema type\'s spelling. */', 'export function isSchemaType(type: string): type is SchemaType {',
    '  return Object.prototype.hasOwnProperty.call(SCHEMA_TYPES, type);', '}', '');
  const bases = Object.keys(BASE);
  lines.push('/** The TypeScript of each base type as an argument (OpsOf: lib/extension/schema-types.ts adds `| null` for `T?`). */', 'export interface SchemaArgTypes {');
  for (const b of bases) lines.push(`  ${q(b)}: ${BASE[b].ts};`);
  lines.push('}', '', '/** The TypeScript of each type that may be a result. */', 'export interface SchemaReturnTypes {');
  for (const [name, r] of Object.entries(SCHEMA_TYPES)) if (r.tsReturn !== undefined) lines.push(`  ${q(name)}: ${r.tsReturn};`);
  lines.push('}', '');
  return lines.join('\n');
}

/** The row of `type`, with `column` present; an error naming `where` otherwise. */
function typeColumn(type, column, where) {
  const row = SCHEMA_TYPES[type];
  if (row === undefined) throw new Error(`${where}: '${type}' is not a schema type (scripts/gen/schema-types.js: ${Object.keys(SCHEMA_TYPES).join(', ')})`);
  if (row[column] === undefined) throw new Error(`${where}: schema type '${type}' has no ${column} (scripts/gen/schema-types.js)`);
  return row[column];
}

module.exports = {
  SCHEMA_TYPES,
  typeColumn,
  outputs: () => [{ path: 'lib/generated/schema-types.ts', text: render() }],
};
