// Run-time kernels end to end: the examples of examples/kernels.ts against
// their CPU references on the GPU, launch checks, and argument errors (which
// need no GPU: they are caught before anything is compiled).
import test from 'ava';

import * as gx from '../lib';
import * as ex from '../examples/kernels';
import { native } from '../lib/core/native';
import { STAGED_ARGS, stagingArea } from '../lib/core/staging';
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

test('RawModule and RawKernel options of the wrong shape are TypeErrors naming the function and the option', (t) => {
  const bad = (x: unknown): gx.RawModuleOptions => x as gx.RawModuleOptions;
  t.throws(() => new gx.RawModule(ADD, bad({ nameExpressions: 5 })), {
    instanceOf: TypeError, message: "gx.RawModule: option 'nameExpressions' must be an array of strings like ['my_kernel<float>'], got number 5",
  });
  t.throws(() => new gx.RawModule(ADD, bad({ nameExpressions: ['f<float>', 3] })), { instanceOf: TypeError, message: /gx\.RawModule: option 'nameExpressions'\[1\] must be a string/ });
  t.throws(() => new gx.RawModule(ADD, bad({ options: '-DN=4' })), { instanceOf: TypeError, message: /gx\.RawModule: option 'options' must be an array of strings like \['-DN=4'\], got string -DN=4/ });
  t.throws(() => new gx.RawModule(ADD, bad({ arch: 90 })), { instanceOf: TypeError, message: /gx\.RawModule: option 'arch' must be a string like 'sm_90'/ });
  t.throws(() => new gx.RawModule(ADD, bad(5)), { instanceOf: TypeError, message: /gx\.RawModule: options must be an object/ });
  t.throws(() => new gx.RawKernel(ADD, 'add', bad({ options: 5 })), { instanceOf: TypeError, message: /gx\.RawKernel: option 'options' must be an array of strings/ });
});

test('elementwiseKernel checks its parameters and arguments', (t) => {
  t.throws(() => gx.elementwiseKernel('float32 x, float32 x', 'float32 y', 'y = x'), { message: /parameter 'x' is declared twice/ });
  t.throws(() => gx.elementwiseKernel('raw T', 'T y', 'y = 1'), { message: /'raw T' is not 'type name' \(or 'raw type name'\)/ });
  t.throws(() => gx.elementwiseKernel('T x', '', 'x'), { message: /needs at least one output/ });
  const k = gx.elementwiseKernel('T x, T y', 'T z', 'z = x + y', { name: 'addk' });
  using a = gx.ones([2]);
  t.throws(() => k(a), { message: /takes 2 inputs/ });
  t.throws(() => k(a, a), { message: /needs at least one CUDA tensor operand/ });
  t.throws(() => k(a, 'x' as unknown as number), { instanceOf: TypeError, message: /input 'y' must be a Tensor or a number, got string/ });
  t.throws(() => k(a, a, 3), { instanceOf: TypeError, message: /output 'z' must be a Tensor, got number/ });
  const raw = gx.elementwiseKernel('raw T x', 'raw T y', 'y[i] = x[i]', { name: 'rawcopy' });
  t.throws(() => raw(a, 1 as unknown as gx.Tensor), { message: /output 'y' must be a Tensor/ });
  t.throws(() => raw(a, a, { size: -1 }), { instanceOf: RangeError, message: /size must be a non-negative integer/ });
});

