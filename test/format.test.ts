import test from 'ava';
import { formatExponential, formatFixed, formatTensor, type FormatOptions } from '../lib/core/format';

// Expected bodies below were taken from torch's repr with the same print options; our
// output adds `, shape=[...], dtype=..., device='...'` after them.

function fmt(
  values: ArrayLike<number | bigint>,
  shape: readonly number[],
  dtype = 'float32',
  opts?: FormatOptions,
  device = 'cpu',
): string {
  return formatTensor({ values, shape, dtype, device }, opts);
}

const range = (n: number, f: (i: number) => number = (i) => i): number[] => Array.from({ length: n }, (_, i) => f(i));
const bigRange = (n: number): bigint[] => Array.from({ length: n }, (_, i) => BigInt(i));

/** The body of our output, i.e. what torch prints before its own suffixes. */
function body(s: string): string {
  return s.slice(0, s.search(/,\s*shape=/)) + ')';
}

test('the examples from the spec', (t) => {
  t.is(
    formatTensor({ values: [1, 2.5, 3, 4], shape: [2, 2], dtype: 'float32', device: 'cuda:0' }),
    "tensor([[1.0000, 2.5000],\n        [3.0000, 4.0000]], shape=[2, 2], dtype=float32, device='cuda:0')",
  );
  t.is(fmt([1n, 2n, 3n], [3], 'int64'), "tensor([1, 2, 3], shape=[3], dtype=int64, device='cpu')");
  t.is(fmt([3.5], [], 'float64'), "tensor(3.5000, shape=[], dtype=float64, device='cpu')");
  t.is(fmt([], [0, 3]), "tensor([], shape=[0, 3], dtype=float32, device='cpu')");
  // Like torch, bools are right-aligned to the width of 'False'.
  t.is(fmt([1, 0], [2], 'bool'), "tensor([ True, False], shape=[2], dtype=bool, device='cpu')");
});

test('bool matrices and scalars', (t) => {
  t.is(
    fmt([1, 0, 0, 1], [2, 2], 'bool'),
    "tensor([[ True, False],\n        [False,  True]], shape=[2, 2], dtype=bool, device='cpu')",
  );
  t.is(fmt([1, 1], [2], 'bool'), "tensor([True, True], shape=[2], dtype=bool, device='cpu')");
  t.is(fmt([0n], [], 'bool'), "tensor(False, shape=[], dtype=bool, device='cpu')");
});

test('float integer mode, nan and inf', (t) => {
  t.is(body(fmt([1, 2, 3], [3])), 'tensor([1., 2., 3.])');
  t.is(body(fmt([1, NaN, Infinity, -Infinity], [4])), 'tensor([1., nan, inf, -inf])');
  t.is(body(fmt([0.5, NaN], [2])), 'tensor([0.5000,    nan])');
  t.is(body(fmt([0, 0], [2])), 'tensor([0., 0.])');
  t.is(body(fmt([-0, 1], [2])), 'tensor([-0., 1.])');
  t.is(body(fmt([NaN], [])), 'tensor(nan)');
  t.is(body(fmt([-1, -100, 5], [3], 'int64')), 'tensor([  -1, -100,    5])');
});

test('scientific notation', (t) => {
  t.is(body(fmt([1e10, 1], [2])), 'tensor([1.0000e+10, 1.0000e+00])');
  t.is(body(fmt([1.5e-5, -2.25], [2])), 'tensor([ 1.5000e-05, -2.2500e+00])');
  t.is(body(fmt([123456789, 1], [2])), 'tensor([1.2346e+08, 1.0000e+00])');
  t.is(body(fmt([1, 2000], [2])), 'tensor([1.0000e+00, 2.0000e+03])');
  t.is(body(fmt([1, 1000], [2])), 'tensor([   1., 1000.])');
  t.is(body(fmt([0, 1e-5], [2])), 'tensor([0.0000e+00, 1.0000e-05])');
  // float32(1e-4) is just below 1e-4, so torch switches to scientific notation...
  t.is(body(fmt([Math.fround(1e-4), Math.fround(2e-4)], [2])), 'tensor([1.0000e-04, 2.0000e-04])');
  // ...while the float64 value 1e-4 itself does not.
  t.is(body(fmt([1e-4, 2e-4], [2], 'float64')), 'tensor([0.0001, 0.0002])');
});

