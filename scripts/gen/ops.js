// The built-in ops, generated from their one list (ops/op-list.js) into the
// C++ the ops library is built from and the TypeScript lib/ops calls, so a
// schema, its implementations' signatures and its callers cannot drift: the
// C++ compiler checks each implementation against the declaration made from
// its schema, the core checks the registration against the schema at load,
// and tsc checks every call's named arguments. Run through scripts/gen.js.
'use strict';
const path = require('path');

const root = path.resolve(__dirname, '../..');
const { generatedHeader } = require('./rows');
const { SCHEMA_TYPES, typeColumn } = require('./schema-types');

const HEADER = generatedHeader('ops/op-list.js');

// The schemas of the families (ops/op-list.js says what each means).
const FAMILIES = {
  // An entry sharing another's kernels (NOTE [ Rounding modes of div ]) has no schema of its own.
  binary: (e) => (e.kernel !== undefined ? [] : [
    { name: e.name, schema: `${e.name}(Tensor self, Tensor other, ScalarType dtype, Tensor out) -> ()`, doc: e.doc },
    {
      name: `${e.name}_scalar`,
      schema: `${e.name}_scalar(Tensor self, float other, int other_int, bool reverse, ScalarType dtype, Tensor out) -> ()`,
      doc: `${e.doc} \`other\` is a JS number (its value, and as an integer); \`reverse\` puts it on the left.`,
    },
  ]),
  unary: (e) => [{
    name: e.name, doc: e.doc,
    schema: `${e.name}(Tensor self, ${paramsOf(e).map((p) => `${p.type} ${p.name}, `).join('')}ScalarType dtype, Tensor out) -> ()`,
  }],
  reduce: (e) => [{ name: e.name, schema: `${e.name}(Tensor self, int[] axis, ScalarType dtype, Tensor out) -> ()`, doc: e.doc }],
  op: (e) => [{ name: /^(\w+)\(/.exec(e.schema)?.[1], schema: e.schema, doc: e.doc }],
};

// A schema's types in the C++ entry points and the TypeScript calls: the columns cpp / native (arguments),
// cppReturn / nativeReturn (results) of the one schema type table. A Tensor result is for ops whose result's
// size only the data decides (nonzero, masked_select): the op counts, allocates and fills it in one call.
const NO_RESULT = { cpp: 'void', ts: 'void' };

/**
 * A unary entry's number parameters (NOTE [ Parameters of elementwise ops ] in ops/op-list.js):
 * { type, name, default } each, the default a number (float) or null (float?).
 */
function paramsOf(e) {
  return (e.params ?? []).map((text) => {
    const m = /^(float\??) (\w+)(?:=(\S+))?$/.exec(text);
    if (!m) throw new Error(`ops/op-list.js ${e.name}: parameter '${text}' is not 'float <name>=<default>' or 'float? <name>'`);
    const [, type, name, def] = m;
    if (type === 'float' && (def === undefined || !Number.isFinite(Number(def)))) {
      throw new Error(`ops/op-list.js ${e.name}: parameter ${name} needs a numeric default (torch's)`);
    }
    if (type === 'float?' && def !== undefined) throw new Error(`ops/op-list.js ${e.name}: parameter ${name} is float?: absent is its default`);
    return { type, name, default: type === 'float' ? Number(def) : null };
  });
}

const RESERVED = new Set(['var', 'delete', 'new', 'in', 'function', 'default', 'switch', 'case', 'do', 'for', 'if']);
const camel = (s) => s.replace(/_+([a-zA-Z0-9])/g, (_, c) => c.toUpperCase());
const cString = (s) => JSON.stringify(s);

function parseSchema(schema, where) {
  const m = /^(\w+)\((.*)\)\s*->\s*(.+)$/.exec(schema);
  if (!m) throw new Error(`${where}: cannot read the schema '${schema}'`);
  const args = m[2].trim() === '' ? [] : m[2].split(',').map((a) => {
    const p = /^\s*(\S+)\s+(\w+)\s*$/.exec(a);
    if (!p) throw new Error(`${where}: argument '${a.trim()}' of '${schema}' is not <type> <name>`);
    const at = `${where}: argument '${p[2]}' of '${schema}'`;
    // nativeArg: how the call passes it to native.callOp (`$` the argument), when not as it is.
    return {
      type: p[1], name: p[2], cpp: typeColumn(p[1], 'cpp', at), ts: typeColumn(p[1], 'native', at), nativeArg: SCHEMA_TYPES[p[1]].nativeArg ?? '$',
      stage: SCHEMA_TYPES[p[1]].stage,
    };
  });
  const r = m[3].trim();
  const at = `${where}: the result of '${schema}'`;
  const ret = r === '()' ? NO_RESULT : { cpp: typeColumn(r, 'cppReturn', at), ts: typeColumn(r, 'nativeReturn', at) };
  return { name: m[1], args, ret };
}

/** Every schema of the list, in order, with the entry it came from. */
function schemas(list) {
  checkRoundingModes(list);
  const seen = new Set();
  const out = [];
  list.forEach((e, i) => {
    const expand = FAMILIES[e.family];
    if (!expand) throw new Error(`ops/op-list.js entry ${i}: unknown family '${e.family}'`);
    for (const s of expand(e)) {
      const parsed = parseSchema(s.schema, `ops/op-list.js entry ${i}`);
      if (seen.has(parsed.name)) throw new Error(`ops/op-list.js: '${parsed.name}' is listed twice`);
      seen.add(parsed.name);
      out.push({ ...s, ...parsed, entry: e, devices: e.devices ?? ['cpu', 'cuda'] });
    }
  });
  return out;
}

/**
 * The entries of NOTE [ Rounding modes of div ] (ops/op-list.js): binary, one per mode, and a `kernel` naming
 * a binary entry with kernels of its own, the same functor and compute types.
 */
function checkRoundingModes(list) {
  const modes = new Set();
  for (const e of list) {
    const where = `ops/op-list.js ${e.name}`;
    if (e.roundingMode !== undefined) {
      if (e.family !== 'binary' || !['floor', 'trunc'].includes(e.roundingMode)) {
        throw new Error(`${where}: roundingMode is 'floor' or 'trunc', on binary entries only`);
      }
      if (modes.has(e.roundingMode)) throw new Error(`${where}: roundingMode '${e.roundingMode}' is listed twice`);
      modes.add(e.roundingMode);
      if (e.inplace || e.example !== undefined) throw new Error(`${where}: a rounding mode of div has no method or example of its own`);
    }
    if (e.kernel === undefined) continue;
    const k = list.find((x) => x.name === e.kernel);
    if (e.family !== 'binary' || k === undefined || k.family !== 'binary' || k.kernel !== undefined) {
      throw new Error(`${where}: kernel names a binary entry with kernels of its own, got '${e.kernel}'`);
    }
    if (k.functor !== e.functor || k.computes !== e.computes) {
      throw new Error(`${where}: shares ${k.name}'s kernels, so its functor and compute types are ${k.functor}, ${k.computes}`);
    }
  }
}

/** Whether an entry has a gx function, Tensor method and C++ face of its own (not a rounding mode of div). */
const hasFace = (e) => e.roundingMode === undefined;

// --- C++ -------------------------------------------------------------------------

function opLists(list) {
  const lines = [...HEADER, '// The families as X-macros _(name, functor, compute types), one list per kernel file', '// (group) and one per family.', '#pragma once', ''];
  const define = (macro, rows) => {
    lines.push(rows.length === 0 ? `#define ${macro}(_)` : `#define ${macro}(_) \\`);
    if (rows.length > 0) lines.push(rows.join(' \\\n'));
    lines.push('');
  };
  for (const family of ['binary', 'unary', 'reduce']) {
    const entries = list.filter((e) => e.family === family && e.kernel === undefined);
    const groups = [...new Set(entries.map((e) => e.group))];
    const F = family.toUpperCase();
    for (const g of groups) {
      define(`GX_OPS_${F}_${g.toUpperCase()}`, entries.filter((e) => e.group === g && paramsOf(e).length === 0)
        .map((e) => `  _(${e.name}, ${e.functor}, ${e.computes})`));
    }
    lines.push(`#define GX_OPS_${F}(_) ${groups.map((g) => `GX_OPS_${F}_${g.toUpperCase()}(_)`).join(' ')}`, '');
    if (family !== 'unary') continue;
    // NOTE [ Parameters of elementwise ops ]: _(name, functor, compute types, (the parameters, each followed
    // by a comma), (the functor's members from them)); every group has one, empty or not.
    lines.push('// The unary ops with number parameters: _(name, functor, compute types, (parameters,), (functor members)).');
    for (const g of groups) {
      define(`GX_OPS_${F}_PARAMS_${g.toUpperCase()}`, entries.filter((e) => e.group === g && paramsOf(e).length > 0).map((e) => {
        const ps = paramsOf(e);
        const decl = ps.map((p) => `${typeColumn(p.type, 'cpp', e.name)} ${p.name},`).join(' ');
        const members = ps.map((p) => (p.type === 'float' ? p.name : `${p.name}.has_value(), ${p.name}.value_or(0.0)`)).join(', ');
        return `  _(${e.name}, ${e.functor}, ${e.computes}, (${decl}), (${members}))`;
      }));
    }
    lines.push(`#define GX_OPS_${F}_PARAMS(_) ${groups.map((g) => `GX_OPS_${F}_PARAMS_${g.toUpperCase()}(_)`).join(' ')}`, '');
  }
  return lines.join('\n');
}

function entryPoints(all) {
  const lines = [...HEADER, '// Every implementation of a built-in op, declared from its schema: name_cpu and name_cuda', '// (gx::ops), each registered by registry.cpp.', '#pragma once', '#include <gpuext/extension.h>', '',
    '#include <optional>', '#include <string>', '#include <vector>', '', 'namespace gx::ops {', ''];
  for (const s of all) {
    const params = s.args.map((a) => `${a.cpp} ${a.name}`).join(', ');
    for (const d of s.devices) lines.push(`${s.ret.cpp} ${s.name}_${d}(${params});`);
  }
  lines.push('', '}  // namespace gx::ops', '');
  return lines.join('\n');
}

function registry(all) {
  const lines = [...HEADER, '// The registration of every built-in op: its schema, its documentation and its', '// implementations (the CUDA ones left out of a CPU-only build, GX_OPS_NO_CUDA).', '#include "entry_points.h"', '',
    '#if defined(GX_OPS_NO_CUDA)', '#define GX_OPS_CUDA_IMPL(fn)', '#else', '#define GX_OPS_CUDA_IMPL(fn) .impl(gx::kCUDA, fn)', '#endif', '',
    'GX_LIBRARY(gx_ops, m) {'];
  for (const s of all) {
    const impls = s.devices.map((d) => (d === 'cuda' ? ` GX_OPS_CUDA_IMPL(gx::ops::${s.name}_cuda)` : `\n      .impl(gx::kCPU, gx::ops::${s.name}_cpu)`));
    const def = `  m.def(${cString(s.schema)},\n        ${cString(s.doc)})${impls.join('')};`;
    // An op only CUDA implements does not exist in a CPU-only build (an op with no implementation is refused).
    lines.push(s.devices.includes('cpu') ? def : `#if !defined(GX_OPS_NO_CUDA)\n${def}\n#endif`);
  }
  lines.push('}', '');
  return lines.join('\n');
}

// --- TypeScript ------------------------------------------------------------------

function tsName(name) {
  const n = camel(name);
  return RESERVED.has(n) ? `${n}_` : n;
}

// The compute-type set of an entry ('kCNumeric | kCNoBool', ops/common/dispatch.h) as flags.
const COMPUTE_SETS = { kCFloat: ['float'], kCDouble: ['double'], kCInt: ['int'], kCBool: ['bool'], kCNoBool: ['noBool'],
  kCFloating: ['float', 'double'], kCNumeric: ['float', 'double', 'int'] };
function functorCols(e) {
  const flags = new Set();
  for (const part of e.computes.split('|').map((x) => x.trim())) {
    if (!(part in COMPUTE_SETS)) throw new Error(`ops/op-list.js ${e.name}: unknown compute-type set ${part}`);
    for (const f of COMPUTE_SETS[part]) flags.add(f);
  }
  if (!/^[A-Z]\w*$/.test(e.functor)) throw new Error(`ops/op-list.js ${e.name}: functor ${e.functor} is not a C++ name`);
  const cols = ['float', 'double', 'int', 'bool', 'noBool'].map((f) => `${f}: ${flags.has(f)}`).join(', ');
  return `functor: '${e.functor}', computes: { ${cols} }`;
}

function tsOps(list, all) {
  const lines = [...HEADER, '// One call per built-in op schema, its arguments named as in the schema (camelCased) so', '// tsc catches a missing or swapped one; `fn` names the gx function in errors. And the', '// families\' tables lib/ops decides dtypes by.',
    "import type { Device } from '../core/device';",
    "import { native, type NativeTensor, type OpaqueHandle } from '../core/native';",
    "import { STAGED_OP_ARGS, stageInt, stageOptional, stagingArea } from '../core/staging';",
    "import { OpRef } from '../ops/library';", "import { dtypeInfo, type DType } from './dtypes';", '',
    '// Where a staged call\'s arguments start (NOTE [ Staged op calls ] in csrc/binding/op_values.cpp), as a local constant.',
    'const A = STAGED_OP_ARGS;', ''];
  const exported = [];
  for (const s of all) {
    const id = `OP_${s.name.toUpperCase()}`;
    const fn = tsName(s.name);
    const args = s.args.map((a) => `${camel(a.name)}: ${a.ts}`).join('; ');
    const arg = (a) => a.nativeArg.replace(/\$/g, `a.${camel(a.name)}`);
    const staged = isStaged(s);
    const call = staged
      ? `native.callOpStaged(id${s.args.filter((a) => a.stage === 'tensor').map((a) => `, ${arg(a)}`).join('')})`
      : `native.callOp(${id}.id(fn)${s.args.map((a) => `, ${arg(a)}`).join('')})`;
    const stage = staged ? stageLines(s) : [];
    lines.push(`const ${id} = new OpRef('${s.name}');`);
    lines.push(`/** \`${s.schema}\`: ${s.doc.replace(/\*\//g, '*\\/')} */`);
    const params = s.args.length === 0 ? 'fn: string' : `fn: string, a: { ${args} }`;
    if (s.ret.ts === 'void') lines.push(`function ${fn}(${params}): void {`, ...stage, `  ${call};`, '}');
    else lines.push(`function ${fn}(${params}): ${s.ret.ts} {`, ...stage, `  return ${call} as ${s.ret.ts};`, '}');
    exported.push(fn === camel(s.name) ? fn : `${fn} as ${camel(s.name)}`);
  }
  lines.push('', `export {\n${exported.map((e) => `  ${e},`).join('\n')}\n};`, '');

  const table = (family, type, row) => {
    const rows = list.filter((e) => e.family === family && hasFace(e)).map((e) => `  ${camel(e.name)}: ${row(e)},`);
    return [`export const ${family.toUpperCase()} = {`, ...rows, `} as const satisfies Readonly<Record<string, ${type}>>;`, ''];
  };
  const notImplemented = (e) => (e.grad === 'notImplemented' ? 'derivativeNotImplemented: true, ' : '');
  const binaryRow = (e) => `{ name: '${e.name}', kind: '${e.kind}', ${e.noBool ? `noBool: ${JSON.stringify(e.noBool)}, ` : ''}${notImplemented(e)}` +
    `${functorCols(e)}, tensor: ${tsName(e.kernel ?? e.name)}, scalar: ${tsName(`${e.kernel ?? e.name}_scalar`)}, inplace: ${e.inplace === true} }`;
  const kinds = (family) => [...new Set(list.filter((e) => e.family === family).map((e) => `'${e.kind}'`))].join(' | ');
  const modes = list.filter((e) => e.roundingMode !== undefined);
  lines.push(
    `/** How a binary op's result dtype is decided (ops/op-list.js). */`, `export type BinaryKind = ${kinds('binary')};`,
    '/** The compute types an op\'s functor runs in (ops/common/dispatch.h: with_compute), from its compute-type set. */',
    'export interface Computes {', '  readonly float: boolean;', '  readonly double: boolean;', '  /** Integer dtypes (and bool, unless noBool) in int64_t. */', '  readonly int: boolean;',
    '  /** Every operand read as "nonzero" (the logical ops). */', '  readonly bool: boolean;', '  readonly noBool: boolean;', '}', '',
    'export interface BinaryOp {', '  readonly name: string;', '  readonly kind: BinaryKind;',
    '  /** The C++ functor of ops/binary/functors.h, which the kernels and gx.fuse run. */', '  readonly functor: string;', '  readonly computes: Computes;', '  /** Set when bool operands are an error: the hint that ends the message. */', '  readonly noBool?: string;',
    '  /** Set when the op refuses inputs that require grad (NOTE [ Derivatives beside the schemas ]: grad \'notImplemented\'). */',
    '  readonly derivativeNotImplemented?: true;',
    '  readonly tensor: typeof add;', '  readonly scalar: typeof addScalar;', '  /** Whether Tensor has the in-place method name_ too. */', '  readonly inplace: boolean;', '}', '',
    ...table('binary', 'BinaryOp', binaryRow),
    '/** gx.div\'s rounding modes by roundingMode (NOTE [ Rounding modes of div ] in ops/op-list.js). */',
    'export const DIV_ROUNDING = {', ...modes.map((e) => `  ${e.roundingMode}: ${binaryRow(e)},`), '} as const satisfies Readonly<Record<string, BinaryOp>>;', '',
    `/** How a unary op's result dtype is decided (ops/op-list.js). */`, `export type UnaryKind = ${kinds('unary')};`,
    '/** A number parameter of a unary op (NOTE [ Parameters of elementwise ops ] in ops/op-list.js): its default, null for none. */',
    'export interface UnaryParam {', '  readonly name: string;', '  readonly default: number | null;', '}', '',
    '/** A unary op\'s call: its parameters\' values in order (null: absent; undefined: the default). */',
    'export interface UnaryArgs {', '  self: NativeTensor;', '  dtype: DType;', '  out: NativeTensor;', '  params: readonly (number | null | undefined)[];', '}', '',
    'export interface UnaryOp {', '  readonly name: string;', '  readonly kind: UnaryKind;',
    '  /** The C++ functor of ops/unary/functors.h, which the kernels and gx.fuse run. */', '  readonly functor: string;', '  readonly computes: Computes;', '  readonly call: (fn: string, a: UnaryArgs) => void;',
    '  /** Its number parameters, in the functor\'s order; positional: numbers after x, options: keys of the options object. */',
    '  readonly params: readonly UnaryParam[];', '  readonly paramStyle: \'positional\' | \'options\';',
    '  /** Set when the op refuses inputs that require grad (grad \'notImplemented\'). */',
    '  readonly derivativeNotImplemented?: true;',
    '  /** Two parameters (their places in params) the first of which may not exceed the second, as torch checks. */',
    '  readonly ordered?: readonly [number, number];',
    '  /** Whether Tensor has the in-place method name_ too. */', '  readonly inplace: boolean;', '}', '',
    ...table('unary', 'UnaryOp', (e) => `{ name: '${e.name}', kind: '${e.kind}', ${functorCols(e)}, call: ${unaryCall(e)}, ` +
      `params: [${paramsOf(e).map((p) => `{ name: '${camel(p.name)}', default: ${p.default} }`).join(', ')}], ` +
      `paramStyle: '${e.paramStyle ?? 'positional'}', ${orderedCol(e)}${notImplemented(e)}inplace: ${e.inplace === true} }`),
    `/** How a reduction's result dtype is decided (ops/op-list.js). */`, `export type ReduceKind = ${kinds('reduce')};`,
    'export interface ReduceOp {', '  readonly name: string;', '  readonly kind: ReduceKind;', '  readonly call: typeof sum;', '}', '',
    ...table('reduce', 'ReduceOp', (e) => `{ name: '${e.name}', kind: '${e.kind}', call: ${tsName(e.name)} }`),
  );
  return lines.join('\n');
}

// NOTE [ Staged op calls ] (csrc/binding/op_values.cpp): three slots per argument; an op whose every argument
// has a slot form (the schema type table's stage column), and that fits the region, passes only its tensors.
const SLOTS_PER_ARG = 3, MAX_STAGED_ARGS = 16;

function isStaged(s) {
  return s.args.length <= MAX_STAGED_ARGS && s.args.every((a) => a.stage !== undefined);
}

/** A staged call's lines before the call: its id (resolved first: the first use loads the library), then each non-tensor argument's slots. */
function stageLines(s) {
  const lines = [`  const id = OP_${s.name.toUpperCase()}.id(fn);`];
  if (s.args.every((a) => a.stage === 'tensor')) return lines;
  lines.push('  const st = stagingArea();');
  s.args.forEach((a, i) => {
    const k = `A + ${SLOTS_PER_ARG * i}`, tag = `A + ${SLOTS_PER_ARG * i + 1}`, v = `a.${camel(a.name)}`;
    switch (a.stage) {
      case 'tensor': return;
      // A value and its tag (1: present), the tag last.
      case 'float': lines.push(`  st[${k}] = ${v};`, `  st[${tag}] = 1;`); return;
      case 'bool': lines.push(`  st[${k}] = ${v} ? 1 : 0;`, `  st[${tag}] = 1;`); return;
      case 'dtype': lines.push(`  st[${k}] = dtypeInfo(${v}).code;`, `  st[${tag}] = 1;`); return;
      case 'int': lines.push(`  stageInt(st, ${k}, ${v});`); return;
      case 'optional': lines.push(`  stageOptional(st, ${k}, ${v});`); return;
      default: throw new Error(`scripts/gen/schema-types.js: unknown stage '${a.stage}' of ${a.type}`);
    }
  });
  return lines;
}

/** A unary entry's `ordered` (NOTE [ Parameters of elementwise ops ]): the two parameters' places, checked. */
function orderedCol(e) {
  if (e.ordered === undefined) return '';
  const names = paramsOf(e).map((p) => p.name);
  const at = Array.isArray(e.ordered) && e.ordered.length === 2 ? e.ordered.map((n) => names.indexOf(n)) : [];
  if (at.length !== 2 || at.includes(-1) || at[0] === at[1]) {
    throw new Error(`ops/op-list.js ${e.name}: ordered must name two of its parameters (${names.join(', ')}), got ${JSON.stringify(e.ordered)}`);
  }
  return `ordered: [${at.join(', ')}], `;
}

/** The table's call of a unary op: the generated call itself, or one spreading the parameters into their names. */
function unaryCall(e) {
  const ps = paramsOf(e);
  if (ps.length === 0) return tsName(e.name);
  if (e.paramStyle !== undefined && e.paramStyle !== 'options') throw new Error(`ops/op-list.js ${e.name}: paramStyle is 'options' or absent`);
  const named = ps.map((p, i) => `${camel(p.name)}: a.params[${i}] ?? ${p.type === 'float' ? p.default : 'null'}`);
  return `(fn: string, a: UnaryArgs) => ${tsName(e.name)}(fn, { self: a.self, ${named.join(', ')}, dtype: a.dtype, out: a.out })`;
}

function readList() {
  const listPath = path.join(root, 'ops/op-list.js');
  delete require.cache[listPath];
  return require(listPath);
}

/** Every built-in op's name, schema and devices, as the built library must register them (a test checks). */
function registrations() {
  return schemas(readList()).map((s) => ({ name: s.name, schema: s.schema, devices: s.devices }));
}

// --- the elementwise ops' gx functions and Tensor methods -------------------------

// Each kind's TypeScript face: the gx function's type (lib/ops/types.ts) and the
// method's overloads (`N` is the method name, `G` the gx function's).
const FACES = {
  arith: { fn: 'BinaryFn', method: (N, G, doc) => [
    `/** ${doc} (${G}) */`,
    `${N}(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;`,
    `${N}(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;`,
    `${N}(other: Operand, opts?: OutOptions): Tensor;`] },
  div: { fn: 'DivFn', method: (N, G, doc) => [
    `/** ${doc} (${G}) */`,
    `${N}(other: Tensor<D> | ScalarOperand, opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;`,
    `${N}(other: Operand, opts?: OutOptions): Tensor;`] },
  compare: { fn: 'CompareFn', method: (N, G, doc) => [
    `/** ${doc} (${G}) */`, `${N}(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;`, `${N}(other: Operand, opts?: OutOptions): Tensor;`] },
  float: { fn: 'UnaryFloatFn', method: (N, G, doc) => [
    `/** ${doc} (${G}(this)) */`, `${N}(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;`, `${N}(opts?: OutOptions): Tensor;`] },
  keep: { fn: 'UnaryKeepFn', method: (N, G, doc) => [
    `/** ${doc} (${G}(this)) */`, `${N}(opts?: OutOptions<D>): Tensor<D>;`, `${N}(opts?: OutOptions): Tensor;`] },
};
FACES.logical = FACES.compare;

// gx.div's method with its roundingMode (NOTE [ Rounding modes of div ]): a rounded quotient keeps the common dtype.
const DIV_METHOD = (N, G, doc) => [
  `/** ${doc} (${G}) */`,
  `${N}(other: Tensor<D>, opts: RoundedDivOptions<D>): Tensor<D>;`,
  `${N}(other: ScalarOperand, opts: RoundedDivOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;`,
  `${N}(other: Operand, opts: RoundedDivOptions): Tensor;`,
  `${N}(other: Tensor<D> | ScalarOperand, opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;`,
  `${N}(other: Operand, opts?: DivOptions): Tensor;`];

/** The parameters of a unary op with `params` as TypeScript: numbers, or keys beside `out` (paramStyle 'options'). */
function paramArgs(e, inplace, out = '') {
  const ps = paramsOf(e);
  const ty = (p) => (p.type === 'float' ? 'number' : 'number | null');
  if (e.paramStyle === 'options') {
    const keys = ps.map((p) => `${camel(p.name)}?: ${ty(p)}`).join('; ');
    return `opts?: ${inplace ? '' : `${out} & `}{ ${keys} }`;
  }
  return [...ps.map((p) => `${camel(p.name)}?: ${ty(p)}`), ...(inplace ? [] : [`opts?: ${out}`])].join(', ');
}

/** The call signatures of a unary op with `params` (a gx function's with `x` first, a method's without). */
function paramFace(e, name, xTyped, xAny) {
  const res = e.kind === 'float' ? 'FloatResult<D>' : 'D';
  return [
    `${name === '' ? '<D extends DType>' : name}(${xTyped}${paramArgs(e, false, `OutOptions<${res}>`)}): Tensor<${res}>;`,
    `${name}(${xAny}${paramArgs(e, false, 'OutOptions')}): Tensor;`,
  ];
}

function tsApi(list) {
  const entries = list.filter((e) => (e.family === 'binary' || e.family === 'unary') && hasFace(e));
  const jsdoc = (text) => text.replace(/\*\//g, '*\\/');
  const lines = [...HEADER,
    '// The elementwise ops as gx functions (gx.add, gx.exp, ...) and Tensor methods (x.add(y),',
    '// x.exp_()): their types and documentation, from ops/op-list.js. The methods are installed',
    '// from the same tables by lib/ops/elementwise/methods.ts.',
    "import type { DType, FloatDType } from './dtypes';",
    "import type { Tensor } from '../core/tensor';",
    "import type { OutOptions } from '../ops/common';",
    "import { binaryFunction, unaryFunction, type DivOptions, type RoundingMode } from '../ops/elementwise/elementwise';",
    "import type { Operand, ScalarOperand } from '../ops/promotion';",
    "import type { BinaryFn, CompareFn, DivFn, FloatResult, RoundedDivOptions, UnaryFloatFn, UnaryKeepFn } from '../ops/types';",
    ''];
  for (const e of entries) {
    const name = camel(e.name);
    lines.push('/**', ` * ${jsdoc(e.doc)}`);
    if (e.example) lines.push(` * @example ${jsdoc(e.example)}`);
    const type = paramsOf(e).length > 0 ? `{\n${paramFace(e, '', 'x: Tensor<D>, ', 'x: Tensor, ').map((l) => `  ${l}`).join('\n')}\n}` : FACES[e.kind].fn;
    lines.push(' */', `export const ${name} = ${e.family}Function('${name}') as ${type};`);
  }
  lines.push('', "declare module '../core/tensor' {", '  interface Tensor<D extends DType = DType> {');
  for (const e of entries) {
    const name = camel(e.name);
    if (paramsOf(e).length > 0) {
      lines.push(`    /** ${jsdoc(e.doc)} (gx.${name}(this, ...)) */`, ...paramFace(e, name, '', '').map((l) => `    ${l}`));
      if (e.inplace) {
        lines.push(`    /** In place gx.${name}${e.kind === 'float' ? ' (floating tensors only)' : ''}; returns this. */`,
          `    ${name}_(${paramArgs(e, true)}): this;`);
      }
      continue;
    }
    const isDiv = e.name === 'div' && list.some((x) => x.roundingMode !== undefined);
    for (const l of (isDiv ? DIV_METHOD : FACES[e.kind].method)(name, `gx.${name}`, jsdoc(e.doc))) lines.push(`    ${l}`);
    if (!e.inplace) continue;
    if (isDiv) {
      lines.push(`    /** In place: self = self.${name}(other, opts), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */`,
        `    ${name}_(other: Operand, opts?: { roundingMode?: RoundingMode | null }): this;`);
    } else if (e.family === 'binary') {
      lines.push(`    /** In place: self = self.${name}(other), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */`,
        `    ${name}_(other: Operand): this;`);
    } else {
      lines.push(`    /** In place gx.${name}${e.kind === 'float' ? ' (floating tensors only)' : ''}; returns this. */`, `    ${name}_(): this;`);
    }
  }
  lines.push('  }', '}', '');
  return lines.join('\n');
}

/** A formula of NOTE [ Derivatives beside the schemas ] as TS: every call goes to the helpers' namespace F. */
function formula(text, where) {
  if (typeof text !== 'string' || text.trim() === '') throw new Error(`${where}: grad formulas are non-empty strings`);
  return text.replace(/\b([A-Za-z_]\w*)\s*\(/g, 'F.$1(');
}

function tsDerivatives(list) {
  const lines = [...HEADER,
    '// Each elementwise op\'s derivative (NOTE [ Derivatives beside the schemas ] in ops/op-list.js),',
    '// as functions of the gradient of the result, the operands and the result; lib/autograd',
    '// reduces them to each operand\'s shape.',
    "import * as F from '../autograd/formula-ops';",
    "import type { Tensor } from '../core/tensor';",
    '',
    '/** A unary op\'s number parameters by camelCase name (NOTE [ Parameters of elementwise ops ]), absent ones left out. */',
    'export type Params = Readonly<Record<string, number>>;',
    '',
    '/** One operand\'s gradient from the result\'s. */',
    'export type Derivative = (grad: Tensor, self: Tensor | number, other: Tensor | number, result: Tensor, params: Params) => Tensor | number;',
    '',
    '/** Which of grad, self, other and result a formula reads (what the op must save for it). */',
    'export interface Uses { self: boolean; other: boolean; result: boolean }',
    '',
    '/** By gx name: a binary op\'s derivatives by operand (each with what it reads), a unary op\'s for its one. */',
    'export const DERIVATIVES: Record<string, { self: Derivative; selfUses: Uses; other?: Derivative; otherUses?: Uses }> = {'];
  const declared = [];
  for (const e of list.filter((x) => (x.family === 'binary' || x.family === 'unary') && hasFace(x))) {
    // NOTE [ One declaration per op ]: an elementwise op with a floating result says its derivative; only
    // comparisons and logical ops (bool results) may go without one.
    if (e.grad === undefined && e.kind !== 'compare' && e.kind !== 'logical') {
      throw new Error(`ops/op-list.js ${e.name}: no derivative declared (grad: a formula of grad, self, other, result); ` +
        'every op with a floating result says how it differentiates');
    }
    declared.push(`  ${camel(e.name)}: '${e.grad === undefined ? 'nondifferentiable' : e.grad === 'notImplemented' ? 'notImplemented' : 'formula'}',`);
  }
  for (const e of list.filter((x) => x.grad !== undefined && x.grad !== 'notImplemented')) {
    const where = `ops/op-list.js ${e.name}`;
    const used = (f) => `(${['grad', 'self', 'other', 'result'].map((n) => (new RegExp(`\\b${n}\\b`).test(f) ? n : `_${n}`)).join(', ')})`;
    const uses = (f) => `{ ${['self', 'other', 'result'].map((n) => `${n}: ${new RegExp(`\\b${n}\\b`).test(f)}`).join(', ')} }`;
    if (e.family === 'binary') {
      const self = formula(e.grad.self, where), other = formula(e.grad.other, where);
      lines.push(`  ${camel(e.name)}: {`, `    self: ${used(self)} => ${self},`, `    selfUses: ${uses(self)},`,
        `    other: ${used(other)} => ${other},`, `    otherUses: ${uses(other)},`, '  },');
    } else {
      let self = formula(e.grad, where);
      const ps = paramsOf(e);
      for (const p of ps) self = self.replace(new RegExp(`\\b${p.name}\\b(?!\\s*\\()`, 'g'), `p.${camel(p.name)}`);
      const args = /\bp\./.test(self) ? `${used(self).slice(0, -1)}, p)` : used(self);
      lines.push(`  ${camel(e.name)}: {`, `    self: ${args} => ${self},`, `    selfUses: ${uses(self)},`, '  },');
    }
  }
  lines.push('};', '',
    '/** Every elementwise op\'s declaration (NOTE [ One declaration per op ] in lib/autograd/declarations.ts). */',
    'export const ELEMENTWISE_DIFFERENTIABILITY: Record<string, \'formula\' | \'nondifferentiable\' | \'notImplemented\'> = {', ...declared, '};', '');
  return lines.join('\n');
}

function outputs() {
  const list = readList();
  const all = schemas(list);
  return [
    { path: 'ops/generated/op_lists.h', text: opLists(list) },
    { path: 'ops/generated/entry_points.h', text: entryPoints(all) },
    { path: 'ops/generated/registry.cpp', text: registry(all) },
    { path: 'lib/generated/ops.ts', text: tsOps(list, all) },
    { path: 'lib/generated/elementwise.ts', text: tsApi(list) },
    { path: 'lib/generated/derivatives.ts', text: tsDerivatives(list) },
  ];
}

module.exports = { hasFace, outputs, paramsOf, registrations, readList, schemas };