cudaTest('elementwiseKernel: raw operands, scalar operands, float16 and bfloat16, outputs passed in', (t) => {
  const n = 1000;
  const xs = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 4);
  using x = gx.tensor(xs, { device: 'cuda' });
  // Reverse through a raw input: each output element reads another element.
  const reverse = gx.elementwiseKernel('raw T x', 'T y', 'y = x[x_size - 1 - i]', { name: 'reverse' });
  using out = gx.full([n], Number.NaN, { device: 'cuda' });
  reverse(x, out);
  const r = out.toArraySync() as Float32Array;
  t.true(r.every((v, i) => v === xs[n - 1 - i]));
  // A raw output with the launch size given.
  const scatter = gx.elementwiseKernel('raw T x', 'raw T y', 'y[n - 1 - i] = x[i] * 2', { name: 'scatter2' });
  using y = gx.full([n], Number.NaN, { device: 'cuda' });
  scatter(x, y, { size: n });
  const s = y.toArraySync() as Float32Array;
  t.true(s.every((v, i) => v === Math.fround(xs[n - 1 - i] * 2)));
  // JS numbers take the placeholder's type.
  const axpy = gx.elementwiseKernel('T a, T x, T b', 'T y', 'y = a * x + b', { name: 'axpy' });
  using z = axpy(0.5, x, 3) as gx.Tensor;
  const zs = z.toArraySync() as Float32Array;
  t.true(zs.every((v, i) => v === Math.fround(Math.fround(0.5 * xs[i]) + 3)));
  using xi = gx.tensor(Int32Array.from({ length: n }, (_, i) => i - 500), { device: 'cuda' });
  using zi = axpy(3, xi, -7) as gx.Tensor;
  t.true((zi.toArraySync() as Int32Array).every((v, i) => v === 3 * (i - 500) - 7));
  // Half types through cuda_fp16.h / cuda_bf16.h, computed in float.
  const mad = gx.elementwiseKernel('T x, T y', 'T z', 'z = (T)((float)x * (float)y + 1.0f)', { name: 'mad_half' });
  for (const dtype of ['float16', 'bfloat16'] as const) {
    using hx = gx.tensor(xs, { device: 'cuda', dtype });
    using hz = mad(hx, hx) as gx.Tensor;
    t.is(hz.dtype, dtype);
    const hv = hx.toArraySync() as Float32Array;
    const zv = hz.toArraySync() as Float32Array;
    using ref = gx.tensor(hv.map((v) => v * v + 1), { dtype });
    t.deepEqual(Array.from(zv), Array.from(ref.toArraySync() as Float32Array), dtype);
  }
  // A passed-in output of a different layout (a transposed view) is written through its strides.
  const add = gx.elementwiseKernel('T x, T y', 'T z', 'z = x + y', { name: 'add_into' });
  using m = gx.tensor(Float32Array.from({ length: 12 }, (_, i) => i), { device: 'cuda', shape: [3, 4] });
  using o = gx.full([4, 3], Number.NaN, { device: 'cuda' });
  using ot = o.asStrided([3, 4], [1, 3], 0);  // o seen transposed
  using mt = m.contiguous();
  add(mt, mt, ot);
  const ov = o.toArraySync() as Float32Array;
  t.true(ov.every((v, k) => v === 2 * ((k % 3) * 4 + Math.floor(k / 3))), Array.from(ov).join(','));
  t.throws(() => add(mt, mt, o), { message: /output 'z' has shape \[4, 3\] but the inputs broadcast to \[3, 4\]/ });
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
  const bad: [gx.Dim3, gx.Dim3, object, RegExp][] = [
    [[0], [32], {}, /grid\[0\] must be a positive integer, got 0/],
    [[1, 2.5], [32], {}, /grid\[1\] must be a positive integer, got 2.5/],
    [[1], [32, 1, -1], {}, /block\[2\] must be a positive integer, got -1/],
    [[1], ['32' as unknown as number], {}, /block\[0\] must be a positive integer, got 32/],
    [[1, 1, 1, 1] as unknown as gx.Dim3, [32], {}, /grid must be a number or an array of 1 to 3 numbers/],
    [[1], [32], { sharedMem: -1 }, /sharedMem must be a non-negative integer of bytes, got -1/],
    [[1], [32], { sharedMem: 1.5 }, /sharedMem must be a non-negative integer of bytes, got 1.5/],
  ];
  for (const [grid, block, opts, message] of bad) t.throws(() => k.launch(grid, block, [ta, tb, tc, n], opts), { message }, String(message));
  k.launch([1], [32], [ta, tb, tc, 32], { sharedMem: 1024 });  // within the default limit
  const s = new gx.Stream();
  k.launch([1], [32], [ta, tb, tc, 32], { stream: s });
  s.synchronize();
});

cudaTest('RawKernel: every scalar kind arrives as declared, as numbers (the staging area) or with bigints beyond 2^53 (an array)', (t) => {
  const k = new gx.RawKernel(`extern "C" __global__ void echo(long long* o, double* f, signed char a, short b, int c, long long d,
      unsigned char e, unsigned short g, unsigned int h, unsigned long long u, float x, double y, bool z) {
    o[0] = a; o[1] = b; o[2] = c; o[3] = d; o[4] = e; o[5] = g; o[6] = h; o[7] = (long long)u; o[8] = z;
    f[0] = x; f[1] = y;
  }`, 'echo');
  using o = gx.full([9], -1, { device: 'cuda', dtype: 'int64' });
  using f = gx.full([2], Number.NaN, { device: 'cuda', dtype: 'float64' });
  const run = (args: unknown[]): { ints: bigint[]; floats: number[] } => {
    k.launch(1, 1, [o, f, ...args]);
    return { ints: Array.from(o.toArraySync() as BigInt64Array), floats: Array.from(f.toArraySync() as Float64Array) };
  };
  const small = run([-5, -300, -70000, -(2 ** 40), 250, 65000, 4e9, 2 ** 52, 1.5, -2.25, true]);
  t.deepEqual(small.ints, [-5n, -300n, -70000n, -(2n ** 40n), 250n, 65000n, 4000000000n, 2n ** 52n, 1n]);
  t.deepEqual(small.floats, [1.5, -2.25]);
  const big = run([127, 32767, 2147483647, -(2n ** 62n) - 1n, 0, 0, 0, 2n ** 64n - 1n, 3n, 1e300, 0]);
  t.deepEqual(big.ints, [127n, 32767n, 2147483647n, -(2n ** 62n) - 1n, 0n, 0n, 0n, -1n, 0n]);
  t.deepEqual(big.floats, [3, 1e300]);
  t.throws(() => run([128, 0, 0, 0, 0, 0, 0, 0, 0, 0, false]), { instanceOf: RangeError, message: /out of its range \[-128, 127\]/ });
  t.throws(() => run([0, 0, 0, 2 ** 60, 0, 0, 0, 0, 0, 0, false]), { message: /beyond 2\^53/ });
});

