// Extensions end to end: build with the toolkit, load, call through the
// generated typed bindings; every argument kind and default; errors that
// name the op and the argument; the examples on every device.
import test from 'ava';
import fs from 'fs';
import path from 'path';
import ts from 'typescript';

import * as gx from '../lib';
import { build } from '../lib/toolkit/build';
import { cudaTest, deviceTest, poisonCache, randomValues, sameValues } from './helpers';

const root = path.resolve(__dirname, '../..');
const fixture = path.join(root, 'test/fixtures/kinds');
// The archs for .cu builds: the local GPU's, else one real arch (compile-only on CI).
const arch = gx.cuda.isAvailable() ? 'native' : 'sm_90';

// Bindings of the kinds fixture, typed loosely: the typed face is checked by tsc below.
type Fn = (...args: unknown[]) => unknown;
let kinds: Record<string, Fn> & { library: gx.ExtensionLibrary };

test.before(async () => {
  fs.rmSync(path.join(fixture, 'build'), { recursive: true, force: true });
  await build({ config: path.join(fixture, 'setup.config.json') });
  kinds = require(path.join(fixture, 'build/kinds.js')) as typeof kinds;
});

test('a C++ extension builds from nothing and its ops are registered with their schemas', (t) => {
  const ops = kinds.library.ops.map((o) => o.schema);
  t.true(ops.includes('add(Tensor a, Tensor b, float alpha=1.) -> Tensor'));
  t.true(ops.includes('kw(Tensor x, *, float a, float b=1.) -> float'));
  t.is(kinds.library.ops.length, 10);
  t.deepEqual(kinds.library.ops.find((o) => o.name === 'add')?.devices, ['cpu']);
});

test('tensor arguments, float defaults and results', (t) => {
  const a = randomValues('float32', 100, 21) as Float32Array;
  const b = randomValues('float32', 100, 22) as Float32Array;
  using ta = gx.tensor(a, { shape: [10, 10] });
  using tb = gx.tensor(b, { shape: [10, 10] });
  poisonCache('cpu', 100, 'float32');
  using c = kinds.add(ta, tb) as gx.Tensor;
  t.deepEqual(c.shape, [10, 10]);
  sameValues(t, c.toArraySync(), Array.from(a, (x, i) => Math.fround(x + b[i])));
  using c2 = kinds.add(ta, tb, 0.5) as gx.Tensor;
  sameValues(t, c2.toArraySync(), Array.from(a, (x, i) => Math.fround(x + Math.fround(0.5 * b[i]))));
});

test('int, float, bool, str, int[] and ScalarType arguments with their defaults', (t) => {
  t.is(kinds.describe(5), '5|0.500000|T|hi|1,2,|float16');
  t.is(kinds.describe(-7n, 1.25, false, 'yo', [3, 4, 5], 'int8'), '-7|1.250000|F|yo|3,4,5,|int8');
  t.is(kinds.describe(1, undefined, undefined, undefined, 9), '1|0.500000|T|hi|9,|float16', 'one int for int[]');
});

test('optional arguments: None by default, values when given', (t) => {
  t.is(kinds.optionals(), '-----');
  using x = gx.ones([2]);
  t.is(kinds.optionals(x, 3, 2.5, 's', 'bool'), 'T3Fsbool');
  t.is(kinds.optionals(null, null, null, 'only'), '---only-');
});

test('Tensor[] arguments, tuple, list, bool and empty returns, keyword-only arguments', (t) => {
  using a = gx.ones([3]);
  using b = gx.zeros([2, 2]);
  t.is(kinds.count([a, b]), 7);
  using v = gx.tensor([1, 2, 3, 4]);
  const [first, second] = kinds.split2(v) as [gx.Tensor, gx.Tensor];
  sameValues(t, first.toArraySync(), [1, 2]);
  sameValues(t, second.toArraySync(), [3, 4]);
  first.dispose();
  second.dispose();
  const list = kinds.zerosList(3, [2, 2]) as gx.Tensor[];
  t.is(list.length, 3);
  t.is(String(list[0].dtype), 'int32');
  sameValues(t, list[2].toArraySync(), [0, 0, 0, 0]);
  list.forEach((x) => x.dispose());
  t.is(kinds.always(true), true);
  t.is(kinds.nothing(a), undefined);
  t.is(kinds.kw(a, { a: 2 }), 7);
  t.is(kinds.kw(a, { a: 2, b: 0 }), 6);
});

