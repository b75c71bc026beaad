// Streams, events, async waits, recordStream, non-blocking copies, CUDA
// graphs, tidy and memory pressure. GPU cases use the kernels of
// test/fixtures/streams (built here with nvcc), which take a known time.
import test from 'ava';
import path from 'path';

import * as gx from '../lib';
import { build } from '../lib/toolkit/build';
import { native } from '../lib/core/native';
import { cudaTest, deviceTestSerial, sameValues } from './helpers';

interface StreamOps {
  slowFill(x: gx.Tensor, v: number, cycles: number): void;
  addOut(a: gx.Tensor, b: gx.Tensor, c: gx.Tensor): void;
  addNew(a: gx.Tensor, b: gx.Tensor): gx.Tensor;
  launchAdd(a: gx.Tensor, b: gx.Tensor, c: gx.Tensor, threads: number): void;
}
let ops: StreamOps;
// About 50 ms at H100 clocks: long enough for the host to race ahead.
const LONG = 100_000_000;
// Stream tests time things and block the event loop: none runs beside another.
const SERIAL = { serial: true };

test.before(async () => {
  if (!gx.cuda.isAvailable()) return;
  const config = path.resolve(__dirname, '../../test/fixtures/streams/setup.config.json');
  await build({ config, arch: 'native' });
  ops = require(path.resolve(__dirname, '../../test/fixtures/streams/build/streamtest.js')) as StreamOps;
});

test('without a GPU, streams and events say CUDA is unavailable', (t) => {
  if (gx.cuda.isAvailable()) {
    t.throws(() => new gx.Stream({ device: 'cuda:99' }), { instanceOf: RangeError, message: /gx\.Stream: device 'cuda:99' does not exist/ });
    return;
  }
  t.throws(() => new gx.Stream(), { instanceOf: RangeError, message: /gx\.Stream: device 'cuda:0' requested but CUDA is not available/ });
  t.throws(() => new gx.Event(), { instanceOf: RangeError, message: /gx\.Event: .*CUDA is not available/ });
  t.throws(() => gx.cuda.graph(() => undefined), { instanceOf: RangeError, message: /gx\.cuda\.graph: .*CUDA is not available/ });
});

cudaTest('withStream makes a stream current and restores the previous one, also after a throw', (t) => {
  const s = new gx.Stream({ priority: -1 });
  const before = gx.cuda.currentStream().handle;
  t.not(s.handle, before);
  const inside = gx.withStream(s, () => gx.cuda.currentStream().handle);
  t.is(inside, s.handle);
  t.is(gx.cuda.currentStream().handle, before);
  t.throws(() => gx.withStream(s, () => { throw new Error('boom'); }), { message: 'boom' });
  t.is(gx.cuda.currentStream().handle, before);
  {
    using scope = s.use();
    t.is(gx.cuda.currentStream().handle, s.handle);
  }
  t.is(gx.cuda.currentStream().handle, before);
  const [least, greatest] = gx.Stream.priorityRange();
  t.true(greatest <= least);
}, SERIAL);

cudaTest('work on one stream waits for an event recorded on another (poisoned buffers)', async (t) => {
  const n = 1 << 16;
  const s1 = new gx.Stream();
  const s2 = new gx.Stream();
  using x = gx.full([n], Number.NaN, { device: 'cuda' });
  using y = gx.full([n], Number.NaN, { device: 'cuda' });
  const ready = new gx.Event();
  gx.withStream(s1, () => {
    ops.slowFill(x, 7, LONG);       // x = 7, after ~50 ms
    ready.record(s1);
  });
  gx.withStream(s2, () => {
    s2.waitEvent(ready);
    y.copy_(x);                      // on s2: must see x = 7, not the poison
  });
  x.recordStream(s2);
  t.false(s2.query(), 's2 is still waiting for s1');
  await s2.done();
  sameValues(t, y.toArraySync(), new Array(n).fill(7));
}, SERIAL);

