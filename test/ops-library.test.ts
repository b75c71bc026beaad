// The built-in ops as a library: built by the toolkit from the root
// setup.config.json, registered with schemas like any extension, loaded on
// first use (with a clear error when not built), its generated bindings
// usable, and every op reachable as a gx function and a Tensor method.
import test from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import * as gx from '../lib';
import { opsLibrary, opsLibraryPath } from '../lib/extension/runtime';


const root = path.resolve(__dirname, '../..');

test('the root setup.config.json builds the ops into ops/build with a relative runtime import', (t) => {
  const cfg = JSON.parse(fs.readFileSync(path.join(root, 'setup.config.json'), 'utf8')) as Record<string, unknown>;
  t.is(cfg.name, 'gx_ops');
  t.is(cfg.outDir, 'ops/build');
  t.deepEqual(cfg.sources, ['ops/**/*.cu', 'ops/**/*.cpp']);
  t.is(opsLibraryPath(), path.join(root, 'ops', 'build', 'gx_ops.node'));
  t.true(fs.existsSync(opsLibraryPath()), 'built by npm ci (prepare) or npm run build:ops');
  const js = fs.readFileSync(path.join(root, 'ops/build/gx_ops.js'), 'utf8');
  t.true(js.includes('require("../../dist/lib/ops/runtime")'), 'the generated bindings do not require gpuext itself');
});

test('the built library registers exactly the ops of ops/op-list.js, with their schemas and implementations', (t) => {
  const lib = opsLibrary('test');
  const { registrations } = require(path.join(root, 'scripts/gen/ops.js')) as {
    registrations: () => { name: string; schema: string; devices: string[] }[];
  };
  const listed = registrations();
  t.true(listed.length > 60, `${listed.length} ops listed`);
  const cudaBuild = lib.ops.some((o) => o.devices.includes('cuda'));
  const byName = new Map(lib.ops.map((o) => [o.name, o]));
  for (const want of listed) {
    const op = byName.get(want.name);
    if (!cudaBuild && !want.devices.includes('cpu')) {
      t.is(op, undefined, `${want.name} is CUDA-only: not in a CPU-only build`);
      continue;
    }
    if (op === undefined) {
      t.fail(`op ${want.name} is not registered: rebuild the ops (npm run build:ops)`);
      continue;
    }
    t.is(op.schema, want.schema, want.name);
    t.is(op.qualifiedName, `gx_ops::${want.name}`);
    t.deepEqual(op.devices, cudaBuild ? want.devices : want.devices.filter((d) => d === 'cpu'), want.name);
    t.true(op.doc.length > 0, `${want.name} has a doc string`);
  }
  t.deepEqual(lib.ops.map((o) => o.name).filter((n) => !listed.some((l) => l.name === n)), [], 'registered but not listed');
  t.is(byName.get('sum')?.schema, 'sum(Tensor self, int[] axis, ScalarType dtype, Tensor out) -> ()');
  for (const name of ['max', 'min', 'var', 'svd', 'rand', 'randn', 'randint']) t.true(byName.has(name), `${name}: the name users call`);
  if (gx.cuda.isAvailable()) t.true(cudaBuild, 'with a GPU, the ops are built with CUDA');
});

test('the generated bindings call the same ops', (t) => {
  const gen = require(path.join(root, 'ops/build/gx_ops.js')) as {
    addScalar: (self: gx.Tensor, other: number, otherInt: number, reverse: boolean, dtype: gx.DType, out: gx.Tensor) => void;
  };
  using a = gx.tensor([1, 2, 3]);
  using out = gx.empty([3]);
  gen.addScalar(a, 0.5, 0, true, 'float32', out);
  t.deepEqual(Array.from(out.toArraySync()), [1.5, 2.5, 3.5]);
});