test('precision and round-half-to-even like Python', (t) => {
  t.is(body(fmt([0.03125, 0.09375, 0.15625, 1], [4])), 'tensor([0.0312, 0.0938, 0.1562, 1.0000])');
  t.is(body(fmt([0.03125, 0.09375, 0.15625, 1], [4], 'float32', { precision: 3 })), 'tensor([0.031, 0.094, 0.156, 1.000])');
  t.is(body(fmt([1 / 3, 2 / 3, 1], [3], 'float32', { precision: 2 })), 'tensor([0.33, 0.67, 1.00])');
  t.is(formatFixed(2.5, 0), '2');
  t.is(formatFixed(3.5, 0), '4');
  t.is(formatFixed(-0.5, 0), '-0');
  t.is(formatFixed(0.125, 2), '0.12');
  t.is(formatFixed(0.375, 2), '0.38');
  t.is(formatFixed(-0, 4), '-0.0000');
  t.is(formatFixed(1e22, 1), '10000000000000000000000.0');
  t.is(formatExponential(12345, 4), '1.2345e+04');
  t.is(formatExponential(1.25, 1), '1.2e+00');
  t.is(formatExponential(1.75, 1), '1.8e+00');
  t.is(formatExponential(2.5e-7, 0), '2e-07');
  t.is(formatExponential(1e100, 2), '1.00e+100');
  t.is(formatExponential(-0, 2), '-0.00e+00');
  t.is(formatExponential(-Infinity, 2), '-inf');
});

test('3-D tensors have a blank line between blocks, 4-D two', (t) => {
  t.is(
    fmt(bigRange(24), [2, 3, 4], 'int64'),
    'tensor([[[ 0,  1,  2,  3],\n' +
      '         [ 4,  5,  6,  7],\n' +
      '         [ 8,  9, 10, 11]],\n' +
      '\n' +
      '        [[12, 13, 14, 15],\n' +
      '         [16, 17, 18, 19],\n' +
      "         [20, 21, 22, 23]]], shape=[2, 3, 4], dtype=int64, device='cpu')",
  );
  t.is(body(fmt([0, 0, 0, 0], [2, 1, 1, 2])), 'tensor([[[[0., 0.]]],\n\n\n        [[[0., 0.]]]])');
});

test('long 1-D rows wrap at lineWidth', (t) => {
  t.is(
    body(fmt(bigRange(40), [40], 'int64')),
    'tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n' +
      '        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n' +
      '        36, 37, 38, 39])',
  );
  t.is(
    body(fmt(range(12), [3, 4], 'float32', { lineWidth: 20 })),
    'tensor([[ 0.,  1.,\n          2.,  3.],\n        [ 4.,  5.,\n          6.,  7.],\n        [ 8.,  9.,\n         10., 11.]])',
  );
});

test('summarization with ... past the threshold', (t) => {
  t.is(
    fmt(bigRange(10000), [100, 100], 'int64'),
    'tensor([[   0,    1,    2,  ...,   97,   98,   99],\n' +
      '        [ 100,  101,  102,  ...,  197,  198,  199],\n' +
      '        [ 200,  201,  202,  ...,  297,  298,  299],\n' +
      '        ...,\n' +
      '        [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n' +
      '        [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n' +
      '        [9900, 9901, 9902,  ..., 9997, 9998, 9999]], shape=[100, 100],\n' +
      "       dtype=int64, device='cpu')",
  );
  // The format is chosen from the shown values only; 1-D summaries wrap too.
  t.is(
    body(fmt(range(2000, (i) => Math.fround(i / 7)), [2000])),
    'tensor([0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 2.8529e+02, 2.8543e+02,\n        2.8557e+02])',
  );
  t.is(
    body(fmt(range(40), [5, 8], 'float32', { threshold: 10, edgeItems: 1 })),
    'tensor([[ 0.,  ...,  7.],\n        ...,\n        [32.,  ..., 39.]])',
  );
  // At the threshold nothing is summarized.
  t.false(fmt(range(1000), [1000]).includes('...'));
  t.true(fmt(range(1001), [1001]).includes('...'));
});

