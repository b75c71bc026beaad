// Tensor.set and gx.indexPut_ under autograd, as torch's x[idx] = v and index_put_ record them (NOTE
// [ index_put under autograd ] in lib/ops/indexing/index-write.ts): y = x.clone() (x a leaf that
// requires grad), written at index items, then (y * W).sum() backward. The expected figures are torch
// 2.13's (CPU, float64) from the same inputs: X below, the value v = arange(n) * 0.5 - 1 in its shape.
// torch refuses a value of another dtype in index_put_; gx converts it, and the float32 case's figures
// are torch's for y[idx] = v.double(). The formulas are device-independent TS over the index ops.
import test from 'ava';

import * as gx from '../lib';
import { deviceTestSerial, type TestDevice } from './helpers';

const X = [[0.3, -1.2, 2.5, 0.7], [1.1, 0.4, -0.6, 1.9], [-2.0, 0.8, 1.3, -0.5]];
const W = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]];
const f64 = (v: unknown, device: TestDevice): gx.Tensor => gx.tensor(v as number[], { dtype: 'float64', device });
const i64 = (v: number[], device: TestDevice): gx.Tensor => gx.tensor(v, { dtype: 'int64', device });
/** torch's v: arange(n) * 0.5 - 1 in `shape`, a leaf that requires grad. */
const value = (shape: number[], device: TestDevice, dtype: 'float64' | 'float32' = 'float64'): gx.Tensor => {
  const n = shape.reduce((a, b) => a * b, 1);
  return gx.tensor(Array.from({ length: n }, (_, k) => k * 0.5 - 1), { dtype, device }).reshape(shape).requiresGrad_();
};
const flat = (t: gx.Tensor | null): number[] => {
  if (t === null) throw new Error('no gradient');
  return Array.from(t.toArraySync() as ArrayLike<number>, Number);
};
const close = (t: { true(c: boolean, m?: string): void }, got: number[], want: number[], what: string): void => {
  t.true(got.length === want.length && got.every((g, k) => Math.abs(g - want[k]) <= 1e-12 * (1 + Math.abs(want[k]))), `${what}: ${got} vs ${want}`);
};

interface Case {
  name: string;
  /** The value's shape (none: the number 5). */
  v?: number[];
  dtype?: 'float32';
  write: (y: gx.Tensor, v: gx.Tensor | number, d: TestDevice) => void;
  /** y's gradFn: 'set', or 'indexPut_' where the case calls it. */
  gradFn?: 'indexPut_';
  /** torch's y, x.grad and v.grad; y left out where repeated places make the value kept unspecified. */
  y?: number[];
  xg: number[];
  vg?: number[];
}

