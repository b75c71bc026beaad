// mapBlocks' block tables (NOTE [ Block tables ] in lib/distributed/map-blocks.ts)
// on every device: a call with the same arguments takes the table of the last
// one, and anything that would change it makes a new one; the output is the
// broadcast of the inputs, in any order, on ranks too. Each case is
// checked against the unchunked op, so a table taken when it should not be
// (the old inputs' blocks, an old number, a stale copy) shows as a wrong value.
import test from 'ava';

import * as gx from '../lib';
import { deviceTestSerial } from './helpers';
import { freePort } from '../lib/cli/run';
import { createProcessGroup } from '../lib/distributed/group';

const maxAbsDiff = (a: gx.Tensor, b: gx.Tensor): number => gx.tidy(() => gx.max(gx.abs(gx.sub(a, b))).item() as number);

/** x * s + y by blocks (a 1-d y lined up with the last dimension). */
const scaledAdd = (xb: gx.Tensor, yb: gx.Tensor, s: number): gx.Tensor => gx.add(gx.mul(xb, s), yb);

deviceTestSerial('mapBlocks called again with the same arguments gives the same blocks; new inputs or numbers are taken', (t, device) => {
  gx.tidy(() => {
    const x = gx.randn([12, 8], { device }), y1 = gx.randn([8], { device }), y2 = gx.randn([8], { device });
    const dx = gx.chunked(x, { chunks: [4, 4] });
    const dy1 = gx.chunked(y1, { chunks: [4] }), dy2 = gx.chunked(y2, { chunks: [4] });
    for (let i = 0; i < 3; i++) {
      using r = gx.mapBlocks(scaledAdd, dx, dy1, 2);
      t.is(maxAbsDiff(r.compute(), gx.add(gx.mul(x, 2), y1)), 0, `call ${i}`);
    }
    using other = gx.mapBlocks(scaledAdd, dx, dy2, 2);
    t.is(maxAbsDiff(other.compute(), gx.add(gx.mul(x, 2), y2)), 0, 'another chunked input');
    using scaled = gx.mapBlocks(scaledAdd, dx, dy2, -3);
    t.is(maxAbsDiff(scaled.compute(), gx.add(gx.mul(x, -3), y2)), 0, 'another number');
    using nan = gx.mapBlocks(scaledAdd, dx, dy2, NaN);
    t.true(Number.isNaN(nan.compute().sum().item() as number), 'NaN as the number');
    using again = gx.mapBlocks(scaledAdd, dx, dy2, 2);
    t.is(maxAbsDiff(again.compute(), gx.add(gx.mul(x, 2), y2)), 0, 'back to 2 after NaN');
    // The same output-shaped input with an input whose chunks do not line up: refused as on a first call.
    const bad = gx.chunked(gx.randn([8], { device }), { chunks: [[3, 5]] });
    t.throws(() => gx.mapBlocks(scaledAdd, dx, bad, 2), { instanceOf: RangeError, message: /gx\.mapBlocks: the chunks of argument 2 do not line up/ });
    using fine = gx.mapBlocks(scaledAdd, dx, dy1, 2);
    t.is(maxAbsDiff(fine.compute(), gx.add(gx.mul(x, 2), y1)), 0, 'a good call after the refused one');
    dy1.dispose();
    dy2.dispose();
    bad.dispose();
    dx.dispose();
  });
});

deviceTestSerial('mapBlocks copies a whole tensor from another device on every call, never from an earlier one', (t, device) => {
  gx.tidy(() => {
    // On a GPU the plain tensor stays on the CPU: every block needs a copy, made anew by each call.
    const x = gx.randn([6, 4], { device }), w = gx.randn([4]);
    const dx = gx.chunked(x, { chunks: [2, 4] });
    for (const fill of [1.5, -2]) {
      w.fill_(fill);
      using r = gx.mapBlocks((xb: gx.Tensor, wb: gx.Tensor) => gx.add(xb, wb), dx, w);
      t.is(maxAbsDiff(r.compute(), gx.add(x, gx.full([4], fill, { device }))), 0, `w filled with ${fill}`);
    }
    dx.dispose();
  });
});

