// The tensor cache (NOTE [ Tensor cache ] in csrc/core/tensor_cache.cpp): a
// small tensor the program disposes carries the next tensor of its byte size
// on the same thread, device and stream, with the new shape and dtype; what it
// holds is neither live nor allocated in gx.memory's figures; memory another
// tensor still uses (a view) and memory of another stream never comes back
// through it. Serial: they read the allocators' figures and addresses.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

import * as gx from '../lib';
import { cudaTest, deviceTestSerial, randomValues, sameValues } from './helpers';

deviceTestSerial('a disposed small tensor\'s memory carries the next tensor of its byte size, in its new shape and dtype', (t, device) => {
  const xs = randomValues('float64', 3, 21) as Float64Array;
  using x = gx.tensor(xs, { device });
  const live = gx.memory.stats(device).liveTensors;
  gx.mul(x, 2).dispose();  // 3 float64: 24 bytes
  t.is(gx.memory.stats(device).liveTensors, live, 'a disposed tensor is not live');
  const before = gx.memory.stats(device);
  const y2 = gx.mul(x, 2);  // the figures above emptied the cache: this one comes from the allocator
  const again = y2.address();
  y2.dispose();
  using z = gx.full([2, 3], 7, { dtype: 'int32', device });  // 6 int32: 24 bytes
  t.is(z.address(), again, 'the same memory, taken back');
  t.is(gx.memory.stats(device).numAllocs - before.numAllocs, 1, 'one allocation: z came from the cache');
  t.deepEqual([z.shape, z.strides, z.dtype, z.isContiguous()], [[2, 3], [3, 1], 'int32', true]);
  sameValues(t, z.toArraySync(), new Array(6).fill(7));
  t.is(gx.memory.stats(device).liveTensors, live + 1);
  // And an op result in it computes what it should.
  const w0 = gx.add(x, 1);
  const a0 = w0.address();
  w0.dispose();
  using w = gx.sub(x, 0.5);
  t.is(w.address(), a0);
  sameValues(t, w.toArraySync(), Array.from(xs, (v) => v - 0.5));
});

deviceTestSerial('what the cache holds is neither live nor allocated in the figures, and a loop leaks nothing', (t, device) => {
  using x = gx.tensor(randomValues('float32', 5, 3) as Float32Array, { device });
  const before = gx.memory.stats(device);
  for (let i = 0; i < 200; i++) gx.tidy(() => { gx.exp(gx.mul(gx.neg(x), 0.5)); });  // tidy's disposals are cached too
  const after = gx.memory.stats(device);
  t.is(after.liveTensors, before.liveTensors);
  t.is(after.allocatedBytes, before.allocatedBytes);
  gx.memory.emptyCache(device);
  t.is(gx.memory.stats(device).allocatedBytes, before.allocatedBytes);
});

deviceTestSerial('a view keeps its memory when its base is disposed, whatever is allocated next', (t, device) => {
  const xs = randomValues('float32', 8, 9) as Float32Array;
  const base = gx.tensor(xs, { device });
  using v = base.reshape(2, 4);  // shares the base's storage
  const address = base.address();
  base.dispose();
  using other = gx.full([8], 3, { device });  // the base's byte size
  t.not(other.address(), address, 'the memory the view still uses is not handed out');
  sameValues(t, v.toArraySync(), xs, 'the view reads what the base held');
  // Disposing the view first: its memory is the base's, so the view is not cached either.
  const b2 = gx.tensor(xs, { device });
  const v2 = b2.reshape(4, 2);
  v2.dispose();
  using other2 = gx.full([8], 5, { device });
  t.not(other2.address(), b2.address());
  sameValues(t, b2.toArraySync(), xs);
  b2.dispose();
});

cudaTest('a tensor disposed on one stream is not handed to an allocation on another', (t) => {
  using x = gx.tensor(randomValues('float32', 4, 2) as Float32Array, { device: 'cuda' });
  const s = new gx.Stream();
  const y = gx.mul(x, 3);  // allocated on the default stream
  const address = y.address();
  y.dispose();
  const z = gx.withStream(s, () => gx.mul(x, 3));
  t.not(z.address(), address, 'another stream gets other memory');
  s.synchronize();
  z.dispose();
}, { serial: true });

deviceTestSerial('a cache full of tensors nobody asks for still takes the next disposed one', (t, device) => {
  using x = gx.tensor(randomValues('float32', 1, 4) as Float32Array, { device });
  using w = gx.tensor(randomValues('float64', 1, 5) as Float64Array, { device });
  const before = gx.memory.stats(device);
  // 1100 4-byte temporaries disposed at once: more than the cache's 1024 entries.
  gx.tidy(() => {
    let y = x;
    for (let i = 0; i < 1100; i++) y = gx.mul(y, 1.5);
  });
  const a = gx.mul(w, 2);  // 8 bytes: none cached
  a.dispose();
  using b = gx.mul(w, 3);
  t.is(gx.memory.stats(device).numAllocs - before.numAllocs, 1101, 'the 1100 temporaries and a: b came from the cache');
  sameValues(t, b.toArraySync(), [w.toArraySync()[0] * 3]);
});

deviceTestSerial('a tidy\'s temporaries all come back to its next run, and the cache holds at most 16 MiB', (t, device) => {
  using x = gx.tensor(randomValues('float32', 1, 6) as Float32Array, { device });
  const chain = (n: number, y0: gx.Tensor): void => gx.tidy(() => {
    let y = y0;
    for (let i = 0; i < n; i++) y = gx.mul(y, 1.5);
  });
  let before = gx.memory.stats(device);
  chain(300, x);  // from the allocator: the figures above emptied the cache
  chain(300, x);  // every one from the cache
  t.is(gx.memory.stats(device).numAllocs - before.numAllocs, 300, 'the second run allocated nothing');
  // 300 temporaries of 64 KiB, the largest cached, are more than the cache's 16 MiB (256 of them): some are freed.
  using big = gx.tensor(randomValues('float32', 16384, 7) as Float32Array, { device });
  before = gx.memory.stats(device);
  chain(300, big);
  chain(300, big);
  const second = gx.memory.stats(device).numAllocs - before.numAllocs - 300;
  t.true(second >= 300 - 256 && second < 300, `the second run allocated ${second}: at most 256 came from the cache, some did`);
  const after = gx.memory.stats(device);
  t.is(after.liveTensors, before.liveTensors);
  t.is(after.allocatedBytes, before.allocatedBytes);
});

deviceTestSerial('GPUEXT_TENSOR_CACHE=0 turns the cache off: every tensor comes from the allocator', (t, device) => {
  // The same dispose-then-allocate as above, in a process started with the cache off.
  const script = `
    const gx = require(${JSON.stringify(path.resolve(__dirname, '../lib'))});
    const x = gx.tensor([1, 2, 3], { dtype: 'float64', device: '${device}' });
    const before = gx.memory.stats('${device}');
    gx.mul(x, 2).dispose();
    const z = gx.mul(x, 3);
    console.log(JSON.stringify({ allocs: gx.memory.stats('${device}').numAllocs - before.numAllocs, z: z.toArraySync()[2] }));`;
  for (const [value, allocs] of [['0', 2], ['1', 1]] as const) {
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, GPUEXT_TENSOR_CACHE: value }, timeout: 60_000 });
    t.is(r.status, 0, r.stderr);
    t.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop() ?? ''), { allocs, z: 9 }, `GPUEXT_TENSOR_CACHE=${value}`);
  }
});