const MASK = [[true, false, true, true], [false, true, false, false], [true, true, true, false]];
const CASES: Case[] = [
  {
    name: 'an index tensor (y[[2, 0]] = v)', v: [2, 4], write: (y, v, d) => y.set(i64([2, 0], d), v),
    y: [1.0, 1.5, 2.0, 2.5, 1.1, 0.4, -0.6, 1.9, -1.0, -0.5, 0.0, 0.5],
    xg: [0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0], vg: [9, 10, 11, 12, 1, 2, 3, 4],
  },
  {
    name: 'a bool mask (y[mask] = v)', v: [7], write: (y, v, d) => y.set(gx.tensor(MASK, { dtype: 'bool', device: d }), v),
    y: [-1.0, -1.2, -0.5, 0.0, 1.1, 0.5, -0.6, 1.9, 1.0, 1.5, 2.0, -0.5],
    xg: [0, 2, 0, 0, 5, 0, 7, 8, 0, 0, 0, 12], vg: [1, 3, 4, 6, 9, 10, 11],
  },
  {
    name: 'a slice and an index tensor (y[1:3, [3, 0, 1]] = v)', v: [2, 3], write: (y, v, d) => y.set([gx.sl(1, 3), i64([3, 0, 1], d)], v),
    y: [0.3, -1.2, 2.5, 0.7, -0.5, 0.0, -0.6, -1.0, 1.0, 1.5, 1.3, 0.5],
    xg: [1, 2, 3, 4, 0, 0, 7, 0, 0, 0, 11, 0], vg: [8, 5, 6, 12, 9, 10],
  },
  {
    // Which repeat's value is kept is unspecified; each repeat gets the gradient of its place (torch's too).
    name: 'repeated indices (index_put_ without accumulate)', v: [3, 4], gradFn: 'indexPut_', write: (y, v, d) => gx.indexPut_(y, [i64([0, 2, 0], d)], v),
    xg: [0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0], vg: [1, 2, 3, 4, 9, 10, 11, 12, 1, 2, 3, 4],
  },
  {
    name: 'repeated indices with accumulate', v: [3, 4], gradFn: 'indexPut_', write: (y, v, d) => y.indexPut_([i64([0, 2, 0], d)], v, { accumulate: true }),
    y: [2.3, 1.8, 6.5, 5.7, 1.1, 0.4, -0.6, 1.9, -1.0, 2.3, 3.3, 2.0],
    xg: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], vg: [1, 2, 3, 4, 9, 10, 11, 12, 1, 2, 3, 4],
  },
  {
    name: 'two index tensors with accumulate', v: [3], gradFn: 'indexPut_', write: (y, v, d) => gx.indexPut_(y, [i64([0, 2, 2], d), i64([3, 1, 3], d)], v, { accumulate: true }),
    y: [0.3, -1.2, 2.5, -0.30000000000000004, 1.1, 0.4, -0.6, 1.9, -2.0, 0.30000000000000004, 1.3, -0.5],
    xg: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], vg: [4, 10, 12],
  },
  {
    name: 'a value broadcast to the indexed shape (y[[1, 2]] = v of shape [4])', v: [4], write: (y, v, d) => y.set(i64([1, 2], d), v),
    y: [0.3, -1.2, 2.5, 0.7, -1.0, -0.5, 0.0, 0.5, -1.0, -0.5, 0.0, 0.5],
    xg: [1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0], vg: [14, 16, 18, 20],
  },
  {
    name: 'a float32 value broadcast and converted (its gradient float32)', v: [2, 1], dtype: 'float32', write: (y, v, d) => y.set(i64([1, 2], d), v),
    y: [0.3, -1.2, 2.5, 0.7, -1.0, -1.0, -1.0, -1.0, -0.5, -0.5, -0.5, -0.5],
    xg: [1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0], vg: [26, 42],
  },
  {
    name: 'a number value (no gradient of its own)', write: (y, v, d) => y.set(i64([0, 2], d), v),
    y: [5, 5, 5, 5, 1.1, 0.4, -0.6, 1.9, 5, 5, 5, 5],
    xg: [0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0],
  },
  {
    name: 'an integer and an index tensor (y[1, [0, 3]] = v)', v: [2], write: (y, v, d) => y.set([1, i64([0, 3], d)], v),
    y: [0.3, -1.2, 2.5, 0.7, -1.0, 0.4, -0.6, -0.5, -2.0, 0.8, 1.3, -0.5],
    xg: [1, 2, 3, 4, 0, 6, 7, 0, 9, 10, 11, 12], vg: [5, 8],
  },
  {
    name: "'...' and an index tensor (y[..., [3, 1]] = v)", v: [3, 2], write: (y, v, d) => y.set(['...', i64([3, 1], d)], v),
    y: [0.3, -0.5, 2.5, -1.0, 1.1, 0.5, -0.6, 0.0, -2.0, 1.5, 1.3, 1.0],
    xg: [1, 0, 3, 0, 5, 0, 7, 0, 9, 0, 11, 0], vg: [4, 2, 8, 6, 12, 10],
  },
  {
    name: 'null, an index tensor and a slice (y[None, [2], 1:] = v)', v: [1, 3], write: (y, v, d) => y.set([null, i64([2], d), gx.sl(1, null)], v),
    y: [0.3, -1.2, 2.5, 0.7, 1.1, 0.4, -0.6, 1.9, -2.0, -1.0, -0.5, 0.0],
    xg: [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0], vg: [10, 11, 12],
  },
  {
    name: 'basic items alone (y[0:2, 1] = v)', v: [2], write: (y, v, d) => y.set([gx.sl(0, 2), 1], v),
    y: [0.3, -1.0, 2.5, 0.7, 1.1, -0.5, -0.6, 1.9, -2.0, 0.8, 1.3, -0.5],
    xg: [1, 0, 3, 4, 5, 0, 7, 8, 9, 10, 11, 12], vg: [2, 6],
  },
  {
    name: 'a 0-d mask (y[True] = v)', v: [4], write: (y, v, d) => y.set(gx.tensor(true, { device: d }), v),
    y: [-1, -0.5, 0, 0.5, -1, -0.5, 0, 0.5, -1, -0.5, 0, 0.5],
    xg: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], vg: [15, 18, 21, 24],
  },
  {
    name: 'an empty index tensor', v: [4], write: (y, v, d) => y.set(gx.tensor([], { dtype: 'int64', device: d }), v),
    y: X.flat(), xg: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], vg: [0, 0, 0, 0],
  },
];

