// Chunked tensors at their edges: gx.tidy returning one (its blocks are kept,
// NOTE [ Owned tensors ] in lib/core/tidy.ts), blocks of zero elements in
// every reduction (skipped, as the whole tensor is not empty), against the
// plain ops on the whole tensor, also over the ranks of a process group (3
// ranks in this process, CPU tensors); no tensor left behind.
import test from 'ava';

import * as gx from '../lib';
import { freePort } from '../lib/cli/run';
import { createProcessGroup } from '../lib/distributed/group';
import { deviceTestSerial } from './helpers';

const values = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint>, Number);
/** The values of a chunked tensor, gathered into a tensor freed at once. */
const whole = (c: gx.ChunkedTensor): number[] => gx.tidy(() => values(c.compute()));

deviceTestSerial('gx.tidy keeps the blocks of a ChunkedTensor it returns (alone, in an array, an object, a Map, a Set, an svd result)', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const x = gx.tidy(() => gx.arange(12, { dtype: 'float64', device }).reshape([4, 3]));
  const c = gx.tidy(() => gx.chunked(x.mul(2), { chunks: [2, 3] }));  // x * 2 is freed, the blocks kept
  t.is(gx.memory.stats(device).liveTensors, live + 3, 'x and c\'s two blocks');
  t.false(c.blocks.some((b) => b.isDisposed));
  t.deepEqual(whole(c), Array.from({ length: 12 }, (_, i) => 2 * i));
  t.is(String(c), `ChunkedTensor(shape [4, 3], float64, chunks [[2, 2], [3]], 2 blocks on ${String(x.device)})`);
  const wrapped = gx.tidy(() => {
    const a = gx.chunked(x, { chunks: [1, 3] });
    const b = gx.chunked(x, { chunks: [4, 1] });
    const m = gx.chunked(x, { chunks: [3, 2] });
    const s = gx.chunked(x, { chunks: [2, 2] });
    gx.chunked(x, { chunks: [1, 1] });  // not returned: its 12 blocks are freed
    return { list: [a], named: { b }, map: new Map([['m', m]]), set: new Set([s]), svd: gx.chunked(x, { chunks: [2, 3] }).svd({ gram: false }) };
  });
  const got = [wrapped.list[0], wrapped.named.b, wrapped.map.get('m') as gx.ChunkedTensor, [...wrapped.set][0], wrapped.svd.U];
  t.deepEqual(got.map((g) => g.blocks.filter((b) => !b.isDisposed).length), [4, 3, 4, 4, 2]);
  for (const g of got.slice(0, 4)) t.deepEqual(whole(g), values(x));
  // U S Vh is x again (the svd's own intermediates, and the chunked input it was taken of, are freed).
  const back = gx.tidy(() => gx.matmul(gx.mul(wrapped.svd.U.compute(), wrapped.svd.S), wrapped.svd.Vh));
  t.true(values(back).every((v, i) => Math.abs(v - i) < 1e-9), `U S Vh: ${values(back).join(', ')}`);
  back.dispose();
  t.is(gx.memory.stats(device).liveTensors, live + 3 + 4 + 3 + 4 + 4 + 2 + 2, 'the returned blocks, S and Vh only');
  // Nested: the kept blocks join the enclosing scope, and go with it.
  gx.tidy(() => {
    const inner = gx.tidy(() => gx.chunked(x, { chunks: [2, 3] }));
    t.is(inner.blocks.filter((b) => !b.isDisposed).length, 2);
  });
  t.is(gx.memory.stats(device).liveTensors, live + 3 + 4 + 3 + 4 + 4 + 2 + 2, 'the inner result went with the outer scope');
  for (const g of [c, ...got]) g.dispose();
  c.dispose();  // twice: nothing more to do
  t.true(c.blocks.every((b) => b.isDisposed));
  wrapped.svd.S.dispose();
  wrapped.svd.Vh.dispose();
  x.dispose();
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('gx.tidy keeps the tensors any object lists under gx.ownedTensors', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  class Pair implements gx.TensorOwner {
    constructor(readonly a: gx.Tensor, readonly b: gx.Tensor) {}
    [gx.ownedTensors](): gx.Tensor[] {
      return [this.a, this.b];
    }
  }
  class Opaque {
    constructor(readonly a: gx.Tensor) {}
  }
  const p = gx.tidy(() => new Pair(gx.ones([2], { device }), gx.full([2], 3, { device })));
  t.deepEqual([values(p.a), values(p.b)], [[1, 1], [3, 3]]);
  const o = gx.tidy(() => new Opaque(gx.ones([2], { device })));
  t.true(o.a.isDisposed, 'a class instance that lists nothing is opaque, as before');
  p.a.dispose();
  p.b.dispose();
  t.is(gx.memory.stats(device).liveTensors, live);
});

