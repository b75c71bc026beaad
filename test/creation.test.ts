// Every creation path, on every device, against plain-JS references.
import * as gx from '../lib';
import { native } from '../lib/core/native';
import { deviceTest, poisonCache, randomValues, sameValues } from './helpers';

deviceTest('tensor() from each typed array keeps its dtype and values', (t, device) => {
  const n = 257;
  const cases: Array<[gx.DType, ArrayLike<number | bigint>]> = [
    ['float32', randomValues('float32', n, 1)],
    ['float64', randomValues('float64', n, 2)],
    ['int8', randomValues('int8', n, 3)],
    ['int16', randomValues('int16', n, 4)],
    ['int32', randomValues('int32', n, 5)],
    ['int64', randomValues('int64', n, 6)],
    ['uint8', randomValues('uint8', n, 7)],
  ];
  for (const [dtype, data] of cases) {
    poisonCache(device, n, dtype);
    using x = gx.tensor(data as Float32Array, { device });
    t.is(String(x.dtype), dtype);
    t.deepEqual(x.shape, [n]);
    t.is(x.device.toString(), device === 'cpu' ? 'cpu' : 'cuda:0');
    sameValues(t, x.toArraySync(), data, dtype);
  }
});

deviceTest('tensor() from a typed array with a shape option', (t, device) => {
  const data = randomValues('float32', 24, 9) as Float32Array;
  using x = gx.tensor(data, { device, shape: [2, 3, 4] });
  t.deepEqual(x.shape, [2, 3, 4]);
  t.deepEqual(x.strides, [12, 4, 1]);
  sameValues(t, x.toArraySync(), data);
});

deviceTest('tensor() from a typed array converts to a requested dtype', (t, device) => {
  using x = gx.tensor(new Float64Array([1.9, -2.9, 3.5, 100]), { dtype: 'int32', device });
  t.is(x.dtype, 'int32');
  sameValues(t, x.toArraySync(), [1, -2, 3, 100]);
  using h = gx.tensor(new Float32Array([0.1, 1 / 3, 65504, -2]), { dtype: 'float16', device });
  sameValues(t, h.toArraySync(), [0.0999755859375, 0.333251953125, 65504, -2]);
});

deviceTest('tensor() from nested arrays infers shape and dtype', (t, device) => {
  using f = gx.tensor([[1.5, 2], [3, -4.25], [5, 6]], { device });
  t.is(f.dtype, 'float32');
  t.deepEqual(f.shape, [3, 2]);
  sameValues(t, f.toArraySync(), [1.5, 2, 3, -4.25, 5, 6]);

  using b = gx.tensor([[true, false, true]], { device });
  t.is(b.dtype, 'bool');
  t.deepEqual(b.shape, [1, 3]);
  sameValues(t, b.toArraySync(), [1, 0, 1]);

  using i = gx.tensor([[[9007199254740993n], [-5n]]], { device });
  t.is(i.dtype, 'int64');
  t.deepEqual(i.shape, [1, 2, 1]);
  sameValues(t, i.toArraySync(), [9007199254740993n, -5n]);

  using d = gx.tensor([1, 2, 3], { dtype: 'float64', device });
  t.is(d.dtype, 'float64');
  sameValues(t, d.toArraySync(), [1, 2, 3]);
});

deviceTest('tensor() from a BigInt64Array keeps every bit of int64', (t, device) => {
  const data = new BigInt64Array([2n ** 63n - 1n, -(2n ** 63n), 9007199254740993n, 0n, -1n]);
  using x = gx.tensor(data, { device });
  t.is(x.dtype, 'int64');
  sameValues(t, x.toArraySync(), data);
  using one = gx.tensor(12345678901234567n, { device });
  t.is(one.itemBigInt(), 12345678901234567n);
  t.throws(() => one.item(), { instanceOf: RangeError, message: /^Tensor\.item: the value 12345678901234567 \(int64\) is beyond ±\(2\^53 - 1\).*itemBigInt\(\)/ });
});

deviceTest('scalars make 0-d tensors and item() returns them', (t, device) => {
  using f = gx.tensor(2.5, { device });
  t.deepEqual(f.shape, []);
  t.is(f.ndim, 0);
  t.is(f.numel, 1);
  t.is(f.item(), 2.5);
  using b = gx.tensor(true, { device });
  t.is(b.item(), true);
  using i = gx.tensor(7, { dtype: 'int16', device });
  t.is(i.item(), 7);
});

