// Tensor.zero_ and fill_ under autograd, as torch records them (NOTE [ copy_
// into views ] in lib/tape/graph.ts): copies of their value through copy_'s
// path. What the tensor held gets a zero gradient, a 0-d tensor value the sum
// of the gradient of the elements written; through a view the base's history
// changes for that region only; a leaf that requires grad (or a view of one)
// is refused unless grad mode is off. Before, both refused any tensor that
// required grad, so a buffer that had received a recorded copy_ could no
// longer be zeroed. The expected figures are torch 2.13's (CPU, float32
// unless said).
import test from 'ava';

import * as gx from '../lib';
import { deviceTestSerial, type TestDevice } from './helpers';

const values = (t: gx.Tensor | null): number[] => {
  if (t === null) throw new Error('no gradient');
  return Array.from(t.toArraySync() as ArrayLike<number>);
};
const T = (v: number[] | number[][], device: TestDevice, dtype: 'float32' | 'float64' = 'float32'): gx.Tensor => gx.tensor(v, { dtype, device });
/** 1..6 as [2, 3]: the weights of every loss below (a distinct gradient per element). */
const W = (device: TestDevice): gx.Tensor => gx.add(gx.arange(6, { dtype: 'float32', device }).view(2, 3), 1);
const X = (device: TestDevice): gx.Tensor => T([[1, 2, 3], [4, 5, 6]], device).requiresGrad_();

deviceTestSerial('zero_ of a tensor in the graph records: what it held gets zero, earlier uses keep theirs', (t, device) => {
  gx.tidy(() => {
    const x = T([1, 2, 3], device).requiresGrad_();
    const z = gx.mul(x, 3);
    const y = gx.mul(x, 2);
    t.is(y.zero_(), y);
    t.is(y.gradFn, 'zero_');  // torch: ZeroBackward0
    t.deepEqual(values(y), [0, 0, 0]);
    gx.add(gx.mul(gx.add(y, 1), T([1, 2, 3], device)).sum(), z.sum()).backward();
    t.deepEqual(values(x.grad), [3, 3, 3]);  // torch: [3, 3, 3]
  });
  gx.tidy(() => {
    const x = T([1, 2], device).requiresGrad_();
    gx.mul(x, 2).zero_().sum().backward();
    t.deepEqual(values(x.grad), [0, 0]);  // torch: tensor([0., 0.]), not None
  });
});

deviceTestSerial('zero_ and fill_ through a view rewrite the base\'s history for the region written', (t, device) => {
  gx.tidy(() => {
    const x = X(device);
    const y = gx.mul(x, 2);
    y.get('0').zero_();
    t.deepEqual(values(y), [0, 0, 0, 8, 10, 12]);
    gx.mul(y, W(device)).sum().backward();
    t.deepEqual(values(x.grad), [0, 0, 0, 8, 10, 12]);  // torch: [[0, 0, 0], [8, 10, 12]]
  });
  gx.tidy(() => {
    const x = X(device);
    const y = gx.mul(x, 2);
    y.narrow(1, 1, 2).fill_(5);
    t.is(y.gradFn, 'fill_');
    t.deepEqual(values(y), [2, 5, 5, 8, 5, 5]);
    gx.mul(y, W(device)).sum().backward();
    t.deepEqual(values(x.grad), [2, 0, 0, 8, 0, 0]);  // torch: [[2, 0, 0], [8, 0, 0]]
  });
});

deviceTestSerial('fill_ with a 0-d tensor that requires grad gives it the sum of the gradient of the elements written', (t, device) => {
  gx.tidy(() => {
    const x = X(device), v = gx.tensor(0.5, { device }).requiresGrad_();
    const y = gx.mul(x, 2);
    y.narrow(1, 1, 2).fill_(v);
    t.deepEqual(values(y), [2, 0.5, 0.5, 8, 0.5, 0.5]);
    gx.mul(y, W(device)).sum().backward();
    t.deepEqual(values(x.grad), [2, 0, 0, 8, 0, 0]);  // torch: [[2, 0, 0], [8, 0, 0]]
    t.deepEqual(values(v.grad), [16]);  // torch: 16
  });
  gx.tidy(() => {
    // A tensor that does not require grad, filled from one that does, joins the graph (torch: FillBackward, not a leaf).
    const v = gx.tensor(0.5, { device }).requiresGrad_();
    const buf = gx.zeros([3], { device });
    buf.fill_(v);
    t.true(buf.requiresGrad);
    t.false(buf.isLeaf);
    gx.mul(buf, T([1, 2, 3], device)).sum().backward();
    t.deepEqual(values(v.grad), [6]);  // torch: 6
  });
  gx.tidy(() => {
    // A float64 value into float32: converted, its gradient float64.
    const x = T([1, 2, 3], device).requiresGrad_(), v = gx.tensor(0.25, { dtype: 'float64', device }).requiresGrad_();
    const y = gx.mul(x, 1);
    y.narrow(0, 1, 2).fill_(v);
    gx.mul(y, T([1, 2, 3], device)).sum().backward();
    t.is(v.grad?.dtype, 'float64');
    t.deepEqual(values(v.grad), [5]);  // torch: 5.0, float64
    t.deepEqual(values(x.grad), [1, 0, 0]);  // torch: [1, 0, 0]
  });
});

