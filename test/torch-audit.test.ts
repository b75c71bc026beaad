// Edge cases where gx disagreed with torch 2.13 (CPU), with torch's results
// written in: found by running the same calls through both (a differential
// audit of the reductions, scans, sorting and creation ops). Each case says
// the torch call it reproduces. On every device.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest } from './helpers';
import { sameAsTorch } from './torch-values';


deviceTest('an empty axis list reduces every axis, as torch.sum(x, dim=[]); any and all over () reduce none', (t, device) => {
  using x = gx.tensor([[1, 2], [3, 0]], { device });
  // torch.sum(x, []) etc., x = torch.tensor([[1., 2.], [3., 0.]])
  sameAsTorch(t, gx.sum(x, []), 'float32', [], [6], 'sum(x, [])');
  sameAsTorch(t, gx.sum(x, [], { keepdims: true }), 'float32', [1, 1], [6], 'sum(x, [], keepdim=True)');
  sameAsTorch(t, gx.sum(x, { axis: [] }), 'float32', [], [6], 'sum(x, { axis: [] })');
  sameAsTorch(t, gx.prod(gx.add(x, 1), []), 'float32', [], [24], 'prod(x + 1, [])');
  sameAsTorch(t, gx.mean(x, []), 'float32', [], [1.5], 'mean(x, [])');
  sameAsTorch(t, gx.amax(x, []), 'float32', [], [3], 'amax(x, [])');
  sameAsTorch(t, gx.amin(x, []), 'float32', [], [0], 'amin(x, ())');
  sameAsTorch(t, gx.max(x, []) as gx.Tensor, 'float32', [], [3], 'max(x, []) as amax');
  sameAsTorch(t, gx.var(x, []), 'float32', [], [1.6666666269302368], 'var(x, [])');
  sameAsTorch(t, gx.std(x, []), 'float32', [], [1.2909944057464600], 'std(x, [])');
  sameAsTorch(t, gx.nansum(x, []), 'float32', [], [6], 'nansum(x, [])');
  sameAsTorch(t, gx.nanmean(x, []), 'float32', [], [1.5], 'nanmean(x, [])');
  sameAsTorch(t, gx.countNonzero(x, []), 'int64', [], [3], 'count_nonzero(x, [])');
  sameAsTorch(t, gx.logsumexp(x, []), 'float32', [], [3.4401895999908447], 'logsumexp(x, (0, 1))');
  // torch.all(x, dim=()) / torch.any(x, dim=()): each element's truth, no axis reduced.
  sameAsTorch(t, gx.all(x, []), 'bool', [2, 2], [1, 1, 1, 0], 'all(x, ())');
  sameAsTorch(t, gx.any(x, { axis: [] }), 'bool', [2, 2], [1, 1, 1, 0], 'any(x, ())');
});

deviceTest('any and all of uint8 give uint8, as torch.any / torch.all', (t, device) => {
  using x = gx.tensor([[0, 2], [0, 0]], { dtype: 'uint8', device });
  sameAsTorch(t, gx.any(x), 'uint8', [], [1], 'torch.any(uint8)');
  sameAsTorch(t, gx.all(x), 'uint8', [], [0], 'torch.all(uint8)');
  sameAsTorch(t, gx.any(x, 0), 'uint8', [2], [0, 1], 'torch.any(uint8, 0)');
  sameAsTorch(t, x.all(1, { keepdims: true }), 'uint8', [2, 1], [0, 0], 'torch.all(uint8, 1, keepdim=True)');
  sameAsTorch(t, gx.all(x, []), 'uint8', [2, 2], [0, 1, 0, 0], 'torch.all(uint8, ())');
  // Other dtypes give bool.
  using i = gx.tensor([1, 2], { dtype: 'int8', device });
  sameAsTorch(t, gx.all(i), 'bool', [], [1], 'torch.all(int8)');
});

