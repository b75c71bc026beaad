// The built-in ops as C++ functions for extensions: csrc/include/gpuext/ops.h,
// generated from the op list (ops/op-list.js) as the TypeScript calls are
// (scripts/gen/ops.js), so a schema and its C++ face cannot drift. Per schema
// a raw call in gx::ops::raw (exactly the schema's arguments, out included,
// through the op's cached handle: NOTE [ Ops from C++ ] in
// gpuext/tensor_methods.h); per elementwise or reduction family entry the
// torch-like face (gx::ops::add(a, b), gx::ops::sum(x, {1}, true)) that
// decides the result's dtype by the entry's `kind` and allocates it
// (gpuext/ops_support.h). The other ops' faces are written by hand
// (gpuext/ops_composite.h), as lib/ops/ writes their TypeScript ones.
// Run through scripts/gen.js.
'use strict';
const { generatedHeader } = require('./rows');
const { hasFace, paramsOf, readList, schemas } = require('./ops');
const { typeColumn } = require('./schema-types');

const OUT = 'csrc/include/gpuext/ops.h';
const OUT_RAW = 'csrc/include/gpuext/ops_raw.h';

// The library's plumbing stays out of the C++ face: the NCCL calls behind
// lib/distributed, the cuDNN calls behind lib/nn's convolutions (which fall back to unfold + matmul when cuDNN
// refuses, a decision made in TS), the report of the CPU backends and the switches for tests.
const NOT_IN_CXX = /^(nccl_\w+|cudnn_version|conv_cudnn\w*|backends|set_cpu_blas_enabled|set_gemm_kernel)$/;

// A schema's types as the raw calls' C++ parameters and how each is boxed into a gx_value: the columns cxx and
// cxxBox of the one schema type table.
const param = (type, name, where) => ({ cpp: typeColumn(type, 'cxx', where), box: typeColumn(type, 'cxxBox', where).replace(/\$/g, name) });
const RETURNS = {
  '()': { cpp: 'void', take: null },
  Tensor: { cpp: 'Tensor', take: 'return Tensor(r[0].kind == GX_VALUE_TENSOR ? r[0].v.tensor : nullptr);' },
  int: { cpp: 'int64_t', take: 'return r[0].v.i;' },
  bool: { cpp: 'bool', take: 'return r[0].v.b != 0;' },
};

