// Everyday helpers (T, mT, size, iteration, toNested, eye, *Like, split,
// flip, pad, isclose, norms, ...) against plain-JS references on random,
// non-contiguous and empty inputs, on every device: their errors name the
// function and the argument, they leak no tensors, and autograd follows
// through the composed ones.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, rng, type TestDevice } from './helpers';

type N = number[] | N[];

/** Random float64 values in [-5, 5) as nested arrays of `shape`. */
function randomNested(shape: readonly number[], seed = 1): N {
  const r = rng(seed);
  const build = (d: number): N => Array.from({ length: shape[d] }, () => (d === shape.length - 1 ? Math.round((r() - 0.5) * 1000) / 100 : build(d + 1))) as N;
  return build(0);
}

/** A non-contiguous tensor holding `values` (the transpose of a contiguous one, transposed back). */
function strided(values: N, device: TestDevice, dtype: gx.DType = 'float64'): gx.Tensor {
  using base = gx.tensor(values, { dtype, device });
  if (base.ndim < 2) return base.clone();
  using bt = base.mT;
  using c = bt.contiguous();
  return c.mT;
}

/** Runs body and checks it leaves no tensor alive on `device`. */
function noLeaks(t: ExecutionContext, device: TestDevice, body: () => void): void {
  const before = gx.memory.stats(device).liveTensors;
  body();
  t.is(gx.memory.stats(device).liveTensors, before, 'no tensors leaked');
}

/** Reads and disposes. */
function read(x: gx.Tensor): unknown {
  try {
    return x.toNested();
  } finally {
    x.dispose();
  }
}