deviceTestSerial('set and indexPut_ record as torch\'s index_put_: x and v get torch\'s gradients for every kind of item', (t, device) => {
  for (const c of CASES) {
    gx.tidy(() => {
      const x = f64(X, device).requiresGrad_();
      const v = c.v === undefined ? 5 : value(c.v, device, c.dtype);
      const y = x.clone();
      c.write(y, v, device);
      t.true(y.requiresGrad, c.name);
      t.is(y.gradFn, c.gradFn ?? 'set', c.name);
      if (c.y !== undefined) close(t, flat(y), c.y, `${c.name}: y`);
      gx.mul(y, f64(W, device)).sum().backward();
      close(t, flat(x.grad), c.xg, `${c.name}: x.grad`);
      if (v instanceof gx.Tensor) {
        t.is(v.grad?.dtype, v.dtype, c.name);
        close(t, flat(v.grad), c.vg as number[], `${c.name}: v.grad`);
      }
    });
  }
});

deviceTestSerial('a write into a tensor outside the graph joins it, and one through a view rewrites its base\'s history', (t, device) => {
  gx.tidy(() => {
    // Outside the graph: the value alone takes the gradient (y[[2, 0]] = v into zeros: torch's v.grad is W's rows 2 and 0).
    const v = value([2, 4], device);
    const y = gx.zeros([3, 4], { dtype: 'float64', device });
    y.set(i64([2, 0], device), v);
    t.is(y.gradFn, 'set');
    gx.mul(y, f64(W, device)).sum().backward();
    close(t, flat(v.grad), [9, 10, 11, 12, 1, 2, 3, 4], 'v.grad');
  });
  gx.tidy(() => {
    // Through a view: y[1:][[1, 0], 2] = v, i.e. rows 2 and 1 of column 2 (torch: x.grad W zeroed there, v.grad [11, 7]).
    const x = f64(X, device).requiresGrad_();
    const v = value([2], device);
    const y = gx.mul(x, 1);
    y.narrow(0, 1, 2).set([i64([1, 0], device), 2], v);
    close(t, flat(y), [0.3, -1.2, 2.5, 0.7, 1.1, 0.4, -0.5, 1.9, -2.0, 0.8, -1.0, -0.5], 'y');
    gx.mul(y, f64(W, device)).sum().backward();
    close(t, flat(x.grad), [1, 2, 3, 4, 5, 6, 0, 8, 9, 10, 0, 12], 'x.grad');
    close(t, flat(v.grad), [11, 7], 'v.grad');
  });
});

