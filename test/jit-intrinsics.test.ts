// The intrinsic table (NOTE [ One intrinsic table ] in lib/jit/intrinsic-table.ts):
// every entry has its three faces (a type rule; a CUDA spelling and a
// simulator face, or a rule that lowers it to other entries' nodes), every
// intrinsic value a kernel can refer to has an entry, and a kernel using each
// entry types, emits CUDA (that nvcc compiles for sm_90) and runs on the
// simulator with the values CUDA gives.
import test from 'ava';

import * as gx from '../lib';
import { INTRINSIC_TABLE } from '../lib/jit/intrinsic-table';
import { INTRINSICS } from '../lib/jit/intrinsics';
import type { IntrinsicName } from '../lib/jit/ir';
import { MATH_TABLE, mathEntry, type MathFn } from '../lib/jit/math-table';
import { randomValues } from './helpers';
import { hasTool, nvccCompile, tmpDir } from './host-cuda';

const { jit } = gx;
const BLOCKS = 2, THREADS = 32, N = BLOCKS * THREADS;

type Kernel = (out: gx.jit.Array1d) => void;
/** One kernel per entry (a Record: a new entry without a sample does not compile), and what it writes at i. */
const SAMPLES: Record<IntrinsicName, { fn: Kernel; want: (i: number) => number }> = {
  threadIdx: { fn: (out) => { out[jit.grid(1)] = jit.threadIdx.x; }, want: (i) => i % THREADS },
  blockIdx: { fn: (out) => { out[jit.grid(1)] = jit.blockIdx.x; }, want: (i) => Math.floor(i / THREADS) },
  blockDim: { fn: (out) => { out[jit.grid(1)] = jit.blockDim.x + jit.blockDim.y; }, want: () => THREADS + 1 },
  gridDim: { fn: (out) => { out[jit.grid(1)] = jit.gridDim.x * 10 + jit.gridDim.z; }, want: () => BLOCKS * 10 + 1 },
  grid: { fn: (out) => { const i = jit.grid(1); out[i] = i; }, want: (i) => i },
  gridsize: { fn: (out) => { out[jit.grid(1)] = jit.gridsize(1); }, want: () => N },
  syncthreads: {
    fn: (out) => {
      const s = jit.sharedArray(32, 'float64');
      const i = jit.grid(1);
      s[jit.threadIdx.x] = i;
      jit.syncthreads();
      out[i] = s[31 - jit.threadIdx.x];
    },
    want: (i) => i - (i % THREADS) + (THREADS - 1 - (i % THREADS)),
  },
  threadfence: { fn: (out) => { const i = jit.grid(1); out[i] = i * 3; jit.threadfence(); }, want: (i) => i * 3 },
  sharedArray: {
    fn: (out) => {
      const s = jit.sharedArray([32], 'int32');
      s[jit.threadIdx.x] = jit.threadIdx.x * 2;
      out[jit.grid(1)] = s[jit.threadIdx.x];
    },
    want: (i) => (i % THREADS) * 2,
  },
  localArray: {
    fn: (out) => {
      const l = jit.localArray(2, 'float32');
      l[0] = jit.grid(1);
      l[1] = l[0] + 0.5;
      out[jit.grid(1)] = l[1];
    },
    want: (i) => i + 0.5,
  },
  atomic: { fn: (out) => { jit.atomic.add(out, 0, 1); }, want: (i) => (i === 0 ? N : 0) },
  laneId: { fn: (out) => { out[jit.grid(1)] = jit.laneId(); }, want: (i) => i % 32 },
  shfl: { fn: (out) => { const i = jit.grid(1); out[i] = jit.shfl.down(i * 2, 1); }, want: (i) => (i % 32 === 31 ? i * 2 : (i + 1) * 2) },
  ballot: { fn: (out) => { out[jit.grid(1)] = jit.ballot(jit.threadIdx.x < 3); }, want: () => 7 },
  activemask: { fn: (out) => { out[jit.grid(1)] = jit.activemask(); }, want: () => 2 ** 32 - 1 },
};

const NAMES = Object.keys(INTRINSIC_TABLE) as IntrinsicName[];

test('every intrinsic has its three faces: a type rule, and a CUDA spelling and a simulator face (or a rule lowering it to other entries)', (t) => {
  for (const name of NAMES) {
    const entry = INTRINSIC_TABLE[name];
    t.true(typeof entry.typeCall === 'function' || typeof entry.typeMember === 'function', `${name}: a type rule`);
    const node = entry.node;
    if ('lowered' in node) {
      t.true(node.lowered.length > 0, `${name}: says what it lowers to`);
    } else {
      t.is(typeof node.cuda, 'function', `${name}: a CUDA face`);
      t.is(typeof node.sim, 'function', `${name}: a simulator face`);
      t.is(typeof node.suspends, 'boolean', `${name}: whether the simulator's thread waits at it`);
    }
  }
  // Every value a kernel can refer to has an entry, and every entry a value.
  const reached = new Set([...INTRINSICS.values()].map((i) => i.name));
  for (const i of INTRINSICS.values()) t.true(Object.hasOwn(INTRINSIC_TABLE, i.name), `${i.name}: an entry`);
  t.deepEqual([...reached].sort(), [...NAMES].sort());
  t.deepEqual(Object.keys(SAMPLES).sort(), [...NAMES].sort());
});

