// Views share storage; reshape copies only when strides force it; contiguous
// and clone; moves between devices.
import * as gx from '../lib';
import { native } from '../lib/core/native';
import { deviceTest, poisonCache, randomValues, sameValues } from './helpers';

/** The elements of a (rows x cols) row-major matrix, transposed. */
function transposed(values: ArrayLike<number>, rows: number, cols: number): number[] {
  const out: number[] = [];
  for (let c = 0; c < cols; c++) for (let r = 0; r < rows; r++) out.push(values[r * cols + c]);
  return out;
}

deviceTest('view() shares storage with its base, in both directions', (t, device) => {
  using a = gx.arange(12, { dtype: 'float32', device });
  using v = a.view(3, 4);
  t.deepEqual(v.shape, [3, 4]);
  t.deepEqual(v.strides, [4, 1]);
  t.is(native.describe(v.handle()).storagePtr, native.describe(a.handle()).storagePtr);
  // Writing through the view is visible in the base.
  using row = v.asStrided([4], [1], 4);
  using sevens = gx.full([4], 7, { device });
  row.copy_(sevens);
  sameValues(t, a.toArraySync(), [0, 1, 2, 3, 7, 7, 7, 7, 8, 9, 10, 11]);
  // And the view survives the base being disposed: the storage is shared.
  a.dispose();
  sameValues(t, v.toArraySync(), [0, 1, 2, 3, 7, 7, 7, 7, 8, 9, 10, 11]);
});

deviceTest('view() infers -1 and accepts an array shape', (t, device) => {
  using a = gx.zeros([2, 3, 4], { device });
  using v = a.view(-1, 4);
  t.deepEqual(v.shape, [6, 4]);
  using w = a.view([4, -1]);
  t.deepEqual(w.shape, [4, 6]);
  using s = gx.tensor(5, { device });
  using s1 = s.view(1, 1);
  t.deepEqual(s1.shape, [1, 1]);
});

deviceTest('view() of a transposed tensor fails with a clear error; reshape() copies', (t, device) => {
  const data = randomValues('float32', 6, 3) as Float32Array;
  using a = gx.tensor(data, { device, shape: [2, 3] });
  using tr = a.asStrided([3, 2], [1, 3], 0);
  t.false(tr.isContiguous());
  const err = t.throws(() => tr.view(6));
  t.regex(err?.message ?? '', /Tensor\.view: .*shape \[3, 2\].*strides \[1, 3\].*cannot be viewed as \[6\].*reshape/);
  using r = tr.reshape(6);
  t.true(r.isContiguous());
  t.not(native.describe(r.handle()).storagePtr, native.describe(a.handle()).storagePtr);
  sameValues(t, r.toArraySync(), transposed(data, 2, 3));
  // A view-compatible reshape does not copy.
  using r2 = a.reshape(3, 2);
  t.is(native.describe(r2.handle()).storagePtr, native.describe(a.handle()).storagePtr);
});

deviceTest('contiguous() of a strided view lays it out in C order', (t, device) => {
  const rows = 37, cols = 53;
  const data = randomValues('float64', rows * cols, 4) as Float64Array;
  using a = gx.tensor(data, { device, shape: [rows, cols] });
  using tr = a.asStrided([cols, rows], [1, cols], 0);
  poisonCache(device, rows * cols, 'float64');
  using c = tr.contiguous();
  t.true(c.isContiguous());
  t.deepEqual(c.strides, [rows, 1]);
  sameValues(t, c.toArraySync(), transposed(data, rows, cols));
  // Reading a non-contiguous tensor directly gives the same C-order values.
  sameValues(t, tr.toArraySync(), transposed(data, rows, cols));
  // contiguous() of a contiguous tensor shares its storage.
  using same = a.contiguous();
  t.is(native.describe(same.handle()).storagePtr, native.describe(a.handle()).storagePtr);
});

deviceTest('every-other-element views (storage offset and step) read correctly', (t, device) => {
  const data = randomValues('int32', 100, 5) as Int32Array;
  using a = gx.tensor(data, { device });
  using odd = a.asStrided([50], [2], 1);
  sameValues(t, odd.toArraySync(), Array.from({ length: 50 }, (_, i) => data[2 * i + 1]));
  using tail = a.asStrided([10], [1], 90);
  sameValues(t, tail.toArraySync(), data.slice(90));
});

deviceTest('clone() is an independent copy', (t, device) => {
  const data = randomValues('int16', 64, 6) as Int16Array;
  using a = gx.tensor(data, { device, shape: [8, 8] });
  using b = a.clone();
  t.deepEqual(b.shape, [8, 8]);
  t.not(native.describe(b.handle()).storagePtr, native.describe(a.handle()).storagePtr);
  b.fill_(3);
  sameValues(t, a.toArraySync(), data);
  sameValues(t, b.toArraySync(), new Array(64).fill(3));
});

deviceTest('a view reaching past its storage is refused by the core', (t, device) => {
  using a = gx.zeros([10], { device });
  const err = t.throws(() => a.asStrided([5], [3], 0));
  t.true(err instanceof RangeError);
  t.regex(err?.message ?? '', /reaches element 12 but the storage holds 10/);
  t.throws(() => a.asStrided([2], [-1], 1), { instanceOf: RangeError });
});
