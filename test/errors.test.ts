// Bad input: each throws a clear error naming the API and the argument, and
// leaves the process, other tensors and the allocator intact.
import * as gx from '../lib';
import { deviceTest, rejects } from './helpers';

deviceTest('an unknown dtype string is a TypeError listing the dtypes', (t, device) => {
  const opts = { dtype: 'float8', device } as unknown as gx.TensorOptions;
  rejects(t, device, () => gx.zeros([2], opts), TypeError, /gx\.zeros: unknown dtype "float8"; expected one of float32, .*bool/);
  rejects(t, device, () => gx.tensor([1], opts), TypeError, /gx\.tensor: unknown dtype "float8"/);
});

deviceTest('data whose length does not match the shape is a RangeError', (t, device) => {
  rejects(t, device, () => gx.tensor(new Float32Array(5), { device, shape: [2, 3] }), RangeError,
    /gx\.tensor: data has 5 elements but shape \[2, 3\] needs 6/);
  rejects(t, device, () => gx.tensor([1, 2, 3, 4], { device, shape: [3] }), RangeError, /data has 4 elements but shape \[3\] needs 3/);
});

deviceTest('negative or non-integer dims are RangeErrors naming the dim', (t, device) => {
  rejects(t, device, () => gx.zeros([2, -1], { device }), RangeError, /gx\.zeros: shape\[1\] must be a non-negative integer, got -1/);
  rejects(t, device, () => gx.empty([2.5], { device }), RangeError, /gx\.empty: shape\[0\] must be a non-negative integer, got 2\.5/);
  rejects(t, device, () => gx.ones(['3'] as unknown as number[], { device }), TypeError, /gx\.ones: shape\[0\] must be a number/);
  rejects(t, device, () => gx.full(new Array(17).fill(1), 0, { device }), RangeError, /at most 16 are supported/);
  using a = gx.zeros([6], { device });
  rejects(t, device, () => a.view(4, -1), Error, /Tensor\.view: shape \[4, -1\] is invalid for a tensor of shape \[6\]/);
  rejects(t, device, () => a.view(-1, -1), RangeError, /only one dimension can be -1/);
});

deviceTest('a device that does not exist is a RangeError; a malformed one a TypeError', (t, device) => {
  rejects(t, device, () => gx.zeros([2], { device: 'cuda:99' }), RangeError, /gx\.zeros: device 'cuda:99' (does not exist|requested but CUDA is not available)/);
  rejects(t, device, () => gx.zeros([2], { device: 'gpu' }), TypeError, /gx\.zeros: unknown device "gpu"; expected 'cpu', 'cuda' or 'cuda:N'/);
  using a = gx.ones([2], { device });
  rejects(t, device, () => a.to('cuda:7'), RangeError, /Tensor\.to: device 'cuda:7'/);
});

deviceTest('mixed-type and ragged nested arrays are rejected with the offending path', (t, device) => {
  rejects(t, device, () => gx.tensor([1, true], { device }), TypeError, /gx\.tensor: data\[1\] is a boolean but earlier elements are numbers/);
  rejects(t, device, () => gx.tensor([[1, 2], [3, 'x']] as unknown as number[][], { device }), TypeError, /data\[1\]\[1\] is a string/);
  rejects(t, device, () => gx.tensor([1n, 2], { device }), TypeError, /data\[1\]/);
  rejects(t, device, () => gx.tensor([[1, 2, 3], [4, 5]], { device }), RangeError, /ragged nested array: data\[1\] has length 2 but data\[0\] has length 3/);
  rejects(t, device, () => gx.tensor([[1], 2], { device }), RangeError, /data\[1\] is a number but data\[0\] is an array/);
});

deviceTest('values out of a dtype\'s range are RangeErrors', (t, device) => {
  rejects(t, device, () => gx.tensor([1, 300], { dtype: 'uint8', device }), RangeError, /value 300 is out of range for uint8/);
  rejects(t, device, () => gx.full([2], 2n ** 63n, { device }), RangeError, /out of range for int64/);
  rejects(t, device, () => gx.tensor(new Uint32Array(3), { device }), TypeError, /a Uint32Array has no matching dtype; pass \{ dtype \}/);
});

deviceTest('a disposed tensor used again, or disposed twice, throws and harms nothing', (t, device) => {
  const before = gx.memory.stats(device);
  const a = gx.arange(4, { device });
  a.dispose();
  t.true(a.isDisposed);
  for (const use of [() => a.toArraySync(), () => a.shape, () => a.view(2, 2), () => a.to('cpu'), () => a.clone(), () => a.dispose()]) {
    const err = t.throws(use);
    t.regex(err?.message ?? '', /this tensor was disposed; it cannot be used after dispose\(\)/);
    t.is((err as Error & { code?: string }).code, 'GX_DISPOSED');
  }
  t.is(String(a), 'tensor(<disposed>)');
  // Symbol.dispose after dispose() is a no-op, so `using` stays safe.
  a[Symbol.dispose]();
  using b = gx.ones([2], { device });
  rejects(t, device, () => b.copy_(a as gx.Tensor), Error, /Tensor\.copy_: this tensor was disposed/);
  const after = gx.memory.stats(device);
  t.is(after.liveTensors, before.liveTensors + 1);  // b
});

deviceTest('bad arguments to creation functions name the argument', (t, device) => {
  rejects(t, device, () => gx.arange(0, 5, 0, { device }), RangeError, /gx\.arange: step must be nonzero/);
  rejects(t, device, () => gx.arange(5, 0, 1, { device }), RangeError, /end \(0\) is not reachable from start \(5\) with step 1/);
  rejects(t, device, () => gx.linspace(0, 1, -2, { device }), RangeError, /gx\.linspace: steps must be a non-negative integer/);
  rejects(t, device, () => gx.full([2], 'x' as unknown as number, { device }), TypeError, /gx\.full: value must be a number, bigint or boolean/);
  rejects(t, device, () => gx.zeros([2], 'cuda' as unknown as gx.TensorOptions), TypeError, /options must be an object/);
  using a = gx.ones([3], { device });
  rejects(t, device, () => a.item(), RangeError, /Tensor\.item: only a one-element tensor has an item; this one has shape \[3\]/);
  using b = gx.ones([4], { device });
  rejects(t, device, () => a.copy_(b), Error, /Tensor\.copy_: src has shape \[4\] but self has shape \[3\]/);
  using c = gx.ones([3], { dtype: 'int32', device });
  rejects(t, device, () => a.copy_(c), TypeError, /Tensor\.copy_: src is int32 but self is float32/);
});
