// Deferred disposal (NOTE [ Deferred disposal ] in csrc/binding/tensor_handle.h):
// a small op result's dispose() leaves its release to the next call that takes
// its handle, which drops it only when the serial JS names is the tensor's; a
// user's `out` and every live tensor are never taken for one; large results and
// those beyond the bound are released at once; gx.memory's figures see nothing
// deferred. Serial: they read the handle stacks and the live-tensor counters.
import test from 'ava';

import * as gx from '../lib';
import { flushDeferred, resultHandle, recycle, spentResult, stageResult } from '../lib/core/handle-pool';
import { dtypeCode } from '../lib/core/dtype';
import { parseDevice } from '../lib/core/device';
import { native } from '../lib/core/native';

import { deviceTestSerial, randomValues, sameValues } from './helpers';
import { opsLibrary } from '../lib/extension/runtime';

const f32 = (x: number): number => Math.fround(x);

deviceTestSerial('a small result\'s disposal waits for the next op call, which takes its handle and computes right', (t, device) => {
  const xs = randomValues('float32', 6, 31) as Float32Array;
  using x = gx.tensor(xs, { device });
  const live = gx.memory.stats(device).liveTensors;  // flushes what earlier tests left
  const y = gx.mul(x, 2);
  const h = y.handle();
  y.dispose();
  t.true(y.isDisposed);
  t.false(native.isDisposed(h), 'the handle still holds the tensor: no call released it');
  t.throws(() => y.toArraySync(), { message: /this tensor was disposed/ });
  using z = gx.add(x, 1);
  t.is(z.handle(), h, 'the next result went into that handle');
  sameValues(t, z.toArraySync(), Array.from(xs, (v) => f32(v + 1)));
  t.is(gx.memory.stats(device).liveTensors, live + 1, 'the call released the disposed tensor');
  // A creation function's new tensor takes such a handle too, releasing what it held.
  const w = gx.neg(x);
  const hw = w.handle();
  w.dispose();
  using e = gx.zeros([2, 3], { dtype: 'int32', device });
  t.is(e.handle(), hw);
  sameValues(t, e.toArraySync(), new Array(6).fill(0));
  t.is(gx.memory.stats(device).liveTensors, live + 2);
});

deviceTestSerial('gx.memory.stats and emptyCache first release the deferred tensors', (t, device) => {
  using x = gx.tensor(randomValues('float32', 4, 32) as Float32Array, { device });
  const before = gx.memory.stats(device);
  const hs = [];
  for (let i = 0; i < 5; i++) {
    const y = gx.exp(x);
    hs.push(y.handle());
    y.dispose();
  }
  t.deepEqual(hs.map((h) => native.isDisposed(h)), [false, false, false, false, false]);
  const after = gx.memory.stats(device);
  t.deepEqual(hs.map((h) => native.isDisposed(h)), [true, true, true, true, true]);
  t.is(after.liveTensors, before.liveTensors);
  t.is(after.allocatedBytes, before.allocatedBytes);
  const y = gx.exp(x);
  const h = y.handle();
  y.dispose();
  gx.memory.emptyCache(device);
  t.true(native.isDisposed(h));
});

deviceTestSerial('results over 8 KiB, and disposals past the bound of 256, are released at once', (t, device) => {
  flushDeferred();
  using big = gx.ones([2049], { device });  // 8196 bytes
  const b = gx.mul(big, 2);
  const hb = b.handle();
  b.dispose();
  t.true(native.isDisposed(hb), 'over 8 KiB: released by dispose()');
  using edge = gx.ones([2048], { device });  // 8 KiB exactly
  const e = gx.mul(edge, 2);
  const he = e.handle();
  e.dispose();
  t.false(native.isDisposed(he), '8 KiB: deferred');
  flushDeferred();
  using x = gx.ones([1], { device });
  const ys = Array.from({ length: 300 }, () => gx.mul(x, 3));
  const hs = ys.map((y) => y.handle());
  for (const y of ys) y.dispose();
  const held = hs.filter((h) => !native.isDisposed(h)).length;
  t.is(held, 256);
  t.true(hs.slice(256).every((h) => native.isDisposed(h)), 'the ones past the bound');
  gx.tidy(() => { for (let i = 0; i < 300; i++) gx.mul(x, 4); });  // a tidy's results take the deferred handles
  t.is(hs.filter((h) => !native.isDisposed(h)).length, 256, 'the tidy\'s own disposals are deferred in turn');
  flushDeferred();
  t.true(hs.every((h) => native.isDisposed(h)));
});

deviceTestSerial('an out tensor, or any live one, is never taken for a deferred tensor', (t, device) => {
  const xs = randomValues('float32', 3, 33) as Float32Array;
  using x = gx.tensor(xs, { device });
  using c = gx.empty([3], { device });
  using live = gx.mul(x, 7);  // a live op result: it has a serial of its own
  const y = gx.mul(x, 2);
  const hy = y.handle();
  y.dispose();
  gx.mul(x, 5, { out: c });  // no request: the deferred handle is not passed, c keeps its tensor
  sameValues(t, c.toArraySync(), Array.from(xs, (v) => f32(v * 5)));
  t.false(native.isDisposed(hy));
  // A request naming the deferred tensor, in a call whose `out` is the live tensor: written, not replaced.
  t.is(resultHandle(), hy);
  const mul = opsLibrary('test').opId('mul');
  stageResult([3], dtypeCode('float32'), parseDevice(device, 'test'));
  native.callOp(mul, x.handle(), x.handle(), dtypeCode('float32'), live.handle());
  t.is(spentResult(), undefined, 'the request was not spent on the live tensor');
  sameValues(t, live.toArraySync(), Array.from(xs, (v) => f32(v * v)));
  t.true(native.dispose(hy), 'the deferred handle still held its tensor');
  recycle(hy);
});

test('a failed op call on a deferred handle leaks nothing', (t) => {
  using x = gx.tensor([1, 2, 3]);
  using four = gx.ones([4]);
  using column = gx.ones([4, 1]);
  const live = gx.memory.stats('cpu').liveTensors;
  gx.exp(x).dispose();  // deferred
  t.throws(() => gx.add(x, four), { message: /gx\.add/ });  // refused in JS: the handle is not taken
  t.throws(() => gx.matmul(x, column), { message: /gx\.matmul/ });
  t.is(gx.memory.stats('cpu').liveTensors, live);
  gx.exp(x).dispose();
  // Refused by the core after the request was spent on the deferred handle (a result of the wrong shape).
  const h = resultHandle();
  if (h === undefined) return t.fail('the disposal above was not deferred');
  const mul = opsLibrary('test').opId('mul');
  stageResult([7], dtypeCode('float32'), parseDevice('cpu', 'test'));
  t.throws(() => native.callOp(mul, x.handle(), x.handle(), dtypeCode('float32'), h), { message: /gx_ops::mul/ });
  t.not(spentResult(), undefined, 'spent: the deferred tensor dropped, the new one allocated');
  t.true(native.dispose(h));
  recycle(h);
  t.is(gx.memory.stats('cpu').liveTensors, live);
  using y = gx.mul(x, 2);
  sameValues(t, y.toArraySync(), [2, 4, 6]);
  t.is(gx.memory.stats('cpu').liveTensors, live + 1);
});
