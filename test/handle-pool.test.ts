// Recycled tensor handles (NOTE [ Recycled handles ] in csrc/binding/tensor_handle.h):
// a disposed tensor's handle carries the next op result, which the op call
// allocates from a staged request; the old Tensor stays disposed; failures
// leak nothing; the profiler sees no reused handle. Serial: they read the
// pool and the live-tensor counters.
import test from 'ava';

import * as gx from '../lib';
import { opsLibrary } from '../lib/extension/runtime';
import { dtypeCode } from '../lib/core/dtype';
import { parseDevice } from '../lib/core/device';
import { flushDeferred, pooledHandle, recycle, spentResult, stageResult, stageSpare } from '../lib/core/handle-pool';
import { native } from '../lib/core/native';
import { deviceTestSerial, randomValues, sameValues } from './helpers';

const f32 = (x: number): number => Math.fround(x);

deviceTestSerial('an op result goes into the handle a disposed tensor left, allocated by the op call', (t, device) => {
  const xs = randomValues('float32', 5, 7) as Float32Array;
  using x = gx.tensor(xs, { device });
  const y = gx.mul(x, 2.5);
  const h = y.handle();
  y.dispose();
  const live = gx.memory.stats(device).liveTensors;
  using z = gx.mul(x, -1.5);
  t.is(z.handle(), h, 'the disposed tensor\'s handle carries the result');
  t.is(gx.memory.stats(device).liveTensors, live + 1, 'the call allocated one tensor');
  sameValues(t, z.toArraySync(), Array.from(xs, (v) => f32(v * -1.5)));
  t.is(z.address(), native.dataAddress(z.handle()), 'the address the call staged');
  t.true(y.isDisposed);
  t.throws(() => y.toArraySync(), { message: /this tensor was disposed/ });
  t.throws(() => y.dispose(), { message: /^Tensor\.dispose: this tensor was disposed/ });

  // Another shape (broadcast), dtype (int32, bool) and op through the same kind of handle.
  const as = randomValues('int32', 6, 3) as Int32Array, bs = randomValues('int32', 3, 4) as Int32Array;
  using a0 = gx.tensor(as, { device });
  using a = a0.reshape(2, 3);
  using b = gx.tensor(bs, { device });
  gx.exp(x).dispose();
  using s = gx.add(a, b);
  t.deepEqual([s.shape, s.dtype], [[2, 3], 'int32']);
  sameValues(t, s.toArraySync(), Array.from(as, (v, i) => (v + bs[i % 3]) | 0));
  gx.exp(x).dispose();
  using c = gx.gt(a, b);
  t.is(c.dtype, 'bool');
  sameValues(t, c.toArraySync(), Array.from(as, (v, i) => (v > bs[i % 3] ? 1 : 0)));
});

deviceTestSerial('a new tensor of a creation function goes into the handle a disposed tensor left', (t, device) => {
  flushDeferred();  // the op results earlier tests disposed: their handles would be taken first (NOTE [ Deferred disposal ])
  const y = gx.ones([4], { device });
  const h = y.handle();
  y.dispose();
  using z = gx.full([2, 3], 7, { dtype: 'int32', device });
  t.is(z.handle(), h);
  t.deepEqual([z.shape, z.dtype], [[2, 3], 'int32']);
  sameValues(t, z.toArraySync(), new Array(6).fill(7));
  t.is(z.address(), native.dataAddress(z.handle()));
});

deviceTestSerial('a loop of small ops through recycled handles leaks nothing', (t, device) => {
  const xs = randomValues('float32', 3, 11) as Float32Array;
  using x = gx.tensor(xs, { device });
  const before = gx.memory.stats(device);
  let acc = gx.mul(x, 1);
  for (let i = 0; i < 20_000; i++) {
    const next = gx.add(acc, x);
    acc.dispose();
    acc = next;
    if (i % 1000 === 0) gx.tidy(() => { gx.exp(gx.neg(x)); });  // tidy's disposals are pooled too
  }
  sameValues(t, acc.toArraySync(), Array.from(xs, (v) => {
    let r = f32(v * 1);
    for (let i = 0; i < 20_000; i++) r = f32(r + v);
    return r;
  }));
  acc.dispose();
  const after = gx.memory.stats(device);
  t.is(after.liveTensors, before.liveTensors);
  t.is(after.allocatedBytes, before.allocatedBytes);
});

