// toArray / toArraySync into a caller's array ({ out }), and large CUDA
// readbacks, which go through pinned staging in chunks (NOTE [ Staged
// readback ] in csrc/cuda/staged_copy.cpp): every dtype, views, sizes that
// end mid-chunk, checked element by element against values known in advance.
import test from 'ava';

import * as gx from '../lib';
import { DTYPES } from '../lib/generated/dtypes';
import { deviceTest, randomValues, sameValues, type TestDevice } from './helpers';

function poisoned(dtype: gx.DType, n: number): gx.ValueArrayMap[gx.DType] {
  const t = gx.empty([0], { dtype });
  const out = t.toArraySync();
  t.dispose();
  const Ctor = out.constructor as new (n: number) => gx.ValueArrayMap[gx.DType];
  const a = new Ctor(n);
  if (a instanceof BigInt64Array || a instanceof BigUint64Array) a.fill(-5n as never);
  else (a as Float32Array).fill(dtype === 'bool' ? 7 : Number.NaN);
  return a;
}

deviceTest('toArray({ out }) fills and returns out, for every dtype, sync and async', async (t, device: TestDevice) => {
  for (const dtype of DTYPES) {
    const values = randomValues(dtype, 37, 3);
    const x = gx.tensor(values, { dtype, device });
    const out = poisoned(dtype, 37);
    const r = await x.toArray({ out });
    t.is(r, out, `${dtype}: the same array comes back`);
    sameValues(t, out as ArrayLike<number | bigint>, values as ArrayLike<number | bigint>, dtype);
    const out2 = poisoned(dtype, 37);
    t.is(x.toArraySync({ out: out2 }), out2);
    sameValues(t, out2 as ArrayLike<number | bigint>, values as ArrayLike<number | bigint>, `${dtype} sync`);
    x.dispose();
  }
});

deviceTest('toArray({ out }) into part of a larger buffer, from a strided view', async (t, device: TestDevice) => {
  const m = gx.arange(12, { dtype: 'float32', device }).view([3, 4]);
  const tr = m.transpose(0, 1);
  const backing = new Float32Array(20).fill(-1);
  const out = backing.subarray(5, 17);
  await tr.toArray({ out });
  t.deepEqual(Array.from(backing), [-1, -1, -1, -1, -1, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1]);
  m.dispose();
});

deviceTest('toArray({ out }) refuses an array of the wrong type or length, and unknown options', async (t, device: TestDevice) => {
  const x = gx.ones([2, 3], { device });
  await t.throwsAsync(x.toArray({ out: new Float64Array(6) as unknown as Float32Array }),
    { instanceOf: TypeError, message: 'Tensor.toArray: out must be a Float32Array for a float32 tensor, got Float64Array' });
  t.throws(() => x.toArraySync({ out: new Float32Array(5) }),
    { instanceOf: RangeError, message: 'Tensor.toArraySync: out has 5 elements, the tensor of shape [2, 3] 6' });
  t.throws(() => x.toArraySync({ outt: new Float32Array(6) } as never), { instanceOf: TypeError, message: /Tensor.toArraySync: unknown option 'outt'; did you mean 'out'/ });
  const h = gx.ones([4], { dtype: 'float16', device });
  const hout = new Float32Array(4);
  t.is(await h.toArray({ out: hout }), hout, 'float16 decodes into a Float32Array out');
  t.deepEqual(Array.from(hout), [1, 1, 1, 1]);
  x.dispose();
  h.dispose();
});

// Sizes (int32 elements) around the staging threshold (8 MiB) and the chunks
// (a quarter, 2 to 16 MiB): below, just above with a partial last chunk,
// 16 MiB chunks with a remainder.
const LARGE = [(2 << 20) - 1, (2 << 20) + 3, (9 << 20) + 12345, (17 << 20) + 7];

deviceTest('large readbacks are exact to the last element, fresh and into out', async (t, device: TestDevice) => {
  for (const n of LARGE) {
    const x = gx.arange(n, { dtype: 'int32', device });
    const check = (a: Int32Array, what: string): void => {
      let bad = -1;
      for (let i = 0; i < n; i++) if (a[i] !== i) { bad = i; break; }
      t.is(bad, -1, `${what}, ${n} elements: first wrong element`);
    };
    check(await x.toArray(), 'toArray');
    check(x.toArraySync(), 'toArraySync');
    const out = new Int32Array(n).fill(-9);
    check(await x.toArray({ out }), 'toArray({ out })');
    out.fill(-9);
    check(x.toArraySync({ out }), 'toArraySync({ out })');
    x.dispose();
  }
});

test('concurrent large readbacks do not mix their chunks', async (t) => {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  const n = (3 << 20) + 11;
  const xs = [0, 1, 2, 3].map((k) => gx.full([n], k + 1, { dtype: 'float32', device }));
  const got = await Promise.all(xs.map((x) => x.toArray()));
  got.forEach((a, k) => t.true(a.every((v) => v === k + 1), `readback ${k}`));
  for (const x of xs) x.dispose();
});
