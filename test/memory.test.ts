// Allocator reuse, statistics, and leak checks. Serial: they read global counters.
import * as gx from '../lib';
import { native } from '../lib/core/native';
import { deviceTestSerial, sameValues } from './helpers';

deviceTestSerial('live tensors and bytes return to baseline after many create/dispose cycles', (t, device) => {
  const before = gx.memory.stats(device);
  for (let i = 0; i < 2000; i++) {
    const a = gx.arange(0, 100 + (i % 7), 1, { dtype: 'float32', device });
    const v = a.view(-1);
    const c = v.contiguous();
    const moved = c.to('cpu');
    const back = moved.to(device);
    const k = back.clone().fill_(i);
    for (const x of [a, v, c, moved, back, k]) x.dispose();
  }
  const after = gx.memory.stats(device);
  t.is(after.liveTensors, before.liveTensors, 'live tensors');
  t.is(after.allocatedBytes, before.allocatedBytes, 'allocated bytes');
  if (device === 'cpu') t.is(after.numAllocs - before.numAllocs, after.numFrees - before.numFrees, 'every cpu allocation freed');
});

deviceTestSerial('a freed block is reused without a new device allocation', (t, device) => {
  if (device === 'cpu') {
    // Small cpu blocks come from malloc, uncached (NOTE [ Host caching allocator ]); the
    // reuse of large ones is tested in cpu-parallel.test.ts. The counters add up either way.
    const before = gx.memory.stats('cpu');
    const a = gx.empty([1000]);
    t.is(gx.memory.stats('cpu').allocatedBytes - before.allocatedBytes, 4000);
    t.is(gx.memory.stats('cpu').liveTensors - before.liveTensors, 1);
    a.dispose();
    t.is(gx.memory.stats('cpu').allocatedBytes, before.allocatedBytes);
    return;
  }
  const n = 3 * 1024 * 1024;  // 12 MiB: a large-pool block
  const first = gx.empty([n], { device });
  const ptr = native.describe(first.handle()).dataPtr;
  first.dispose();
  const s1 = gx.memory.stats(device);
  const second = gx.empty([n], { device });
  const s2 = gx.memory.stats(device);
  t.is(native.describe(second.handle()).dataPtr, ptr, 'same block handed out again');
  t.is(s2.numDeviceMallocs, s1.numDeviceMallocs, 'no cudaMalloc on reuse');
  t.is(s2.numCacheHits, s1.numCacheHits + 1);
  t.is(s2.allocatedBytes - s1.allocatedBytes, n * 4);
  second.dispose();
  // Small requests are carved out of shared segments.
  const smalls = Array.from({ length: 50 }, () => gx.empty([100], { device }));
  const s3 = gx.memory.stats(device);
  t.true(s3.numDeviceMallocs - s2.numDeviceMallocs <= 1, 'fifty small tensors need at most one segment');
  smalls.forEach((x) => x.dispose());
});

deviceTestSerial('statistics add up: reserved = allocated + cached', (t, device) => {
  const keep = [gx.zeros([1000], { device }), gx.zeros([5_000_000], { device })];
  const s = gx.memory.stats(device);
  t.is(s.reservedBytes, s.allocatedBytes + s.cachedBytes);
  t.true(s.allocatedBytes >= 4000 + 20_000_000);
  t.true(s.peakAllocatedBytes >= s.allocatedBytes);
  t.true(s.liveTensors >= 2);
  keep.forEach((x) => x.dispose());
  gx.memory.emptyCache(device);
  const e = gx.memory.stats(device);
  t.is(e.reservedBytes, e.allocatedBytes + e.cachedBytes);
  if (device === 'cuda') t.is(e.cachedBytes, 0, 'emptyCache released every free segment');
});

deviceTestSerial('out of memory is a clear error and the allocator keeps working', (t, device) => {
  if (device === 'cpu') {
    // 4 PiB is beyond any host's address space.
    const err = t.throws(() => gx.empty([2 ** 25, 2 ** 25], { dtype: 'float32' }));  // 4 PiB
    t.regex(err?.message ?? '', /out of host memory|too large/);
  } else {
    using keep = gx.tensor([1, 2, 3], { device });
    gx.memory.setLimit(64 * 1024 * 1024, device);
    try {
      const err = t.throws(() => gx.empty([64 * 1024 * 1024], { device }));
      t.regex(err?.message ?? '', /out of memory on cuda:0: tried to allocate 256\.00 MiB/);
      t.is((err as Error & { code?: string }).code, 'GX_OUT_OF_MEMORY');
    } finally {
      gx.memory.setLimit(0, device);
    }
    sameValues(t, keep.toArraySync(), [1, 2, 3]);
  }
  using after = gx.ones([10], { device });
  sameValues(t, after.toArraySync(), new Array(10).fill(1));
});

deviceTestSerial('tensors left to the garbage collector are freed by the finalizer backstop', async (t, device) => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) {
    t.fail('the suite runs with --expose-gc (package.json ava.nodeArguments)');
    return;
  }
  const before = gx.memory.stats(device).liveTensors;
  (() => {
    for (let i = 0; i < 200; i++) gx.zeros([16], { device });
  })();
  for (let i = 0; i < 10 && gx.memory.stats(device).liveTensors > before; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  t.is(gx.memory.stats(device).liveTensors, before);
});
