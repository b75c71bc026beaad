// Chunked tensors at their edges: gx.tidy returning one (its blocks are kept,
// NOTE [ Owned tensors ] in lib/core/tidy.ts), blocks of zero elements in
// every reduction (skipped, as the whole tensor is not empty), against the
// plain ops on the whole tensor; no tensor left behind.
import * as gx from '../lib';
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
