// Edge cases where gx disagreed with torch 2.13 (CPU), with torch's results
// written in: found by running the same calls through both (a differential
// audit of the reductions, scans, sorting and creation ops). Each case says
// the torch call it reproduces. On every device.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest } from './helpers';

const numbers = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint | boolean>, Number);

/** r has torch's dtype, shape and values (NaN equal to NaN, -0 told from 0). */
function same(t: ExecutionContext, r: gx.Tensor, dtype: gx.DType, shape: number[], values: number[], what: string, rtol = 1e-6): void {
  t.is(String(r.dtype), dtype, `${what}: dtype`);
  t.deepEqual(r.shape, shape, `${what}: shape`);
  const got = numbers(r);
  t.is(got.length, values.length, `${what}: length`);
  got.forEach((g, i) => {
    const w = values[i];
    const ok = Object.is(g, w) || (Number.isFinite(w) && w !== 0 && Math.abs(g - w) <= rtol * Math.abs(w));
    t.true(ok, `${what}: [${i}] is ${g}, torch gives ${w}`);
  });
}

deviceTest('any and all of uint8 give uint8, as torch.any / torch.all', (t, device) => {
  using x = gx.tensor([[0, 2], [0, 0]], { dtype: 'uint8', device });
  same(t, gx.any(x), 'uint8', [], [1], 'torch.any(uint8)');
  same(t, gx.all(x), 'uint8', [], [0], 'torch.all(uint8)');
  same(t, gx.any(x, 0), 'uint8', [2], [0, 1], 'torch.any(uint8, 0)');
  same(t, x.all(1, { keepdims: true }), 'uint8', [2, 1], [0, 0], 'torch.all(uint8, 1, keepdim=True)');
  // Other dtypes give bool.
  using i = gx.tensor([1, 2], { dtype: 'int8', device });
  same(t, gx.all(i), 'bool', [], [1], 'torch.all(int8)');
});

deviceTest('topk of a 0-d tensor with k 0 gives the element, as torch.topk(tensor(5.), 0)', (t, device) => {
  using x = gx.tensor(5, { device });
  for (const k of [0, 1]) {
    const [v, i] = gx.topk(x, k);
    same(t, v, 'float32', [], [5], `topk(0-d, ${k}).values`);
    same(t, i, 'int64', [], [0], `topk(0-d, ${k}).indices`);
  }
});
