// The staging area (NOTE [ Staging area ] in csrc/binding/staging.h): the
// shape an allocation reads there, the address it leaves there, and one
// buffer per thread.
import test from 'ava';

import * as gx from '../lib';
import { allocate } from '../lib/creation';
import { parseDevice } from '../lib/device';
import { native } from '../lib/native';
import { STAGED_LAST_ADDRESS, STAGED_SHAPE, stagingArea } from '../lib/staging';
import { deviceTest, poisonCache, sameValues } from './helpers';

test('every caller on a thread gets the same staging buffer', (t) => {
  const a = native.stagingArea();
  const b = native.stagingArea();
  t.is(a.buffer, b.buffer);
  t.is(stagingArea().buffer, a.buffer);
  t.true(a.length >= STAGED_SHAPE + 16);
});

deviceTest('allocate() reads its shape from the staging area and knows its address without asking', (t, device) => {
  const d = parseDevice(device, 'test');
  for (const shape of [[], [0], [7], [3, 5], [2, 1, 4, 3], new Array(16).fill(1)]) {
    const n = shape.reduce((p, x) => p * x, 1);
    poisonCache(device, Math.max(n, 1), 'float32');
    using x = allocate(shape, 'float32', d);
    t.deepEqual(x.shape, shape);
    t.is(x.address('test'), native.dataAddress(x.handle('test')), `[${shape.join(', ')}]`);
    x.fill_(2.5);
    sameValues(t, x.toArraySync(), new Array(n).fill(2.5));
  }
  // A tensor the core made last leaves its address; 0 for an empty one.
  using e = allocate([0], 'float32', d);
  t.is(stagingArea()[STAGED_LAST_ADDRESS], native.dataAddress(e.handle('test')));
});

deviceTest('emptyStaged checks the shape it reads', (t, device) => {
  const d = parseDevice(device, 'test');
  const before = gx.memory.stats(device).liveTensors;
  const st = stagingArea();
  t.throws(() => native.emptyStaged(17, 0, d.typeCode, d.index), { instanceOf: RangeError, message: /at most 16 dimensions, got 17/ });
  t.throws(() => native.emptyStaged(-1, 0, d.typeCode, d.index), { instanceOf: RangeError, message: /at most 16 dimensions, got -1/ });
  st[STAGED_SHAPE] = 2.5;
  t.throws(() => native.emptyStaged(1, 0, d.typeCode, d.index), { instanceOf: TypeError, message: /shape\[0\] must be a non-negative integer, got 2.5/ });
  st[STAGED_SHAPE] = -3;
  t.throws(() => native.emptyStaged(1, 0, d.typeCode, d.index), { instanceOf: TypeError, message: /shape\[0\] must be a non-negative integer, got -3/ });
  st[STAGED_SHAPE] = Number.NaN;
  t.throws(() => native.emptyStaged(1, 0, d.typeCode, d.index), { instanceOf: TypeError, message: /shape\[0\] must be a non-negative integer, got nan/i });
  t.is(gx.memory.stats(device).liveTensors, before);
});
