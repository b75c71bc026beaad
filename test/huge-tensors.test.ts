// Tensors larger than anything JS can hold: printing reads only what it
// shows, and a readback that cannot fit one ArrayBuffer is a RangeError that
// says so (it used to end the process in V8's out-of-memory handler).
import test from 'ava';

import * as gx from '../lib';
import { formatTensor } from '../lib/core/format';
import { deviceTest } from './helpers';

deviceTest('printing one element expanded to 2^40 reads only what it shows', (t, device) => {
  using one = gx.ones([1], { device });
  using big = one.expand([2 ** 40]);
  const t0 = Date.now();
  const s = String(big);
  t.true(Date.now() - t0 < 2000, 'printing took too long');
  t.is(s, `tensor([1., 1., 1.,  ..., 1., 1., 1.], shape=[1099511627776], dtype=float32,\n       device='${big.device}')`);
});

deviceTest('a summarized printout equals the one formatted from every element', (t, device) => {
  for (const shape of [[2000], [40, 50], [7, 3, 60], [1, 1201], [8, 2, 9, 10]]) {
    const n = shape.reduce((a, b) => a * b, 1);
    using x = gx.arange(n, { dtype: 'float32', device }).mul(0.5).sub(7).reshape(shape);
    using xs = gx.arange(n, { dtype: 'int32', device }).reshape(shape);
    for (const v of [x, xs]) {
      const full = formatTensor({ values: v.toArraySync(), shape: v.shape, dtype: v.dtype, device: v.device.toString() });
      t.is(String(v), full, `shape [${shape.join(', ')}] ${v.dtype}`);
    }
    // Views: an offset, and strides out of C order.
    using flat = x.reshape([n]);
    using shifted = flat.narrow(0, 1, n - 1);
    using tr = x.transpose(0, x.ndim - 1);
    for (const v of [shifted, tr]) {
      t.is(String(v), formatTensor({ values: v.toArraySync(), shape: v.shape, dtype: v.dtype, device: v.device.toString() }));
    }
  }
});

deviceTest('a readback larger than one ArrayBuffer is a RangeError, and nothing is lost', (t, device) => {
  using one = gx.ones([1], { device });
  using big = one.expand([2 ** 33]);
  const err = t.throws(() => big.toArraySync());
  t.true(err instanceof RangeError);
  t.regex(err?.message ?? '', /Tensor\.toArraySync: .*\[8589934592\].*does not fit in one ArrayBuffer.*narrow/);
  t.deepEqual(Array.from(one.toArraySync()), [1]);
});

test('toArray of a too-large tensor rejects with a RangeError', async (t) => {
  using one = gx.ones([1]);
  using big = one.expand([2 ** 40]);
  const err = await t.throwsAsync(() => big.toArray());
  t.true(err instanceof RangeError);
  t.regex(err?.message ?? '', /Tensor\.toArray: /);
});
