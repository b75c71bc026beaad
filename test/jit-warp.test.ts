// Warp intrinsics (jit.laneId, jit.shfl.*, jit.ballot, jit.activemask): the
// simulator steps a warp's lanes in lockstep to each of them, against values
// worked out here; divergent lanes are an error naming the lines; the
// generated CUDA compiles for sm_90, and on a GPU gives the simulator's values.
import test from 'ava';

import * as gx from '../lib';
import { backendInfo, compile } from '../lib/rtc/compiler';
import { cudaTest, REQUIRE_CUDA } from './helpers';
import { rng } from './rng';

const { jit } = gx;

const warpSum = jit.rawkernel(function warpSum(x: gx.jit.Array, out: gx.jit.Array) {
  const i = jit.threadIdx.x;
  let v = x[i];
  for (let o = 16; o > 0; o >>= 1) v += jit.shfl.down(v, o);
  if (jit.laneId() === 0) out[i >> 5] = v;
});

const lanes = jit.rawkernel(function lanes(x: gx.jit.Array, out: gx.jit.Array) {
  const i = jit.threadIdx.x;
  if (i >= 40) return;
  out[4 * i] = jit.ballot(x[i] > 0);
  out[4 * i + 1] = jit.activemask();
  out[4 * i + 2] = jit.shfl.xor(i, 1) * 1000 + jit.shfl.up(i, 3);
  out[4 * i + 3] = jit.shfl.sync(x[i], 5);
});

function inputs(): gx.Tensor {
  const r = rng(11);
  return gx.tensor(Int32Array.from({ length: 64 }, () => Math.floor((r() - 0.5) * 2000)));
}

function lanesWant(xs: Int32Array): bigint[] {
  const want: bigint[] = [];
  for (let i = 0; i < 64; i++) {
    if (i >= 40) {
      want.push(-7n, -7n, -7n, -7n);
      continue;
    }
    const w0 = i < 32 ? 0 : 32, live = i < 32 ? 32 : 8, lane = i % 32;
    let ballot = 0n;
    for (let k = 0; k < live; k++) if (xs[w0 + k] > 0) ballot |= 1n << BigInt(k);
    const up = lane - 3 < 0 ? i : i - 3;
    const xor = (lane ^ 1) < live ? i ^ 1 : i;
    want.push(ballot, (1n << BigInt(live)) - 1n, BigInt(xor * 1000 + up), BigInt(xs[w0 + 5]));
  }
  return want;
}

test('shfl.down sums each warp in lockstep; laneId; ballot, activemask, shfl.xor / up / sync over the live lanes', (t) => {
  const x = inputs();
  const xs = x.toArraySync() as Int32Array;
  const out = gx.full([2], -7, { dtype: 'int32' });
  warpSum(1, 64, [x, out]);
  const sums = [0, 1].map((w) => xs.slice(32 * w, 32 * w + 32).reduce((a, b) => a + b, 0));
  t.deepEqual(Array.from(out.toArraySync() as Int32Array), sums);
  const o = gx.full([256], -7, { dtype: 'int64' });
  lanes(1, 64, [x, o]);
  t.deepEqual(Array.from(o.toArraySync() as BigInt64Array), lanesWant(xs));
});

test('a warp operation inside a device function steps in lockstep too', (t) => {
  const reduce = jit.device((v: number) => {
    let s = v;
    for (let o = 16; o > 0; o >>= 1) s += jit.shfl.xor(s, o);
    return s;
  });
  const k = jit.rawkernel((x: gx.jit.Array, out: gx.jit.Array) => { out[jit.threadIdx.x] = reduce(x[jit.threadIdx.x]); });
  const x = inputs();
  const xs = x.toArraySync() as Int32Array;
  const out = gx.zeros([64], { dtype: 'int32' });
  k(1, 64, [x, out]);
  const sums = [0, 1].map((w) => xs.slice(32 * w, 32 * w + 32).reduce((a, b) => a + b, 0));
  t.deepEqual(Array.from(out.toArraySync() as Int32Array), Array.from({ length: 64 }, (_, i) => sums[i >> 5]), 'every lane holds its warp\'s sum');
});

test('divergent lanes, and a warp operation some lanes never reach, are errors naming the lines', (t) => {
  const diverge = jit.rawkernel(function diverge(x: gx.jit.Array) {
    const i = jit.threadIdx.x;
    let v = x[i];
    if (jit.laneId() < 16) v = jit.shfl.down(v, 1);
    else v = jit.shfl.up(v, 1);
    x[i] = v;
  });
  t.throws(() => diverge(1, 32, [gx.zeros([32], { dtype: 'int32' })]), { message: /gx\.jit\.rawkernel\(diverge\): thread \(\d+, 0, 0\) of block \(0, 0, 0\): the lanes of a warp diverge: this one waits at the warp operation of line \d+, lane 0 at line \d+/ });
  const missing = jit.rawkernel(function missing(x: gx.jit.Array) {
    const i = jit.threadIdx.x;
    x[i] = jit.shfl.sync(x[i], 20);
  });
  t.throws(() => missing(1, 40, [gx.zeros([40], { dtype: 'int32' })]), { message: /thread \(32, 0, 0\) of block \(0, 0, 0\): shfl\.sync at line \d+ reads lane 20, which is not at it/ });
});

const compilerTest = backendInfo().backend !== null ? test : REQUIRE_CUDA ? test : test.skip;
compilerTest('the warp intrinsics\' CUDA compiles for sm_90 (no GPU needed)', (t) => {
  const x = gx.zeros([64], { dtype: 'int32' });
  const src = warpSum.source(x, x) + lanes.source(x, gx.zeros([256], { dtype: 'int64' }));
  t.regex(src, /__shfl_down_sync\(__activemask\(\), /);
  t.regex(src, /__ballot_sync\(__activemask\(\), /);
  t.true(compile({ source: src, name: 'warp.cu', arch: 'sm_90' }, { disk: false }).image.byteLength > 0);
});

cudaTest('warp intrinsics on CUDA give the simulator\'s values', (t) => {
  const x = inputs();
  const xs = x.toArraySync() as Int32Array;
  const out = gx.full([2], -7, { dtype: 'int32', device: 'cuda' });
  warpSum(1, 64, [x.cuda(), out]);
  t.deepEqual(Array.from(out.toArraySync() as Int32Array), [0, 1].map((w) => xs.slice(32 * w, 32 * w + 32).reduce((a, b) => a + b, 0)));
  const o = gx.full([256], -7, { dtype: 'int64', device: 'cuda' });
  lanes(1, 64, [x.cuda(), o]);
  t.deepEqual(Array.from(o.toArraySync() as BigInt64Array), lanesWant(xs));
});
