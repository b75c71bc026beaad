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
      t.deepEqual(y.toNested({ bigint: true }), want, dtype);
      using back = gx.tensor(y.toNested({ bigint: true }) as never, { dtype, device });
      t.deepEqual(back.toNested({ bigint: true }), want, `${dtype} round trip`);
      if (dtype === 'int64') {
        // Numbers by default, as item() gives them: exact up to 2^53 - 1, beyond that refused.
        using small = gx.tensor([[1n, -2n], [3n, 2n ** 53n - 1n]], { device });
        t.deepEqual(small.toNested(), [[1, -2], [3, 2 ** 53 - 1]]);
        t.is(JSON.stringify(small.toNested()), '[[1,-2],[3,9007199254740991]]');
        t.throws(() => y.toNested(), { instanceOf: RangeError, message: /^Tensor\.toNested: the value 1152921504606846976 \(int64\) is beyond/ });
      } else {
        t.deepEqual(y.toNested(), want, `${dtype} as numbers`);
      }
    }
    using z = gx.zeros([1], { device });
    t.throws(() => z.toNested({ bigInt: true } as never), { message: /Tensor\.toNested/ });
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
    t.deepEqual(read(gx.eye(2, 4, { dtype: 'int64', device })), [[1, 0, 0, 0], [0, 1, 0, 0]]);
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

// --- shape ops -----------------------------------------------------------------

/** `like` (a number or nested arrays) with every number replaced by value. */
const filled = (like: unknown, value: number): unknown => (Array.isArray(like) ? like.map((e) => filled(e, value)) : value);

/** Plain-JS references on nested arrays. */
const ref = {
  /** Elements of `v` along dim d, rebuilt by `f` of the index list. */
  along(v: N, d: number, f: (xs: unknown[]) => unknown[]): N {
    if (d === 0) return f(v as unknown[]) as N;
    return (v as N[]).map((s) => ref.along(s, d - 1, f)) as N;
  },
  flip: (v: N, d: number): N => ref.along(v, d, (xs) => xs.slice().reverse()),
  roll: (v: N, d: number, s: number): N => ref.along(v, d, (xs) => xs.map((_, i) => xs[(((i - s) % xs.length) + xs.length) % xs.length])),
  pad(v: N, d: number, b: number, a: number, mode: string, value = 0): N {
    return ref.along(v, d, (xs) => {
      const at = (i: number): unknown => (mode === 'reflect' ? xs[Math.abs(i) >= xs.length ? 2 * (xs.length - 1) - i : Math.abs(i)]
        : mode === 'replicate' ? xs[Math.min(Math.max(i, 0), xs.length - 1)] : i < 0 || i >= xs.length ? filled(xs[0], value) : xs[i]);
      return Array.from({ length: xs.length + b + a }, (_, i) => at(i - b));
    });
  },
};

deviceTestSerial('split, chunk, unbind: views of the pieces', (t, device) => {
  noLeaks(t, device, () => {
    const v = randomNested([5, 3]);
    using x = strided(v, device);
    const rows = v as number[][];
    const parts = gx.split(x, 2);
    t.deepEqual(parts.map((p) => p.shape), [[2, 3], [2, 3], [1, 3]]);
    closeTo(t, parts.map((p) => p.toNested()), [rows.slice(0, 2), rows.slice(2, 4), rows.slice(4)]);
    parts.forEach((p) => p.dispose());
    const cols = gx.split(x, [1, 2], -1);
    closeTo(t, cols.map((p) => p.toNested()), [rows.map((r) => r.slice(0, 1)), rows.map((r) => r.slice(1))]);
    cols[0].fill_(9);
    t.is((x.toNested() as number[][])[3][0], 9, 'pieces are views');
    cols.forEach((p) => p.dispose());
    const ch = gx.chunk(x, 3);
    t.deepEqual(ch.map((p) => p.shape), [[2, 3], [2, 3], [1, 3]]);
    ch.forEach((p) => p.dispose());
    const ub = gx.unbind(x, 1);
    t.deepEqual(ub.map((p) => p.shape), [[5], [5], [5]]);
    closeTo(t, ub[2].toNested(), (x.toNested() as number[][]).map((r) => r[2]));
    ub.forEach((p) => p.dispose());
    using e = gx.zeros([0, 2], { device });
    const ep = gx.split(e, 3);
    t.deepEqual(ep.map((p) => p.shape), [[0, 2]]);
    ep.forEach((p) => p.dispose());
    t.throws(() => gx.split(x, [1, 1]), { instanceOf: RangeError, message: /^gx\.split: sizes \[1, 1\] must be non-negative and add up to 5/ });
    t.throws(() => gx.split(x, 0), { instanceOf: RangeError, message: /^gx\.split: sizeOrSections must be a positive integer/ });
    t.throws(() => gx.chunk(x, 0), { instanceOf: RangeError, message: /^gx\.chunk: chunks must be a positive integer/ });
    t.throws(() => gx.unbind(x, 2), { instanceOf: RangeError, message: /^gx\.unbind: axis 2 is out of range/ });
  });
});