cudaTest('RawKernel: more arguments than the staging area holds go as an array; a handle without kinds cannot launch', (t) => {
  // 1030 one-byte parameters: past the staging area's 1024, within the classic 4 KiB of parameters.
  const n = 1030;
  const names = Array.from({ length: n }, (_, i) => `a${i}`);
  const k = new gx.RawKernel(`extern "C" __global__ void many(long long* o, ${names.map((a) => `signed char ${a}`).join(', ')}) {
    long long s = 0;
    ${names.map((a, i) => `s += (long long)${a} * ${i + 1};`).join('\n    ')}
    o[0] = s;
  }`, 'many');
  const values = Array.from({ length: n }, () => Math.floor(Math.random() * 256) - 128);
  using o = gx.full([1], -1, { device: 'cuda', dtype: 'int64' });
  k.launch(1, 1, [o, ...values]);
  t.is((o.toArraySync() as BigInt64Array)[0], values.reduce((s, v, i) => s + BigInt(v * (i + 1)), 0n));

  const dev = o.device;
  const mod = k.module.load(dev).module;
  t.throws(() => native.moduleGetFunction(mod, 'many', new Int8Array([0, 99])), { instanceOf: RangeError, message: /kinds\[1\] = 99 is not an argument kind/ });
  const bare = native.moduleGetFunction(mod, 'many');
  t.throws(() => native.launchKernel(bare, undefined), { instanceOf: TypeError, message: /without its parameter kinds/ });
});

// native.launchFloor (bench/calls.bench.ts's floor in this process): the staged kernel really runs, once per launch.
cudaTest('native.launchFloor launches the staged kernel batches x perBatch times and gives one figure per batch', (t) => {
  const k = new gx.RawKernel('extern "C" __global__ void bump(long long* o, int by) { if (threadIdx.x == 0) atomicAdd((unsigned long long*)o, (unsigned long long)by); }', 'bump');
  using o = gx.zeros([1], { device: 'cuda', dtype: 'int64' });
  const f = k.function(o.device);
  stagingArea().set([o.address('test'), 3], STAGED_ARGS);
  const figures = native.launchFloor(f, 3, 50);
  t.is(figures.length, 3);
  t.true(Array.from(figures).every((us) => Number.isFinite(us) && us > 0), String(Array.from(figures)));
  t.is((o.toArraySync() as BigInt64Array)[0], 3n * 50n * 3n, 'each launch added 3 once');
  t.throws(() => native.launchFloor(f, 0, 50), { instanceOf: RangeError, message: /launchFloor: batches and perBatch must be whole numbers/ });
  t.throws(() => native.launchFloor(f, 2, 1.5), { instanceOf: RangeError, message: /launchFloor/ });
});

