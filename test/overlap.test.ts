// Results written over memory an input still has to be read from (NOTE
// [ Overlapping outputs ] in lib/ops/overlap.ts): partial overlap is computed
// through a temporary, so the result is the one separate memory would give;
// the same elements in the same layout stay allowed for elementwise ops.
import * as gx from '../lib';
import { deviceTest, sameValues } from './helpers';

deviceTest('in place with a shifted view of self: the original values are read', (t, device) => {
  using a = gx.arange(6, { dtype: 'float32', device });
  a.narrow(0, 1, 5).add_(a.narrow(0, 0, 5));
  sameValues(t, a.toArraySync(), [0, 1, 3, 5, 7, 9]);
});

deviceTest('out is a transpose of the input', (t, device) => {
  using m = gx.arange(9, { dtype: 'float32', device }).view(3, 3);
  gx.add(m, 0, { out: m.transpose(0, 1) });
  sameValues(t, m.toArraySync(), [0, 3, 6, 1, 4, 7, 2, 5, 8]);
});

deviceTest('matmul into one of its operands', (t, device) => {
  using p = gx.ones([2, 2], { device });
  using q = gx.arange(4, { dtype: 'float32', device }).view(2, 2);
  using r = gx.matmul(p, q, { out: q });
  sameValues(t, q.toArraySync(), [2, 4, 2, 4]);
  using s = gx.arange(4, { dtype: 'float32', device }).view(2, 2);
  gx.matmul(s, s, { out: s });
  sameValues(t, s.toArraySync(), [2, 3, 6, 11]);
});

deviceTest('along-axis ops and reductions into their input', (t, device) => {
  using s = gx.arange(6, { dtype: 'float32', device }).view(2, 3);
  gx.cumsum(s, 1, { out: s });
  sameValues(t, s.toArraySync(), [0, 1, 3, 3, 7, 12]);
  using v = gx.tensor([1, 2, 3, 4], { device });
  gx.sum(v.view(2, 2), { axis: 1, out: v.narrow(0, 1, 2) });
  sameValues(t, v.toArraySync(), [1, 3, 7, 4]);
});

deviceTest('where and clamp with out over an input', (t, device) => {
  using x = gx.tensor([1, -2, 3, -4, 5], { device });
  using c = gx.gt(x, 0);
  gx.where(c.narrow(0, 0, 4), x.narrow(0, 1, 4), 0, { out: x.narrow(0, 0, 4) });
  sameValues(t, x.toArraySync(), [-2, 0, -4, 0, 5]);
  using y = gx.tensor([5, -1, 7, 2], { device });
  gx.clamp(y.narrow(0, 0, 3), 0, 4, { out: y.narrow(0, 1, 3) });
  sameValues(t, y.toArraySync(), [5, 4, 0, 4]);
});

deviceTest('the same elements in the same layout are still written in place', (t, device) => {
  using x = gx.arange(4, { dtype: 'float32', device });
  x.add_(x);
  gx.mul(x, x, { out: x });
  sameValues(t, x.toArraySync(), [0, 4, 16, 36]);
  using m = gx.arange(6, { dtype: 'float32', device }).view(2, 3);
  const mt = m.transpose(0, 1);
  mt.mul_(mt);
  mt.dispose();
  sameValues(t, m.toArraySync(), [0, 1, 4, 9, 16, 25]);
});

deviceTest('interleaved views do not overlap and need no temporary to be right', (t, device) => {
  using a = gx.arange(8, { dtype: 'float32', device });
  const even = a.asStrided([4], [2], 0), odd = a.asStrided([4], [2], 1);
  gx.add(even, 10, { out: odd });
  even.dispose(); odd.dispose();
  sameValues(t, a.toArraySync(), [0, 10, 2, 12, 4, 14, 6, 16]);
});

deviceTest('copy_ from a source that partially overlaps self', (t, device) => {
  using m = gx.arange(9, { dtype: 'float32', device }).view(3, 3);
  using mt = m.transpose(0, 1);
  m.copy_(mt);
  sameValues(t, m.toArraySync(), [0, 3, 6, 1, 4, 7, 2, 5, 8]);
  using a = gx.arange(6, { dtype: 'float32', device });
  a.narrow(0, 1, 5).copy_(a.narrow(0, 0, 5));
  sameValues(t, a.toArraySync(), [0, 0, 1, 2, 3, 4]);
});

// An expanded tensor's elements share memory: which of the writes to a shared element lands is not defined, so
// every way of writing into one refuses, as torch does ("more than one element of the written-to tensor refers
// to a single memory location"), where copy_ and indexPut_ wrote one row over the other.
deviceTest('copy_, indexPut_, set and in-place ops into an expanded tensor refuse; its base is unchanged', (t, device) => {
  using base = gx.zeros([1, 3], { device });
  using rows = gx.tensor([[1, 2, 3], [4, 5, 6]], { device });
  using expanded = base.expand([2, 3]);
  const shared = /^Tensor\.(copy_|indexPut_|set|mul_): self \(shape \[2, 3\], strides \[0, 1\]\) has elements that share memory/;
  t.throws(() => expanded.copy_(rows), { message: shared });
  using at = gx.tensor([0n, 1n], { device });
  t.throws(() => expanded.indexPut_([at], rows), { message: shared });
  t.throws(() => expanded.set('0', 1), { message: shared });
  t.throws(() => expanded.mul_(2), { message: shared });
  sameValues(t, base.toArraySync(), [0, 0, 0]);
  // A size-1 dimension of stride 0 shares nothing: it is written as usual.
  using one = base.expand([1, 3]);
  using src = gx.tensor([[7, 8, 9]], { device });
  one.copy_(src);
  sameValues(t, base.toArraySync(), [7, 8, 9]);
});
