// Run-time kernels end to end: the examples of examples/kernels.ts against
// their CPU references on the GPU, launch checks, and argument errors (which
// need no GPU: they are caught before anything is compiled).
import test from 'ava';

import * as gx from '../lib';
import * as ex from '../examples/kernels';
import { cudaTest } from './helpers';

const ADD = `extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}`;

test('RawKernel reads its parameter types from the source and checks arguments before launching', (t) => {
  const k = new gx.RawKernel(ADD, 'add');
  t.deepEqual(k.params?.map((p) => [p.name, p.kind]), [['a', 'pointer'], ['b', 'pointer'], ['c', 'pointer'], ['n', 'int32']]);
  t.throws(() => k.launch([1], [32], [1, 2, 3]), { instanceOf: TypeError, message: /gx\.RawKernel 'add': takes 4 arguments \(const float\*, const float\*, float\*, int\) but 3 were given/ });
  t.throws(() => k.launch([1], [32], [1, 2, 3, 4]), { instanceOf: TypeError, message: /argument 0 'a' is declared const float\* but got number 1; pass a Tensor/ });
  using cpu = gx.ones([4]);
  t.throws(() => k.launch([1], [32], [cpu, cpu, cpu, 4]), { instanceOf: TypeError, message: /argument 0 'a' is on cpu; kernels read CUDA tensors/ });
  const scalar = new gx.RawKernel('extern "C" __global__ void f(unsigned char x, int n, float y) {}', 'f');
  t.throws(() => scalar.launch([1], [1], [300, 1, 1]), { instanceOf: RangeError, message: /argument 0 'x'.*300.*out of .*range/ });
  t.throws(() => scalar.launch([1], [1], [1, 2 ** 31, 1]), { instanceOf: RangeError, message: /argument 1 'n'.*int/ });
  t.throws(() => scalar.launch([1], [1], [1, 1.5, 1]), { message: /argument 1 'n'/ });
  const templated = new gx.RawKernel('template <typename T> __global__ void g(T* x) {}', 'g');
  t.throws(() => templated.launch([1], [1], []), { instanceOf: TypeError, message: /cannot read its parameter types .* declare them/ });
});

test('elementwiseKernel checks its parameters and arguments', (t) => {
  t.throws(() => gx.elementwiseKernel('float32 x, float32 x', 'float32 y', 'y = x'), { message: /parameter 'x' is declared twice/ });
  t.throws(() => gx.elementwiseKernel('raw T x', 'T y', 'y = x[i]'), { message: /raw parameters are not supported yet/ });
  t.throws(() => gx.elementwiseKernel('T x', '', 'x'), { message: /needs at least one output/ });
  const k = gx.elementwiseKernel('T x, T y', 'T z', 'z = x + y', { name: 'addk' });
  using a = gx.ones([2]);
  t.throws(() => k(a), { message: /takes 2 inputs/ });
  t.throws(() => k(a, a), { message: /needs at least one CUDA tensor input/ });
});

cudaTest('RawKernel: add against a reference, attributes, launch limits', (t) => {
  const k = new gx.RawKernel(ADD, 'add');
  const n = 10_000;
  const a = Float32Array.from({ length: n }, (_, i) => i * 0.5);
  const b = Float32Array.from({ length: n }, (_, i) => 3 - i);
  using ta = gx.tensor(a, { device: 'cuda' });
  using tb = gx.tensor(b, { device: 'cuda' });
  using tc = gx.full([n], Number.NaN, { device: 'cuda' });
  k.launch([Math.ceil(n / 256)], [256], [ta, tb, tc, n]);
  const c = tc.toArraySync() as Float32Array;
  t.true(c.every((v, i) => v === Math.fround(a[i] + b[i])));
  const attrs = k.attributes();
  t.true(attrs.numRegs > 0 && attrs.maxThreadsPerBlock >= 256, JSON.stringify(attrs));
  t.throws(() => k.launch([1], [2048], [ta, tb, tc, n]), { instanceOf: RangeError, message: /block\.x = 2048 is more than cuda:0 allows \(1024\)/ });
  t.throws(() => k.launch([1], [32], [ta, tb, tc, n], { sharedMem: 1 << 30 }), { instanceOf: RangeError, message: /sharedMem/ });
  k.launch([1], [32], [ta, tb, tc, 32], { sharedMem: 1024 });  // within the default limit
  const s = new gx.Stream();
  k.launch([1], [32], [ta, tb, tc, 32], { stream: s });
  s.synchronize();
});

cudaTest('examples: broadcast add with a 2-D grid, grid-stride square', (t) => {
  for (const c of [ex.broadcastAdd(), ex.gridStrideSquare()]) t.true(c.maxError <= 1e-6, `${c.name}: ${c.maxError}`);
});

cudaTest('examples: squared_diff and sin + cos / sqrt as elementwise kernels, with broadcasting', (t) => {
  for (const c of ex.elementwiseExamples()) t.true(c.maxError <= 1e-5, `${c.name}: ${c.maxError}`);
});

cudaTest('examples: Gaussian PDF and polar distance', (t) => {
  for (const c of ex.gaussianAndPolar()) t.true(c.maxError <= 1e-12, `${c.name}: ${c.maxError}`);
});

cudaTest('examples: transpose naive and tiled are correct, and the tiled one is faster', (t) => {
  const r = ex.transposes();
  for (const c of r.checks) t.is(c.maxError, 0, c.name);
  t.true(r.tiledMs < r.naiveMs, `tiled ${r.tiledMs} ms vs naive ${r.naiveMs} ms`);
}, { serial: true });

cudaTest('examples: a racy counter loses updates, atomicAdd does not', (t) => {
  const c = ex.counters();
  t.is(c.atomic, c.expected);
  t.true(c.racy < c.expected, `racy ${c.racy} of ${c.expected}`);
});

cudaTest('examples: templates by name expression and __constant__ globals', (t) => {
  for (const c of ex.templatesAndConstants()) t.true(c.maxError <= 1e-6, `${c.name}: ${c.maxError}`);
});

cudaTest('a compile error surfaces at first launch as a CompileError with numbered source', (t) => {
  const k = new gx.RawKernel('extern "C" __global__ void bad(float* x) {\n  x[0] = y;\n}', 'bad');
  using x = gx.zeros([1], { device: 'cuda' });
  const err = t.throws(() => k.launch([1], [1], [x]));
  t.true(err instanceof gx.CompileError, String(err));
  t.regex(err?.message ?? '', /> +2 \|   x\[0\] = y;/);
});
