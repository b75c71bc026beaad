// Registration errors: a bad schema, a duplicate op (in one library and
// across two), a C++ signature that does not match its schema, an op without
// implementations, a library without ops, a name already taken (the built-in
// ops' namespace, an earlier version of the same extension). Each must fail
// with a message naming the op or the name, and leave the process and the
// registry usable.
import test from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { ConfigError } from '../lib/toolkit/errors';
import { loadInline } from '../lib/toolkit/load';
import { native } from '../lib/core/native';

const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-registration-'));
test.after.always(() => fs.rmSync(cache, { recursive: true, force: true }));

const NEG = `
gx::Tensor neg(const gx::Tensor& x) {
  gx::Tensor y = gx::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = -x.data_ptr<float>()[i];
  return y;
}
int64_t count(const gx::Tensor& x, int64_t k) { return x.numel() * k; }
`;

function inline(name: string, library: string): Promise<Record<string, (...args: unknown[]) => unknown>> {
  return loadInline({ name, cpp: NEG + library, buildDirectory: cache });
}

test('a bad schema fails the build with the parser\'s message', async (t) => {
  const err = await t.throwsAsync(inline('bad_schema', 'GX_LIBRARY(bad_schema, m) { m.def("neg(Tensor x,) -> Tensor").impl(gx::kCPU, neg); }'));
  t.regex(err?.message ?? '', /invalid schema "neg\(Tensor x,\) -> Tensor": expected an argument type|invalid schema "neg\(Tensor x,\) -> Tensor": expected a type name/);
  t.regex(err?.message ?? '', /\(at \S+\/bad_schema\.cpp:8\)$/, 'the line of the m.def in the source text');
});

test('an op defined twice in one library is an error naming it', async (t) => {
  const err = await t.throwsAsync(inline('dupe_one', `GX_LIBRARY(dupe_one, m) {
    m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg);
    m.def("neg(Tensor y) -> Tensor").impl(gx::kCPU, neg);
  }`));
  t.regex(err?.message ?? '', /duplicate op 'dupe_one::neg': defined twice/);
});

test('an op registered by two libraries is refused when the second loads', async (t) => {
  const first = await inline('shared_a', 'GX_LIBRARY(shared, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); }');
  const err = await t.throwsAsync(inline('shared_b', 'GX_LIBRARY(shared, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); }'));
  t.regex(err?.message ?? '', /duplicate op 'shared::neg': already registered by .*shared_a/);
  // The first library still works.
  using x = gx.tensor([1, -2]);
  using y = first.neg(x) as gx.Tensor<'float32'>;
  t.deepEqual(Array.from(y.toArraySync()), [-1, 2]);
});

test('a C++ signature that does not match the schema is refused at load time', async (t) => {
  const err = await t.throwsAsync(inline('sig', 'GX_LIBRARY(sig, m) { m.def("count(Tensor x, float k) -> int").impl(gx::kCPU, count); }'));
  t.regex(err?.message ?? '', /sig::count: the CPU implementation's C\+\+ signature is \(Tensor,int->int\) but the schema 'count\(Tensor x, float k\) -> int' needs \(Tensor,float->int\)/);
});

test('an op with no implementation is refused', async (t) => {
  const err = await t.throwsAsync(inline('noimpl', 'GX_LIBRARY(noimpl, m) { m.def("neg(Tensor x) -> Tensor"); }'));
  t.regex(err?.message ?? '', /noimpl::neg: defined without any implementation/);
});

test('an extension that registers no ops is refused, naming the file and the missing GX_LIBRARY block', async (t) => {
  const err = await t.throwsAsync(inline('no_block', 'int unused_function() { return 1; }'));
  t.regex(err?.message ?? '', /loading extension .*no_block\.node: it registers no ops; a `GX_LIBRARY\(name, m\) \{ m\.def\(\.\.\.\); \}` block is missing from its sources/);
});

test('reloading loadInline with the same name and edited source says what happened and what to do', async (t) => {
  const first = await inline('edited', 'GX_LIBRARY(edited, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); }');
  const err = await t.throwsAsync(inline('edited', 'GX_LIBRARY(edited, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); } // v2'));
  t.is(err?.message, "gx.loadInline: an extension named 'edited' is already loaded in this process, built from other source text or options; " +
    "its ops stay registered until the process exits, so they cannot be replaced: give this version another name (e.g. 'edited_v2'), " +
    'or restart the process to load it');
  // The same text again is the library already loaded; the first one still works.
  t.is(await inline('edited', 'GX_LIBRARY(edited, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); }'), first);
  using x = gx.tensor([3]);
  using y = first.neg(x) as gx.Tensor<'float32'>;
  t.deepEqual(Array.from(y.toArraySync()), [-3]);
});

test('the built-in ops\' namespace and names already registered are refused before building; built-ins keep working', async (t) => {
  await t.throwsAsync(inline('gx_ops', 'GX_LIBRARY(gx_ops, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); }'), {
    instanceOf: ConfigError, message: "gx.loadInline: \"name\" 'gx_ops' is reserved: it is the namespace of gpuext's built-in ops; choose another name",
  });
  await inline('owner_ns', 'GX_LIBRARY(taken_ns, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); }');
  await t.throwsAsync(inline('taken_ns', 'GX_LIBRARY(taken_ns, m) { m.def("neg2(Tensor x) -> Tensor").impl(gx::kCPU, neg); }'), {
    instanceOf: ConfigError, message: /gx\.loadInline: "name" 'taken_ns' is already taken: the ops of .*owner_ns\.node are registered under it in this process; choose another name/,
  });
  const made = fs.readdirSync(path.join(cache, 'inline')).concat(fs.readdirSync(cache));
  t.deepEqual(made.filter((d) => /^(gx_ops|taken_ns)-/.test(d)), [], 'nothing was written or built for the refused names');
  // A GX_LIBRARY block in gx_ops under another name is refused at load, and the built-in ops stay usable.
  const err = await t.throwsAsync(inline('sneaky', 'GX_LIBRARY(gx_ops, m) { m.def("add(Tensor x) -> Tensor").impl(gx::kCPU, neg); }'));
  t.regex(err?.message ?? '', /duplicate op 'gx_ops::add': already registered by .*gx_ops\.node .*; gx_ops is the namespace of gpuext's built-in ops: give the GX_LIBRARY block another namespace/);
  using s = gx.add(gx.tensor([1, 2]), gx.tensor([10, 20]));
  t.deepEqual(Array.from(s.toArraySync()), [11, 22]);
});

test('parseSchema gives the canonical schema and the parsed arguments', (t) => {
  const op = native.parseSchema('scale( Tensor x , float alpha=1 , * , bool inplace=False ) -> ( Tensor out , int n )');
  t.is(op.schema, 'scale(Tensor x, float alpha=1., *, bool inplace=False) -> (Tensor out, int n)');
  t.deepEqual(op.args.map((a) => [a.name, a.type, a.kwOnly, a.default]), [
    ['x', 'Tensor', false, undefined], ['alpha', 'float', false, 1], ['inplace', 'bool', true, false],
  ]);
  t.true(op.returnsTuple);
  for (const [bad, re] of [
    ['f(Tensor a, Tensor a) -> Tensor', /duplicate argument name 'a'/],
    ['f(int k=1.5) -> int', /default for int argument 'k' must be an integer literal/],
    ['f(Tensor(a!) x) -> ()', /alias annotations/],
    ['f(Tensor x)', /expected '->' after the argument list/],
    ['ns::f(Tensor x) -> Tensor', /may not contain '::'/],
  ] as const) {
    t.throws(() => native.parseSchema(bad), { message: re });
  }
});