deviceTestSerial('flip and roll against references, every size up to 9, non-contiguous and empty inputs', (t, device) => {
  noLeaks(t, device, () => {
    using empty = gx.zeros([3, 0, 2], { device });
    for (const d of [0, 1, 2]) {
      using f = gx.flip(empty, d);
      using r = gx.roll(empty, 2, d);
      t.deepEqual([f.shape, r.shape], [[3, 0, 2], [3, 0, 2]]);
    }
    for (let n = 1; n <= 9; n++) {
      const v = randomNested([3, n, 2], n + 1);
      using x = strided(v, device);
      for (const d of [0, 1, 2]) {
        closeTo(t, read(gx.flip(x, d)), ref.flip(v, d), 0, `flip n=${n} d=${d}`);
        for (const s of [1, -3, 7]) closeTo(t, read(gx.roll(x, s, d)), ref.roll(v, d, s), 0, `roll n=${n} d=${d} s=${s}`);
      }
      closeTo(t, read(gx.flip(x, [0, -1])), ref.flip(ref.flip(v, 0), 2), 0, 'flip of two axes');
      closeTo(t, read(gx.roll(x, [1, 2], [0, 1])), ref.roll(ref.roll(v, 0, 1), 1, 2), 0, 'roll of two axes');
    }
    using a = gx.arange(6, { device });
    using m = a.view(2, 3);
    t.deepEqual(read(gx.roll(m, 1)), [[5, 0, 1], [2, 3, 4]], 'roll without axes rolls the flattened tensor');
    using s = gx.tensor(3, { device });
    t.deepEqual(read(gx.flip(s, 0)), 3);
    using big = gx.arange(1000, { device, dtype: 'int32' });
    t.deepEqual(Array.from(read(gx.flip(big, 0)) as number[]), Array.from({ length: 1000 }, (_, i) => 999 - i));
    const out = gx.flip(a, 0);
    out.fill_(0);
    t.deepEqual(a.toNested(), [0, 1, 2, 3, 4, 5], 'flip copies');
    out.dispose();
    t.throws(() => gx.flip(m, 2), { instanceOf: RangeError, message: /^gx\.flip: axis 2 is out of range/ });
    t.throws(() => gx.roll(m, [1, 2], 0), { instanceOf: RangeError, message: /^gx\.roll: shifts has 2 entries but axes names 1/ });
    t.throws(() => gx.roll(m, 1.5, 0), { instanceOf: TypeError, message: /^gx\.roll: shifts must be an integer/ });
  });
});