deviceTestSerial('the core spends a staged request on one empty handle, and a failed call leaks nothing', (t, device) => {
  const d = parseDevice(device, 'test');
  using a = gx.tensor(randomValues('float32', 3, 5) as Float32Array, { device });
  const mul = opsLibrary('test').opId('mul');
  const code = dtypeCode('float32');
  // Two empty handles: those of tensors disposed here.
  const e1 = gx.empty([1], { device }), e2 = gx.empty([1], { device });
  const h1 = e1.handle(), h2 = e2.handle();
  e1.dispose();
  e2.dispose();
  while (pooledHandle() !== undefined);  // the pool forgets them: this test holds them
  const live = gx.memory.stats(device).liveTensors;

  // A bad argument before `out`: nothing allocated, the request not spent.
  stageResult([3], code, d);
  t.throws(() => native.callOp(mul, a.handle(), a.handle(), 99, h1), { message: /unknown dtype code 99/ });
  t.is(spentResult(), undefined);
  t.is(gx.memory.stats(device).liveTensors, live);
  // The request goes to the first empty handle only; the second is a disposed tensor.
  stageResult([3], code, d);
  t.throws(() => native.callOp(mul, h1, a.handle(), code, h2), { message: /argument 'out' is a disposed tensor/ });
  t.not(spentResult(), undefined, 'spent on self');
  t.true(native.dispose(h1), 'self got a tensor');
  t.false(native.dispose(h2));
  // Allocated, then refused by the op (a result of the wrong shape): dispose gives it back.
  stageResult([7], code, d);
  t.throws(() => native.callOp(mul, a.handle(), a.handle(), code, h1), { message: /gx_ops::mul/ });
  t.not(spentResult(), undefined);
  t.is(gx.memory.stats(device).liveTensors, live + 1);
  t.true(native.dispose(h1));
  // No request: an empty handle is a disposed tensor, as always.
  t.throws(() => native.callOp(mul, a.handle(), a.handle(), code, h1), { message: /argument 'out' is a disposed tensor/ });
  t.is(gx.memory.stats(device).liveTensors, live);
  recycle(h1);
  recycle(h2);
});

deviceTestSerial('a result the op call cannot allocate is an error naming the function, and nothing leaks', (t, device) => {
  using one = gx.ones([1], { device });
  using huge = one.expand([2 ** 25, 2 ** 25]);  // 4 PiB as float32: beyond any memory
  gx.exp(one).dispose();  // a pooled handle for the result
  const live = gx.memory.stats(device).liveTensors;
  const err = t.throws(() => gx.mul(huge, 2));
  t.regex(err?.message ?? '', /^gx\.mul: (CUDA )?out of (host )?memory/);
  t.is((err as Error & { code?: string }).code, 'GX_OUT_OF_MEMORY');
  t.is(gx.memory.stats(device).liveTensors, live);
  using after = gx.mul(one, 3);
  sameValues(t, after.toArraySync(), [3]);
});

test.serial('a call that fails early still spends the spare flag: the next call reads its own arguments', (t) => {
  stageSpare();
  t.throws(() => native.callOp(-1), { message: /no registered op has id -1/ });
  const xs = randomValues('float32', 4, 9) as Float32Array;
  using x = gx.tensor(xs);
  using y = gx.mul(x, 2, { out: gx.empty([4]) });  // its last argument is `out`, no spare
  sameValues(t, y.toArraySync(), Array.from(xs, (v) => f32(v * 2)));
});

test.serial('while the profiler records, no handle is reused, and later recordings see the new shapes', (t) => {
  using x3 = gx.ones([3]);
  using x5 = gx.ones([5]);
  const y = gx.exp(x3);
  const first = gx.profiler.profile(() => gx.mul(y, 2).dispose());
  t.deepEqual(first.events.map((e) => e.shapes), [[[3], [3]]]);
  const h = y.handle();
  y.dispose();
  using z = gx.exp(x5);
  t.is(z.handle(), h, 'reused once the recording stopped');
  const second = gx.profiler.profile(() => {
    const w = gx.mul(z, 2);
    const hw = w.handle();
    w.dispose();
    using v = gx.neg(x5);
    t.not(v.handle(), hw, 'not reused while recording');
  });
  t.deepEqual(second.events.map((e) => [e.name, e.shapes]), [['mul_scalar', [[5], [5]]], ['neg', [[5], [5]]]]);
});