test('a kernel using each intrinsic types, emits CUDA and runs on the simulator with the values CUDA gives', (t) => {
  for (const name of NAMES) {
    const { fn, want } = SAMPLES[name];
    const k = jit.rawkernel(fn);
    const out = gx.full([N], -1, { dtype: 'float64' });
    if (name === 'atomic') out.zero_();
    t.regex(k.source(out), /extern "C" __global__ void/, `${name}: emitted`);
    k(BLOCKS, THREADS, [out]);
    const got = Array.from(out.toArraySync() as Float64Array);
    t.deepEqual(got, Array.from({ length: N }, (_, i) => want(i)), `${name}: simulated`);
  }
});

(hasTool('nvcc') ? test : test.skip)('the kernel of each intrinsic compiles for sm_90 with nvcc', (t) => {
  const dir = tmpDir('jit-intrinsics');
  const out = gx.zeros([N], { dtype: 'float64' });
  for (const name of NAMES) {
    const src = jit.rawkernel(SAMPLES[name].fn).source(out);
    const r = nvccCompile(src, dir);
    t.true(r.ok, `${name}:\n${r.log.slice(0, 2000)}`);
  }
});

// Math's functions: one kernel calls each entry (on float64 elements, and on
// int32 ones for the entries that keep integers); the simulator's float64
// results are JS's Math (inputs in (0.1, 0.9) and no halves, where C's and
// JS's rounding and min/max agree), its int32 results JS's; nvcc compiles it.
const FNS = Object.keys(MATH_TABLE) as MathFn[];
/** A kernel (x, y, out) writing Math.fn of x[i] (and y[i]) at out[k * n + i] for the k-th of `fns`. */
function mathKernel(fns: readonly MathFn[], name: string): gx.jit.JitKernel {
  const lines = fns.map((f, k) => `out[${k} * n + i] = Math.${f}(x[i]${mathEntry(f).arity === 2 ? ', y[i]' : ''});`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const fn = new Function('jit', `return function ${name}(x, y, out, n) { const i = jit.grid(1); if (i < n) {\n${lines.join('\n')}\n} };`)(jit) as Kernel;
  return jit.rawkernel(fn);
}
const M = 16;
const floats = (seed: number): Float64Array => (randomValues('float64', M, seed) as Float64Array).map((v) => 0.1 + 0.8 * Math.abs(v / 1e6));
const ints = (seed: number): Int32Array => (randomValues('int32', M, seed) as Int32Array).map((v) => v % 1000);
const MATH = Math as unknown as Record<MathFn, (...a: number[]) => number>;

test('every Math entry types, emits CUDA and runs on the simulator as JS\'s Math (float64, and int32 where integers stay integers)', (t) => {
  const intFns = FNS.filter((f) => mathEntry(f).int !== undefined);
  t.true(intFns.length >= 8);
  for (const [fns, x, y] of [[FNS, floats(1), floats(2)], [intFns, ints(3), ints(4)]] as const) {
    const k = mathKernel(fns, fns === FNS ? 'mathf' : 'mathi');
    const xt = gx.tensor(x), yt = gx.tensor(y);
    const out = gx.full([fns.length * M], -7, { dtype: 'float64' });
    t.regex(k.source(xt, yt, out, M), /extern "C" __global__ void/);
    k(1, M, [xt, yt, out, M]);
    const got = out.toArraySync() as Float64Array;
    fns.forEach((f, j) => {
      for (let i = 0; i < M; i++) {
        const want = MATH[f](x[i], y[i]);
        if (!Object.is(got[j * M + i], want)) t.fail(`Math.${f}(${x[i]}, ${y[i]}): ${got[j * M + i]}, JS ${want}`);
      }
    });
  }
  t.pass();
});

(hasTool('nvcc') ? test : test.skip)('the kernel calling every Math entry compiles for sm_90 with nvcc', (t) => {
  const x = gx.tensor(floats(1)), i = gx.tensor(ints(1)), out = gx.zeros([FNS.length * M], { dtype: 'float64' });
  for (const src of [mathKernel(FNS, 'mathf').source(x, x, out, M), mathKernel(FNS.filter((f) => mathEntry(f).int !== undefined), 'mathi').source(i, i, out, M)]) {
    const r = nvccCompile(src, tmpDir('jit-math'));
    t.true(r.ok, r.log.slice(0, 2000));
  }
});
