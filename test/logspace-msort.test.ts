// gx.logspace and gx.msort against torch 2.13 (CPU), torch's values written in.
// On every device.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest } from './helpers';
import { logspaceUlps, sameAsTorch } from './torch-values';

/** torch's values exactly unless a tolerance is given. */
const sameExactly = (t: ExecutionContext, r: gx.Tensor, dtype: gx.DType, shape: number[], values: number[], what: string, rtol = 0): void =>
  sameAsTorch(t, r, dtype, shape, values, what, rtol);

deviceTest('logspace against torch.logspace: bases, dtypes, integer truncation and wrapping', (t, device) => {
  // torch.logspace(start, end, steps, base, dtype=dtype).tolist(), torch 2.13
  const cases: [[number, number, number, number], gx.DType, number[]][] = [
    [[0, 3, 4, 10], 'int64', [1, 10, 100, 1000]],
    [[0, 3, 3, 10], 'int64', [1, 31, 1000]],
    [[0.5, 3, 3, 2], 'int16', [1, 2, 8]],
    [[0, 3, 3, 2.5], 'int64', [1, 3, 15]],
    [[-1, 1, 3, 2], 'int64', [0, 1, 2]],
    [[0, 10, 3, 10], 'uint8', [1, 160, 0]],
    [[-2, 2, 5, 2], 'float32', [0.25, 0.5, 1, 2, 4]],
    [[0, 1, 7, 10], 'float64', [1.0, 1.4677992676220695, 2.154434690031884, 3.1622776601683795, 4.641588833612779, 6.812920690579613, 10.0]],
    [[-3.3, 2.7, 9, 10], 'float64', [0.0005011872336272725, 0.002818382931264455, 0.01584893192461114, 0.08912509381337459, 0.5011872336272725,
      2.818382931264455, 15.848931924611142, 89.12509381337459, 501.18723362727246]],
    // float32: the float32 bounds, their difference in float, the exponents in double (NOTE [ Logspace as torch computes it ]).
    [[-3.3, 2.7, 9, 10], 'float32', [0.0005011872854083776, 0.002818383276462555, 0.015848932787775993, 0.08912510424852371, 0.501187264919281,
      2.81838321685791, 15.848933219909668, 89.12510681152344, 501.1872863769531]],
    [[1.3, -2.1, 6, 3.7], 'float32', [5.478507041931152, 2.2505311965942383, 0.9245020747184753, 0.37977883219718933, 0.15601041913032532,
      0.06408795714378357]],
    [[0, 1, 3, 10], 'bfloat16', [1, 3.15625, 10]],
    [[0, 1, 5, 10], 'float16', [1.0, 1.7783203125, 3.162109375, 5.625, 10.0]],
    [[0, 5, 3, 10], 'float16', [1, 316.25, Infinity]],
    [[0, 1, 4, -2], 'float32', [1, NaN, NaN, -2]],
    [[0, 3, 4, -2], 'float32', [1, -2, 4, -8]],
    [[1, 2, 5, 0], 'float32', [0, 0, 0, 0, 0]],
    [[3, 0, 1, 10], 'float32', [1000]],
    [[3, 0, 0, 10], 'float32', []],
  ];
  for (const [[a, b, n, base], dtype, want] of cases) {
    // Exact but for CUDA's pow (logspaceUlps): k ulps are at most k * 2^-52 of a double, k * 2^-23 of a float.
    const rtol = logspaceUlps(device, dtype) * (dtype === 'float64' ? 2 ** -52 : 2 ** -23);
    sameExactly(t, gx.logspace(a, b, n, base, { dtype, device }), dtype, [n], want, `logspace(${a}, ${b}, ${n}, ${base}, dtype=${dtype})`, rtol);
  }
  // The default base and dtype, and the base in the options.
  sameExactly(t, gx.logspace(-2, 2, 5, { device }), 'float32', [5], [0.009999999776482582, 0.10000000149011612, 1, 10, 100], 'logspace(-2, 2, 5)');
  sameExactly(t, gx.logspace(-2, 2, 5, { base: 2, device }), 'float32', [5], [0.25, 0.5, 1, 2, 4], 'logspace(-2, 2, 5, base=2)');
  // torch: value cannot be converted to type c10::Half without overflow; "logspace_cpu" not implemented for 'Bool'.
  t.throws(() => gx.logspace(0, 70000, 3, { dtype: 'float16', device }), { instanceOf: RangeError, message: /^gx\.logspace: end 70000 is out of range for float16/ });
  t.throws(() => gx.logspace(0, 1, 3, { dtype: 'bool', device }), { instanceOf: TypeError, message: /^gx\.logspace: dtype bool is not supported/ });
  t.throws(() => gx.logspace(0, 1, 3, 2, { base: 3 } as never), { instanceOf: TypeError, message: /^gx\.logspace: base given twice/ });
  t.throws(() => gx.logspace(0, 1, -1), { instanceOf: RangeError, message: /^gx\.logspace: steps must be a non-negative integer/ });
});

deviceTest('msort sorts along the first axis, values only, as torch.msort, and its gradient reaches the elements', (t, device) => {
  // torch.msort(torch.tensor([[3., 1.], [1., 2.], [nan, 0.]])): [[1, 0], [3, 1], [nan, 2]]; torch.msort(torch.tensor(5.)): 5.
  sameExactly(t, gx.msort(gx.tensor([[3, 1], [1, 2], [NaN, 0]], { device })), 'float32', [3, 2], [1, 0, 3, 1, NaN, 2], 'msort 2-d');
  sameExactly(t, gx.msort(gx.tensor(5, { device })), 'float32', [], [5], 'msort 0-d');
  sameExactly(t, gx.msort(gx.tensor([2, 7, 1], { dtype: 'int32', device })), 'int32', [3], [1, 2, 7], 'msort int32');
  // x = torch.tensor([[3., 1.], [1., 2.], [5., 0.]], requires_grad=True); (torch.msort(x) * w).sum().backward(),
  // w = [[1, 2], [3, 4], [5, 6]]: x.grad is [[3, 4], [1, 6], [5, 2]].
  using x = gx.tensor([[3, 1], [1, 2], [5, 0]], { device }).requiresGrad_();
  gx.mul(gx.msort(x), gx.tensor([[1, 2], [3, 4], [5, 6]], { device })).sum().backward();
  sameExactly(t, x.grad as gx.Tensor, 'float32', [3, 2], [3, 4, 1, 6, 5, 2], 'msort gradient');
  t.throws(() => (gx.msort as (...a: unknown[]) => gx.Tensor)(x, 0), { instanceOf: TypeError, message: /^gx\.msort: / });
});