deviceTest('empty arrays make zero-size tensors', (t, device) => {
  using e = gx.tensor([], { device });
  t.deepEqual(e.shape, [0]);
  t.is(e.numel, 0);
  t.is(e.toArraySync().length, 0);
  using e2 = gx.tensor([[], []], { device });
  t.deepEqual(e2.shape, [2, 0]);
  using z = gx.zeros([3, 0, 2], { device });
  t.is(z.numel, 0);
  t.deepEqual(z.strides, [2, 2, 1]);
});

deviceTest('zeros, ones and full fill every element of every dtype', (t, device) => {
  const n = 1000;
  for (const dtype of gx.DTYPES) {
    poisonCache(device, n, dtype);
    using z = gx.zeros([10, 100], { dtype, device });
    t.is(z.dtype, dtype);
    const zero = dtype === 'int64' ? 0n : 0;
    sameValues(t, z.toArraySync(), new Array(n).fill(zero), `zeros ${dtype}`);
    poisonCache(device, n, dtype);
    using o = gx.ones([n], { dtype, device });
    sameValues(t, o.toArraySync(), new Array(n).fill(dtype === 'int64' ? 1n : 1), `ones ${dtype}`);
  }
  using f = gx.full([3, 5], -3.25, { device });
  t.is(f.dtype, 'float32');
  sameValues(t, f.toArraySync(), new Array(15).fill(-3.25));
  using fb = gx.full([4], 123456789012n, { device });
  t.is(fb.dtype, 'int64');
  sameValues(t, fb.toArraySync(), new Array(4).fill(123456789012n));
  using ft = gx.full([2], true, { device });
  t.is(ft.dtype, 'bool');
  sameValues(t, ft.toArraySync(), [1, 1]);
  using fh = gx.full([3], 0.1, { dtype: 'bfloat16', device });
  sameValues(t, fh.toArraySync(), new Array(3).fill(0.10009765625));
});

deviceTest('empty() allocates the requested shape and dtype', (t, device) => {
  using e = gx.empty([4, 5, 6], { dtype: 'int16', device });
  t.deepEqual(e.shape, [4, 5, 6]);
  t.deepEqual(e.strides, [30, 6, 1]);
  t.is(e.dtype, 'int16');
  t.true(e.isContiguous());
  using s = gx.empty(7, { device });
  t.deepEqual(s.shape, [7]);
  t.is(s.dtype, 'float32');
});

deviceTest('arange matches torch.arange for integer and fractional steps', (t, device) => {
  poisonCache(device, 10, 'int64');
  using a = gx.arange(10, { device });
  t.is(a.dtype, 'int64');
  sameValues(t, a.toArraySync(), Array.from({ length: 10 }, (_, i) => BigInt(i)));
  using b = gx.arange(2, -7, -3, { device });
  sameValues(t, b.toArraySync(), [2n, -1n, -4n]);
  using c = gx.arange(1, 2, 0.25, { device });
  t.is(c.dtype, 'float32');
  sameValues(t, c.toArraySync(), [1, 1.25, 1.5, 1.75]);
  using d = gx.arange(0, 5, 1, { dtype: 'float16', device });
  sameValues(t, d.toArraySync(), [0, 1, 2, 3, 4]);
  const n = 100_003;
  using big = gx.arange(n, { dtype: 'int32', device });
  const v = big.toArraySync();
  t.is(v.length, n);
  t.true(v.every((x, i) => x === i), 'every element of a large arange');
});

deviceTest('linspace hits both endpoints exactly and is evenly spaced', (t, device) => {
  poisonCache(device, 5, 'float32');
  using a = gx.linspace(0, 1, 5, { device });
  sameValues(t, a.toArraySync(), [0, 0.25, 0.5, 0.75, 1]);
  using b = gx.linspace(-3, 7, 1001, { dtype: 'float64', device });
  const v = b.toArraySync();
  t.is(v[0], -3);
  t.is(v[1000], 7);
  for (let i = 0; i < 1001; i++) {
    if (Math.abs(v[i] - (-3 + i * 0.01)) > 1e-12) t.fail(`linspace element ${i}: ${v[i]}`);
  }
  using one = gx.linspace(4, 9, 1, { device });
  sameValues(t, one.toArraySync(), [4]);
  using none = gx.linspace(4, 9, 0, { device });
  t.is(none.numel, 0);
});

