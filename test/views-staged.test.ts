// Views take their layout through the staging area (NOTE [ Staged views ] in
// csrc/binding/staging.h): every rank, stride and offset the core reads there
// must be the one JS wrote, stale slots of an earlier view must not leak into
// a later one, and every bad value is refused naming 'view' and the argument.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { stagedView } from '../lib/core/handle-pool';
import { native } from '../lib/core/native';
import { MAX_DIMS } from '../lib/core/shape';
import { stagingArea } from '../lib/core/staging';
import { STAGED_VIEW, STAGED_VIEW_SHAPE, STAGED_VIEW_STRIDES } from '../lib/generated/staging';
import { deviceTest, rejects, rng, sameValues, type ErrorClass, type TestDevice } from './helpers';

interface Layout { shape: number[]; strides: number[]; offset: number }

/** The elements of the view `l` of the flat `storage`, in C order: the reference. */
function gathered(storage: ArrayLike<number>, l: Layout): number[] {
  const out: number[] = [];
  const n = l.shape.reduce((p, s) => p * s, 1);
  const index = new Array<number>(l.shape.length).fill(0);
  for (let k = 0; k < n; k++) {
    out.push(storage[l.offset + index.reduce((p, i, d) => p + i * l.strides[d], 0)]);
    for (let d = l.shape.length - 1; d >= 0 && ++index[d] === l.shape[d]; d--) index[d] = 0;
  }
  return out;
}

/** A random layout of `ndim` dims (extents 0..3, strides 0..4, zero strides included) that fits `capacity` elements. */
function randomLayout(r: () => number, ndim: number, capacity: number): Layout {
  const shape = Array.from({ length: ndim }, () => Math.floor(r() * 4));
  const strides = Array.from({ length: ndim }, () => Math.floor(r() * 5));
  const reach = shape.some((s) => s === 0) ? 0 : shape.reduce((p, s, d) => p + (s - 1) * strides[d], 0);
  return { shape, strides, offset: Math.floor(r() * (capacity - reach)) };
}

/** The view `l` of `base`, checked against the reference, element by element and as the core describes it. */
function checkView(t: ExecutionContext, base: gx.Tensor, storage: ArrayLike<number>, l: Layout): void {
  using v = base.asStrided(l.shape, l.strides, l.offset);
  const what = `shape [${l.shape.join(', ')}] strides [${l.strides.join(', ')}] offset ${l.offset}`;
  const d = native.describe(v.handle());
  t.deepEqual([d.shape, d.strides, d.offset], [l.shape, l.strides, l.offset], what);
  sameValues(t, v.toArraySync(), gathered(storage, l), what);
}

function randomBase(device: TestDevice, n: number, seed: number): { base: gx.Tensor; storage: Float64Array } {
  const r = rng(seed);
  const storage = Float64Array.from({ length: n }, () => Math.round((r() - 0.5) * 2e6) / 8);
  return { base: gx.tensor(storage, { device }), storage };
}

deviceTest('staged views of every rank from 0 to MAX_DIMS read the layout JS wrote', (t, device) => {
  const { base, storage } = randomBase(device, 600, 11);
  using _ = base;
  const r = rng(12);
  // Ranks in an order where a smaller one follows a larger one: a stale slot read would show.
  for (const ndim of [8, 0, MAX_DIMS, 1, 8, 3, 0, 5, 2, MAX_DIMS - 1, 4]) {
    for (let k = 0; k < 6; k++) checkView(t, base, storage, randomLayout(r, ndim, storage.length));
  }
});

deviceTest('a rank-0 view reads the one element at its offset, after a rank-8 view', (t, device) => {
  const { base, storage } = randomBase(device, 50, 13);
  using _ = base;
  checkView(t, base, storage, { shape: [2, 1, 3, 1, 2, 2, 1, 2], strides: [24, 7, 8, 0, 4, 2, 3, 1], offset: 1 });
  for (const offset of [0, 17, 49]) {
    using s = base.asStrided([], [], offset);
    t.deepEqual(s.shape, []);
    t.is(s.item(), storage[offset]);
  }
});

deviceTest('zero strides broadcast; transpose, narrow, expand and permute agree with the reference', (t, device) => {
  const { base, storage } = randomBase(device, 60, 14);
  using _ = base;
  checkView(t, base, storage, { shape: [3, 4], strides: [0, 1], offset: 7 });
  checkView(t, base, storage, { shape: [5, 3, 2], strides: [0, 0, 0], offset: 59 });
  using m = base.view(3, 4, 5);
  using tr = m.transpose(0, 2);
  sameValues(t, tr.toArraySync(), gathered(storage, { shape: [5, 4, 3], strides: [1, 5, 20], offset: 0 }));
  using nr = m.narrow(2, 1, 3);
  sameValues(t, nr.toArraySync(), gathered(storage, { shape: [3, 4, 3], strides: [20, 5, 1], offset: 1 }));
  using row = base.asStrided([1, 5], [5, 1], 10);
  using ex = row.expand(4, 5);
  t.deepEqual(ex.strides, [0, 1]);
  sameValues(t, ex.toArraySync(), gathered(storage, { shape: [4, 5], strides: [0, 1], offset: 10 }));
  using pm = m.permute(1, 2, 0);
  sameValues(t, pm.toArraySync(), gathered(storage, { shape: [4, 5, 3], strides: [5, 1, 20], offset: 0 }));
});