test('a missing ops library is an error that says how to build it', (t) => {
  const script = `const gx = require(${JSON.stringify(path.join(root, 'dist/lib'))});
try { gx.add(gx.ones([2]), 1); } catch (e) { console.log(JSON.stringify({ message: e.message, code: e.code })); }`;
  const r = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8', env: { ...process.env, GPUEXT_OPS_LIBRARY: path.join(root, 'ops/build/does-not-exist.node') },
  });
  t.is(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout.trim()) as { message: string; code: string };
  t.is(o.code, 'GX_OPS_NOT_BUILT');
  t.regex(o.message, /^gx\.add: the built-in ops are not built \(.*does-not-exist\.node is missing\); build them with `npm rebuild gpuext --build-from-source` \(in a checkout of gpuext: `npm run build:ops`\)/);
});

test('every op is a gx function and, where PyTorch has one, a Tensor method', (t) => {
  const fns = ['add', 'sub', 'mul', 'div', 'pow', 'maximum', 'minimum', 'remainder', 'eq', 'ne', 'lt', 'le', 'gt', 'ge',
    'logicalAnd', 'logicalOr', 'logicalXor', 'exp', 'log', 'log1p', 'sqrt', 'rsqrt', 'sin', 'cos', 'tanh', 'sigmoid', 'gelu',
    'softplus', 'neg', 'abs', 'sign', 'floor', 'ceil', 'round', 'relu', 'where', 'clamp', 'astype', 'sum', 'prod', 'mean',
    'max', 'min', 'argmax', 'argmin'] as const;
  const inplace = ['add_', 'sub_', 'mul_', 'div_', 'pow_', 'remainder_', 'exp_', 'log_', 'log1p_', 'sqrt_', 'rsqrt_', 'sin_',
    'cos_', 'tanh_', 'sigmoid_', 'neg_', 'abs_', 'sign_', 'floor_', 'ceil_', 'round_', 'relu_', 'clamp_'];
  for (const f of fns) {
    t.is(typeof gx[f], 'function', `gx.${f}`);
    t.is(typeof Reflect.get(gx.Tensor.prototype, f), 'function', `Tensor.prototype.${f}`);
  }
  for (const f of inplace) t.is(typeof Reflect.get(gx.Tensor.prototype, f), 'function', `Tensor.prototype.${f}`);
  t.false(Object.keys(gx.Tensor.prototype).includes('add'), 'methods are not enumerable');
  using a = gx.tensor([[1, 2], [3, 4]]);
  using b = gx.tensor([10, 20]);
  using s = a.add(b).mul(2).sum();
  t.is(s.item(), 2 * (1 + 2 + 3 + 4 + 2 * (10 + 20)));
});

test('result types are as precise as the operands allow (compile-time)', (t) => {
  using f = gx.ones([2], { dtype: 'float16' });
  using i = gx.ones([2], { dtype: 'int32' });
  // Each assignment is checked by tsc; a wrong inference fails the build, not this test.
  const sameF: gx.Tensor<'float16'> = f.add(f);
  const scalarF: gx.Tensor<'float16'> = f.mul(2.5);
  const cmp: gx.Tensor<'bool'> = i.lt(3);
  const ex: gx.Tensor<'float32'> = i.exp();
  const ab: gx.Tensor<'int32'> = i.abs();
  const sm: gx.Tensor<'int64'> = i.sum();
  const dv: gx.Tensor<'float32'> = gx.div(i, i);
  const am: gx.Tensor<'int64'> = f.argmax();
  const cast: gx.Tensor<'bfloat16'> = i.astype('bfloat16');
  const sd: gx.Tensor<'float64'> = i.sum({ dtype: 'float64' });
  const results = [sameF, scalarF, cmp, ex, ab, sm, dv, am, cast, sd];
  t.deepEqual(results.map((r) => r.dtype), ['float16', 'float16', 'bool', 'float32', 'int32', 'int64', 'float32', 'int64', 'bfloat16', 'float64']);
  for (const r of results) r.dispose();
});