cudaTest('waitStream: each join waits for what the other stream had queued then, and no later work', async (t) => {
  const n = 1 << 16;
  const s1 = new gx.Stream(), s2 = new gx.Stream(), s3 = new gx.Stream();
  using x = gx.full([n], Number.NaN, { device: 'cuda' });
  using y = gx.full([n], Number.NaN, { device: 'cuda' });
  using w = gx.full([n], Number.NaN, { device: 'cuda' });
  gx.withStream(s1, () => ops.slowFill(x, 7, LONG));   // x = 7, after ~50 ms
  s2.waitStream(s1);
  gx.withStream(s2, () => y.copy_(x));                 // must see the 7s
  // A second join on the same device records the join again: the first wait keeps what it waited for.
  gx.withStream(s1, () => ops.slowFill(w, 1, LONG));
  s3.waitStream(s1);
  t.false(s2.query(), 's2 is still waiting for s1\'s first fill');
  await s2.done();
  t.false(s3.query(), 's3 waits for the second fill too, which s2 did not');
  await s3.done();
  sameValues(t, y.toArraySync(), new Array(n).fill(7));
  sameValues(t, w.toArraySync(), new Array(n).fill(1));
  t.throws(() => s2.waitStream(7 as unknown as gx.Stream), { instanceOf: TypeError, message: /Stream\.waitStream: argument 'other' must be a gx\.Stream/ });
}, SERIAL);

cudaTest('events time GPU work: elapsedTime grows with the work', (t) => {
  using x = gx.empty([1024], { device: 'cuda' });
  const time = (cycles: number): number => {
    const start = new gx.Event({ timing: true }).record();
    ops.slowFill(x, 1, cycles);
    const end = new gx.Event({ timing: true }).record();
    end.synchronize();
    t.true(end.query());
    return start.elapsedTime(end);
  };
  time(1000);  // warm up
  const short = time(LONG / 10);
  const long = time(LONG);
  t.true(short > 0, `short ${short} ms`);
  t.true(long > 5 * short, `long ${long} ms vs short ${short} ms`);
  const plain = new gx.Event().record();
  plain.synchronize();
  t.throws(() => plain.elapsedTime(plain), { message: /both events must be created with \{ timing: true \}/ });
}, SERIAL);

cudaTest('timers fire while await toArray() and stream.done() wait for a long kernel', async (t) => {
  using x = gx.zeros([256], { device: 'cuda' });
  ops.slowFill(x, 3, LONG);
  let ticks = 0;
  const timer = setInterval(() => { ticks++; }, 1);
  try {
    const values = await x.toArray();
    t.true(ticks >= 3, `${ticks} timer ticks while waiting`);
    sameValues(t, values, new Array(256).fill(3));
    ticks = 0;
    ops.slowFill(x, 4, LONG);
    await gx.cuda.currentStream().done();
    t.true(ticks >= 3, `${ticks} timer ticks during stream.done()`);
  } finally {
    clearInterval(timer);
  }
}, SERIAL);

cudaTest('recordStream keeps freed memory from reuse until the other stream is done', async (t) => {
  const n = 1 << 20;
  const s2 = new gx.Stream();
  const x = gx.empty([n], { device: 'cuda' });
  const ptr = native.describe(x.handle()).dataPtr;
  gx.withStream(s2, () => ops.slowFill(x, 1, LONG));
  x.recordStream(s2);
  x.dispose();
  using y = gx.empty([n], { device: 'cuda' });   // s2 still writes x's memory
  t.not(native.describe(y.handle()).dataPtr, ptr, 'not handed out while s2 uses it');
  await s2.done();
  gx.memory.emptyCache('cuda');
  // Without recordStream the same pattern reuses at once (the allocation stream's order protects it).
  const z = gx.empty([n], { device: 'cuda' });
  const zptr = native.describe(z.handle()).dataPtr;
  z.dispose();
  using w = gx.empty([n], { device: 'cuda' });
  t.is(native.describe(w.handle()).dataPtr, zptr);
}, SERIAL);

cudaTest('non-blocking copies from and to pinned memory', async (t) => {
  const n = 1 << 18;
  const data = Float32Array.from({ length: n }, (_, i) => (i % 97) - 48);
  using pinned = gx.empty([n], { pinned: true });
  using host = gx.tensor(data);  // disposed: a CPU tensor left to the collector would change the live counts of a later test
  pinned.copy_(host);
  using dev = pinned.to('cuda', { nonBlocking: true });
  using back = dev.to('cpu', { nonBlocking: true });
  t.true(native.describe(back.handle()).pinned, 'non-blocking readback lands in pinned memory');
  await gx.cuda.currentStream().done();
  sameValues(t, back.toArraySync(), data);
}, SERIAL);