const comment = (text) => text.replace(/\*\//g, '* /');

function rawCall(s) {
  const ret = RETURNS[s.ret.cppKey];
  if (!ret) throw new Error(`ops/op-list.js ${s.name}: no C++ face for the return of '${s.schema}'`);
  const ps = s.args.map((a) => param(a.type, a.name, `ops/op-list.js ${s.name}: argument '${a.name}'`));
  const params = s.args.map((a, i) => `${ps[i].cpp} ${a.name}`).join(', ');
  const lists = s.args.filter((a) => a.type === 'Tensor[]').map((a) => `  const gx::detail::BoxedTensors ${a.name}_(${a.name});`);
  const boxes = ps.map((p) => p.box).join(', ');
  const call = `gx::detail::call_op(op, args, ${s.args.length}, ${ret.take ? 'r, 1' : 'nullptr, 0'});`;
  return [
    `// ${s.schema}`,
    `inline ${ret.cpp} ${s.name}(${params}) {`,
    `  static const gx_op* const op = gx::detail::find_op("gx_ops::${s.name}");`,
    ...lists,
    `  const gx_value args[${s.args.length}] = {${boxes}};`,
    ...(ret.take ? ['  gx_value r[1] = {};', `  ${call}`, `  ${ret.take}`] : [`  ${call}`]),
    '}',
  ];
}

const BINARY_KINDS = { arith: 'Arith', div: 'Div', compare: 'Compare', logical: 'Logical' };
const UNARY_KINDS = { float: 'Float', keep: 'Keep' };
const REDUCE_KINDS = { sum: 'Sum', mean: 'Mean', extremum: 'Extremum', arg: 'Arg' };

function kindOf(table, e) {
  const k = table[e.kind];
  if (!k) throw new Error(`ops/op-list.js ${e.name}: kind '${e.kind}' has no C++ face in scripts/gen/cxx-ops.js`);
  return k;
}

function binaryFace(e) {
  const spec = `{"gx::ops::${e.name}", detail::BinaryKind::${kindOf(BINARY_KINDS, e)}, ` +
    `${e.noBool ? JSON.stringify(e.noBool) : 'nullptr'}, ${e.name === 'pow'}}`;
  return [
    `// ${comment(e.doc)}`,
    `inline constexpr detail::BinarySpec k_${e.name}_spec = ${spec};`,
    `inline Tensor ${e.name}(const Tensor& self, const Tensor& other) { return detail::binary(k_${e.name}_spec, raw::${e.name}, self, other); }`,
    `inline Tensor ${e.name}(const Tensor& self, const Scalar& other) { return detail::binary(k_${e.name}_spec, raw::${e.name}_scalar, self, other, false); }`,
    `inline Tensor ${e.name}(const Scalar& self, const Tensor& other) { return detail::binary(k_${e.name}_spec, raw::${e.name}_scalar, other, self, true); }`,
  ];
}

function unaryFace(e) {
  const ps = paramsOf(e);
  if (ps.length > 0) {
    // NOTE [ Parameters of elementwise ops ]: torch's defaults; a float? is a pointer, as raw:: takes it (null: absent).
    const decl = ps.map((p) => (p.type === 'float' ? `double ${p.name} = ${p.default}` : `const double* ${p.name} = nullptr`));
    const pass = ps.map((p) => p.name);
    // `ordered` (NOTE [ Parameters of elementwise ops ]): the first may not exceed the second, as the gx function checks.
    const [lo, hi] = e.ordered ?? [];
    const check = e.ordered === undefined ? [] : [
      `  GX_CHECK(!(${lo} > ${hi}), "gx::ops::${e.name}: ${lo} cannot be greater than ${hi}, got ${lo} ", ${lo}, " and ${hi} ", ${hi});`];
    return [
      `// ${comment(e.doc)}`,
      `inline Tensor ${e.name}(const Tensor& self, ${decl.join(', ')}) {`,
      ...check,
      `  return detail::unary("gx::ops::${e.name}", detail::UnaryKind::${kindOf(UNARY_KINDS, e)},`,
      `      [&](const Tensor& s, ScalarType d, const Tensor& o) { raw::${e.name}(s, ${pass.join(', ')}, d, o); }, self);`,
      '}',
    ];
  }
  return [
    `// ${comment(e.doc)}`,
    `inline Tensor ${e.name}(const Tensor& self) { return detail::unary("gx::ops::${e.name}", detail::UnaryKind::${kindOf(UNARY_KINDS, e)}, raw::${e.name}, self); }`,
  ];
}

function reduceFace(e) {
  const kind = kindOf(REDUCE_KINDS, e);
  const call = (dims, keep, dtype) => `detail::reduce("gx::ops::${e.name}", detail::ReduceKind::${kind}, raw::${e.name}, self, ${dims}, ${keep}, ${dtype})`;
  if (kind === 'Arg') {
    return [
      `// ${comment(e.doc)} Without dim: the index into the flattened tensor.`,
      `inline Tensor ${e.name}(const Tensor& self) { return ${call('{}', 'false', 'nullptr')}; }`,
      `inline Tensor ${e.name}(const Tensor& self, int64_t dim, bool keepdim = false) { return ${call('{dim}', 'keepdim', 'nullptr')}; }`,
    ];
  }
  const lines = [
    `// ${comment(e.doc)}`,
    `inline Tensor ${e.name}(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false) { return ${call('dim', 'keepdim', 'nullptr')}; }`,
    `inline Tensor ${e.name}(const Tensor& self, int64_t dim, bool keepdim = false) { return ${call('{dim}', 'keepdim', 'nullptr')}; }`,
  ];
  if (kind === 'Sum' || kind === 'Mean') {
    lines.push(`inline Tensor ${e.name}(const Tensor& self, IntArrayRef dim, bool keepdim, ScalarType dtype) { return ${call('dim', 'keepdim', '&dtype')}; }`);
  }
  return lines;
}

const FACES = { binary: binaryFace, unary: unaryFace, reduce: reduceFace };

function rawHeader(list) {
  const all = schemas(list).filter((s) => !NOT_IN_CXX.test(s.name)).map((s) => ({ ...s, ret: { cppKey: /->\s*(.+)$/.exec(s.schema)[1].trim() } }));
  const lines = [...generatedHeader('ops/op-list.js'),
    '// gx::ops::raw: one call per built-in op schema, exactly its arguments (`out` and the',
    '// compute dtype included), through the op\'s handle, found once (NOTE [ Ops from C++ ]',
    '// in gpuext/tensor_methods.h). gpuext/ops.h has the faces that allocate the result.',
    '#pragma once',
    '#include "gpuext/ops_support.h"',
    '',
    'namespace gx::ops::raw {',
    ''];
  for (const s of all) lines.push(...rawCall(s));
  lines.push('', '}  // namespace gx::ops::raw', '');
  return lines.join('\n');
}

function header(list) {
  const lines = [...generatedHeader('ops/op-list.js'),
    '// The built-in ops from C++ extensions: #include <gpuext/ops.h>, then gx::ops::matmul(a, b),',
    '// gx::ops::sum(x, {1}, /*keepdim=*/true), gx::ops::cat({a, b}, 1), gx::ops::sigmoid(x), a + b ...',
    '// Each call goes through the C ABI to the built-in ops library, never linked',
    '// (NOTE [ Ops from C++ ] in gpuext/tensor_methods.h), with the checks and errors',
    '// of a call from TypeScript. gx::ops::raw (gpuext/ops_raw.h) has one call per',
    '// schema, `out` and all; the faces here decide the result\'s dtype and sizes by',
    '// the op list\'s `kind`, as lib/ops does (gpuext/ops_support.h);',
    '// gpuext/ops_composite.h has the faces written by hand.',
    '#pragma once',
    '#include "gpuext/ops_raw.h"',
    '',
    'namespace gx::ops {',
    ''];
  for (const e of list.filter(hasFace)) {  // div's rounding modes: raw calls only (NOTE [ Rounding modes of div ])
    const face = FACES[e.family];
    if (face) lines.push(...face(e), '');
  }
  lines.push('}  // namespace gx::ops', '', '#include "gpuext/ops_composite.h"', '');
  return lines.join('\n');
}

function outputs() {
  const list = readList();
  return [{ path: OUT_RAW, text: rawHeader(list) }, { path: OUT, text: header(list) }];
}

module.exports = { outputs, NOT_IN_CXX };