test('3-D summaries put "..." on its own paragraph', (t) => {
  const s = fmt(range(100000, (i) => Math.fround(i / 3)), [10, 100, 100]);
  const lines = s.split('\n');
  t.is(lines[0], 'tensor([[[0.0000e+00, 3.3333e-01, 6.6667e-01,  ..., 3.2333e+01,');
  t.is(lines[1], '          3.2667e+01, 3.3000e+01],');
  t.is(lines[6], '         ...,');
  t.true(s.includes(']],\n\n        ...,\n\n        [['));
  t.is(lines[lines.length - 2], '          3.3333e+04, 3.3333e+04]]], shape=[10, 100, 100], dtype=float32,');
  t.is(lines[lines.length - 1], "       device='cpu')");
  // 3 blocks shown at each end, 3 rows shown at each end of each block, 2 lines per row,
  // blank lines around the blocks and the '...' paragraph, and the wrapped device suffix.
  t.is(lines.length, 6 * (6 * 2 + 1) + 6 + 1 + 1);
});

test('suffixes wrap onto new lines past lineWidth', (t) => {
  const s = fmt(range(17, (i) => i + 0.5), [17], 'float64', {}, 'cuda:1');
  t.is(
    s,
    'tensor([ 0.5000,  1.5000,  2.5000,  3.5000,  4.5000,  5.5000,  6.5000,  7.5000,\n' +
      '         8.5000,  9.5000, 10.5000, 11.5000, 12.5000, 13.5000, 14.5000, 15.5000,\n' +
      "        16.5000], shape=[17], dtype=float64, device='cuda:1')",
  );
  const w = fmt(range(9, (i) => i + 0.5), [9], 'float64');
  t.is(
    w,
    'tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000],\n' +
      "       shape=[9], dtype=float64, device='cpu')",
  );
});

test('other dtypes: float16/bfloat16 format as floats, ints as integers', (t) => {
  t.is(fmt([0.5, 1], [2], 'float16'), "tensor([0.5000, 1.0000], shape=[2], dtype=float16, device='cpu')");
  t.is(fmt([2, 4], [2], 'bfloat16'), "tensor([2., 4.], shape=[2], dtype=bfloat16, device='cpu')");
  t.is(fmt([-128, 127], [2], 'int8'), "tensor([-128,  127], shape=[2], dtype=int8, device='cpu')");
  t.is(
    fmt([9007199254740993n], [1], 'int64'),
    "tensor([9007199254740993], shape=[1], dtype=int64, device='cpu')",
  );
  t.is(fmt([7], [], 'uint8'), "tensor(7, shape=[], dtype=uint8, device='cpu')");
});

test('typed-array values and bad inputs', (t) => {
  t.is(body(fmt(new Float32Array([1, 2, 3, 4]), [2, 2])), 'tensor([[1., 2.],\n        [3., 4.]])');
  t.is(body(fmt(new BigInt64Array([1n, -2n]), [2], 'int64')), 'tensor([ 1, -2])');
  t.throws(() => fmt([1, 2], [3]), { instanceOf: RangeError, message: /needs 3 values but 2/ });
  t.throws(() => fmt([1], [-1]), { instanceOf: RangeError });
  t.throws(() => fmt([1], [1], 'float32', { precision: -1 }), { instanceOf: RangeError });
  t.throws(() => fmt([1], [1], 'float32', { edgeItems: 1.5 }), { instanceOf: RangeError });
});
