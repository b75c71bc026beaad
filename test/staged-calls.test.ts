// Staged op calls (NOTE [ Staged op calls ] in csrc/binding/op_values.cpp):
// the non-tensor arguments in the staging area, the tensors as JS values. The
// staged call computes what the unstaged one does, bit for bit; ints beyond
// 2^53 and absent optional arguments survive the slots; what the core reads
// there it checks as it checks a JS value.
import test from 'ava';

import * as gx from '../lib';
import { dtypeCode } from '../lib/core/dtype';
import { native } from '../lib/core/native';
import { STAGED_OP_ARGS, stageInt, stagingArea } from '../lib/core/staging';
import { opsLibrary } from '../lib/extension/runtime';
import { deviceTest, randomValues, rng, sameValues } from './helpers';

const F32 = dtypeCode('float32');

/** Stages op argument `i`'s value with tag 1 (present). */
function stage(i: number, v: number): void {
  const st = stagingArea();
  st[STAGED_OP_ARGS + 3 * i] = v;
  st[STAGED_OP_ARGS + 3 * i + 1] = 1;
}

/** mul_scalar / sub_scalar (self, other, other_int, reverse, dtype, out), staged. */
function stageScalarOp(other: number, reverse: boolean, dtype: number): void {
  stage(1, other);
  stage(2, 0);
  stage(3, reverse ? 1 : 0);
  stage(4, dtype);
}

deviceTest('a staged call of a scalar op writes what the unstaged call writes, bit for bit', (t, device) => {
  const lib = opsLibrary('test');
  const n = 37;
  const values = randomValues('float32', n, 5) as Float32Array;
  using a = gx.tensor(values, { device });
  const f = -3 + 6 * rng(11)();
  for (const [name, reverse, ref] of [
    ['mul_scalar', false, (x: number) => Math.fround(x * Math.fround(f))],
    ['sub_scalar', true, (x: number) => Math.fround(Math.fround(f) - x)],
  ] as const) {
    const id = lib.opId(name);
    using unstaged = gx.full([n], Number.NaN, { device });
    using staged = gx.full([n], Number.NaN, { device });
    native.callOp(id, a.handle('test'), f, 0, reverse, F32, unstaged.handle('test'));
    stageScalarOp(f, reverse, F32);
    native.callOpStaged(id, a.handle('test'), staged.handle('test'));
    const got = staged.toArraySync() as Float32Array;
    t.deepEqual(Array.from(got), Array.from(unstaged.toArraySync() as Float32Array), name);
    sameValues(t, got, Array.from(values, ref), name);
  }
});

deviceTest('int64 scalars beyond 2^53 reach the kernel whole through the slots', (t, device) => {
  const x = randomValues('int64', 19, 3) as BigInt64Array;
  using a = gx.tensor(x, { device });
  for (const c of [2n ** 60n + 12345n, -(2n ** 61n) - 7n, 2n ** 63n - 1n, 9007199254740993n]) {
    using r = gx.add(a, c);
    const want = Array.from(x, (v) => BigInt.asIntN(64, v + c));
    t.deepEqual(Array.from(r.toArraySync() as BigInt64Array), want, String(c));
  }
});

deviceTest('an absent optional argument is staged as None (clamp with one bound)', (t, device) => {
  const x = randomValues('float32', 23, 8) as Float32Array;
  using a = gx.tensor(x, { device });
  const lo = -rng(2)(), hi = rng(3)();
  using low = gx.clamp(a, { min: lo });
  using high = gx.clamp(a, { max: hi });
  sameValues(t, low.toArraySync(), Array.from(x, (v) => Math.max(v, Math.fround(lo))));
  sameValues(t, high.toArraySync(), Array.from(x, (v) => Math.min(v, Math.fround(hi))));
});