test('templated kernels dispatch over dtypes', (t) => {
  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16'] as const) {
    using x = gx.tensor([1, -2, 0.5], { dtype });
    using y = kinds.scale(x, 4) as gx.Tensor;
    t.is(String(y.dtype), dtype);
    sameValues(t, y.toArraySync(), [4, -8, 2], dtype);
  }
});

test('bad calls throw errors that name the op and the argument', (t) => {
  using a = gx.ones([3]);
  using b = gx.ones([4]);
  using i32 = gx.ones([3], { dtype: 'int32' });
  const cases: Array<[() => unknown, new (...args: never[]) => Error, RegExp]> = [
    [() => kinds.add(a), TypeError, /^add: missing required argument 'b' \(Tensor\); schema: add\(Tensor a, Tensor b, float alpha=1\.\) -> Tensor$/],
    [() => kinds.add(a, undefined), TypeError, /^add: missing required argument 'b' \(Tensor\)$/],
    [() => kinds.add(a, a, 2, 3), TypeError, /^add: takes at most 3 arguments but 4 were given \(schema: add\(Tensor a, Tensor b, float alpha=1\.\) -> Tensor\)/],
    [() => kinds.nothing(a, a), TypeError, /^nothing: takes 1 argument but 2 were given/],
    // The same words from the functions of loadLibrary (gx.load's ops), made from the descriptors at run time.
    [() => kinds.library.functions.add(a), TypeError, /^add: missing required argument 'b' \(Tensor\); schema: add\(/],
    [() => kinds.library.functions.add(a, a, 2, 3), TypeError, /^add: takes at most 3 arguments but 4 were given/],
    [() => kinds.library.functions.kw(a), TypeError, /^kw: missing the options object with required keyword-only argument 'a'/],
    [() => kinds.add(a, 3), TypeError, /^add: argument 'b' must be a Tensor, got number 3/],
    [() => kinds.add(a, b), Error, /^kinds::add: shapes differ: \[3\] vs \[4\]/],
    [() => kinds.add(a, i32), Error, /^kinds::add: expected float32 tensors, got float32 and int32/],
    [() => kinds.add(a, a, 'x'), TypeError, /^kinds::add: argument 'alpha' must be a number, got string "x"/],
    [() => kinds.describe(1.5), TypeError, /^kinds::describe: argument 'k' must be an integer, got number 1\.5/],
    [() => kinds.describe(), TypeError, /^describe: missing required argument 'k' \(int\)/],
    [() => kinds.describe(1, 0.5, 'yes'), TypeError, /argument 'flag' must be a boolean, got string "yes"/],
    [() => kinds.describe(1, 0.5, true, 's', [1], 'float8'), TypeError, /argument 'dtype': unknown dtype "float8"/],
    [() => kinds.describe(1, 0.5, true, 's', [1], 99 as never), TypeError, /argument 'dtype': unknown dtype code 99/],
    [() => kinds.scale(i32, 2), Error, /^kinds::scale: scale: unsupported dtype int32; expected one of float32, float64, float16, bfloat16/],
    [() => kinds.count([a, 'x']), TypeError, /^count: argument 'xs\[1\]' must be a Tensor/],
    [() => kinds.kw(a), TypeError, /^kw: missing the options object with required keyword-only argument 'a'/],
    [() => kinds.kw(a, {}), TypeError, /^kinds::kw: missing required argument 'a' \(float\)/],
    [() => kinds.split2(a), Error, /expected an even-length 1-d tensor, got \[3\]/],
  ];
  for (const [call, cls, re] of cases) {
    const err = t.throws(call);
    t.true(err instanceof cls, `${err?.constructor.name}: ${err?.message}`);
    t.regex(err?.message ?? '', re);
  }
  sameValues(t, a.toArraySync(), [1, 1, 1], 'inputs intact');
});

test('a disposed tensor passed to an op is an error naming the op', (t) => {
  const a = gx.ones([3]);
  a.dispose();
  using b = gx.ones([3]);
  t.throws(() => kinds.add(a, b), { message: /^add: this tensor was disposed/ });
});

cudaTest('ops called with inputs on a device they have no implementation for say where they run', (t) => {
  using a = gx.ones([3], { device: 'cuda' });
  t.throws(() => kinds.add(a, a), { message: /^kinds::add: no CUDA implementation for inputs on cuda:0; it runs on the CPU: move the inputs with \.cpu\(\)/ });
  using c = gx.ones([3]);
  t.throws(() => kinds.add(a, c), { message: /^kinds::add: argument 'b' is on cpu but argument 'a' is on cuda:0/ });
});

test('repeated op calls leak no tensors', (t) => {
  using a = gx.ones([64]);
  const before = gx.memory.stats('cpu');
  for (let i = 0; i < 5000; i++) {
    const c = kinds.add(a, a) as gx.Tensor;
    c.dispose();
    const [x, y] = kinds.split2(a) as gx.Tensor[];
    x.dispose();
    y.dispose();
  }
  const after = gx.memory.stats('cpu');
  t.is(after.liveTensors, before.liveTensors);
  t.is(after.allocatedBytes, before.allocatedBytes);
});

test('a returned tensor goes into the handle a disposed tensor left (NOTE [ Recycled handles ])', (t) => {
  const a = randomValues('float32', 8, 31) as Float32Array;
  const b = randomValues('float32', 8, 32) as Float32Array;
  using ta = gx.tensor(a);
  using tb = gx.tensor(b);
  const c = kinds.add(ta, tb) as gx.Tensor;
  const h = c.handle();
  c.dispose();
  using d = kinds.add(ta, tb, 0.5) as gx.Tensor;
  t.is(d.handle(), h);
  sameValues(t, d.toArraySync(), Array.from(a, (x, i) => Math.fround(x + Math.fround(0.5 * b[i]))));
  t.true(c.isDisposed);
  // A tuple: the first tensor takes it; an op returning no tensor leaves it unused, and nothing leaks.
  const live = gx.memory.stats('cpu').liveTensors;
  gx.exp(ta).dispose();
  const [p, q] = kinds.split2(ta) as gx.Tensor[];
  sameValues(t, p.toArraySync(), a.slice(0, 4));
  sameValues(t, q.toArraySync(), a.slice(4));
  p.dispose();
  q.dispose();
  t.is(kinds.count([ta, tb]), 16);
  t.is(gx.memory.stats('cpu').liveTensors, live);
});

test('the generated .d.ts types the ops: correct use compiles, a wrong argument type does not', (t) => {
  const dir = path.join(fixture, 'build');
  const ok = path.join(dir, 'usage_ok.ts');
  const bad = path.join(dir, 'usage_bad.ts');
  const header = "import * as gx from 'gpuext';\nimport { add, describe, kw, split2 } from './kinds';\n";
  fs.writeFileSync(ok, header + [
    'const a: gx.Tensor = gx.ones([3]);',
    'const c: gx.Tensor = add(a, a, 2);',
    "const s: string = describe(3, 0.5, true, 'x', [1], 'float32');",
    'const f: number = kw(a, { a: 1 });',
    'const [p, q]: [gx.Tensor, gx.Tensor] = split2(a);',
    'export { c, s, f, p, q };',
  ].join('\n'));
  fs.writeFileSync(bad, header + [
    'const a = gx.ones([3]);',
    "export const c = add(a, 'two');",
    "export const s = describe(3, 0.5, true, 'x', [1], 'float8');",
    'export const f = kw(a);',
  ].join('\n'));
  const options: ts.CompilerOptions = {
    strict: true, noEmit: true, module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022, types: ['node'], lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
  };
  const diagnostics = (file: string): string[] =>
    ts.getPreEmitDiagnostics(ts.createProgram([file], options))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  t.deepEqual(diagnostics(ok), []);
  const errors = diagnostics(bad);
  t.is(errors.length, 3, errors.join('\n'));
  t.regex(errors[0], /Argument of type 'string' is not assignable to parameter of type 'Tensor</);
  t.regex(errors[1], /Argument of type '"float8"' is not assignable to parameter of type 'DType/);
  t.regex(errors[2], /Expected 2 arguments, but got 1/);
});

// --- the examples: CUDA sources, built here with nvcc even without a GPU -------

const examples = path.join(root, 'examples');
let addGpu: (a: gx.Tensor, b: gx.Tensor) => gx.Tensor;
let scale: (x: gx.Tensor, alpha: number, beta?: number) => gx.Tensor;

test.before(async () => {
  await build({ config: path.join(examples, 'add-gpu/setup.config.json'), arch });
  await build({ config: path.join(examples, 'scale-dtypes/setup.config.json'), arch });
  ({ addGpu } = require(path.join(examples, 'add-gpu/build/add_gpu.js')) as { addGpu: typeof addGpu });
  ({ scale } = require(path.join(examples, 'scale-dtypes/build/scale_dtypes.js')) as { scale: typeof scale });
});

deviceTest('examples/add-gpu: add_gpu against a JS reference on random inputs', (t, device) => {
  for (const n of [1, 1000, (1 << 20) + 7]) {
    const a = randomValues('float32', n, n) as Float32Array;
    const b = randomValues('float32', n, n + 1) as Float32Array;
    using ta = gx.tensor(a, { device });
    using tb = gx.tensor(b, { device });
    poisonCache(device, n, 'float32');
    using c = addGpu(ta, tb);
    t.is(c.device.type, device);
    sameValues(t, c.toArraySync(), Array.from(a, (x, i) => Math.fround(x + b[i])), `n=${n}`);
  }
  // Views at an odd element offset are not 16-byte aligned: the scalar kernel runs.
  const data = randomValues('float32', 1001, 5) as Float32Array;
  using base = gx.tensor(data, { device });
  using shifted = base.asStrided([1000], [1], 1);
  poisonCache(device, 1000, 'float32');
  using twice = addGpu(shifted, shifted);
  sameValues(t, twice.toArraySync(), Array.from(data.subarray(1), (x) => Math.fround(x + x)), 'unaligned');
  using x = gx.ones([2, 3], { device });
  using y = gx.ones([3, 2], { device });
  t.throws(() => addGpu(x, y), { message: /^add_gpu::add_gpu: shapes differ: \[2, 3\] vs \[3, 2\]/ });
});

deviceTest('examples/scale-dtypes: one templated kernel over every numeric dtype', (t, device) => {
  const cases: Array<[gx.DType, number[]]> = [
    ['float32', [1, 3, 5, 7]], ['float64', [1, 3, 5, 7]], ['float16', [1, 3, 5, 7]], ['bfloat16', [1, 3, 5, 7]],
    ['int8', [1, 3, 5, 7]], ['int16', [1, 3, 5, 7]], ['int32', [1, 3, 5, 7]], ['uint8', [1, 3, 5, 7]],
  ];
  for (const [dtype, expected] of cases) {
    using x = gx.arange(0, 4, 1, { dtype, device });
    poisonCache(device, 4, dtype);
    using y = scale(x, 2, 1);
    t.is(String(y.dtype), dtype);
    sameValues(t, y.toArraySync(), expected, dtype);
  }
  using big = gx.arange(0, 4, 1, { dtype: 'int64', device });
  using y64 = scale(big, 2, 1);
  sameValues(t, y64.toArraySync(), [1n, 3n, 5n, 7n]);
  using b = gx.ones([2], { dtype: 'bool', device });
  t.throws(() => scale(b, 2), { message: /unsupported dtype bool/ });
});
