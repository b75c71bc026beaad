// The schema type table (scripts/gen/schema-types.js) and its faces: the
// core's parser reads exactly its spellings; the codegen of bindings, OpsOf,
// the extension runtime and the built-in ops' generators spell each type as
// its row says (a face that kept its own copy and drifted fails here); and
// the Handle and Device types work end to end in an extension
// (NOTE [ Handles and devices in schemas ] in csrc/core/schema.h).
import test from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib/index';
import { extensionRuntime, type ExtensionDescriptor } from '../lib/extension/runtime';
import { SCHEMA_TYPES, isSchemaType, type SchemaType } from '../lib/generated/schema-types';
import { native, type OpaqueHandle } from '../lib/core/native';
import type { OpSignature } from '../lib/extension/schema-types';
import { renderDts, renderJs } from '../lib/toolkit/codegen';
import { rng } from './rng';

const root = path.resolve(__dirname, '../..');
const TYPES = Object.keys(SCHEMA_TYPES).filter(isSchemaType);

interface ScriptRow { ts: string; tsReturn?: string; native?: string; cpp?: string; cppReturn?: string }
const scriptTable = (require(path.join(root, 'scripts/gen/schema-types.js')) as { SCHEMA_TYPES: Record<string, ScriptRow> }).SCHEMA_TYPES;

test('the core parses every type of the table, and no spelling outside it', (t) => {
  for (const type of TYPES) {
    const d = native.parseSchema(`f(${type} x) -> ()`);
    t.is(d.args[0].type, type, `${type} reads back as itself`);
    if (SCHEMA_TYPES[type].tsReturn !== undefined) t.is(native.parseSchema(`g() -> ${type}`).returns[0].type, type, `${type} as a result`);
  }
  for (const bad of ['Tensor[]?', 'float[]', 'Handle[]', 'Device[]', 'Stream', 'handle', 'int[]?[]']) {
    t.false(isSchemaType(bad), `${bad} is not in the table`);
    t.throws(() => native.parseSchema(`f(${bad} x) -> ()`), { message: /invalid schema/ }, `the core refuses ${bad}`);
  }
  t.throws(() => native.parseSchema('f(Handle h=0) -> ()'), { message: /cannot have a default other than None/ });
  t.throws(() => native.parseSchema('f(Device d="cpu") -> ()'), { message: /cannot have a default other than None/ });
  t.is(native.parseSchema('f(Device? d=None, Handle? h=None) -> ()').schema, 'f(Device? d=None, Handle? h=None) -> ()');
});

test('the lib/ table is the generators\' table', (t) => {
  t.deepEqual(Object.keys(scriptTable), TYPES);
  for (const type of TYPES) {
    t.is(scriptTable[type].ts, SCHEMA_TYPES[type].ts, `${type}: ts`);
    t.is(scriptTable[type].tsReturn, SCHEMA_TYPES[type].tsReturn, `${type}: tsReturn`);
  }
});

test('the built-in ops\' generator spells each argument and result from the table', (t) => {
  const { schemas } = require(path.join(root, 'scripts/gen/ops.js')) as {
    schemas(list: unknown[]): { args: { type: string; cpp: string; ts: string }[]; ret: { cpp: string; ts: string } }[];
  };
  const withCpp = TYPES.filter((ty) => scriptTable[ty].cpp !== undefined);
  const schema = `probe(${withCpp.map((ty, i) => `${ty} a${i}`).join(', ')}) -> Handle`;
  const [s] = schemas([{ family: 'op', schema, doc: '' }]);
  withCpp.forEach((ty, i) => {
    t.is(s.args[i].cpp, scriptTable[ty].cpp ?? "(none)", `${ty}: C++ parameter`);
    t.is(s.args[i].ts, scriptTable[ty].native ?? "(none)", `${ty}: the native call's TypeScript`);
  });
  t.deepEqual(s.ret, { cpp: 'Handle', ts: 'OpaqueHandle' });
  t.throws(() => schemas([{ family: 'op', schema: 'bad(Stream s) -> ()', doc: '' }]), { message: /'Stream' is not a schema type/ });
});

test('generated bindings type and convert each argument and result as the table says', (t) => {
  const ops = TYPES.map((type, i) => {
    const d = native.parseSchema(`op${i}(${type} x) -> ${SCHEMA_TYPES[type].tsReturn !== undefined ? type : '()'}`);
    return { ...d, qualifiedName: `ext::${d.name}`, devices: ['cpu' as const] };
  });
  const desc: ExtensionDescriptor = { path: '/x/ext.node', abiVersion: [1, 2], ops };
  const opts = { outDir: '/x', name: 'ext', configPath: 'setup.config.json' };
  const dts = renderDts(desc, opts);
  const js = renderJs(desc, opts);
  TYPES.forEach((type, i) => {
    const row = SCHEMA_TYPES[type];
    const param = type.endsWith('?') ? 'x?' : 'x';
    const ret = row.tsReturn ?? 'void';
    t.true(dts.includes(`export declare function op${i}(${param}: ${row.ts}): ${ret};`), `${type}: the .d.ts`);
    const body = js.slice(js.indexOf(`function op${i}(`), js.indexOf(`exports.op${i} =`));
    if (row.convert !== undefined) t.true(body.includes(`rt.${row.convert}(x, 'op${i}', 'x')`), `${type}: converted by rt.${row.convert}`);
    // NOTE [ Staged op calls ]: a type with a slot form is staged by a runtime function, the call takes only tensors.
    if (row.stage === undefined) {
      if (row.convert === undefined) t.regex(body, new RegExp(`rt\\.call\\(op${i}Id, x\\)`), `${type}: passed as it is`);
    } else if (row.stage === 'tensor') {
      t.true(body.includes(`rt.callStaged(op${i}Id, rt.${row.convert}(x, 'op${i}', 'x'))`), `${type}: a staged call's tensor`);
    } else {
      const staged = new RegExp(`rt\\.(stage\\w+)\\(x, "ext::op${i}", 'x', 0\\);`).exec(body);
      t.truthy(staged, `${type}: staged in slot 0`);
      t.is(typeof (extensionRuntime as Record<string, unknown>)[staged?.[1] ?? ''], 'function', `${type}: rt.${staged?.[1]}`);
      t.true(body.includes(`rt.callStaged(op${i}Id)`), `${type}: a staged call with no tensor`);
    }
    if (row.wrap !== undefined) t.true(body.includes(`rt.${row.wrap}(`), `${type}: the result through rt.${row.wrap}`);
  });
  // Every converter the table names is one the runtime has.
  for (const type of TYPES) {
    const { convert, wrap } = SCHEMA_TYPES[type];
    for (const name of [convert, wrap]) if (name !== undefined) t.is(typeof (extensionRuntime as Record<string, unknown>)[name], 'function', name);
  }
});