deviceTest('any and all write their result into out (bool or uint8, whatever the input), and take no dtype, as torch.any / torch.all', (t, device) => {
  using x = gx.tensor([[1, 0], [0, 3]], { device });
  // torch.any(x, out=torch.full((), 7, dtype=torch.bool)) is out, True; before, out got the count (the sum) and a new tensor came back.
  using ob = gx.full([], false, { dtype: 'bool', device });
  t.is(gx.any(x, { out: ob }), ob);
  sameAsTorch(t, ob, 'bool', [], [1], 'any(x, out=bool)');
  // torch.all(x, dim=1, out=torch.full((2,), 9, dtype=torch.uint8)): tensor([0, 0], dtype=torch.uint8)
  using ou = gx.full([2], 9, { dtype: 'uint8', device });
  t.is(gx.all(x, 1, { out: ou }), ou);
  sameAsTorch(t, ou, 'uint8', [2], [0, 0], 'all(x, 1, out=uint8)');
  // torch.any(torch.tensor([1, 0], dtype=torch.uint8), out=torch.empty((), dtype=torch.bool)): tensor(True)
  using u = gx.tensor([1, 0], { dtype: 'uint8', device });
  using ub = gx.empty([], { dtype: 'bool', device });
  t.is(u.any({ out: ub }), ub);
  sameAsTorch(t, ub, 'bool', [], [1], 'any(u8, out=bool)');
  // "any only supports bool tensor for result, got: Float"; any() takes no dtype.
  using of = gx.empty([], { device });
  t.throws(() => gx.any(x, { out: of } as never), { instanceOf: TypeError, message: 'gx.any: out must be a bool or uint8 tensor (as torch\'s), got float32 []' });
  t.throws(() => x.all({ dtype: 'float32' } as never), { instanceOf: TypeError, message: /^Tensor\.all: unknown option 'dtype'/ });
  using wrong = gx.empty([3], { dtype: 'bool', device });
  t.throws(() => gx.any(x, 0, { out: wrong }), { message: 'gx.any: out has shape [3] but the result has shape [2]' });
});

deviceTest('Tensor.flip() with no axes is refused, as torch\'s ("flip() missing required argument dims"); flip([]) is a copy', (t, device) => {
  using x = gx.tensor([[1, 2], [3, 4]], { device });
  t.throws(() => (x.flip as () => gx.Tensor)(), { instanceOf: TypeError, message: /^Tensor\.flip: takes the axes to reverse/ });
  using same = x.flip([]);  // torch.tensor([[1, 2], [3, 4]]).flip([]): tensor([[1, 2], [3, 4]])
  sameAsTorch(t, same, 'float32', [2, 2], [1, 2, 3, 4], 'x.flip([])');
  using both = x.flip(0, 1);  // x.flip(0, 1): tensor([[4, 3], [2, 1]])
  sameAsTorch(t, both, 'float32', [2, 2], [4, 3, 2, 1], 'x.flip(0, 1)');
});

deviceTest('view() and reshape() with no shape are refused, as torch\'s; [] gives the 0-d view of one element', (t, device) => {
  using one = gx.tensor([5], { device });
  // torch.tensor([5.]).view(): "view() received an invalid combination of arguments - got ()"; .reshape(): "missing ... shape"
  t.throws(() => (one.view as () => gx.Tensor)(), { instanceOf: TypeError, message: /^Tensor\.view: takes the new shape/ });
  t.throws(() => (one.reshape as () => gx.Tensor)(), { instanceOf: TypeError, message: /^Tensor\.reshape: takes the new shape/ });
  using scalar = one.view([]);  // torch.tensor([5.]).view([]): tensor(5.)
  sameAsTorch(t, scalar, 'float32', [], [5], 'view([])');
  using again = one.reshape([]);
  sameAsTorch(t, again, 'float32', [], [5], 'reshape([])');
});

deviceTest('topk of a 0-d tensor with k 0 gives the element, as torch.topk(tensor(5.), 0)', (t, device) => {
  using x = gx.tensor(5, { device });
  for (const k of [0, 1]) {
    const [v, i] = gx.topk(x, k);
    sameAsTorch(t, v, 'float32', [], [5], `topk(0-d, ${k}).values`);
    sameAsTorch(t, i, 'int64', [], [0], `topk(0-d, ${k}).indices`);
  }
});

