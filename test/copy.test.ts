// Moving data between devices and layouts, and readback.
import * as gx from '../lib';
import { deviceTest, poisonCache, randomValues, sameValues } from './helpers';

deviceTest('to(device) round trips every dtype through the device', (t, device) => {
  for (const dtype of gx.DTYPES) {
    const data = randomValues(dtype, 1001, 11);
    using host = gx.tensor(data as Float32Array, { dtype, shape: [7, 143] } as { dtype: 'float32'; shape: number[] });
    using there = host.to(device);
    t.is(there.device.type, device);
    t.is(String(there.dtype), dtype);
    using back = there.cpu();
    t.is(back.device.type, 'cpu');
    sameValues(t, back.toArraySync(), data, dtype);
  }
});

deviceTest('to() the same device shares storage but is its own Tensor', (t, device) => {
  using a = gx.ones([3], { device });
  const b = a.to(device);
  b.dispose();
  sameValues(t, a.toArraySync(), [1, 1, 1]);
});

deviceTest('copy_ between devices with strided source and destination', (t, device) => {
  const rows = 19, cols = 31;
  const data = randomValues('float32', rows * cols, 12) as Float32Array;
  using src = gx.tensor(data, { shape: [rows, cols] });
  using srcT = src.asStrided([cols, rows], [1, cols], 0);
  // Destination: the transposed view of a poisoned buffer on `device`.
  using dstBase = gx.full([rows, cols], Number.NaN, { device });
  using dst = dstBase.asStrided([cols, rows], [1, cols], 0);
  dst.copy_(srcT);
  sameValues(t, dstBase.toArraySync(), data);
  // And back to the host into a strided destination.
  using hostBase = gx.full([rows, cols], Number.NaN);
  using hostT = hostBase.asStrided([cols, rows], [1, cols], 0);
  hostT.copy_(dst);
  sameValues(t, hostBase.toArraySync(), data);
});

deviceTest('pinned host tensors copy to and from the device', (t, device) => {
  if (device === 'cpu' && !gx.cuda.isAvailable()) {
    // Pinned memory needs the CUDA runtime; without it the request fails clearly.
    const err = t.throws(() => gx.empty([4], { pinned: true }));
    t.regex(err?.message ?? '', /pinned memory|without CUDA|cuda/i);
    return;
  }
  const data = randomValues('float32', 4096, 13) as Float32Array;
  using pinned = gx.empty([4096], { pinned: true });
  pinned.copy_(gx.tensor(data));
  using there = pinned.to(device);
  poisonCache('cpu', 4096, 'float32');
  using back = gx.empty([4096], { pinned: true });
  back.copy_(there);
  sameValues(t, back.toArraySync(), data);
});

deviceTest('await toArray() gives the same values as toArraySync()', async (t, device) => {
  const data = randomValues('float64', 10_000, 14) as Float64Array;
  using a = gx.tensor(data, { device, shape: [100, 100] });
  using tr = a.asStrided([100, 100], [1, 100], 0);
  const [x, y] = await Promise.all([a.toArray(), tr.toArray()]);
  sameValues(t, x, data);
  sameValues(t, y, tr.toArraySync());
  using e = gx.empty([0], { device });
  t.is((await e.toArray()).length, 0);
});

deviceTest('await toArray() of a CUDA tensor lets the event loop run', async (t, device) => {
  if (device === 'cpu') {
    // On the cpu the data is already in host memory: the promise is resolved at once.
    using a = gx.ones([4]);
    sameValues(t, await a.toArray(), [1, 1, 1, 1]);
    return;
  }
  using big = gx.ones([64 * 1024 * 1024], { device });
  let immediateRan = false;
  setImmediate(() => { immediateRan = true; });
  const values = await big.toArray();
  // A blocking readback would resolve before the loop reached setImmediate.
  t.true(immediateRan, 'setImmediate ran while the copy was in flight');
  t.is(values.length, 64 * 1024 * 1024);
  t.is(values[values.length - 1], 1);
});

deviceTest('copies of large tensors are complete (poisoned destination)', (t, device) => {
  const n = (1 << 20) + 3;
  const data = randomValues('uint8', n, 15) as Uint8Array;
  using src = gx.tensor(data, { device });
  poisonCache(device, n, 'uint8');
  using c = src.clone();
  sameValues(t, c.toArraySync(), data);
});