// OpsOf / OpSignature read the same rows: these compile only while they do.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Sig = OpSignature<'f(int[] a, Device d, Handle h, Device? e=None) -> Device'>;
const sigParams: Equal<Parameters<Sig>, [readonly number[] | number, gx.DeviceLike, OpaqueHandle, (gx.DeviceLike | null)?]> = true;
const sigResult: Equal<ReturnType<Sig>, gx.Device> = true;
const handleResult: Equal<ReturnType<OpSignature<'g(str s) -> Handle'>>, OpaqueHandle> = true;

test('OpsOf types Handle and Device from the table (checked when this file compiles)', (t) => {
  t.true(sigParams && sigResult && handleResult);
});

const SRC = `
#include <string>
#include <vector>
// A table of counters, each named to JS by a Handle of its index.
static std::vector<int64_t> counters;
gx::Handle counter_new(int64_t start) {
  counters.push_back(start);
  return gx::Handle{counters.size() - 1};
}
int64_t counter_add(gx::Handle h, int64_t by) {
  GX_CHECK(h.value < counters.size(), "counter_add: no counter ", h.value);
  return counters[h.value] += by;
}
// Runs on the device it is given (no tensor argument to dispatch on).
std::string where(gx::Device d, int64_t n) {
  gx::Tensor t = gx::empty({n}, gx::TensorOptions().device(d));
  return std::string(d.is_cpu() ? "cpu" : "cuda") + ":" + std::to_string(d.index) + ":" + std::to_string(t.numel());
}
gx::Device same(gx::Device d) { return d; }
int64_t peek(gx::Handle h) { return static_cast<int64_t>(h.value); }
GX_LIBRARY(handles_other, m) {
  m.def("peek(Handle h) -> int").impl(gx::kCPU, peek);
}
GX_LIBRARY(handles_ext, m) {
  m.def("counter_new(int start) -> Handle").impl(gx::kCPU, counter_new);
  m.def("counter_add(Handle h, int by) -> int").impl(gx::kCPU, counter_add);
  m.def("where(Device d, int n) -> str").impl(gx::kCPU, where);
  m.def("same(Device d) -> Device").impl(gx::kCPU, same);
}`;

test('an extension\'s ops take and give Handles and Devices', async (t) => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-handles-'));
  t.teardown(() => fs.rmSync(cache, { recursive: true, force: true }));
  const schemas = ['counter_new(int start) -> Handle', 'counter_add(Handle h, int by) -> int', 'where(Device d, int n) -> str', 'same(Device d) -> Device', 'peek(Handle h) -> int'] as const;
  const ops = await gx.loadInline({ name: 'handles_ext', cpp: SRC, buildDirectory: cache, schemas });
  const rand = rng(35);
  const starts = [0, 1, 2].map(() => Math.floor(rand() * 2000) - 1000);
  const handles = starts.map((s) => ops.counterNew(s));
  const want = [...starts];
  for (let k = 0; k < 12; k++) {
    const i = Math.floor(rand() * handles.length);
    const by = Math.floor(rand() * 200) - 100;
    want[i] += by;
    t.is(ops.counterAdd(handles[i], by), want[i], `counter ${i} after step ${k}`);
  }
  t.is(typeof handles[0], 'object', 'JS holds an object, not a number or a string');
  for (const fake of [0, '0', 0n, {}]) {
    t.throws(() => (ops.counterAdd as (...a: unknown[]) => unknown)(fake, 1), { instanceOf: TypeError, message: /counter_add: argument 'h' must be a Handle/ });
  }
  t.throws(() => ops.peek(handles[0]), { instanceOf: TypeError, message: /peek: argument 'h' is a Handle made by library 'handles_ext'; only its own ops take it/ });
  const n = 1 + Math.floor(rand() * 9);
  t.is(ops.where('cpu', n), `cpu:0:${n}`);
  const back = ops.same(new gx.Device('cpu'));
  t.true(back instanceof gx.Device && back.equals(new gx.Device('cpu')), 'a Device result is a Device');
  t.throws(() => ops.where('tpu:0', 1), { instanceOf: TypeError, message: /where: argument 'd': unknown device "tpu:0"/ });
  // No CUDA implementation: a CUDA device dispatches to none, and says so.
  t.throws(() => ops.where('cuda:0', 1), { message: /no CUDA implementation for inputs on cuda:0; it runs on the CPU/ });
});