deviceTest('a shape whose bytes pass 2^53 - 1 is refused naming the function, the shape and its bytes (NOTE [ Tensor byte limit ])', (t, device) => {
  const cases: [string, () => gx.Tensor, RegExp][] = [
    // 2^31 * 2^31 float32 elements: 2^64 bytes.
    ['full', () => gx.full([2 ** 31, 2 ** 31], 1, { device }), /^gx\.full: shape \[2147483648, 2147483648\] of float32 is too large: its dimensions span 18446744073709551616 bytes, more than the 9007199254740991 \(2\^53 - 1\) a tensor may have/],
    ['empty', () => gx.empty([2 ** 31, 2 ** 31], { device, dtype: 'float64' }), /^gx\.empty: shape \[2147483648, 2147483648\] of float64 is too large: its dimensions span 36893488147419103232 bytes/],
    ['zeros', () => gx.zeros([2 ** 50, 4], { device, dtype: 'int16' }), /^gx\.zeros: shape \[1125899906842624, 4\] of int16 is too large: its dimensions span 9007199254740992 bytes/],
    // A 0 counts as 1: the strides of [0, 2^31, 2^31] would not be exact.
    ['ones', () => gx.ones([0, 2 ** 31, 2 ** 31], { device }), /^gx\.ones: shape \[0, 2147483648, 2147483648\] of float32 is too large: its dimensions, with each 0 counted as 1, span 18446744073709551616 bytes/],
  ];
  for (const [name, make, re] of cases) {
    const err = t.throws(make, { instanceOf: RangeError }, name);
    t.regex(err?.message ?? '', re, name);
  }
  // Just under the limit, shape-wise: an empty tensor whose span is 2^53 - 1 bytes... of uint8, with a 0.
  const edge = gx.empty([0, 9007199254740991], { device, dtype: 'uint8' });
  t.deepEqual([...edge.shape], [0, 9007199254740991]);
  t.deepEqual([...edge.strides], [9007199254740991, 1]);
  edge.dispose();
});

// A Uint16Array given as float16 or bfloat16 was read as the raw bits (1000 became 5.96e-5) while every other
// dtype took its values: it converts its values too, as NumPy's np.array(u16, dtype=float16) does.
deviceTest('gx.tensor(Uint16Array, { dtype }) converts the values for every dtype, float16 and bfloat16 included', (t, device) => {
  const u = new Uint16Array([1000, 15360, 0, 65535]);
  for (const dtype of ['float32', 'int32', 'float16', 'bfloat16'] as const) {
    using x = gx.tensor(u, { dtype, device });
    // 65535 rounds to 65536 in bfloat16, and past float16's largest finite value (65504, halfway 65520) to Infinity.
    const want = dtype === 'bfloat16' ? [1000, 15360, 0, 65536] : dtype === 'float16' ? [1000, 15360, 0, Infinity] : [1000, 15360, 0, 65535];
    t.deepEqual(Array.from(x.toArraySync() as ArrayLike<number>), want, dtype);
  }
});

// Past 2^53 the kernel's float64 start + i * step is not exact: arange(2^53, 2^53 + 4) gave 2^53 twice. The core
// counts an int64 range of whole numbers in int64 on every device, exact as torch's; values beyond int64 are refused.
deviceTest('arange of int64 values past 2^53 is exact, ascending and descending', (t, device) => {
  const big = 2 ** 53;
  using up = gx.arange(big, big + 4, { dtype: 'int64', device });
  t.deepEqual(Array.from(up.toArraySync() as BigInt64Array), [9007199254740992n, 9007199254740993n, 9007199254740994n, 9007199254740995n]);
  using down = gx.arange(-big, -big - 4, -1, { device });  // both ends exact doubles
  t.deepEqual(Array.from(down.toArraySync() as BigInt64Array), [-9007199254740992n, -9007199254740993n, -9007199254740994n, -9007199254740995n]);
  t.is(String(up.device), String(gx.zeros([1], { device }).device));
  using steps = gx.arange(2 ** 62 + 1024, 2 ** 62 + 2048, 512, { device });  // 2^62 + 1536: no double holds it
  t.deepEqual(Array.from(steps.toArraySync() as BigInt64Array), [2n ** 62n + 1024n, 2n ** 62n + 1536n]);
  t.throws(() => gx.arange(2 ** 63 - 1024, 2 ** 63 + 4096, 2048, { device }), { instanceOf: RangeError, message: /^gx\.arange: the last value \(9223372036854778880\) is beyond int64/ });
  using out = gx.zeros([2], { dtype: 'int64', device });
  t.throws(() => native.arange(out.handle(), 2 ** 63, 1), { message: /arange: start 9\.22337e\+18 \+ 1 steps of 1 goes beyond int64/ }, 'the core checks too');
});