function closeTo(t: ExecutionContext, actual: unknown, expected: unknown, tol = 1e-9, path = 'result'): void {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      t.fail(`${path}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
      return;
    }
    expected.forEach((e, i) => closeTo(t, actual[i], e, tol, `${path}[${i}]`));
    return;
  }
  if (typeof expected === 'number' && typeof actual === 'number') {
    const ok = Object.is(actual, expected) || Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected));
    if (!ok) t.fail(`${path}: got ${actual}, expected ${expected}`);
    return;
  }
  if (actual !== expected) t.fail(`${path}: got ${String(actual)}, expected ${String(expected)}`);
}

// --- Tensor conveniences -------------------------------------------------------

deviceTestSerial('T, mT, size, matmul method', (t, device) => {
  noLeaks(t, device, () => {
    const v = randomNested([2, 3, 4]);
    using x = strided(v, device);
    using xt = x.T;
    t.deepEqual(xt.shape, [4, 3, 2]);
    closeTo(t, xt.toNested(), (v as number[][][])[0][0].map((_, k) => (v as number[][][])[0].map((_, j) => v.map((m) => (m as number[][])[j][k]))));
    using xm = x.mT;
    t.deepEqual(xm.shape, [2, 4, 3]);
    using m = gx.tensor([[1, 2, 3], [4, 5, 6]], { device });
    t.deepEqual(read(m.T), [[1, 4], [2, 5], [3, 6]]);
    using s = gx.tensor(5, { device });
    t.deepEqual(read(s.T), 5);
    t.throws(() => s.mT, { instanceOf: RangeError, message: /^Tensor\.mT: needs a tensor of 2 or more dimensions, got 0/ });
    t.is(x.size(-1), 4);
    t.is(x.size(0), 2);
    t.deepEqual(x.size(), [2, 3, 4]);
    t.throws(() => x.size(3), { instanceOf: RangeError, message: /^Tensor\.size: axis 3 is out of range/ });
    t.throws(() => s.size(0), { instanceOf: RangeError, message: /^Tensor\.size: axis 0 is out of range/ });
    using mt = m.T;
    t.deepEqual(read(m.matmul(mt)), [[14, 32], [32, 77]]);
  });
});

deviceTestSerial('iteration yields views of the first dim; toNested round-trips every dtype', (t, device) => {
  noLeaks(t, device, () => {
    const v = randomNested([3, 2]);
    using x = strided(v, device);
    const rows = [...x];
    t.is(rows.length, 3);
    rows.forEach((r, i) => {
      t.deepEqual(r.shape, [2]);
      closeTo(t, r.toNested(), (v as number[][])[i]);
    });
    rows[1].fill_(7);
    closeTo(t, x.toNested(), [(v as number[][])[0], [7, 7], (v as number[][])[2]], 1e-9, 'a row is a view');
    rows.forEach((r) => r.dispose());
    using e = gx.zeros([0, 4], { device });
    t.deepEqual([...e], []);
    using s = gx.tensor(1, { device });
    t.throws(() => [...s], { instanceOf: TypeError, message: /^Tensor iteration: a 0-d tensor cannot be iterated/ });
    for (const dtype of ['float32', 'float64', 'int32', 'int64', 'uint8', 'bool', 'float16'] as const) {
      const data = dtype === 'bool' ? [[true, false], [false, true]] : dtype === 'int64' ? [[1n, -2n], [3n, 2n ** 60n]] : [[1, 2], [3, 0.5]];
      const want = dtype === 'int32' || dtype === 'uint8' ? [[1, 2], [3, 0]] : data;
      using y = gx.tensor(data as never, { dtype, device });
      t.deepEqual(y.toNested(), want, dtype);
      using back = gx.tensor(y.toNested() as never, { dtype, device });
      t.deepEqual(back.toNested(), want, `${dtype} round trip`);
    }
    using empty = gx.zeros([2, 0], { device });
    t.deepEqual(empty.toNested(), [[], []]);
  });
});

deviceTest('autograd through T and iteration', (t, device) => {
  using w = gx.tensor([[1, 2], [3, 4]], { dtype: 'float64', device }).requiresGrad_();
  t.true(gx.autograd.gradcheck((a) => gx.sum(gx.mul(a.T, gx.tensor([[1, 2], [3, 4]], { dtype: 'float64', device }))), [w]).ok);
  const [r0, r1] = [...w];
  using loss = gx.add(gx.sum(r0), gx.mul(gx.sum(r1), 2));
  loss.backward();
  t.deepEqual(w.grad?.toNested(), [[1, 1], [2, 2]]);
});

// --- creation ------------------------------------------------------------------

deviceTestSerial('eye and the *Like functions', (t, device) => {
  noLeaks(t, device, () => {
    t.deepEqual(read(gx.eye(3, { device })), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    t.deepEqual(read(gx.eye(2, 4, { dtype: 'int64', device })), [[1n, 0n, 0n, 0n], [0n, 1n, 0n, 0n]]);
    t.deepEqual(read(gx.eye(3, 1, { device })), [[1], [0], [0]]);
    t.deepEqual(read(gx.eye(0, { device })), []);
    t.throws(() => gx.eye(-1), { instanceOf: RangeError, message: /^gx\.eye: n must be a non-negative integer, got/ });
    t.throws(() => gx.eye(2, 1.5), { instanceOf: RangeError, message: /^gx\.eye: m must be a non-negative integer/ });
    using x = strided(randomNested([2, 3]), device, 'float64');
    for (const [name, make, want] of [
      ['zerosLike', () => gx.zerosLike(x), 0],
      ['onesLike', () => gx.onesLike(x), 1],
      ['fullLike', () => gx.fullLike(x, 2.5), 2.5],
    ] as const) {
      using y = make();
      t.deepEqual([y.shape, y.dtype, y.device.type], [[2, 3], 'float64', device], name);
      t.true(y.isContiguous(), `${name} is contiguous`);
      t.deepEqual(y.toNested(), [[want, want, want], [want, want, want]], name);
    }
    using i = gx.zerosLike(x, { dtype: 'int32' });
    t.is(i.dtype, 'int32');
    using e = gx.emptyLike(x);
    t.deepEqual([e.shape, e.dtype], [[2, 3], 'float64']);
    using r = gx.randLike(x);
    t.deepEqual([r.shape, r.dtype], [[2, 3], 'float64']);
    t.true((r.toArraySync() as Float64Array).every((v) => v >= 0 && v < 1));
    using n = gx.randnLike(x, { dtype: 'float32', mean: 10, std: 0.001 });
    t.deepEqual([n.shape, n.dtype], [[2, 3], 'float32']);
    t.true((n.toArraySync() as Float32Array).every((v) => Math.abs(v - 10) < 0.1));
    using ints = gx.arange(3, { device });
    t.throws(() => gx.randLike(ints), { instanceOf: TypeError, message: /^gx\.randLike: the result would be int64; random samples need a floating dtype/ });
    using ok = gx.randLike(ints, { dtype: 'float32' });
    t.is(ok.dtype, 'float32');
    t.throws(() => gx.zerosLike([1, 2] as never), { instanceOf: TypeError, message: /^gx\.zerosLike: argument 'input' must be a Tensor/ });
    t.throws(() => gx.fullLike(x, 'a' as never), { instanceOf: TypeError, message: /^gx\.fullLike: value must be a number/ });
  });
});
