// JS integers into integer dtypes as torch's checked Scalar conversion takes them
// (NOTE [ Integers into integer dtypes ] in lib/core/dtype.ts): a negative integer
// into uint8 wraps when its magnitude is at most 255, a fraction must lie in the
// range before truncation. torch 2.13's values (CPU) written in. On every device.
import * as gx from '../lib';
import { deviceTest } from './helpers';
import { numbers } from './torch-values';

const U8 = '[0, 255] (or -255 to -1, which wrap)';

deviceTest('full, fill_ and tensor take a negative integer into uint8 wrapped, and refuse what torch refuses', (t, device) => {
  // torch.full([2], -1, dtype=torch.uint8) is [255, 255]; -255 gives [1, 1]; -256 and 256 are refused.
  using a = gx.full([2], -1, { dtype: 'uint8', device });
  t.deepEqual(numbers(a), [255, 255]);
  using b = gx.full([2], -255n, { dtype: 'uint8', device });
  t.deepEqual(numbers(b), [1, 1]);
  t.throws(() => gx.full([2], -256, { dtype: 'uint8', device }), { instanceOf: RangeError, message: `gx.full: value -256 is out of range for uint8 ${U8}` });
  t.throws(() => gx.full([2], 256, { dtype: 'uint8', device }), { instanceOf: RangeError, message: `gx.full: value 256 is out of range for uint8 ${U8}` });
  // A fraction is checked before truncation: torch refuses -0.5 for uint8 and 127.5 for int8, takes -1.5 for int8 as -1.
  t.throws(() => gx.full([1], -0.5, { dtype: 'uint8', device }), { instanceOf: RangeError, message: /^gx\.full: value -0\.5 is out of range for uint8/ });
  t.throws(() => gx.full([1], 127.5, { dtype: 'int8', device }), { instanceOf: RangeError, message: 'gx.full: value 127.5 is out of range for int8 [-128, 127]' });
  using c = gx.full([1], -1.5, { dtype: 'int8', device });
  t.deepEqual(numbers(c), [-1]);
  // fill_ as torch's Tensor.fill_: -255 is 1; -256 refused, naming the method.
  using z = gx.zeros([2], { dtype: 'uint8', device });
  z.fill_(-255);
  t.deepEqual(numbers(z), [1, 1]);
  t.throws(() => z.fill_(-256), { instanceOf: RangeError, message: /^Tensor\.fill_: value -256 is out of range for uint8/ });
  t.deepEqual(numbers(z), [1, 1], 'a refused fill leaves the tensor as it was');
  // torch.tensor([-1, -255, -129, 0, 255], dtype=torch.uint8) is [255, 1, 127, 0, 255]; [-1.5, 127.0, -128] int8 [-1, 127, -128].
  using d = gx.tensor([-1, -255, -129, 0, 255], { dtype: 'uint8', device });
  t.deepEqual(numbers(d), [255, 1, 127, 0, 255]);
  using e = gx.tensor([-1.5, 127.0, -128], { dtype: 'int8', device });
  t.deepEqual(numbers(e), [-1, 127, -128]);
  t.throws(() => gx.tensor([1, -256], { dtype: 'uint8', device }), { instanceOf: RangeError, message: `gx.tensor: value -256 is out of range for uint8 ${U8}` });
  t.throws(() => gx.tensor([127.5], { dtype: 'int8', device }), { instanceOf: RangeError, message: /^gx\.tensor: value 127\.5 is out of range for int8/ });
});