deviceTest('arange with an integer dtype truncates start, end and step first, as torch.arange', (t, device) => {
  // torch.arange(*args, dtype=dtype).tolist(), torch 2.13
  const cases: [number[], gx.DType, number[]][] = [
    [[0, 3, 1.5], 'int64', [0, 1, 2]],
    [[2.5], 'int64', [0, 1]],
    [[0.5], 'int64', []],
    [[-0.5, 3], 'int64', [0, 1, 2]],
    [[0.9, 5, 2.9], 'int64', [0, 2, 4]],
    [[5, 0.5, -1.5], 'int64', [5, 4, 3, 2, 1]],
    [[0, 3, 1.5], 'int32', [0, 1]],
    [[2.5], 'int32', [0, 1, 2]],
    [[-0.5, 3], 'int32', [0, 1, 2, 3]],
    [[1, 2.5, 0.5], 'int32', [1, 1, 1]],
    [[0, 2, 0.2], 'int8', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
    [[-2.5, 2.5, 1.5], 'uint8', [254, 255, 0, 1]],
    [[5, 0.5, -1.5], 'int16', [5, 4, 3]],
    [[1, 2.5, 0.5], 'float32', [1, 1.5, 2]],
    // Values past the dtype's range wrap, as torch's int64 values converted (CUDA saturated, the CPU wrapped).
    [[250, 260, 3], 'uint8', [250, 253, 0, 3]],
    [[0, 300, 100], 'int8', [0, 100, -56]],
    [[-3, 0], 'uint8', [253, 254, 255]],
    [[2147483646, 2147483650], 'int32', [2147483646, 2147483647, -2147483648, -2147483647]],
  ];
  for (const [args, dtype, want] of cases) {
    const r = (gx.arange as (...a: unknown[]) => gx.Tensor)(...args, { dtype, device });
    sameAsTorch(t, r, dtype, [want.length], want, `arange(${args.join(', ')}, dtype=${dtype})`);
  }
  // torch: ValueError: step must be nonzero (0.5 truncates to 0 for int64); no bool arange.
  t.throws(() => gx.arange(1, 2.5, 0.5, { dtype: 'int64', device }), { instanceOf: RangeError, message: /^gx\.arange: step must be nonzero/ });
  t.throws(() => gx.arange(0, 2, { dtype: 'bool', device }), { instanceOf: TypeError, message: /^gx\.arange: dtype bool is not supported/ });
});

deviceTest('linspace with an integer dtype truncates start and end first, and refuses bounds the dtype cannot hold, as torch.linspace', (t, device) => {
  // torch.linspace(start, end, steps, dtype=dtype).tolist(), torch 2.13
  const cases: [[number, number, number], gx.DType, number[]][] = [
    [[0.5, 3.7, 3], 'int64', [0, 1, 3]],
    [[0.5, 3.7, 3], 'int32', [0, 1, 3]],
    [[0.5, 3.7, 3], 'uint8', [0, 1, 3]],
    [[-2.5, 2.5, 5], 'int8', [-2, -1, 0, 1, 2]],
    [[0, 1e10, 3], 'int64', [0, 5000000000, 10000000000]],
    [[0, 300, 3], 'int32', [0, 150, 300]],
  ];
  for (const [[a, b, n], dtype, want] of cases) {
    sameAsTorch(t, gx.linspace(a, b, n, { dtype, device }), dtype, [n], want, `linspace(${a}, ${b}, ${n}, dtype=${dtype})`);
  }
  // torch: RuntimeError: value cannot be converted to type int without overflow (gx gave [0, -2^31, -2^31]).
  t.throws(() => gx.linspace(0, 1e10, 3, { dtype: 'int32', device }), { instanceOf: RangeError, message: /^gx\.linspace: end 10000000000 is out of range for int32/ });
  t.throws(() => gx.linspace(0, 300, 3, { dtype: 'uint8', device }), { instanceOf: RangeError, message: /^gx\.linspace: end 300 is out of range for uint8/ });
  // torch: "linspace_cpu" not implemented for 'Bool' (when there is anything to interpolate).
  t.throws(() => gx.linspace(0, 1, 5, { dtype: 'bool', device }), { instanceOf: TypeError, message: /^gx\.linspace: dtype bool is not supported/ });
});

deviceTest('the median of every element of an empty tensor is NaN converted to its dtype, as torch.median and torch.nanmedian', (t, device) => {
  // torch.median(torch.tensor([], dtype=dtype)) (torch 2.13, CPU): at::full({}, NaN).to(dtype), the conversion's value.
  const cases: [gx.DType, number][] = [
    ['float32', NaN], ['float64', NaN], ['float16', NaN], ['bfloat16', NaN],
    ['int8', 0], ['int16', 0], ['uint8', 0], ['int32', -2147483648],
  ];
  for (const [dtype, want] of cases) {
    // (An integer's value is the device's conversion of NaN: torch's CPU values are checked on the CPU only.)
    if (device !== 'cpu' && !Number.isNaN(want)) continue;
    sameAsTorch(t, gx.median(gx.empty([0], { dtype, device })), dtype, [], [want], `median(tensor([], dtype=${dtype}))`);
    sameAsTorch(t, gx.nanmedian(gx.empty([0, 3], { dtype, device })), dtype, [], [want], `nanmedian(zeros(0, 3, dtype=${dtype}))`);
  }
  if (device === 'cpu') {
    const m = gx.median(gx.empty([0], { dtype: 'int64', device }));
    t.is(m.toArraySync()[0], -9223372036854775808n, 'median(tensor([], dtype=int64)) is -2^63');
  }
  // torch.median(torch.zeros(0, 3), keepdim=True) has no such form; gx's keepdims keeps every axis as 1.
  sameAsTorch(t, gx.median(gx.zeros([0, 3], { device }), { keepdims: true }) as gx.Tensor, 'float32', [1, 1], [NaN], 'median(zeros(0, 3)), keepdims');
  // torch.median(torch.zeros(0, 3), 1): empty values and indices; along the empty axis 0 torch refuses.
  const [v, i] = gx.median(gx.zeros([0, 3], { device }), 1);
  sameAsTorch(t, v, 'float32', [0], [], 'median(zeros(0, 3), 1).values');
  sameAsTorch(t, i, 'int64', [0], [], 'median(zeros(0, 3), 1).indices');
  t.throws(() => gx.median(gx.zeros([0, 3], { device }), 0), { instanceOf: RangeError, message: /^gx\.median: cannot take it of zero elements/ });
  t.throws(() => gx.nanmedian(gx.zeros([3, 0], { device }), 1), { instanceOf: RangeError, message: /^gx\.nanmedian: cannot take it of zero elements/ });
  // x = torch.zeros(0, 3, requires_grad=True); torch.median(x).backward(): x.grad is zeros(0, 3).
  using x = gx.zeros([0, 3], { device }).requiresGrad_();
  gx.median(x).backward();
  t.deepEqual(x.grad?.shape, [0, 3]);
});

deviceTest('mode of bool gives values and indices, as torch.mode', (t, device) => {
  // torch.mode(torch.tensor(...)), torch 2.13
  using a = gx.tensor([true, false, true], { device });
  sameAsTorch(t, gx.mode(a).values, 'bool', [], [1], 'mode([T, F, T]).values');
  sameAsTorch(t, gx.mode(a).indices, 'int64', [], [2], 'mode([T, F, T]).indices');
  using b = gx.tensor([true, false, true, false], { device });
  sameAsTorch(t, gx.mode(b).values, 'bool', [], [0], 'mode([T, F, T, F]).values');
  sameAsTorch(t, gx.mode(b).indices, 'int64', [], [3], 'mode([T, F, T, F]).indices');
  using m = gx.tensor([[true, false, true], [false, false, true]], { device });
  const [v0, i0] = gx.mode(m, 0);
  sameAsTorch(t, v0, 'bool', [3], [0, 0, 1], 'mode(m, 0).values');
  sameAsTorch(t, i0, 'int64', [3], [1, 1, 1], 'mode(m, 0).indices');
  const [v1, i1] = m.mode(1, { keepdims: true });
  sameAsTorch(t, v1, 'bool', [2, 1], [1, 0], 'mode(m, 1, keepdim=True).values');
  sameAsTorch(t, i1, 'int64', [2, 1], [2, 1], 'mode(m, 1, keepdim=True).indices');
  sameAsTorch(t, gx.mode(gx.tensor(true, { device })).indices, 'int64', [], [0], 'mode(tensor(True)).indices');
  // torch: IndexError: mode(): Expected reduction dim 0 to have non-zero size.
  t.throws(() => gx.mode(gx.empty([0], { dtype: 'bool', device })), { instanceOf: RangeError, message: /^gx\.mode: cannot take it of zero elements/ });
});

deviceTest('quantile refuses an empty input and a tensor q of another dtype, as torch.quantile', (t, device) => {
  using x = gx.tensor([1, 4, 2, 8], { device });
  // torch: RuntimeError: quantile() q tensor must be same dtype as the input tensor.
  for (const f of [gx.quantile, gx.nanquantile]) {
    const name = f === gx.quantile ? 'quantile' : 'nanquantile';
    for (const dtype of ['float64', 'float16', 'int64'] as const) {
      t.throws(() => f(x, gx.tensor([0.5], { dtype, device })), { instanceOf: TypeError, message: new RegExp(`^gx\\.${name}: q must have the input's dtype float32, got ${dtype}`) });
    }
    // torch.quantile(x, torch.tensor([0.5, 0.25])) and a JS number q (torch's float q): 3 and 1.75.
    sameAsTorch(t, f(x, gx.tensor([0.5, 0.25], { device })), 'float32', [2], [3, 1.75], `${name}(x, float32 q)`);
    sameAsTorch(t, f(x.astype('float64'), 0.5), 'float64', [], [3], `${name}(x.double(), 0.5)`);
    // torch: RuntimeError: quantile() input tensor must be non-empty (also along an axis whose lines are not).
    for (const [shape, axis] of [[[0], undefined], [[3, 0], 0], [[0, 3], 1]] as const) {
      t.throws(() => f(gx.zeros([...shape], { device }), 0.5, axis), { instanceOf: RangeError, message: new RegExp(`^gx\\.${name}: the input must not be empty`) });
    }
  }
});

deviceTest('matrixNorm of empty matrices: 0 where the order is a max or a sum, refused where it is a min over nothing, as torch.linalg.matrix_norm', (t, device) => {
  // torch.linalg.matrix_norm(torch.zeros(shape), ord) for ord 'fro', 'nuc', 1, -1, 2, -2, inf, -inf (torch 2.13):
  // a number is the value of every element of the result (of the shape after the matrix axes), null an IndexError
  // from amin ("Expected reduction dim ... to have non-zero size").
  const ords: gx.MatrixNormOrd[] = ['fro', 'nuc', 1, -1, 2, -2, Infinity, -Infinity];
  const table: [number[], (number | null)[]][] = [
    [[0, 0], [0, 0, 0, null, 0, null, 0, null]],
    [[0, 3], [0, 0, 0, 0, 0, null, 0, null]],
    [[3, 0], [0, 0, 0, null, 0, null, 0, 0]],
    [[2, 0, 0], [0, 0, 0, null, 0, null, 0, null]],
    [[2, 0, 3], [0, 0, 0, 0, 0, null, 0, null]],
    [[2, 3, 0], [0, 0, 0, null, 0, null, 0, 0]],
    [[0, 2, 3], [0, 0, 0, 0, 0, 0, 0, 0]],
    [[0, 0, 0], [0, 0, 0, null, 0, null, 0, null]],
    [[0, 3, 0], [0, 0, 0, null, 0, null, 0, 0]],
    [[0, 0, 3], [0, 0, 0, 0, 0, null, 0, null]],
  ];
  for (const [shape, wants] of table) {
    using x = gx.zeros(shape, { device });
    const outShape = shape.slice(0, -2);
    ords.forEach((ord, k) => {
      const want = wants[k];
      const what = `matrix_norm(zeros(${shape.join(', ')}), ${String(ord)})`;
      if (want === null) {
        t.throws(() => gx.linalg.matrixNorm(x, ord), { instanceOf: RangeError, message: /^gx\.linalg\.matrixNorm: the -(1|2|inf) norm of matrices with no (columns|rows|singular values) is not defined/ }, what);
      } else {
        sameAsTorch(t, gx.linalg.matrixNorm(x, ord), 'float32', outShape, new Array(outShape.reduce((a, b) => a * b, 1)).fill(want), what);
      }
    });
  }
  // torch.linalg.matrix_norm(torch.zeros(0, 3), 2, keepdim=True): [[0.]]; in float64 the result is float64.
  sameAsTorch(t, gx.linalg.matrixNorm(gx.zeros([0, 3], { device }), { ord: 2, keepdims: true }), 'float32', [1, 1], [0], 'matrix_norm(zeros(0, 3), 2, keepdim=True)');
  sameAsTorch(t, gx.linalg.matrixNorm(gx.zeros([2, 0, 3], { device }), { ord: 2, dtype: 'float64' }), 'float64', [2], [0, 0], 'matrix_norm(zeros(2, 0, 3), 2, dtype=float64)');
});

deviceTest('linspace refuses a bound its dtype cannot hold, as torch.linspace ("value cannot be converted ... without overflow")', (t, device) => {
  // torch 2.13: each bound is checked as a double against the dtype's finite range (not after rounding: float16
  // holds at most 65504, and 65505 is refused though it rounds to 65504); integer bounds before truncation.
  const refused: [number, number, number, gx.DType, string][] = [
    [0, 70000, 3, 'float16', 'end 70000'], [0, 65505, 3, 'float16', 'end 65505'], [-70000, 0, 3, 'float16', 'start -70000'],
    [0, 3.3896e38, 3, 'bfloat16', 'end 3.3896e\\+38'], [0, 1e39, 3, 'float32', 'end 1e\\+39'],
    [0, 127.5, 3, 'int8', 'end 127.5'], [-128.5, 0, 3, 'int8', 'start -128.5'], [-0.5, 0, 3, 'uint8', 'start -0.5'],
    [300, 0, 1, 'int8', 'start 300'], [1e39, 0, 1, 'float32', 'start 1e\\+39'],
  ];
  for (const [a, b, n, dtype, what] of refused) {
    t.throws(() => gx.linspace(a, b, n, { dtype, device }), { instanceOf: RangeError, message: new RegExp(`^gx\\.linspace: ${what} is out of range for ${dtype}`) },
      `linspace(${a}, ${b}, ${n}, dtype=${dtype})`);
  }
  // torch.linspace(...).tolist(): the largest finite bounds are fine; no steps checks nothing; one step uses start alone.
  sameAsTorch(t, gx.linspace(0, 65504, 3, { dtype: 'float16', device }), 'float16', [3], [0, 32752, 65504], 'linspace(0, 65504, 3, float16)');
  sameAsTorch(t, gx.linspace(0, 3.3895e38, 3, { dtype: 'bfloat16', device }), 'bfloat16', [3], [0, 1.6947656946257677e38, 3.3895313892515355e38], 'linspace(0, 3.3895e38, 3, bfloat16)', 1e-15);
  sameAsTorch(t, gx.linspace(70000, 0, 0, { dtype: 'float16', device }), 'float16', [0], [], 'linspace(70000, 0, 0, float16)');
  sameAsTorch(t, gx.linspace(0, 300, 1, { dtype: 'int8', device }), 'int8', [1], [0], 'linspace(0, 300, 1, int8)');
  sameAsTorch(t, gx.linspace(0, 1e39, 1, { device }), 'float32', [1], [0], 'linspace(0, 1e39, 1)');
  sameAsTorch(t, gx.linspace(0, 1e39, 3, { dtype: 'float64', device }), 'float64', [3], [0, 5e38, 1e39], 'linspace(0, 1e39, 3, float64)');
});

// torch.full / fill_ convert their Scalar with a check ("value cannot be converted to type float without
// overflow") for float32 only: torch 2.13 rounds a float16 or bfloat16 fill as the dtype does, past its range to
// inf. A tensor's elements (a 0-d fill value, gx.tensor) convert unchecked, as torch's.
deviceTest('full and fill_ refuse a finite value past float32\'s largest, as torch; float16 and bfloat16 round it; inf, NaN and a tensor value pass', (t, device) => {
  const refusals: [() => unknown, RegExp][] = [
    [() => gx.full([2], 1e39, { device }), /^gx\.full: value 1e\+39 is out of range for float32, whose largest finite value is 3\.4028234663852886e\+38$/],
    [() => gx.full([2], 3.4028235e38, { device }), /^gx\.full: value 3\.4028235e\+38 is out of range for float32/],  // torch refuses it too, though it rounds to float32's largest
    [() => gx.zeros([2], { device }).fill_(-1e39), /^Tensor\.fill_: value -1e\+39 is out of range for float32/],
  ];
  gx.tidy(() => {
    for (const [call, message] of refusals) t.throws(call, { instanceOf: RangeError, message });
    // torch 2.13: full / fill_ of 70000, 65505, 65520, -1e39 and 2^63 - 1 in float16 and bfloat16.
    sameAsTorch(t, gx.full([2], 70000, { dtype: 'float16', device }), 'float16', [2], [Infinity, Infinity], 'full(70000) float16');
    sameAsTorch(t, gx.full([1], 65505, { dtype: 'float16', device }), 'float16', [1], [65504], 'full(65505) float16');
    sameAsTorch(t, gx.full([1], 65520, { dtype: 'float16', device }), 'float16', [1], [Infinity], 'full(65520) float16');
    sameAsTorch(t, gx.zeros([1], { dtype: 'float16', device }).fill_(2n ** 63n - 1n), 'float16', [1], [Infinity], 'fill_(2^63 - 1) float16');
    sameAsTorch(t, gx.zeros([2], { dtype: 'bfloat16', device }).fill_(-1e39), 'bfloat16', [2], [-Infinity, -Infinity], 'fill_(-1e39) bfloat16');
    sameAsTorch(t, gx.full([1], 70000, { dtype: 'bfloat16', device }), 'bfloat16', [1], [70144], 'full(70000) bfloat16');
    sameAsTorch(t, gx.full([1], 65505, { dtype: 'bfloat16', device }), 'bfloat16', [1], [65536], 'full(65505) bfloat16');
    sameAsTorch(t, gx.full([1], 3.39e38, { dtype: 'bfloat16', device }), 'bfloat16', [1], [3.3895313892515355e38], 'full(3.39e38) bfloat16');
    sameAsTorch(t, gx.full([2], 65504, { dtype: 'float16', device }), 'float16', [2], [65504, 65504], 'full(65504) float16');
    sameAsTorch(t, gx.full([2], -Infinity, { dtype: 'float16', device }), 'float16', [2], [-Infinity, -Infinity], 'full(-inf) float16');
    sameAsTorch(t, gx.zeros([1], { dtype: 'float16', device }).fill_(NaN), 'float16', [1], [NaN], 'fill_(NaN) float16');
    sameAsTorch(t, gx.zeros([2], { dtype: 'float16', device }).fill_(gx.tensor(70000, { device })), 'float16', [2], [Infinity, Infinity], 'fill_(tensor(70000.)) float16');
    sameAsTorch(t, gx.full([1], 1.7976931348623157e308, { dtype: 'float64', device }), 'float64', [1], [1.7976931348623157e308], 'full(max) float64');
  });
});