// NOTE [ Driver launches ] (csrc/include/gpuext/launch.h): an extension's gx::launch.
cudaTest('gx::launch from an extension: right values on the current stream, a failed launch throws and the next one works, a graph captures it', (t) => {
  const n = 1000;  // not a multiple of the block
  gx.manualSeed(4);
  using a = gx.randn([n], { device: 'cuda' });
  using b = gx.randn([n], { device: 'cuda' });
  using c = gx.full([n], Number.NaN, { device: 'cuda' });
  const s = new gx.Stream();
  gx.withStream(s, () => {
    ops.slowFill(a, 1, LONG);      // a's new values are ready only when the stream gets there
    ops.launchAdd(a, b, c, 128);
  });
  s.synchronize();
  sameValues(t, c.toArraySync(), Array.from(b.toArraySync() as Float32Array, (v) => Math.fround(1 + v)), 'ordered after the fill on the same stream');
  t.throws(() => ops.launchAdd(a, b, c, 2048), { message: /launch_add: kernel launch failed/ });
  ops.launchAdd(b, b, c, 256);
  sameValues(t, c.toArraySync(), Array.from(b.toArraySync() as Float32Array, (v) => Math.fround(v + v)), 'a launch after the failed one');
  const g = gx.cuda.graph(() => ops.launchAdd(a, a, c, 256));
  t.is(g.nodes, 1);
  g.replay();
  sameValues(t, c.toArraySync(), new Array(n).fill(2), 'replayed');
  g.dispose();
}, SERIAL);

cudaTest('a captured CUDA graph replays on new input values, and keeps its memory', (t) => {
  const n = 4096;
  using a = gx.full([n], 1, { device: 'cuda' });
  using b = gx.full([n], 2, { device: 'cuda' });
  using c = gx.full([n], Number.NaN, { device: 'cuda' });
  const before = gx.memory.stats('cuda').allocatedBytes;
  let tmp!: gx.Tensor;
  const g = gx.cuda.graph(() => {
    tmp = ops.addNew(a, b);        // allocated during capture: kept by the graph
    ops.addOut(tmp, b, c);         // c = a + 2b
  });
  t.true(g.keptAllocations >= 1);
  t.is(g.nodes, 2, 'one node per kernel: the allocation and the launch checks add none');
  sameValues(t, c.toArraySync(), new Array(n).fill(Number.NaN), 'nothing ran during capture');
  tmp.dispose();                   // the graph still holds its memory
  g.replay();
  sameValues(t, c.toArraySync(), new Array(n).fill(5));
  a.fill_(10);
  g.replay();
  g.replay();
  sameValues(t, c.toArraySync(), new Array(n).fill(14));
  t.true(gx.memory.stats('cuda').allocatedBytes >= before + n * 4, 'graph memory still allocated');
  g.dispose();
  t.is(gx.memory.stats('cuda').allocatedBytes, before);
  t.throws(() => g.replay(), { message: /disposed/ });
  t.throws(() => gx.cuda.graph(() => { throw new Error('inside capture'); }), { message: 'inside capture' });
  // After a failed capture the stream works normally.
  ops.addOut(a, b, c);
  sameValues(t, c.toArraySync(), new Array(n).fill(12));
}, SERIAL);

cudaTest('an external event: a graph waits for its latest record, and each replay records it', (t) => {
  const n = 4096;
  using src = gx.zeros([n], { device: 'cuda' });
  using dst = gx.zeros([n], { device: 'cuda' });
  const side = new gx.Stream();
  const ready = new gx.Event({ external: true }), done = new gx.Event({ external: true });
  t.true(ready.external);
  const g = gx.cuda.graph(() => {
    gx.cuda.currentStream().waitEvent(ready);  // an event wait node: the work recorded outside the graph
    dst.copy_(src);
    done.record();                             // an event record node
  });
  for (const v of [3, 5]) {
    gx.withStream(side, () => ops.slowFill(src, v, LONG));
    ready.record(side);
    g.replay();
    t.false(done.query(), 'the replay waits for the slow fill on the other stream, and has not recorded done');
    done.synchronize();
    sameValues(t, dst.toArraySync(), new Array(n).fill(v), `replay after the fill of ${v}`);
  }
  g.dispose();
}, SERIAL);