/** Exact equality of two tensors' elements and shapes (NaN equal to NaN). */
function same(a: gx.Tensor, b: gx.Tensor): boolean {
  const x = values(a), y = values(b);
  return a.shape.join() === b.shape.join() && x.length === y.length && x.every((v, k) => Object.is(v, y[k]));
}

// NOTE [ Empty blocks ] in lib/distributed/chunked-reduce.ts: a block of zero elements made max / amax (min, amin, and
// along an axis holding one, max / min with indices) throw "cannot reduce zero elements" for a tensor that is not empty.
deviceTestSerial('chunked reductions skip blocks of zero elements: every form against the op on the whole tensor', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const cases: [gx.DType, (number | number[])[]][] = [
    ['float32', [[1, 0, 3], 3]], ['float64', [[2, 2], [0, 3]]], ['int32', [[0, 4, 0], [2, 0, 1]]], ['bool', [[0, 4], [3, 0]]], ['int64', [[4, 0], [1, 0, 2]]],
  ];
  for (const [dtype, chunks] of cases) {
    gx.tidy(() => {
      const v = [3, -1, 7, 7, 0, -2, 5, 9, -8, 9, 1, 4];
      const x = gx.tensor(dtype === 'bool' ? v.map((e) => e > 0) : v, { dtype, device }).reshape([4, 3]);
      const c = gx.chunked(x, { chunks });
      const what = `${dtype} chunks ${JSON.stringify(chunks)}`;
      t.true(same(c.max(), gx.max(x)) && same(c.amax(), gx.amax(x)), `max() ${what}: ${values(c.max())}`);
      t.true(same(c.min(), gx.min(x)) && same(c.amin(), gx.amin(x)), `min() ${what}: ${values(c.min())}`);
      t.true(same(c.sum() as gx.Tensor, gx.sum(x)), `sum() ${what}`);
      for (const axis of [0, 1]) {
        for (const largest of [true, false]) {
          const [cv, ci] = largest ? c.max(axis) : c.min(axis);
          const want = largest ? gx.max(x, axis) : gx.min(x, axis);
          if (dtype !== 'bool') {  // gx.max along an axis refuses bool (argmax)
            t.true(same(cv.compute(), want.values), `${largest ? 'max' : 'min'}(${axis}) ${what}: values ${values(cv.compute())}`);
            t.deepEqual(values(ci.compute()), values(want.indices), `${largest ? 'max' : 'min'}(${axis}) ${what}: indices counted along the whole axis`);
          }
          const a = largest ? c.amax(axis) : c.amin(axis);
          t.true(same(a.compute(), largest ? gx.amax(x, axis) : gx.amin(x, axis)), `a${largest ? 'max' : 'min'}(${axis}) ${what}`);
        }
        t.true(same((c.sum(axis) as gx.ChunkedTensor).compute(), gx.sum(x, axis)), `sum(${axis}) ${what}`);
      }
    });
  }
  gx.tidy(() => {
    // With the whole tensor empty, what the op on it refuses is refused (naming the chunked method), and sum is 0.
    const e = gx.chunked(gx.zeros([0, 3], { device }), { chunks: [2, [1, 2]] });
    t.deepEqual(values(e.sum() as gx.Tensor), [0]);
    t.deepEqual(values((e.sum(0) as gx.ChunkedTensor).compute()), [0, 0, 0]);
    t.deepEqual((e.max(1).values).compute().shape, [0], 'max along the other axis: empty, as gx.max(x, 1)');
    for (const [call, re] of [
      [() => e.max(), /^ChunkedTensor\.max: cannot reduce zero elements \(a chunked tensor of shape \[0, 3\]\): max has no identity/],
      [() => e.amin(), /^ChunkedTensor\.amin: cannot reduce zero elements \(a chunked tensor of shape \[0, 3\]\): min has no identity/],
      [() => e.min(0), /^ChunkedTensor\.min: cannot reduce zero elements \(a chunked tensor of shape \[0, 3\], axis 0\)/],
      [() => e.amax(0), /^ChunkedTensor\.amax: cannot reduce zero elements \(a chunked tensor of shape \[0, 3\], axis 0\)/],
    ] as const) t.throws(call, { instanceOf: RangeError, message: re });
    // A dimension must have a block: a grid of none had no device for its results (a TypeError reading undefined).
    t.throws(() => gx.chunked(gx.zeros([0, 3], { device }), { chunks: [[], [3]] }), { instanceOf: RangeError, message: /^gx\.chunked: the chunks of dimension 0 must list at least one block \(an extent of 0 is \[0\]\), got \[\]/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

test.serial('over ranks, a rank holding only an empty block gives its op\'s identity: reduceAll, gather and svdAsync agree with the whole tensor', async (t) => {
  const port = await freePort();
  const gs = await Promise.all([0, 1, 2].map((rank) => createProcessGroup({ rank, worldSize: 3, masterPort: port, timeoutMs: 20_000 }, 'test')));
  const live = gx.memory.stats('cpu').liveTensors;
  const rows = [[-5, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, -11], [1, 2, 3], [4, 5, 6]];
  const x = gx.tensor(rows, { dtype: 'int32' });
  const b = gx.tensor(rows.map((r) => r.map((v) => v < 0)));
  const f = gx.tensor(rows, { dtype: 'float64' });
  const perRank = await Promise.all(gs.map(async (g) => {
    // Block 1 (rank 1's only one) holds no rows.
    using cx = gx.chunked(x, { chunks: [[3, 0, 3], 3], group: g });
    using cb = gx.chunked(b, { chunks: [[3, 0, 3], 3], group: g });
    using cf = gx.chunked(f, { chunks: [[3, 0, 3], 3], group: g });
    const got: Record<string, unknown> = { held: cx.blocks.map((k) => k.shape[0]) };
    for (const op of ['sum', 'max', 'min'] as const) {
      using r = await cx.reduceAll(op);
      got[op] = r.item();
      using rb = await cb.reduceAll(op);
      got[`bool ${op}`] = rb.item();
    }
    using whole = await cx.gather();
    got.gather = whole.toNested();
    const d = await cf.svdAsync();
    using u = await d.U.gather();
    got.back = gx.tidy(() => values(gx.matmul(gx.mul(u, d.S), d.Vh)).every((v, i) => Math.abs(v - rows.flat()[i]) < 1e-9));
    for (const r of [d.U, d.S, d.Vh]) r.dispose();
    return got;
  }));
  for (const [rank, r] of perRank.entries()) {
    t.deepEqual(r, { held: [[3], [0], [3]][rank], sum: 60, max: 10, min: -11, 'bool sum': 2, 'bool max': true, 'bool min': false, gather: rows, back: true }, `rank ${rank}`);
  }
  for (const v of [x, b, f]) v.dispose();
  t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor left behind');
  await Promise.all(gs.map((g) => g.destroy()));
});

// { group: false } (or a string) spread the blocks over no rank: a chunked tensor of no blocks, without a word;
// { devices: [] } to rechunk put every block on the default device (gx.chunked refused it); arguments after the
// last were dropped (c.compute('cpu', { nonBlocking: true }), c.svd({}, { gram: false })).
test.serial('gx.chunked and ChunkedTensor refuse a group, devices or arguments they would have dropped', async (t) => {
  const live = gx.memory.stats('cpu').liveTensors;
  const x = gx.tidy(() => gx.arange(12, { dtype: 'float64' }).reshape([4, 3]));
  const call = (f: () => unknown): (() => unknown) => () => gx.tidy(f);
  for (const group of [false, null, 'world', 1, {}]) {
    t.throws(call(() => gx.chunked(x, { chunks: [2, 3], group: group as never })),
      { instanceOf: TypeError, message: /^gx\.chunked: group must be a ProcessGroup, or true for the default group, got / }, String(group));
  }
  t.throws(call(() => gx.chunked(x, { chunks: [2, 3], devices: 'cpu' as never })), { instanceOf: TypeError, message: /^gx\.chunked: devices must be an array of devices \(e\.g\. \['cuda:0', 'cuda:1'\]\), got a string \("cpu"\)/ });
  t.throws(call(() => gx.chunked(x, { chunks: [2, 3], devices: [] })), { instanceOf: TypeError, message: /^gx\.chunked: devices is empty/ });
  t.throws(call(() => (gx.chunked as (...a: unknown[]) => unknown)(x, { chunks: [2, 3] }, { devices: ['cpu'] })),
    { instanceOf: TypeError, message: /^gx\.chunked: takes \(t, \{ chunks, devices, group, replicate \}\); it takes no further argument or options/ });
  using c = gx.chunked(x, { chunks: [2, 3] });
  t.throws(call(() => c.rechunk([1, 3], { devices: [] })), { instanceOf: TypeError, message: /^ChunkedTensor\.rechunk: devices is empty/ });
  t.throws(call(() => c.rechunk([1, 3], { devices: 'cpu' as never })), { instanceOf: TypeError, message: /^ChunkedTensor\.rechunk: devices must be an array/ });
  const loose = c as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const [name, args, form] of [
    ['compute', ['cpu', { nonBlocking: true }], '\\(device\\?\\)'],
    ['rechunk', [[1, 3], {}, ['cpu']], '\\(chunks, \\{ devices \\}\\?\\)'],
    ['svd', [{}, { gram: false }], '\\(\\{ factor, gram \\}\\?\\)'],
  ] as const) {
    t.throws(call(() => loose[name].call(c, ...args)), { instanceOf: TypeError, message: new RegExp(`^ChunkedTensor\\.${name}: takes ${form}; it takes no further argument or options`) }, name);
  }
  for (const [name, args] of [['gather', ['cpu', {}]], ['reduceAll', ['sum', {}]], ['svdAsync', [{}, {}]]] as const) {
    await t.throwsAsync(async () => loose[name].call(c, ...args), { instanceOf: TypeError, message: new RegExp(`^ChunkedTensor\\.${name}: takes .*; it takes no further argument`) }, name);
  }
  // The forms that remain: the values as before.
  gx.tidy(() => {
    const r = c.rechunk([1, 3], { devices: ['cpu'] });
    t.deepEqual(r.chunks, [[1, 1, 1, 1], [3]]);
    t.deepEqual(values(r.compute('cpu')), values(x));
    t.deepEqual(values(gx.chunked(x, { chunks: [3, 2], devices: ['cpu', 'cpu'] }).compute()), values(x));
  });
  const total = await c.reduceAll('sum');
  t.is(total.item(), 66);
  total.dispose();
  c.dispose();
  x.dispose();
  t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor left behind');
});