cudaTest('RawKernel: arguments whose reading launches the same kernel still launch with their own values', (t) => {
  const k = new gx.RawKernel('extern "C" __global__ void put(float* o, float v) { o[0] = v; }', 'put');
  using a = gx.full([1], -1, { device: 'cuda' });
  using b = gx.full([1], -1, { device: 'cuda' });
  // Reading the outer call's value launches put(b, 7) in the middle of it.
  const args = new Proxy([a, 5], {
    get: (target, prop, receiver): unknown => {
      if (prop === '1') k.launch(1, 1, [b, 7]);
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  k.launch(1, 1, args);
  t.deepEqual(Array.from(a.toArraySync() as Float32Array), [5]);
  t.deepEqual(Array.from(b.toArraySync() as Float32Array), [7]);
  k.launch(1, 1, [a, 9]);  // the kernel's own arrays are back in use
  t.deepEqual(Array.from(a.toArraySync() as Float32Array), [9]);
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

test('reductionKernel checks its parameters and arguments', (t) => {
  t.throws(() => gx.reductionKernel('T x', 'T y, T z', 'x', 'a + b', 'y = a', '0'), { message: /exactly one output/ });
  t.throws(() => gx.reductionKernel('T x', 'T y', '', 'a + b', 'y = a', '0'), { message: /mapExpr must be a C expression/ });
  const sum = gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'sumk' });
  using cpu = gx.ones([3]);
  t.throws(() => sum(cpu), { message: /needs at least one CUDA tensor input/ });
});

cudaTest('reductionKernel: full and per-axis sums, max, and an L2 norm against references', (t) => {
  const sum = gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'sumk' });
  const n = (1 << 20) + 3;
  const data = Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5);
  using x = gx.tensor(data, { device: 'cuda' });
  using total = sum(x);
  t.deepEqual(total.shape, []);
  const ref = data.reduce((p, v) => p + v, 0);
  t.true(Math.abs(Number(total.item()) - ref) < 1e-2, `sum ${String(total.item())} vs ${ref}`);

  const rows = 37, cols = 1000;
  const m = Float64Array.from({ length: rows * cols }, (_, i) => Math.sin(i));
  using tm = gx.tensor(m, { device: 'cuda', shape: [rows, cols] });
  const sumd = gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'sumd' });
  using rowSums = sumd(tm, { axis: 1, keepdims: true });
  t.deepEqual(rowSums.shape, [rows, 1]);
  const rs = rowSums.toArraySync() as Float64Array;
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let c = 0; c < cols; c++) s += m[r * cols + c];
    if (Math.abs(rs[r] - s) > 1e-9) t.fail(`row ${r}: ${rs[r]} vs ${s}`);
  }
  using colSums = sumd(tm, { axis: 0 });
  t.deepEqual(colSums.shape, [cols]);
  const cs = colSums.toArraySync() as Float64Array;
  let s0 = 0;
  for (let r = 0; r < rows; r++) s0 += m[r * cols];
  t.true(Math.abs(cs[0] - s0) < 1e-9);

  const maxk = gx.reductionKernel('T x', 'T y', 'x', 'a > b ? a : b', 'y = a', '-1e300', { name: 'maxk' });
  using mx = maxk(tm);
  t.is(mx.item(), Math.max(...m));

  const l2 = gx.reductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', { name: 'l2norm' });
  using norm = l2(tm, { axis: [0, 1] });
  t.true(Math.abs(Number(norm.item()) - Math.sqrt(m.reduce((p, v) => p + v * v, 0))) < 1e-9);
  t.throws(() => sumd(tm, { axis: 2 }), { instanceOf: RangeError, message: /axis 2 is out of range for a 2-d input/ });
});

// A number reaches a kernel as a double; C's cast to an integer is undefined for NaN and out of range, and the GPU's
// cvt.rzi gives the most negative integer for NaN. The number operands of both kernel kinds convert by the kernels' rule.
cudaTest('elementwiseKernel and reductionKernel: a number for an integer operand converts toward zero, saturating, NaN to 0', (t) => {
  gx.tidy(() => {
    const x = gx.zeros([1], { device: 'cuda' });
    const cases = [[NaN, 0, 0n, 0], [3e9, 2147483647, 3000000000n, -1], [-Infinity, -2147483648, -(2n ** 63n), 0], [7.9, 7, 7n, 7],
      [-7.9, -7, -7n, -7], [1e19, 2147483647, 2n ** 63n - 1n, -1]] as const;
    const take32 = gx.elementwiseKernel('int32 v, T x', 'int32 y', 'y = v', { name: 'take_int32' });
    const take64 = gx.elementwiseKernel('int64 v, T x', 'int64 y', 'y = v', { name: 'take_int64' });
    const take8 = gx.elementwiseKernel('int8 v, T x', 'int8 y', 'y = v', { name: 'take_int8' });
    const sum32 = gx.reductionKernel('T x, int32 v', 'int32 y', 'v', 'a + b', 'y = a', '0', { name: 'sum_int32_number' });
    for (const [v, i32, i64, i8] of cases) {
      t.is((take32(v, x) as gx.Tensor).toArraySync()[0], i32, `int32 ${v}`);
      t.is((take64(v, x) as gx.Tensor).toArraySync()[0], i64, `int64 ${v}`);
      t.is((take8(v, x) as gx.Tensor).toArraySync()[0], i8, `int8 ${v} (the low bits of the saturated int32)`);
      t.is((sum32(x, v) as gx.Tensor).toArraySync()[0], i32, `reduction int32 ${v}`);
    }
  });
});