deviceTestSerial('a buffer that received a recorded copy_ can be zeroed and filled while recording', (t, device) => {
  gx.tidy(() => {
    const x = X(device);
    const buf = gx.zeros([2, 3], { device });
    buf.copy_(gx.mul(x, 2));
    buf.get('1').zero_();
    buf.get('0').narrow(0, 1, 2).fill_(3);
    t.deepEqual(values(buf), [2, 3, 3, 0, 0, 0]);  // torch: [[2, 3, 3], [0, 0, 0]]
    gx.mul(buf, W(device)).sum().backward();
    t.deepEqual(values(x.grad), [2, 0, 0, 0, 0, 0]);  // torch: [[2, 0, 0], [0, 0, 0]]
  });
});

deviceTestSerial('second derivatives go through fill_ of a tensor value', (t, device) => {
  gx.tidy(() => {
    const x = T([1, 2, 3], device).requiresGrad_();
    const f = (v: gx.Tensor): gx.Tensor => {
      const y = gx.mul(x, x);
      y.narrow(0, 0, 1).fill_(gx.mul(v, v));
      return gx.mul(y, T([1, 2, 3], device)).sum();
    };
    const v = gx.tensor(0.5, { device });
    t.deepEqual(values(gx.autograd.grad(f)(v)), [1]);  // torch: 1
    t.deepEqual(values(gx.autograd.functional.hessian(f, v)), [2]);  // torch: 2
  });
});

deviceTestSerial('zero_ and fill_ refuse a leaf that requires grad and a view of one unless grad mode is off; a node that saved the values refuses backward', (t, device) => {
  gx.tidy(() => {
    const w = T([1, 2, 3], device).requiresGrad_();
    // torch: "a leaf Variable that requires grad is being used in an in-place operation." (and "a view of a leaf ...")
    t.throws(() => w.zero_(), { message: /^Tensor\.zero_: self is a leaf tensor that requires grad, and an in-place op on a leaf cannot be recorded.*gx\.noGrad\(\).*or zero a tensor/ });
    t.throws(() => w.narrow(0, 0, 2).fill_(1), { message: /^Tensor\.fill_: self is a view of a leaf tensor that requires grad.*or fill a tensor/ });
    t.throws(() => w.fill_(gx.tensor(2, { device })), { message: /^Tensor\.fill_: self is a leaf tensor that requires grad/ });
    t.deepEqual(values(w), [1, 2, 3], 'a refused write changes nothing');
    gx.noGrad(() => w.zero_());
    t.deepEqual(values(w), [0, 0, 0]);
    t.true(w.isLeaf);
  });
  gx.tidy(() => {
    const x = T([1, 2, 3], device).requiresGrad_();
    const y = gx.mul(x, 2);
    const z = gx.mul(y, y);  // saves y
    y.zero_();
    // torch: "one of the variables needed for gradient computation has been modified by an inplace operation"
    t.throws(() => z.sum().backward(), { message: /modified in place after it was saved/ });
  });
});

test('fill_ takes a 0-d tensor value only, as torch; numbers fill as before outside the graph', (t) => {
  gx.tidy(() => {
    const buf = gx.zeros([3]);
    // torch: "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions." (a one-element 1-d one too)
    t.throws(() => buf.fill_(gx.ones([1])), { instanceOf: RangeError, message: /^Tensor\.fill_: a tensor value must be 0-d, as torch's fill_ \(got shape \[1\]\)/ });
    t.deepEqual(values(buf.fill_(gx.tensor(7, { dtype: 'int32' }))), [7, 7, 7], 'another dtype is converted');
    t.deepEqual(values(gx.zeros([2], { dtype: 'int64' }).fill_(3n).astype('float64')), [3, 3]);
    t.false(buf.requiresGrad);
  });
});