deviceTest('large offsets and extents: in the storage read, beyond it refused as the core always did', (t, device) => {
  const n = (1 << 20) + 3;
  using big = gx.arange(n, { dtype: 'int32', device });
  using tail = big.asStrided([2, 2], [2, 1], n - 4);
  sameValues(t, tail.toArraySync(), [n - 4, n - 3, n - 2, n - 1]);
  using one = gx.tensor([2.5], { device });
  // An extent above 2^31 with stride 0 stays in a one-element storage: a valid view, as before.
  using wide = one.asStrided([2 ** 31 + 5, 1], [0, 0], 0);
  t.deepEqual(native.describe(wide.handle()).shape, [2 ** 31 + 5, 1]);
  rejects(t, device, () => one.asStrided([2 ** 31 + 5], [1], 0), RangeError,
    /^view: the view reaches element 2147483652 but the storage holds 1 elements/);
  rejects(t, device, () => one.asStrided([], [], 2 ** 40), RangeError, /^view: the view reaches element 1099511627776 but the storage holds 1/);
  rejects(t, device, () => one.asStrided([2 ** 40, 2 ** 40], [0, 0], 0), RangeError, /^view: shape is too large/);
  rejects(t, device, () => one.asStrided([3, 2048], [2 ** 52, 2 ** 52], 0), RangeError, /^view: strides reach beyond int64/);
  rejects(t, device, () => one.asStrided([2 ** 53 + 2], [0], 0), TypeError, /^view: shape\[0\] must be a safe integer/);
  rejects(t, device, () => one.asStrided([1], [0], 2 ** 60), TypeError, /^view: offset must be a safe integer/);
});

deviceTest('bad layouts are refused naming view and the argument; nothing leaks', (t, device) => {
  using base = gx.tensor([1, 2, 3, 4, 5, 6], { device });
  const live = gx.memory.stats(device).liveTensors;
  const cases: [readonly number[], readonly number[], number, ErrorClass, RegExp][] = [
    [[2, 3], [3], 0, Error, /^view: got 2 sizes but 1 strides/],
    [[2], [1, 1], 0, Error, /^view: got 1 sizes but 2 strides/],
    [[3, 2], [1, -1], 0, RangeError, /^view: stride 1 must be >= 0, got -1/],
    [[-2], [1], 0, RangeError, /^view: dimension 0 has negative size -2/],
    [[2], [1], -1, RangeError, /^view: storage offset must be >= 0, got -1/],
    [[2.5], [1], 0, TypeError, /^view: shape\[0\] must be a safe integer, got 2\.5/],
    [[2, 2], [1, Number.NaN], 0, TypeError, /^view: strides\[1\] must be a safe integer, got nan/i],
    [[2], [1], Infinity, TypeError, /^view: offset must be a safe integer, got inf/i],
    [new Array<number>(MAX_DIMS + 1).fill(1), new Array<number>(MAX_DIMS + 1).fill(0), 0, RangeError,
      /^view: a tensor has at most 16 dimensions, got 17/],
    // A non-number (here from parsed JSON) is refused, not coerced as a Float64Array would.
    [JSON.parse('["2"]') as number[], [1], 0, TypeError, /^view: shape\[0\] must be a safe integer, got nan/i],
  ];
  for (const [shape, strides, offset, cls, re] of cases) rejects(t, device, () => base.asStrided(shape, strides, offset), cls, re);
  t.is(gx.memory.stats(device).liveTensors, live);
  sameValues(t, base.toArraySync(), [1, 2, 3, 4, 5, 6]);
});

deviceTest('the core checks the view request it reads from the staging area', (t, device) => {
  using base = gx.tensor([1, 2, 3, 4], { device });
  const st = stagingArea();
  const fails = (head: number[], cls: ErrorClass, re: RegExp): void => {
    st.set(head, STAGED_VIEW);
    t.throws(() => native.viewStaged(base.handle()), { instanceOf: cls, message: re });
  };
  st.set([2, 1], STAGED_VIEW_SHAPE);
  st.set([1, 2], STAGED_VIEW_STRIDES);
  fails([-1, -1, 0], RangeError, /^view: ndim must be >= 0, got -1/);
  fails([1.5, 1.5, 0], TypeError, /^view: ndim must be a safe integer, got 1\.5/);
  fails([2, 2, Number.NaN], TypeError, /^view: offset must be a safe integer/);
  fails([MAX_DIMS + 1, MAX_DIMS + 1, 0], RangeError, /at most 16 dimensions, got 17/);
  st.set([2, 2, 1], STAGED_VIEW);
  using v = new gx.Tensor(native.viewStaged(base.handle()));
  sameValues(t, v.toArraySync(), [2, 3]);
  t.deepEqual([v.shape, v.strides, v.storageOffset], [[2, 1], [1, 2], 1]);
});

test('a view goes into a disposed tensor\'s handle, which the disposed tensor no longer reaches', (t) => {
  using base = gx.tensor([10, 20, 30, 40], { dtype: 'float64' });
  const dead = gx.tensor([7]);
  const h = dead.handle();
  dead.dispose();
  // The handle-pool hands out the most recently disposed handle first.
  const v = stagedView(base.handle(), [2], [2], 1);
  t.is(v, h);
  using w = new gx.Tensor(v);
  sameValues(t, w.toArraySync(), [20, 40]);
  t.throws(() => dead.toArraySync(), { message: /disposed/ });
});