deviceTestSerial('repeat, tile, repeatInterleave, meshgrid', (t, device) => {
  noLeaks(t, device, () => {
    using x = gx.tensor([[1, 2], [3, 4]], { device });
    using xt = x.T;
    t.deepEqual(read(gx.repeat(x, [1, 2])), [[1, 2, 1, 2], [3, 4, 3, 4]]);
    t.deepEqual(read(gx.repeat(xt, [2, 1, 1])), [[[1, 3], [2, 4]], [[1, 3], [2, 4]]]);
    t.deepEqual(read(gx.tile(x, [2])), [[1, 2, 1, 2], [3, 4, 3, 4]]);
    t.deepEqual(read(gx.tile(x, [2, 1])), [[1, 2], [3, 4], [1, 2], [3, 4]]);
    t.deepEqual(read(gx.repeat(x, [0, 1])), []);
    const same = gx.repeat(x, [1, 1]);
    same.fill_(0);
    t.deepEqual(x.toNested(), [[1, 2], [3, 4]], 'repeat copies');
    same.dispose();
    t.deepEqual(read(gx.repeatInterleave(xt, 2, 1)), [[1, 1, 3, 3], [2, 2, 4, 4]]);
    t.deepEqual(read(gx.repeatInterleave(x, 2)), [1, 1, 2, 2, 3, 3, 4, 4]);
    t.throws(() => gx.repeat(x, [2]), { instanceOf: RangeError, message: /^gx\.repeat: reps has 1 entries, fewer than the tensor's 2 dimensions/ });
    t.throws(() => gx.tile(x, [-1]), { instanceOf: RangeError, message: /^gx\.tile: reps\[0\] must be >= 0/ });
    t.throws(() => gx.repeatInterleave(x, -1), { instanceOf: RangeError, message: /^gx\.repeatInterleave: repeats must be >= 0/ });
    using a = gx.tensor([1, 2], { device });
    using b = gx.tensor([10, 20, 30], { device });
    const [gi, gj] = gx.meshgrid(a, b);
    t.deepEqual([read(gi), read(gj)], [[[1, 1, 1], [2, 2, 2]], [[10, 20, 30], [10, 20, 30]]]);
    const [xx, yy] = gx.meshgrid(a, b, { indexing: 'xy' });
    t.deepEqual([read(xx), read(yy)], [[[1, 2], [1, 2], [1, 2]], [[10, 10], [20, 20], [30, 30]]]);
    t.throws(() => gx.meshgrid(a, { indexing: 'yx' } as never), { instanceOf: TypeError, message: /^gx\.meshgrid: indexing must be 'ij' or 'xy'/ });
    t.throws(() => gx.meshgrid(x), { instanceOf: RangeError, message: /^gx\.meshgrid: tensors\[0\] has shape \[2, 2\]; each input must be 0-d or 1-d/ });
  });
});

deviceTestSerial('pad: constant, reflect and replicate against references; cropping; errors', (t, device) => {
  noLeaks(t, device, () => {
    const v = randomNested([2, 4, 5], 3);
    using x = strided(v, device);
    for (const mode of ['constant', 'reflect', 'replicate'] as const) {
      closeTo(t, read(gx.pad(x, [2, 1], { mode })), ref.pad(v, 2, 2, 1, mode), 0, mode);
      closeTo(t, read(gx.pad(x, [0, 3, 1, 2], { mode, value: 0 })), ref.pad(ref.pad(v, 2, 0, 3, mode), 1, 1, 2, mode), 0, `${mode} 2 dims`);
    }
    closeTo(t, read(gx.pad(x, [1, 1], { value: -7 })), ref.pad(v, 2, 1, 1, 'constant', -7), 0, 'value');
    closeTo(t, read(gx.pad(x, [-1, 2])), ref.pad(ref.along(v, 2, (xs) => xs.slice(1)), 2, 0, 2, 'constant'), 0, 'a negative amount crops');
    using e = gx.zeros([2, 0], { device });
    t.deepEqual(read(gx.pad(e, [1, 1], { value: 5 })), [[5, 5], [5, 5]]);
    t.throws(() => gx.pad(x, [5, 0], { mode: 'reflect' }), { instanceOf: RangeError, message: /^gx\.pad: reflect padding of \(5, 0\) does not fit dimension 2 of size 5/ });
    t.throws(() => gx.pad(e, [1, 0], { mode: 'replicate' }), { instanceOf: RangeError, message: /^gx\.pad: replicate padding/ });
    t.throws(() => gx.pad(x, [1]), { instanceOf: TypeError, message: /^gx\.pad: pad must be an array of an even number of integers/ });
    t.throws(() => gx.pad(x, [1, 1, 1, 1, 1, 1, 1, 1]), { instanceOf: RangeError, message: /^gx\.pad: pad has 4 \(before, after\) pairs but the input has 3 dimensions/ });
    t.throws(() => gx.pad(x, [1, 1], { mode: 'circular' } as never), { instanceOf: TypeError, message: /^gx\.pad: mode must be 'constant', 'reflect' or 'replicate'/ });
  });
});

deviceTest('autograd through flip, roll, pad, tile, repeatInterleave, split', (t, device) => {
  const x = (): gx.Tensor => gx.tensor(randomNested([3, 4], 5), { dtype: 'float64', device }).requiresGrad_();
  const cases: [string, (a: gx.Tensor) => gx.Tensor][] = [
    ['flip', (a) => gx.flip(a, [0, 1])],
    ['roll', (a) => gx.roll(a, [1, -1], [0, 1])],
    ['pad reflect', (a) => gx.pad(a, [1, 1], { mode: 'reflect' })],
    ['pad replicate', (a) => gx.pad(a, [2, 0, 0, 1], { mode: 'replicate' })],
    ['pad constant', (a) => gx.pad(a, [1, 1, -1, 0], { value: 3 })],
    ['tile', (a) => gx.tile(a, [2, 2])],
    ['repeatInterleave', (a) => gx.repeatInterleave(a, 2, 1)],
    ['split', (a) => { const [p, q] = gx.split(a, [1, 3], 1); return gx.add(gx.mul(p, 2), gx.sum(q, 1, { keepdims: true })); }],
  ];
  for (const [name, f] of cases) {
    using a = x();
    // A sum of squares: every output element's gradient differs, so a misplaced one shows.
    const r = gx.autograd.gradcheck((v) => { const y = f(v); return gx.sum(gx.mul(y, y)); }, [a]);
    t.true(r.ok, name);
  }
});

// --- tests on values -------------------------------------------------------------

deviceTestSerial('any, all, isnan, isinf, isfinite, isclose, allclose, equal', (t, device) => {
  noLeaks(t, device, () => {
    using x = gx.tensor([[0, 1, 0], [0, 0, 0]], { device });
    using xt = x.T;
    t.deepEqual(read(gx.any(x)), true);
    t.deepEqual(read(gx.all(x)), false);
    t.deepEqual(read(gx.any(x, 1)), [true, false]);
    t.deepEqual(read(gx.any(xt, 0, { keepdims: true })), [[true, false]]);
    using y = gx.tensor([[1, 2], [0, 3]], { device });
    t.deepEqual(read(gx.all(y, { axis: 0 })), [false, true]);
    using e = gx.zeros([0], { device });
    t.deepEqual([read(gx.any(e)), read(gx.all(e))], [false, true]);
    using nan = gx.tensor([NaN], { device });
    t.deepEqual(read(gx.any(nan)), true, 'NaN is nonzero');
    using v = gx.tensor([1, NaN, Infinity, -Infinity, 0], { device, dtype: 'float64' });
    t.deepEqual(read(gx.isnan(v)), [false, true, false, false, false]);
    t.deepEqual(read(gx.isinf(v)), [false, false, true, true, false]);
    t.deepEqual(read(gx.isfinite(v)), [true, false, false, false, true]);
    using i = gx.arange(3, { device });
    t.deepEqual([read(gx.isnan(i)), read(gx.isinf(i)), read(gx.isfinite(i))], [[false, false, false], [false, false, false], [true, true, true]]);
    using a = gx.tensor([1, 1 + 1e-7, 2, Infinity, NaN, 1], { device, dtype: 'float64' });
    using b = gx.tensor([1, 1, 2.1, Infinity, NaN, Infinity], { device, dtype: 'float64' });
    t.deepEqual(read(gx.isclose(a, b)), [true, true, false, true, false, false]);
    t.deepEqual(read(gx.isclose(a, b, { rtol: 0.1, equalNan: true })), [true, true, true, true, true, false]);
    t.false(gx.allclose(a, b));
    using a2 = gx.narrow(a, 0, 0, 3), b2 = gx.narrow(b, 0, 0, 3);
    t.true(gx.allclose(a2, b2, { atol: 0.2 }));
    t.true(gx.equal(a2, a2));
    t.false(gx.equal(a, a), 'NaN is not equal to itself');
    t.false(gx.equal(a2, b2));
    t.false(gx.equal(x, xt), 'different shapes');
    t.throws(() => gx.isclose(a, b, { rtol: -1 }), { instanceOf: RangeError, message: /^gx\.isclose: rtol must be a number >= 0/ });
    t.throws(() => gx.any(x, 2), { instanceOf: RangeError, message: /^gx\.any: axis 2 is out of range/ });
    t.throws(() => gx.equal(x, 1 as never), { instanceOf: TypeError, message: /^gx\.equal: argument 'other' must be a Tensor/ });
  });
});