deviceTest('a negative number operand of a uint8 op is its wrapped value, as torch\'s', (t, device) => {
  using x = gx.tensor([1, 255], { dtype: 'uint8', device });
  // torch, x = tensor([1, 255], dtype=uint8): each with -1 (or -255, -2) as the number.
  const cases: [string, () => gx.Tensor, number[]][] = [
    ['x + -1', () => gx.add(x, -1), [0, 254]],
    ['x - -1', () => gx.sub(x, -1), [2, 0]],
    ['-1 - x', () => gx.sub(-1, x), [254, 0]],
    ['x * -255', () => gx.mul(x, -255), [1, 255]],
    ['x == -1', () => gx.eq(x, -1), [0, 1]],
    ['x < -1', () => gx.lt(x, -1), [1, 0]],
    ['x >= -255', () => gx.ge(x, -255), [1, 1]],
    ['x // -1', () => gx.floorDivide(x, -1), [0, 1]],
    ['x % -1', () => gx.remainder(x, -1), [1, 0]],
    ['maximum', () => gx.maximum(x, -1), [255, 255]],
    ['where(c, x, -1)', () => gx.where(gx.tensor([true, false], { device }), x, -1), [1, 255]],
    ['where(c, -1, x)', () => gx.where(gx.tensor([true, false], { device }), -1, x), [255, 255]],
    ['maskedFill', () => gx.maskedFill(x, gx.tensor([true, false], { device }), -1), [255, 255]],
  ];
  for (const [what, f, want] of cases) {
    const r = gx.tidy(f);
    try {
      t.deepEqual(numbers(r), want, `${what} on ${device}`);
    } finally {
      r.dispose();
    }
  }
  // Past the rule gx refuses: torch's where, clamp and pow refuse these too, while its add wraps 256 to 0
  // (x + 256 is x); gx refuses rather than add a number it silently changed.
  t.throws(() => gx.add(x, 256), {
    instanceOf: RangeError,
    message: `gx.add: the number 256 is out of range for uint8 ${U8}, the dtype this op computes in; convert the tensor with .astype() first`,
  });
  t.throws(() => gx.eq(x, -256), { instanceOf: RangeError, message: /^gx\.eq: the number -256 is out of range for uint8/ });
  t.throws(() => gx.where(gx.tensor([true, false], { device }), x, 256), { instanceOf: RangeError, message: /^gx\.where: the number 256 is out of range for uint8/ });
  t.throws(() => gx.pow(x, 256), { instanceOf: RangeError, message: /^gx\.pow: the number 256 is out of range for uint8/ });
  t.throws(() => gx.add(gx.tensor([1], { dtype: 'int8', device }), 128), { instanceOf: RangeError, message: /^gx\.add: the number 128 is out of range for int8 \[-128, 127\]/ });
});

deviceTest('clamp takes integer bounds as torch converts them, and refuses what torch refuses', (t, device) => {
  using y = gx.tensor([1, 200], { dtype: 'uint8', device });
  // torch.clamp(y, min=-1) is [255, 255]; min=-56 (200) [200, 200]; max=-255 (1) [1, 1]; (-1, 100) [100, 100].
  const cases: [number | undefined, number | undefined, number[]][] = [[-1, undefined, [255, 255]], [-56, undefined, [200, 200]],
    [undefined, -255, [1, 1]], [-1, 100, [100, 100]]];
  for (const [lo, hi, want] of cases) {
    using r = gx.clamp(y, lo, hi);
    t.deepEqual(numbers(r), want, `clamp(y, ${lo}, ${hi}) on ${device}`);
  }
  // torch: value cannot be converted to type uint8_t / int8_t / int without overflow.
  t.throws(() => gx.clamp(y, 256), { instanceOf: RangeError, message: `gx.clamp: min 256 is out of range for uint8 ${U8}` });
  t.throws(() => y.clamp(undefined, -256), { instanceOf: RangeError, message: `Tensor.clamp: max -256 is out of range for uint8 ${U8}` });
  using i8 = gx.tensor([1, -5], { dtype: 'int8', device });
  t.throws(() => i8.clamp_(200), { instanceOf: RangeError, message: 'Tensor.clamp_: min 200 is out of range for int8 [-128, 127]' });
  t.deepEqual(numbers(i8), [1, -5], 'a refused clamp_ leaves the tensor as it was');
  using i32 = gx.tensor([1], { dtype: 'int32', device });
  t.throws(() => gx.clamp(i32, 2 ** 40), { instanceOf: RangeError, message: /^gx\.clamp: min 1099511627776 is out of range for int32/ });
});
