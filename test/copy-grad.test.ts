// Tensor.copy_ under autograd, as torch records it (NOTE [ copy_ into views ]
// in lib/tape/graph.ts): the gradient of the elements written reaches src
// (through expand and astype to a broadcast or converted source), what they
// held before gets zero, a copy through a view changes its base's history for
// that region only, views made before the copy follow it, second derivatives
// go through it, and a leaf that requires grad (or a view of one) is refused
// unless grad mode is off, as is a copy autograd cannot follow. The expected
// figures are torch 2's (CPU, float32 unless said).
import test from 'ava';

import * as gx from '../lib';
import { deviceTestSerial, type TestDevice } from './helpers';

const values = (t: gx.Tensor | null): number[] => {
  if (t === null) throw new Error('no gradient');
  return Array.from(t.toArraySync() as Float32Array);
};
const T = (v: number[] | number[][], device: TestDevice, dtype: 'float32' | 'float64' = 'float32'): gx.Tensor => gx.tensor(v, { dtype, device });
/** 1..6 as [2, 3]: the weights of every loss below (a distinct gradient per element). */
const W = (device: TestDevice): gx.Tensor => gx.add(gx.arange(6, { dtype: 'float32', device }).view(2, 3), 1);

deviceTestSerial('copy_ of a tensor that requires grad sends the gradient to src', (t, device) => {
  gx.tidy(() => {
    const x = T([1, 2, 3], device).requiresGrad_();
    const y = gx.zeros([3], { device });
    t.is(y.copy_(x), y);
    t.true(y.requiresGrad);
    t.is(y.gradFn, 'copy_');
    gx.mul(y, T([1, 2, 3], device)).sum().backward();
    t.deepEqual(values(x.grad), [1, 2, 3]);  // torch: [1, 2, 3]
  });
});

deviceTestSerial('copy_ of a broadcast src (expand) gives src the gradient summed over the broadcast rows', (t, device) => {
  gx.tidy(() => {
    const x = T([[1, 2, 3]], device).requiresGrad_();
    const y = gx.zeros([2, 3], { device });
    y.copy_(x.expand([2, 3]));  // gx's copy_ takes src's own shape; expand() broadcasts it, as copy_'s error says
    t.deepEqual(values(y), [1, 2, 3, 1, 2, 3]);
    gx.mul(y, gx.arange(6, { dtype: 'float32', device }).view(2, 3)).sum().backward();
    t.deepEqual(x.grad?.shape, [1, 3]);
    t.deepEqual(values(x.grad), [3, 5, 7]);  // torch: [[3, 5, 7]]
  });
});

deviceTestSerial('copy_ of a float64 src converted to a float32 self gives src a float64 gradient', (t, device) => {
  gx.tidy(() => {
    const x = T([1, 2, 3], device, 'float64').requiresGrad_();
    const y = gx.zeros([3], { device });
    y.copy_(x.astype('float32'));  // converted first, as copy_'s error says
    gx.mul(y, T([1, 2, 3], device)).sum().backward();
    t.is(x.grad?.dtype, 'float64');
    t.deepEqual(Array.from(x.grad?.toArraySync() as Float64Array), [1, 2, 3]);  // torch: [1, 2, 3], float64
  });
});

deviceTestSerial('the values copy_ overwrote get a zero gradient, and a node that saved them refuses backward', (t, device) => {
  gx.tidy(() => {
    const a = T([1, 2, 3], device).requiresGrad_();
    const y = gx.mul(a, 2);
    const x = T([4, 5, 6], device).requiresGrad_();
    y.copy_(x);
    gx.mul(y, y).sum().backward();
    t.deepEqual(values(a.grad), [0, 0, 0]);  // torch: [0, 0, 0]
    t.deepEqual(values(x.grad), [8, 10, 12]);  // torch: [8, 10, 12]
  });
  gx.tidy(() => {
    const a = T([1, 2, 3], device).requiresGrad_();
    const y = gx.mul(a, 2);
    const z = gx.mul(y, y);  // saves y
    y.copy_(T([4, 5, 6], device).requiresGrad_());
    t.throws(() => z.sum().backward(), { message: /a tensor mul saved \(its first\) was modified in place after it was saved/ });
  });
});

