// gx.jit.rawkernel, gx.jit.device and gx.fuse: the examples of the CuPy
// course and the Numba notebook against references on every device (the
// CPU runs the kernels on the simulator); the generated CUDA compiled for
// sm_90 without a GPU; type inference; the specialization cache; debug
// bounds checks; every unsupported construct an error quoting its line.
import test from 'ava';

import * as gx from '../lib';
import { backendInfo, compile } from '../lib/rtc/compiler';
import { fuseCompileOptions } from '../lib/jit/fuse-ops';
import { twoLoopKernel } from '../lib/optim/two-loop';
import * as ex from '../examples/jit';
import { deviceTestSerial, REQUIRE_CUDA } from './helpers';

const { jit } = gx;

deviceTestSerial('examples: every kernel of the CuPy course and the Numba notebook matches its reference', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const results = ex.runExamples(device, device === 'cpu');
  t.is(results.length, 16);
  for (const r of results) t.true(r.maxError <= 2e-6, `${r.name}: max error ${r.maxError}`);
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

const INFO = backendInfo();
const compilerTest = INFO.backend !== null ? test : REQUIRE_CUDA ? test : test.skip;

/** Sources of every example kernel for CPU tensors of the types the examples use. */
function exampleSources(): [string, string][] {
  const f32 = gx.zeros([4]);
  const i32 = gx.zeros([4], { dtype: 'int32' });
  const m = gx.zeros([64, 64], { dtype: 'int32' });
  const strided = gx.zeros([8, 8]).transpose(0, 1);
  return [
    ['elementwise_square', ex.elementwiseSquare.source(f32, f32, 4)],
    ['add_kernel', ex.addKernel.source(f32, f32, f32)],
    ['add_kernel_grid', ex.addKernelGrid.source(f32, f32, f32)],
    ['thread_counter_race_condition', ex.threadCounterRace.source(i32)],
    ['thread_counter_safe', ex.threadCounterSafe.source(i32)],
    ['histogram', ex.histogram.source(f32, 0, 1, i32)],
    ['transpose', ex.transpose.source(m, m)],
    ['tile_transpose', ex.tileTranspose.source(m, m)],
    ['strided tile_transpose', ex.transpose.source(strided, strided)],
    ['debug', jit.rawkernel((x: gx.jit.Array2d) => { x[jit.threadIdx.x][0] = 1; }, { debug: true }).source(f32.reshape(2, 2))],
  ];
}

compilerTest('the generated CUDA of every example kernel compiles for sm_90 (no GPU needed)', (t) => {
  // The library's own jit kernel too: L-BFGS's two-loop recursion (lib/optim/two-loop.ts).
  const twoLoop = (['float32', 'float64'] as const).map((dtype): [string, string] => {
    const v = gx.zeros([3], { dtype }), m = gx.zeros([2, 3], { dtype });
    return [`lbfgs_two_loop_${dtype}`, twoLoopKernel(dtype).source(m, m, gx.zeros([2], { dtype }), v, gx.zeros([2], { dtype }), v, 0.5)];
  });
  for (const [name, source] of [...exampleSources(), ...twoLoop]) {
    const r = compile({ source, name: `${name}.cu`, arch: 'sm_90' }, { disk: false });
    t.true(r.image.byteLength > 0, name);
  }
  const a = gx.zeros([4]);
  for (const [name, source] of [['fuse', ex.elementwiseComputation.source(a, a, a)], ['vectorize', ex.polarDistance.source()]]) {
    const fn = /__device__ __forceinline__ \w+ (gx_\w+)\(([^)]*)\) \{\n(?![\s\S]*__device__ __forceinline__)/.exec(source);
    const nargs = (fn?.[2] ?? '').split(',').length;
    const probe = `${source}\nextern "C" __global__ void probe(float* o) { o[0] = ${fn?.[1]}(${new Array(nargs).fill('1.f').join(', ')}); }\n`;
    const options = name === 'fuse' ? fuseCompileOptions() : [];
    t.true(compile({ source: probe, name: `${name}.cu`, arch: 'sm_90', options }, { disk: false }).image.byteLength > 0, name);
  }
});

test('types: locals hold every value assigned; numbers are weak; indices int32; a strided tensor passes its strides', (t) => {
  const f32 = gx.zeros([4]);
  const k = jit.rawkernel((x: gx.jit.Array, out: gx.jit.Array, scale: number) => {
    let acc = 0;
    for (let i = 0; i < x.length; i++) acc += x[i] * scale;
    const half = 0.5;
    out[0] = acc * half;
  });
  const src = k.source(f32, f32, 2);
  t.regex(src, /float v_acc = /, 'acc: 0 then float32 values: float32');
  t.regex(src, /long long v_i = 0LL/, 'i: only JS numbers: weak int64');
  t.regex(src, /long long v_scale/, 'an integral number argument: int64');
  t.regex(src, /const double v_half = 0\.5/, 'a weak float const');
  t.notRegex(src, /\(double\)\(v_acc\)/, 'a weak const does not widen a float32 product');
  t.regex(k.source(f32, f32, 2.5), /double v_scale/, 'a fractional number argument: float64');
  const strided = gx.zeros([4, 4]).transpose(0, 1);
  const two = jit.rawkernel((m: gx.jit.Array2d) => { m[1][2] = jit.threadIdx.x; });
  t.regex(two.source(strided), /long long s_m_0, long long s_m_1/);
  t.regex(two.source(gx.zeros([4, 4])), /p_m\[\(long long\)\(1LL\) \* n_m_1 \+ \(long long\)\(2LL\)\]/, 'contiguous: strides from extents');
  t.regex(jit.rawkernel((x: gx.jit.Array) => { x[0] = 1; }).source(f32), /\(float\* p_x\)/, 'a 1-d contiguous tensor is one pointer');
});

test('the specialization cache: same types reuse a kernel, new types compile another; a changed constant changes the source', (t) => {
  const k = jit.rawkernel((x: gx.jit.Array, n: number) => { x[0] = n; });
  const a = gx.zeros([4]);
  t.is(k.source(a, 1), k.source(gx.zeros([8]), 2), 'the same dtype and rank: one source');
  t.not(k.source(a, 1), k.source(gx.zeros([4], { dtype: 'float64' }), 1));
  t.not(k.source(a, 1), k.source(a, 1.5));
  const make = (c: number): gx.jit.JitKernel => jit.rawkernel((x: gx.jit.Array) => { x[0] = c; });
  t.is(make(2).source(a), make(2).source(a));
  t.not(make(2).source(a), make(3).source(a));
  t.regex(make(3).source(a), /3LL/);
});

test('the simulator: threads interleave at syncthreads, shared arrays are per block, errors name the thread', (t) => {
  // Each block reverses its 4 elements through shared memory: wrong without the barrier.
  const reverse = jit.rawkernel((x: gx.jit.Array) => {
    const s = jit.sharedArray(4, 'float32');
    const i = jit.threadIdx.x;
    const base = jit.blockIdx.x * 4;
    s[i] = x[base + i];
    jit.syncthreads();
    x[base + i] = s[3 - i];
  });
  const x = gx.arange(8, { dtype: 'float32' });
  reverse(2, 4, [x]);
  t.deepEqual(Array.from(x.toArraySync()), [3, 2, 1, 0, 7, 6, 5, 4]);
  // A shared array's dtype held by a constant beside the kernel (here, the function that makes it), as Numba's globals.
  const reverseOf = (dtype: 'float32' | 'float64'): gx.jit.JitKernel => jit.rawkernel((x: gx.jit.Array) => {
    const s = jit.sharedArray(4, dtype);
    s[jit.threadIdx.x] = x[jit.threadIdx.x] / 3;
    jit.syncthreads();
    x[jit.threadIdx.x] = s[3 - jit.threadIdx.x];
  });
  const x64 = gx.arange(4, { dtype: 'float64' });
  reverseOf('float64')(1, 4, [x64]);
  t.deepEqual(Array.from(x64.toArraySync()), [1, 2 / 3, 1 / 3, 0]);
  t.regex(reverseOf('float32').source(gx.zeros([4])), /__shared__ float s_s_\d+\[4\]/);
  t.regex(reverseOf('float64').source(gx.zeros([4])), /__shared__ double s_s_\d+\[4\]/);
  const oob = jit.rawkernel((x: gx.jit.Array) => { x[jit.threadIdx.x + 2] = 1; });
  const e = t.throws(() => oob(1, 4, [gx.zeros([4])]));
  t.regex(e?.message ?? '', /thread \(2, 0, 0\) of block \(0, 0, 0\): index 4 is out of range for dimension 0 of x \(size 4\)/);
  const cas = jit.rawkernel((c: gx.jit.Array) => { jit.atomic.cas(c, 0, 0, jit.threadIdx.x + 1); jit.atomic.max(c, 1, jit.threadIdx.x); });
  const c = gx.zeros([2], { dtype: 'int32' });
  cas(1, 8, [c]);
  t.deepEqual(Array.from(c.toArraySync() as Int32Array), [1, 7], 'the first thread wins the compare-and-swap; max is exact');
});

test('errors quote the kernel\'s line with a caret, before any CUDA', (t) => {
  const obj = { n: 3 };
  const STR = 'x';
  const a = gx.zeros([4]);
  const cases: [string, (...args: never[]) => void, RegExp][] = [
    ['an object', (x: gx.jit.Array) => { x[0] = (obj as unknown as number); }, /obj is an object, not a number/],
    ['a string', (x: gx.jit.Array) => { x[0] = (STR as unknown as number); }, /STR is a string/],
    ['a call of a JS function', (x: gx.jit.Array) => { x[0] = Number(1); }, /Number is not Math\.\*, a gx\.jit intrinsic or a gx\.jit\.device function/],
    ['try', (x: gx.jit.Array) => { try { x[0] = 1; } catch { x[0] = 2; } }, /try statement is not supported in a kernel/],
    ['a float index', (x: gx.jit.Array) => { x[0.5 * jit.threadIdx.x] = 1; }, /an index must be an integer/],
    ['too few indices', (x: gx.jit.Array2d) => { x[0] = (1 as unknown as gx.jit.Array); }, /x has 2 dimensions; index it with 2 indices/],
    ['a return value', (x: gx.jit.Array) => x[0], /a kernel needs a block body/],
    ['var', (x: gx.jit.Array) => { var i = 0; x[i] = 1; }, /use const or let, not var/],
    ['assigning a parameter', (x: gx.jit.Array, n: number) => { n = 2; x[0] = n; }, /n is a parameter; copy it into a local/],
    ['a shared array of unknown size', (x: gx.jit.Array, n: number) => { const s = jit.sharedArray(n, 'float32'); s[0] = x[0]; }, /must be a number known when the kernel is compiled/],
    ['atomics on float16', (x: gx.jit.Array) => { jit.atomic.add(x, 0, 1); }, /atomic\.add works on int32, int64, float32, float64 arrays; x is float16/],
  ];
  const self = jit.device((v: number): number => v);
  const recursive = jit.device((v: number): number => (v > 0 ? (recursive as (v: number) => number)(v - 1) : 0));
  cases.push(['recursion', (x: gx.jit.Array) => { x[0] = recursive(3); }, /calls itself; recursion is not supported/]);
  cases.push(['a device function given too many arguments', (x: gx.jit.Array) => { x[0] = (self as (...v: number[]) => number)(1, 2); }, /takes 1 argument, got 2/]);
  for (const [what, fn, re] of cases) {
    const k = jit.rawkernel(fn as (...args: unknown[]) => void);
    const args = what === 'too few indices' ? [gx.zeros([2, 2])] : what === 'atomics on float16' ? [gx.zeros([2], { dtype: 'float16' })] : [a, 1];
    const e = t.throws(() => k.source(...(args.slice(0, fn.length) as gx.jit.KernelArg[])), undefined, what);
    t.regex(e?.message ?? '', re, what);
    t.regex(e?.message ?? '', /line \d+: .*\n\s+\^/, `${what}: quotes the line with a caret`);
  }
});

test('gx.fuse: the fused source types ops as the ops do; unfusable functions run unfused', (t) => {
  const i32 = gx.zeros([4], { dtype: 'int32' });
  const f32 = gx.zeros([4]);
  // The ops' own functors, in the compute type the eager op picks (NOTE [ Fused ops are the ops' functors ]).
  t.regex(ex.elementwiseComputation.source(i32, i32, i32), /gx::ops::SinOp\{\}\(\(\(float\)\(/, 'int32 inputs of float ops compute in float32');
  t.regex(ex.elementwiseComputation.source(f32, f32, gx.zeros([4], { dtype: 'float64' })), /gx::ops::SqrtOp\{\}\(\(\(double\)\(/, 'a float64 input computes in double');
  const weird = gx.fuse((x: gx.Tensor) => gx.softmax(x, 0));
  const x = gx.tensor([1, 2, 3]);
  t.throws(() => weird.source(x), { message: /runs unfused/ });
  t.deepEqual(Array.from(weird(x).toArraySync() as Float32Array), Array.from(gx.softmax(x, 0).toArraySync()));
});

deviceTestSerial('gx.fuse on random inputs matches the unfused ops, elementwise and with a final reduction along an axis', (t, device) => {
  gx.tidy(() => {
    const f = gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.maximum(gx.mul(x, y), gx.relu(gx.neg(x))).add(gx.where(gx.gt(x, 0.5), 1, y)));
    const r = gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.amax(gx.sub(gx.exp(x), y), 1));
    const x = gx.randn([33, 65], { device });
    const y = gx.randn([65], { device });
    const want = gx.maximum(gx.mul(x, y), gx.relu(gx.neg(x))).add(gx.where(gx.gt(x, 0.5), 1, y)).toArraySync() as Float32Array;
    const got = f(x, y).toArraySync() as Float32Array;
    t.true(got.every((v, i) => Math.abs(v - want[i]) <= 1e-6 * (1 + Math.abs(want[i]))));
    const rw = gx.amax(gx.sub(gx.exp(x), y), 1).toArraySync() as Float32Array;
    const rg = r(x, y);
    t.deepEqual(rg.shape, [33]);
    t.true((rg.toArraySync() as Float32Array).every((v, i) => Math.abs(v - rw[i]) <= 1e-5 * (1 + Math.abs(rw[i]))));
  });
});

const cuda = gx.cuda.isAvailable() ? test : REQUIRE_CUDA ? test : test.skip;
cuda('{ debug: true }: an index out of range throws naming the kernel, tensor, index and thread; the context survives', (t) => {
  const k = jit.rawkernel(function scatter(x: gx.jit.Array, idx: gx.jit.Array) {
    const i = jit.grid(1);
    if (i < idx.length) x[idx[i]] = 1;
  }, { debug: true });
  const x = gx.zeros([8], { device: 'cuda', dtype: 'float32' }) as gx.Tensor<'float32'>;
  const idx = gx.tensor([0, 3, 9, 1], { dtype: 'int32', device: 'cuda' });
  const e = t.throws(() => k(1, 32, [x, idx]));
  t.regex(e?.message ?? '', /gx\.jit\.rawkernel\(scatter\): index 9 is out of range for dimension 0 of x \(size 8\), line \d+, thread \(2, 0, 0\) of block \(0, 0, 0\)/);
  t.deepEqual(Array.from(x.toArraySync()), [1, 1, 0, 1, 0, 0, 0, 0], 'the other threads wrote; the bad access was skipped');
  t.is(gx.add(x, 1).sum().item(), 11, 'CUDA still works');
});

cuda('a jit kernel on CUDA equals the simulator on random inputs (n-d, strided, numbers, atomics)', (t) => {
  const k = jit.rawkernel((a: gx.jit.Array2d, out: gx.jit.Array, s: number) => {
    const [i, j] = jit.grid(2);
    if (i < a.shape[0] && j < a.shape[1]) {
      const v = a[i][j] * s;
      jit.atomic.add(out, 0, v > 0 ? v : 0);
      a[i][j] = Math.sqrt(Math.abs(v)) - (i % 3);
    }
  });
  const base = gx.randn([40, 50]);
  const cpu = base.clone().transpose(0, 1);
  const dev = base.cuda().transpose(0, 1);
  const oc = gx.zeros([1], { dtype: 'float64' });
  const od = gx.zeros([1], { dtype: 'float64', device: 'cuda' });
  k([4, 4], [16, 16], [cpu, oc, 1.5]);
  k([4, 4], [16, 16], [dev, od, 1.5]);
  const a = cpu.contiguous().toArraySync() as Float32Array;
  const b = dev.contiguous().toArraySync() as Float32Array;
  const worst = a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]) / (1 + Math.abs(v))), 0);
  t.true(worst <= 1e-5, `worst relative difference ${worst}`);
  // The atomic sums add in another order on the GPU: they agree to rounding.
  t.true(Math.abs(Number(oc.item()) - Number(od.item())) <= 1e-6 * Math.abs(Number(oc.item())), `${oc.item()} vs ${od.item()}`);
});

cuda('repeated calls (the staged launch path) see each call\'s tensors and numbers; a disposed tensor is an error', (t) => {
  const k = jit.rawkernel((x: gx.jit.Array, y: gx.jit.Array, a: number) => {
    const i = jit.grid(1);
    if (i < x.length) y[i] = x[i] * a;
  });
  for (const [n, a] of [[5, 2], [7, 3], [5, -1.5], [300, 0.5]] as const) {
    const x = gx.arange(n, { dtype: 'float32', device: 'cuda' });
    const y = gx.full([n], -7, { device: 'cuda' });
    k.configure([Math.ceil(n / 128), 1], [128])(x, y, a);
    t.deepEqual(Array.from(y.toArraySync() as Float32Array), Array.from({ length: n }, (_, i) => Math.fround(i * a)), `n ${n}, a ${a}`);
  }
  t.is(k.specializations, 2, 'integral and fractional a: two specializations');
  const gone = gx.zeros([4], { device: 'cuda' });
  gone.dispose();
  t.throws(() => k(1, 32, [gone, gx.zeros([4], { device: 'cuda' }), 1]), { message: /disposed/ });
});

cuda('a kernel called on CUDA, then on CPU tensors of the same types, runs the simulator (not the CUDA launch with host addresses)', (t) => {
  const k = jit.rawkernel((x: gx.jit.Array, y: gx.jit.Array, a: number) => {
    const i = jit.grid(1);
    if (i < x.length) y[i] = x[i] * a;
  });
  const want = Array.from({ length: 6 }, (_, i) => i * 2.5);
  for (const device of ['cuda', 'cpu', 'cuda', 'cpu'] as const) {
    const x = gx.arange(6, { dtype: 'float64', device });
    const y = gx.full([6], -7, { dtype: 'float64', device });
    k(1, 32, [x, y, 2.5]);
    t.deepEqual(Array.from(y.toArraySync() as Float64Array), want, device);
  }
  // Nor does a RawKernel take the CPU's index for a GPU's.
  const raw = new gx.RawKernel('extern "C" __global__ void put1(double* y) { y[0] = 1; }', 'put1');
  t.throws(() => raw.launch(1, 1, [gx.zeros([1], { dtype: 'float64' })]), { message: /put1|cpu|CUDA/ });
});