cudaTest('setLimit takes a share of the device memory', (t) => {
  const total = gx.cuda.getDeviceProperties().totalMemory;
  gx.memory.setLimit('50%');
  try {
    t.is(gx.memory.stats('cuda').limitBytes, Math.floor(total / 2));
  } finally {
    gx.memory.setLimit(0);
  }
  t.throws(() => gx.memory.setLimit('150%'), { instanceOf: RangeError });
  t.throws(() => gx.memory.setLimit('lots'), { instanceOf: RangeError, message: /percentage like '50%'/ });
}, SERIAL);

// --- tidy and memory pressure: every device -------------------------------------

deviceTestSerial('tidy disposes what fn made, except what it returns', (t, device) => {
  const before = gx.memory.stats(device).liveTensors;
  const kept = gx.tidy(() => {
    const a = gx.ones([4], { device });
    const b = a.clone().fill_(2);
    const c = b.view(2, 2);
    return { c, list: [a.to(device)] };
  });
  t.is(gx.memory.stats(device).liveTensors, before + 2);
  sameValues(t, kept.c.toArraySync(), [2, 2, 2, 2]);
  kept.c.dispose();
  kept.list[0].dispose();
  const inner = gx.tidy(() => gx.tidy(() => gx.zeros([3], { device })).clone());
  t.is(gx.memory.stats(device).liveTensors, before + 1);
  inner.dispose();
  t.throws(() => gx.tidy(() => { gx.ones([2], { device }); throw new Error('inside'); }), { message: 'inside' });
  t.is(gx.memory.stats(device).liveTensors, before, 'tensors of a throwing fn are disposed');
  t.throws(() => gx.tidy(() => Promise.resolve(1)), { instanceOf: TypeError, message: /synchronous/ });
});

deviceTestSerial('live bytes return to baseline after 100k op calls with dispose and tidy', (t, device) => {
  // Tensors other tests forgot are finalized inside collections (NOTE [ Finalizers inside the GC ]):
  // collect them now, or one collected during the loop would move the count.
  globalThis.gc?.();
  const before = gx.memory.stats(device);
  using x = gx.ones([64], { device });
  for (let i = 0; i < 50_000; i++) x.clone().dispose();
  for (let i = 0; i < 500; i++) gx.tidy(() => { for (let k = 0; k < 100; k++) x.clone(); });
  const after = gx.memory.stats(device);
  t.is(after.liveTensors, before.liveTensors + 1);
  t.is(after.allocatedBytes, before.allocatedBytes + (device === 'cuda' ? 512 : 256));
});

// A program that forgets tensors and yields now and then (as servers and
// async code do) stays bounded: NOTE [ Memory pressure ] makes the
// collections happen (test/memory-pressure.test.ts: without yielding too).
deviceTestSerial('with finalizers alone, memory stays bounded (pressure reported to the JS engine)', async (t, device) => {
  const chunk = 1 << 20;  // 4 MiB float32 tensors
  let peak = 0;
  for (let i = 0; i < 4000; i++) {  // 16 GiB if nothing were collected
    gx.empty([chunk], { device });
    if (i % 100 === 0) {
      peak = Math.max(peak, gx.memory.stats(device).allocatedBytes);
      await new Promise((r) => setImmediate(r));
    }
  }
  t.true(peak < 4 * 2 ** 30, `peak ${(peak / 2 ** 30).toFixed(2)} GiB allocated`);
});

cudaTest('examples/streams-events: the CuPy course streams example runs and matches the CPU', async (t) => {
  const root = path.resolve(__dirname, '../..');
  const example = path.join(root, 'examples/streams-events');
  await build({ config: path.join(example, 'setup.config.json'), arch: 'native' });
  const { execFileSync } = await import('child_process');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', example]);
  const out = execFileSync(process.execPath, [path.join(example, 'main.js')], { encoding: 'utf8' });
  const m = /max \|cuda - cpu\| = ([\d.e+-]+)/.exec(out);
  t.truthy(m, out);
  t.true(Number(m?.[1]) < 1e-5, out);
}, SERIAL);