test('a staged call checks the values it reads as a JS call checks its arguments', (t) => {
  const id = opsLibrary('test').opId('mul_scalar');
  using a = gx.tensor(new Float32Array([1.5, -2]));
  using out = gx.tensor(new Float32Array([7, 8]));
  const before = gx.memory.stats('cpu').liveTensors;
  const call = (): unknown => native.callOpStaged(id, a.handle('test'), out.handle('test'));
  const st = stagingArea();
  stageScalarOp(2, false, F32);
  stageInt(st, STAGED_OP_ARGS + 6, 2n ** 64n);
  t.throws(call, { instanceOf: RangeError, message: /mul_scalar: argument 'other_int' does not fit in int64/ });
  stageScalarOp(2, false, F32);
  stage(2, 2.5);
  t.throws(call, { instanceOf: TypeError, message: /mul_scalar: argument 'other_int' must be an integer, got number 2.5/ });
  stageScalarOp(2, false, F32);
  stageInt(st, STAGED_OP_ARGS + 6, undefined);
  t.throws(call, { instanceOf: TypeError, message: /mul_scalar: missing required argument 'other_int' \(int\)/ });
  stageScalarOp(2, false, 99);
  t.throws(call, { instanceOf: TypeError, message: /mul_scalar: argument 'dtype': unknown dtype code 99/ });
  stageScalarOp(2, false, F32);
  t.throws(() => native.callOpStaged(id, a.handle('test'), out.handle('test'), a.handle('test')),
    { instanceOf: TypeError, message: /mul_scalar: takes 2 tensor arguments but more were given/ });
  // Nothing was written, nothing leaked, and the next call works.
  sameValues(t, out.toArraySync(), [7, 8]);
  stageScalarOp(-3, false, F32);
  call();
  sameValues(t, out.toArraySync(), [-4.5, 6]);
  t.is(gx.memory.stats('cpu').liveTensors, before);
});

test('stageInt: a number as it is, a bigint within 2^53 as a number, beyond as two halves, beyond int64 refused', (t) => {
  const st = stagingArea();
  const k = STAGED_OP_ARGS;
  const read = (): number[] => [st[k], st[k + 1], st[k + 2]];
  stageInt(st, k, -7);
  t.deepEqual(read().slice(0, 2), [-7, 1]);
  stageInt(st, k, 2n ** 53n - 1n);
  t.deepEqual(read().slice(0, 2), [2 ** 53 - 1, 1]);
  const big = -(2n ** 62n) + 5n;
  stageInt(st, k, big);
  const [hi, tag, lo] = read();
  t.is(tag, 2);
  t.is(BigInt(hi) * 2n ** 32n + BigInt(lo), big);
  stageInt(st, k, -(2n ** 63n) - 1n);
  t.is(st[k + 1], 3);
  stageInt(st, k, null);
  t.is(st[k + 1], 0);
});

deviceTest('timeOpCall runs the staged op as callOpStaged does, and refuses what it cannot time', (t, device) => {
  const lib = opsLibrary('test');
  const mul = lib.opId('mul_scalar');
  using a = gx.tensor(new Float32Array([1.5, -2, 3]), { device });
  using out = gx.full([3], Number.NaN, { device });
  stageScalarOp(4, false, F32);
  const times = native.timeOpCall(mul, 3, 5, a.handle('test'), out.handle('test'));
  t.is(times.length, 3);
  t.true(Array.from(times).every((us) => Number.isFinite(us) && us > 0));
  t.deepEqual(Array.from(out.toArraySync() as Float32Array), [6, -8, 12]);
  t.throws(() => native.timeOpCall(mul, 0, 5, a.handle('test'), out.handle('test')), { message: /timeOpCall: batches must be in \[1, 10000\]/ });
  t.throws(() => native.timeOpCall(lib.opId('nonzero'), 1, 1, a.handle('test')), { message: /timeOpCall: .*nonzero returns a value/ });
  t.throws(() => native.timeOpCall(mul, 1, 1, a.handle('test'), out.handle('test'), a.handle('test')), { message: /mul_scalar: takes 2 tensor arguments/ });
});
