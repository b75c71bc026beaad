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
  const e = namedForCaller(new Error('gx_ops::svd: svd: cuSOLVER gesvdj did not converge'), 'gx.linalg.svd');
  t.is((e as Error).message, 'gx.linalg.svd: svd: cuSOLVER gesvdj did not converge');
  const other = new Error('myext::op: bad');
  t.is((namedForCaller(other, 'gx.add') as Error).message, 'myext::op: bad');
});

// Found by the fuzz suite (test/fuzz/known.ts lists them while they were open).
deviceTest('fill_, full and the creation functions name themselves and refuse non-numbers', (t, device) => {
  using z = gx.zeros([2], { device });
  rejects(t, device, () => z.fill_('x' as unknown as number), TypeError, /^Tensor\.fill_: value must be a number, bigint or boolean, got a string/);
  rejects(t, device, () => z.fill_({} as unknown as number), TypeError, /^Tensor\.fill_: value must be a number/);
  using b = gx.zeros([2], { dtype: 'bool', device });
  rejects(t, device, () => b.fill_(Symbol('s') as unknown as number), TypeError, /^Tensor\.fill_: value must be a number/);
  rejects(t, device, () => gx.full([2], 2n ** 64n, { device }), RangeError, /^gx\.full: /);
  rejects(t, device, () => gx.full([2], NaN, { dtype: 'int32', device }), RangeError, /^gx\.full: /);
  const d = gx.ones([1], { device });
  d.dispose();
  rejects(t, device, () => d.item(), Error, /^Tensor\.item: this tensor was disposed/);
  using one = gx.ones([2], { device });
  using dot = gx.matmul(one, one, null);  // null options, as the other ops take
  t.is(dot.item(), 2);
});

test('out-of-memory errors name the function that allocated', (t) => {
  for (const [name, f] of [
    // 2^50 float32 (4 PiB) or 2^52 elements: beyond any machine's address space, whatever its overcommit policy, and
    // within the 2^53 - 1 bytes a shape may span (NOTE [ Tensor byte limit ]).
    ['gx.empty', () => gx.empty([2 ** 50])], ['gx.zeros', () => gx.zeros([2 ** 50])],
    ['gx.arange', () => gx.arange(0, 2 ** 52)], ['gx.linspace', () => gx.linspace(0, 1, 2 ** 52)],
  ] as const) {
    const err = t.throws(f);
    t.regex(err?.message ?? '', new RegExp(`^${name.replace('.', '\\.')}: out of host memory`), name);
  }
});

test('resultType refuses operands that are not tensors, numbers, bigints or booleans', (t) => {
  t.throws(() => gx.resultType('x' as unknown as number), { instanceOf: TypeError, message: /^gx\.resultType: operands must be/ });
  using x = gx.ones([2]);
  t.throws(() => gx.resultType(x, {} as unknown as number), { instanceOf: TypeError, message: /^gx\.resultType: operands must be/ });
});

deviceTest('a JS NaN becomes bool true on every path (nonzero, as torch)', (t, device) => {
  using a = gx.tensor([NaN, 0, -0, 2], { dtype: 'bool', device });
  t.deepEqual(Array.from(a.toArraySync()), [1, 0, 0, 1]);
  using b = gx.full([1], NaN, { dtype: 'bool', device });
  t.is(b.item(), true);
  using c = gx.zeros([1], { dtype: 'bool', device });
  t.is(c.fill_(NaN).item(), true);
  using f = gx.tensor([NaN], { device });
  using d = f.astype('bool');
  t.is(d.item(), true);
});