deviceTestSerial('a copy from another device that the function returns as its block is the caller\'s block', (t, device) => {
  gx.tidy(() => {
    // On a GPU, w stays on the CPU: each block's copy of it is what the function returns.
    const dx = gx.chunked(gx.zeros([6, 4], { device }), { chunks: [2, 4] }), w = gx.randn([2, 4]);
    using r = gx.mapBlocks((xb: gx.Tensor, wb: gx.Tensor) => wb, dx, w);
    t.true(r.blocks.every((b) => !b.isDisposed), 'no block was disposed');
    t.is(maxAbsDiff(r.compute().cpu(), gx.cat([w, w, w])), 0);
    dx.dispose();
  });
});

deviceTestSerial('mapBlocks hands each call block info of its own: a function changing it does not change the next call\'s', (t, device) => {
  gx.tidy(() => {
    const dx = gx.chunked(gx.zeros([4, 6], { device }), { chunks: [2, 3] });
    const seen: string[][] = [];
    for (let call = 0; call < 2; call++) {
      const got: string[] = [];
      using r = gx.mapBlocks((xb: gx.Tensor, info: gx.BlockInfo) => {
        got.push(`${info.index.join(',')}@${info.offset.join(',')}`);
        info.index[0] = 99;
        info.offset.length = 0;
        return gx.add(xb, 1);
      }, dx, { blockInfo: true });
      seen.push(got);
      t.is(r.compute().sum().item(), 24);
    }
    t.deepEqual(seen[0], ['0,0@0,0', '0,1@0,3', '1,0@2,0', '1,1@2,3']);
    t.deepEqual(seen[1], seen[0]);
    dx.dispose();
  });
});

test('mapBlocks passes other values through (as JS callers may), and a table is kept only while they are the same', (t) => {
  gx.tidy(() => {
    const x = gx.arange(12, { dtype: 'float32' }).reshape(3, 4);
    const dx = gx.chunked(x, { chunks: [1, 4] });
    const by = (xb: gx.Tensor, o: { k: number }, mode: string, flag: boolean): gx.Tensor => gx.mul(xb, (mode === 'double' ? 2 : 3) * (flag ? 1 : -1) * o.k);
    const o1 = { k: 1 }, o2 = { k: 10 };
    // Not a MapArg to TypeScript: a plain object (not last, where it would be the options), a string, a boolean.
    const any = (v: unknown): number => v as number;
    for (const [mode, flag, o, factor] of [['double', true, o1, 2], ['triple', true, o1, 3], ['triple', false, o1, -3], ['triple', false, o2, -30], ['double', true, o1, 2]] as const) {
      using r = gx.mapBlocks(by as never, dx, any(o), any(mode), any(flag));
      t.is(maxAbsDiff(r.compute(), gx.mul(x, factor)), 0, `${mode} ${flag} k=${o.k}`);
    }
    dx.dispose();
  });
});

test('a block table is kept per output-shaped input: two chunked tensors mapped in turn each give their own blocks', (t) => {
  gx.tidy(() => {
    const a = gx.arange(24, { dtype: 'float32' }).reshape(4, 6), b = gx.arange(24, { dtype: 'float32' }).reshape(4, 6).neg();
    const da = gx.chunked(a, { chunks: [2, 3] }), db = gx.chunked(b, { chunks: [2, 2] });
    for (let i = 0; i < 2; i++) {
      for (const [d, want] of [[da, a], [db, b]] as const) {
        using r = gx.mapBlocks((xb: gx.Tensor) => gx.mul(xb, 2), d);
        t.deepEqual(r.chunks, d.chunks);
        t.is(maxAbsDiff(r.compute(), gx.mul(want, 2)), 0);
      }
    }
    da.dispose();
    db.dispose();
  });
});

