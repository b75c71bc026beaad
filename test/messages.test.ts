// Messages that used to come out of the machinery instead of naming the
// function and the argument (issue 14, item 7).
import test from 'ava';
import { MessageChannel } from 'worker_threads';

import * as gx from '../lib';
import { namedForCaller } from '../lib/ops/library';
import { deviceTest, rejects, sameValues } from './helpers';

test('canCast and promoteTypes name themselves and the bad dtype', (t) => {
  t.throws(() => gx.canCast('float64', 'x' as gx.DType), { instanceOf: TypeError, message: /^gx\.canCast: unknown dtype "x"; expected one of float32/ });
  t.throws(() => gx.promoteTypes('x' as gx.DType, 'int8'), { instanceOf: TypeError, message: /^gx\.promoteTypes: unknown dtype "x"/ });
  t.is(gx.promoteTypes('uint8', 'int8'), 'int16');
});

deviceTest('a device or dtype that is not a string is described, not serialized', (t, device) => {
  using x = gx.ones([2], { device });
  rejects(t, device, () => x.to(new BigInt64Array(2) as unknown as gx.DeviceLike), TypeError,
    /^Tensor\.to: unknown device an object \(\[object BigInt64Array\]\)/);
  rejects(t, device, () => gx.zeros([2], { dtype: 5n as unknown as gx.DType, device }), TypeError, /^gx\.zeros: unknown dtype bigint 5/);
});

deviceTest('a typed array over a SharedArrayBuffer becomes a tensor', (t, device) => {
  const shared = new Float32Array(new SharedArrayBuffer(16));
  shared.set([1, 2.5, -3, 4]);
  using x = gx.tensor(shared.subarray(1), { device });
  sameValues(t, x.toArraySync(), [2.5, -3, 4]);
});

deviceTest('copy_ with another shape or dtype says which', (t, device) => {
  using a = gx.ones([2, 3], { device });
  using b = gx.ones([3, 2], { device });
  using c = gx.ones([2, 3], { dtype: 'float64', device });
  rejects(t, device, () => a.copy_(b), Error, /^Tensor\.copy_: src has shape \[3, 2\] but self has shape \[2, 3\]/);
  rejects(t, device, () => a.copy_(c), TypeError, /^Tensor\.copy_: src is float64 but self is float32; convert it first with src\.astype\('float32'\)/);
});

test('a forged Tensor is a TypeError naming the op', (t) => {
  const forged = Object.create(gx.Tensor.prototype) as gx.Tensor;
  t.throws(() => gx.add(forged, 1), { instanceOf: TypeError, message: /^gx\.add: this object is not a gx\.Tensor made by gpuext/ });
  t.throws(() => forged.dispose(), { instanceOf: TypeError, message: /^Tensor\.dispose: this object is not a gx\.Tensor/ });
  t.throws(() => gx.matmul(forged, forged), { instanceOf: TypeError, message: /^gx\.matmul: this object is not a gx\.Tensor/ });
});

test('posting a Tensor to another thread throws a DataCloneError that says why', (t) => {
  const { port1, port2 } = new MessageChannel();
  using x = gx.ones([2]);
  try {
    let err: { name?: string; message?: string } | undefined;
    try {
      port1.postMessage({ weights: [x] });
    } catch (e) {
      err = e as { name?: string; message?: string };  // a DOMException, which ava does not count as an Error
    }
    t.is(err?.name, 'DataCloneError');
    t.regex(err?.message ?? '', /a gx\.Tensor cannot be posted to another thread.*await t\.toArray\(\)/);
  } finally {
    port1.close();
    port2.close();
  }
});

test('errors of built-in ops name the gx function, not the op registry name', (t) => {
  const e = namedForCaller(new Error('gx_ops::svd_colmajor: svd: cuSOLVER gesvdj did not converge'), 'gx.linalg.svd');
  t.is((e as Error).message, 'gx.linalg.svd: svd: cuSOLVER gesvdj did not converge');
  const other = new Error('myext::op: bad');
  t.is((namedForCaller(other, 'gx.add') as Error).message, 'myext::op: bad');
});
