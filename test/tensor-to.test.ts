// Tensor.to with torch's overloads (dtype, device, both, an object, another
// tensor) and item()/itemBigInt() of integer tensors (issue 13).
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, rejects, sameValues } from './helpers';

deviceTest('to(dtype) converts on the tensor\'s device; to(device, dtype) and to({ device, dtype }) move and convert', (t, device) => {
  using x = gx.tensor([1.5, -2.25, 3], { device });
  using d = x.to('float64');
  t.is(d.dtype, 'float64');
  t.is(d.device.toString(), x.device.toString());
  sameValues(t, d.toArraySync(), [1.5, -2.25, 3]);
  using i = x.to('int32');
  sameValues(t, i.toArraySync(), [1, -2, 3], 'toward zero, as astype');
  for (const [from, to] of [[device, 'cpu'], ['cpu', device]] as const) {
    using src = x.to(from);
    using h = src.to(to, 'float16');
    t.is(h.dtype, 'float16');
    t.is(h.device.type, to);
    sameValues(t, h.toArraySync(), [1.5, -2.25, 3]);
    using w = src.to({ device: to, dtype: 'float64' });
    t.is(w.dtype, 'float64');
    t.is(w.device.type, to);
    sameValues(t, w.toArraySync(), [1.5, -2.25, 3]);
  }
  using like = gx.zeros([1], { dtype: 'int8' });
  using l = x.to(like);
  t.is(l.dtype, 'int8');
  t.is(l.device.type, 'cpu');
  sameValues(t, l.toArraySync(), [1, -2, 3]);
});

deviceTest('to() with nothing to change shares the storage (a separate Tensor); copy: true copies', (t, device) => {
  using x = gx.tensor([1, 2, 3], { device });
  using same = x.to('float32');
  using same2 = x.to({ device: x.device });
  using copy = x.to(x.device, 'float32', { copy: true });
  same.fill_(7);
  sameValues(t, x.toArraySync(), [7, 7, 7], 'to() of the same device and dtype is x\'s storage, as torch returns self');
  sameValues(t, same2.toArraySync(), [7, 7, 7]);
  sameValues(t, copy.toArraySync(), [1, 2, 3], 'copy: true is its own');
  t.false(same.isDisposed);
});

deviceTest('to() of what is neither a device nor a dtype says so, with the likely meaning', (t, device) => {
  using x = gx.ones([2], { device });
  rejects(t, device, () => x.to('float46' as gx.DType), TypeError,
    /^Tensor\.to: "float46" is neither a device \('cpu', 'cuda', 'cuda:N'\) nor a dtype \(float32, .*\); did you mean 'float64'\?$/);
  rejects(t, device, () => x.to('gpu'), TypeError, /^Tensor\.to: "gpu" is neither a device .*; did you mean 'cpu'\?$/);
  rejects(t, device, () => x.to('cpu', 'float77' as gx.DType), TypeError, /^Tensor\.to: unknown dtype "float77"; expected one of float32/);
  rejects(t, device, () => x.to({ dtype: 'int' as gx.DType }), TypeError, /^Tensor\.to: unknown dtype a string \("int"\)/);
  rejects(t, device, () => x.to({ devcie: 'cpu' } as gx.ToTarget), TypeError, /^Tensor\.to: unknown option 'devcie'; did you mean 'device'\?/);
  rejects(t, device, () => Reflect.apply(x.to, x, [{ device: 'cpu' }, 'float64']), TypeError, /^Tensor\.to: the \{ device, dtype \} form takes no further arguments/);
});

deviceTest('item() of an integer tensor is a number; beyond 2^53 - 1 a RangeError that points to itemBigInt()', (t, device) => {
  using s = gx.arange(5, { device }).sum();
  t.is(s.dtype, 'int64');
  t.is(s.item() + 1, 11);
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  for (const v of [max, -max, 0n, -1n]) {
    using one = gx.tensor([v], { device });
    t.is(one.item(), Number(v));
    t.is(one.itemBigInt(), v);
  }
  for (const v of [max + 1n, -max - 1n, 2n ** 63n - 1n, -(2n ** 63n)]) {
    using one = gx.tensor([v], { device });
    rejects(t, device, () => one.item(), RangeError,
      new RegExp(`^Tensor\\.item: the value ${v} \\(int64\\) is beyond ±\\(2\\^53 - 1\\), where a number is exact; read it as a bigint with itemBigInt\\(\\)`));
    t.is(one.itemBigInt(), v);
  }
  using i8 = gx.tensor([-7], { dtype: 'int8', device });
  t.is(i8.item(), -7);
  t.is(i8.itemBigInt(), -7n);
  using b = gx.tensor([true], { device });
  t.is(b.item(), true);
  t.is(b.itemBigInt(), 1n);
  using f = gx.tensor([2.5], { device });
  rejects(t, device, () => f.itemBigInt(), TypeError, /^Tensor\.itemBigInt: the tensor is float32, not an integer dtype; use item\(\)/);
  using two = gx.tensor([1n, 2n], { device });
  rejects(t, device, () => two.itemBigInt(), RangeError, /^Tensor\.itemBigInt: only a one-element tensor has an item; this one has shape \[2\]/);
});

test('the issue\'s examples', (t) => {
  // torch's dim is the deprecated spelling of axis since issue 19: it works, with a DeprecationWarning (test/axis.test.ts).
  t.deepEqual(gx.ones([2, 3]).sum({ dim: 1 } as gx.ReduceOptions).shape, [2]);
  t.throws(() => gx.ones([2, 3]).sum({ keepdim: true } as gx.ReduceOptions), { instanceOf: TypeError, message: /^Tensor\.sum: unknown option 'keepdim'; did you mean 'keepdims'\?/ });
  t.throws(() => gx.ones([2, 3]).sum({ axes: 1 } as gx.ReduceOptions), { instanceOf: TypeError, message: /^Tensor\.sum: unknown option 'axes'; did you mean 'axis'\?/ });
  t.throws(() => gx.tensor([1, 2], { devcie: 'cuda' } as gx.TensorOptions), { instanceOf: TypeError, message: /^gx\.tensor: unknown option 'devcie'; did you mean 'device'\?/ });
  t.throws(() => gx.zeros([2], { dtpye: 'float64' } as gx.EmptyOptions), { instanceOf: TypeError, message: /^gx\.zeros: unknown option 'dtpye'; did you mean 'dtype'\?/ });
  t.is(gx.arange(5).sum().item() + 1, 11);
  t.is(gx.ones([2]).to('float64').dtype, 'float64');
});