deviceTestSerial('gradcheck passes through set and indexPut_ (masks, slices, broadcast and repeated indices), and second derivatives go through', (t, device) => {
  gx.tidy(() => {
    const x = f64(X, device).requiresGrad_();
    const mask = gx.tensor(MASK, { dtype: 'bool', device });
    const rows = i64([2, 0, 2], device), cols = i64([1, 3], device);
    const fns: [string, gx.Tensor, (x: gx.Tensor, v: gx.Tensor) => gx.Tensor][] = [
      ['mask', value([7], device), (a, v) => gx.mul(a, 1).set(mask, gx.mul(v, v))],
      ['slice and index, broadcast', value([2, 1], device), (a, v) => gx.mul(a, a).set([gx.sl(0, 2), cols], v)],
      ['repeated, accumulate', value([3, 1], device), (a, v) => gx.indexPut_(gx.mul(a, 1), [rows], v, { accumulate: true })],
      ['a number, then a tensor', value([4], device), (a, v) => gx.mul(a, 1).set(rows, 2).set([gx.sl(), 1], gx.mul(v.narrow(0, 0, 3), 3))],
    ];
    for (const [name, v, f] of fns) {
      const r = gx.autograd.gradcheck(f, [x, v], { raiseException: false });
      t.true(r.ok, `${name}: ${JSON.stringify(r.worst)}`);
    }
    // f(v) = sum(W * y^2) with y[[1, 2]] = v (v of shape [4], broadcast): its Hessian is diag(2 * (W[1] + W[2])).
    const H = gx.autograd.functional.hessian((u: gx.Tensor) => {
      const y = f64(X, device);
      y.set(i64([1, 2], device), u);
      return gx.sum(gx.mul(f64(W, device), gx.mul(y, y)));
    }, value([4], device));
    const want = Array.from({ length: 16 }, (_, k) => (k % 5 === 0 ? 2 * [14, 16, 18, 20][k / 5] : 0));
    close(t, flat(H), want, 'Hessian');
    // In x, through self's part (zeroed where written, by the twin recording again): diag(2 * W), zero on rows 0 and 2.
    const Hx = gx.autograd.functional.hessian((a: gx.Tensor) => {
      const y = gx.mul(a, 1);
      y.set(i64([0, 2], device), 5);
      return gx.sum(gx.mul(f64(W, device), gx.mul(y, y)));
    }, f64(X, device));
    const wantX = Array.from({ length: 144 }, (_, k) => (k % 13 === 0 && Math.floor(k / 13 / 4) === 1 ? 2 * W.flat()[k / 13] : 0));
    close(t, flat(Hx), wantX, 'Hessian in x');
  });
});

deviceTestSerial('a leaf that requires grad, a view of one and a view made under noGrad are refused, naming the call; nothing is written', (t, device) => {
  gx.tidy(() => {
    const x = f64(X, device).requiresGrad_();
    const rows = i64([0], device);
    t.throws(() => x.set(rows, 1), { message: /^Tensor\.set: self is a leaf tensor that requires grad/ });
    t.throws(() => gx.indexPut_(x, [rows], value([4], device)), { message: /^gx\.indexPut_: self is a leaf tensor that requires grad/ });
    t.throws(() => x.indexPut_([rows], 1, { accumulate: true }), { message: /^Tensor\.indexPut_: self is a leaf tensor that requires grad/ });
    t.throws(() => x.narrow(0, 1, 2).set(rows, 1), { message: /^Tensor\.set: self is a view of a leaf tensor that requires grad/ });
    const y = gx.mul(x, 1);
    const view = gx.noGrad(() => y.narrow(0, 0, 2));
    t.throws(() => view.set(rows, 1), { message: /^Tensor\.set: self is a view made under gx\.noGrad\(\) of a tensor autograd records/ });
    close(t, flat(x), X.flat(), 'x');
    close(t, flat(y), X.flat(), 'y');
    gx.noGrad(() => x.set(rows, 1));  // as an optimizer step writes
    close(t, flat(x).slice(0, 4), [1, 1, 1, 1], 'x after a write under noGrad');
    t.true(x.isLeaf);
  });
});

deviceTestSerial('an index tensor written in place after the write refuses backward (it was saved), as torch\'s', (t, device) => {
  gx.tidy(() => {
    const x = f64(X, device).requiresGrad_();
    const rows = i64([2, 0], device);
    const y = x.clone();
    y.set(rows, value([2, 4], device));
    rows.add_(1);
    t.throws(() => y.sum().backward(), { message: /a tensor indexPut saved \(its first\) was modified in place after it was saved/ });
  });
});

test('set and indexPut_ under autograd free what they made; a list index is kept for backward after it is disposed', (t) => {
  const live = gx.memory.stats('cpu').liveTensors;
  gx.tidy(() => {
    const x = f64(X, 'cpu').requiresGrad_();
    const v = value([2, 4], 'cpu');
    const y = x.clone();
    y.set([[2, 0]], v);  // a JS list: made into an index tensor, disposed, its saved alias kept
    gx.mul(y, f64(W, 'cpu')).sum().backward();
    close(t, flat(v.grad), [9, 10, 11, 12, 1, 2, 3, 4], 'v.grad');
    close(t, flat(x.grad), [0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0], 'x.grad');
  });
  t.is(gx.memory.stats('cpu').liveTensors, live);
});
