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