// NOTE [ Chunk rules ] in lib/distributed/chunked.ts: the output is the broadcast of every chunked input, whatever
// their order (Dask's map_blocks broadcasts the inputs' blocks: a dimension of one element in one block goes with any).
// mapBlocks took the first input with the most dimensions as the output: a [1, 3] input before a [4, 3] one was refused.
deviceTestSerial('mapBlocks broadcasts its inputs\' chunks whatever their order; each block goes where the input with the most blocks has it', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const add = (a: gx.Tensor, b: gx.Tensor): gx.Tensor => gx.add(a, b);
    const row = gx.randn([1, 3], { device }), x = gx.randn([4, 3], { device });
    const drow = gx.chunked(row, { chunks: [1, 3] }), dx = gx.chunked(x, { chunks: [2, 3] });
    for (const [what, args] of [['row first', [drow, dx]], ['row last', [dx, drow]], ['row first again (its table)', [drow, dx]]] as const) {
      using r = gx.mapBlocks(add, ...args);
      t.deepEqual(r.shape, [4, 3], what);
      t.deepEqual(r.chunks, [[2, 2], [3]], what);
      t.is(maxAbsDiff(r.compute(), gx.add(row, x)), 0, what);
    }
    // The same first input with another partner: a new table, with the new output shape.
    const dx6 = gx.chunked(gx.randn([6, 3], { device }), { chunks: [[1, 5], [3]] });
    using r6 = gx.mapBlocks(add, drow, dx6);
    t.deepEqual(r6.chunks, [[1, 5], [3]]);
    t.is(maxAbsDiff(r6.compute(), gx.add(row, dx6.compute())), 0);
    // No input has the output's grid (an outer sum): the blocks follow y's (3 blocks) on their devices, x's are copied there.
    const col = gx.randn([4, 1], { device }), y = gx.randn([1, 6], { device });
    const dcol = gx.chunked(col, { chunks: [2, 1], devices: ['cpu'] });
    const dy = gx.chunked(y, { chunks: [1, 2], devices: [device, 'cpu', device] });
    const offsets: string[] = [];
    using outer = gx.mapBlocks((a: gx.Tensor, b: gx.Tensor, info: gx.BlockInfo) => { offsets.push(info.offset.join(',')); return gx.add(a, b); },
      dcol, dy, { blockInfo: true });
    t.deepEqual(outer.chunks, [[2, 2], [2, 2, 2]]);
    t.deepEqual(offsets, ['0,0', '0,2', '0,4', '2,0', '2,2', '2,4']);
    for (const i of [0, 1]) for (const j of [0, 1, 2]) t.true(outer.block(i, j).device.equals(dy.block(0, j).device), `block [${i}, ${j}]`);
    t.is(maxAbsDiff(outer.compute(device), gx.add(col, y)), 0);
    // Dimensions that are not broadcast must line up, whichever input comes first; the message names both.
    const dx22 = gx.chunked(x, { chunks: [[4], [2, 1]] });
    t.throws(() => gx.mapBlocks(add, drow, dx, dx22), { instanceOf: RangeError,
      message: /^gx\.mapBlocks: the chunks of argument 3 do not line up with the output's along dimension 0: \(4\) vs \(2, 2\) \(argument 2's\)/ });
    t.throws(() => gx.mapBlocks(add, dx6, dx), { message: /argument 2 do not line up with the output's along dimension 0: \(2, 2\) vs \(1, 5\)/ });
    for (const c of [drow, dx, dx6, dcol, dy, dx22]) c.dispose();
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

test('over ranks the output takes the owners of the input with the whole grid, wherever it comes; with no such input mapBlocks refuses', async (t) => {
  const port = await freePort();
  const gs = await Promise.all([0, 1].map((rank) => createProcessGroup({ rank, worldSize: 2, masterPort: port, timeoutMs: 20_000 }, 'test')));
  const x = gx.randn([4, 6], { dtype: 'float64' }), y = gx.randn([1, 6], { dtype: 'float64' }), col = gx.randn([4, 1], { dtype: 'float64' });
  const want = gx.add(x, y);
  const results = await Promise.all(gs.map(async (g) => {
    using dy = gx.chunked(y, { chunks: [1, 3] });  // every rank holds it whole
    using dx = gx.chunked(x, { chunks: [2, 3], group: g });
    using z = gx.mapBlocks((a: gx.Tensor, b: gx.Tensor) => gx.add(a, b), dy, dx);
    const owners = z.placement?.owners;
    using whole = await z.gather();
    using dcol = gx.chunked(col, { chunks: [2, 1], group: g });
    const refused = t.throws(() => gx.mapBlocks((a: gx.Tensor, b: gx.Tensor) => gx.add(a, b), dcol, dy), { instanceOf: RangeError });
    return { owners, held: z.blocks.length, err: gx.tidy(() => maxAbsDiff(whole, want)), refused: refused.message };
  }));
  for (const [rank, r] of results.entries()) {
    t.deepEqual(r.owners, [0, 1, 0, 1], `rank ${rank}`);
    t.is(r.held, 2);
    t.is(r.err, 0);
    t.regex(r.refused, /^gx\.mapBlocks: argument 1 is spread over ranks, but no chunked input has the output's block grid \[2, 2\] \(argument 1 \[2, 1\], argument 2 \[1, 2\]\)/);
  }
  for (const v of [x, y, col, want]) v.dispose();
  await Promise.all(gs.map((g) => g.destroy()));
});