deviceTestSerial('copy_ into a narrow view: src gets that row\'s gradient, the rest of self\'s history keeps its own', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const a = T([[1, 2, 3], [4, 5, 6]], device).requiresGrad_();
    const y = gx.mul(a, 3);
    const x = T([[7, 8, 9]], device).requiresGrad_();
    y.narrow(0, 1, 1).copy_(x);
    t.deepEqual(values(y), [3, 6, 9, 7, 8, 9]);
    t.is(y.gradFn, 'copy_');
    gx.mul(y, W(device)).sum().backward();
    t.deepEqual(values(a.grad), [3, 6, 9, 0, 0, 0]);  // torch: [[3, 6, 9], [0, 0, 0]]
    t.deepEqual(values(x.grad), [4, 5, 6]);  // torch: [[4, 5, 6]]
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('copy_ into a row of a buffer that does not require grad: the buffer and the row carry src\'s gradient', (t, device) => {
  gx.tidy(() => {
    const x = T([7, 8, 9], device).requiresGrad_();
    const y = gx.zeros([2, 3], { device });
    y.get('0').copy_(x);
    gx.mul(y, W(device)).sum().backward();
    t.deepEqual(values(x.grad), [1, 2, 3]);  // torch: [1, 2, 3]
  });
  gx.tidy(() => {
    // The row written, used after: its history is remade from its base's.
    const x = T([7, 8, 9], device).requiresGrad_();
    const y = gx.zeros([2, 3], { device });
    const row = y.get('0');
    row.copy_(x);
    gx.add(gx.mul(row, 2).sum(), gx.mul(y, W(device)).sum()).backward();
    t.deepEqual(values(x.grad), [3, 4, 5]);  // torch: [3, 4, 5]
  });
  gx.tidy(() => {
    // A tensor built row by row, as a loop fills a buffer.
    const x1 = T([1, 2], device).requiresGrad_(), x2 = T([3, 4], device).requiresGrad_();
    const buf = gx.zeros([2, 2], { device });
    buf.get('0').copy_(x1);
    buf.get('1').copy_(gx.mul(x2, x2));
    gx.mul(buf, T([[1, 2], [3, 4]], device)).sum().backward();
    t.deepEqual(values(x1.grad), [1, 2]);  // torch: [1, 2]
    t.deepEqual(values(x2.grad), [18, 32]);  // torch: [18, 32]
  });
});

deviceTestSerial('a view made before a copy_ into its base sees the values copied and their gradient', (t, device) => {
  gx.tidy(() => {
    const a = T([[1, 2, 3], [4, 5, 6]], device).requiresGrad_();
    const y = gx.mul(a, 3);
    const col = y.get(':, 0');  // made before: [3, 12], then [7, 12]
    const x = T([7, 8, 9], device).requiresGrad_();
    y.get('0').copy_(x);
    t.deepEqual(values(col), [7, 12]);
    gx.mul(col, T([10, 100], device)).sum().backward();
    t.deepEqual(values(a.grad), [0, 0, 0, 300, 0, 0]);  // torch: [[0, 0, 0], [300, 0, 0]]
    t.deepEqual(values(x.grad), [10, 0, 0]);  // torch: [10, 0, 0]
  });
  gx.tidy(() => {
    // The same elements written twice: the first src's gradient is only where the second did not write.
    const x1 = T([1, 2], device).requiresGrad_(), x2 = T([3, 4], device).requiresGrad_();
    const buf = gx.zeros([2, 2], { device });
    buf.get('0').copy_(x1);
    buf.get(':, 0').copy_(x2);
    gx.mul(buf, T([[1, 2], [3, 4]], device)).sum().backward();
    t.deepEqual(values(x1.grad), [0, 2]);  // torch: [0, 2]
    t.deepEqual(values(x2.grad), [1, 3]);  // torch: [1, 3]
  });
});

deviceTestSerial('copy_ into a detached tensor records on it alone; its source of values keeps its history', (t, device) => {
  gx.tidy(() => {
    const a = T([1, 2, 3], device).requiresGrad_();
    const y = gx.mul(a, 2);
    const d = y.detach();
    const x = T([4, 5, 6], device).requiresGrad_();
    d.copy_(x);
    gx.mul(d, y).sum().backward();
    t.deepEqual(values(a.grad), [8, 10, 12]);  // torch: [8, 10, 12]
    t.deepEqual(values(x.grad), [4, 5, 6]);  // torch: [4, 5, 6]
  });
});

deviceTestSerial('copy_ refuses a leaf that requires grad and a view of one unless grad mode is off, and records into any other', (t, device) => {
  gx.tidy(() => {
    const w = gx.zeros([3], { device }).requiresGrad_();
    t.throws(() => w.copy_(T([1, 1, 1], device)), { message: /^Tensor\.copy_: self is a leaf tensor that requires grad, and an in-place op on a leaf cannot be recorded.*gx\.noGrad\(\)/ });
    t.throws(() => w.narrow(0, 0, 2).copy_(T([1, 1], device).requiresGrad_()), { message: /^Tensor\.copy_: self is a view of a leaf tensor that requires grad/ });
    t.deepEqual(values(w), [0, 0, 0], 'a refused copy writes nothing');
    gx.noGrad(() => w.copy_(T([1, 2, 3], device)));
    gx.noGrad(() => w.narrow(0, 1, 1).copy_(T([5], device)));
    t.deepEqual(values(w), [1, 5, 3]);
    t.true(w.isLeaf);
    t.is(w.gradFn, null);
    // Not a leaf: recorded (torch's rule is about leaves), even from a source that does not require grad.
    const y = gx.mul(w, 1);
    y.copy_(T([7, 8, 9], device));
    t.is(y.gradFn, 'copy_');
    gx.mul(y, T([1, 2, 3], device)).sum().backward();
    t.deepEqual(values(w.grad), [0, 0, 0]);  // torch: [0, 0, 0]
  });
});

deviceTestSerial('copy_ that autograd cannot record (into a view of an expanded tensor) refuses, naming src and the remedy', (t, device) => {
  gx.tidy(() => {
    const d = T([[1, 2, 3]], device).expand([2, 3]).detach();  // its rows share memory
    const x = T([4, 5, 6], device).requiresGrad_();
    t.throws(() => d.get('0').copy_(x), { message: /^Tensor\.copy_: self is a view of an expanded tensor \(shape \[2, 3\], strides \[0, 1\]\), into which autograd cannot record a copy of argument 'src'.*detach\(\) src, or copy under gx\.noGrad\(\)/ });
    t.deepEqual(values(d), [1, 2, 3, 1, 2, 3], 'a refused copy writes nothing');
    gx.noGrad(() => d.get('0').copy_(x));
    t.deepEqual(values(d), [4, 5, 6, 4, 5, 6]);
  });
});

test('second derivatives go through copy_ into a view and through a view made before it (torch\'s Hessian)', (t) => {
  gx.tidy(() => {
    // y[:, 0:2] = a * a; col is y[:, 1], made before: the loss is the sum of a[:, 1]^4.
    const f = (a: gx.Tensor): gx.Tensor => {
      const y = gx.zeros([2, 3], { dtype: 'float64' });
      const col = y.narrow(1, 1, 1);
      y.narrow(1, 0, 2).copy_(gx.mul(a, a));
      return gx.mul(col, col).sum();
    };
    const h = gx.autograd.functional.hessian(f, gx.tensor([[1, 2], [3, 4]], { dtype: 'float64' }));
    const want = new Array<number>(16).fill(0);
    want[5] = 48;  // d2/da01^2 of a01^4 = 12 a01^2
    want[15] = 192;
    t.deepEqual(Array.from(h.toArraySync() as Float64Array), want);  // torch: the same
  });
});
