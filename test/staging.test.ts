// The staging area (NOTE [ Staging area ] in csrc/binding/staging.h): the
// shape an allocation reads there, the address it leaves there, and one
// buffer per thread.
import test from 'ava';

import * as gx from '../lib';
import { allocate } from '../lib/ops/creation/creation';
import { parseDevice } from '../lib/core/device';
import { native } from '../lib/core/native';
import { MAX_DIMS } from '../lib/core/shape';
import { STAGED_ARGS, STAGED_EMPTY, STAGED_LAST_ADDRESS, STAGED_MAX_ARGS, STAGED_SHAPE, stagingArea } from '../lib/core/staging';
import {
  STAGED_OP_ARGS, STAGED_RESULT_PENDING, STAGED_RESULT_SHAPE, STAGED_SIZE, STAGED_VIEW, STAGED_VIEW_SHAPE, STAGED_VIEW_STRIDES,
} from '../lib/generated/staging';
import { deviceTest, poisonCache, sameValues, type ErrorClass } from './helpers';

test('lib/core/staging.ts has the core\'s layout of the staging area', (t) => {
  t.deepEqual(native.stagingLayout(), [STAGED_LAST_ADDRESS, STAGED_ARGS, STAGED_MAX_ARGS, STAGED_EMPTY, STAGED_SHAPE,
    STAGED_RESULT_PENDING, STAGED_RESULT_SHAPE, STAGED_VIEW, STAGED_VIEW_SHAPE, STAGED_VIEW_STRIDES, STAGED_SIZE]);
  t.is(STAGED_OP_ARGS, STAGED_RESULT_SHAPE + MAX_DIMS);
  t.is(stagingArea().length, STAGED_SIZE);
});

test('every caller on a thread gets the same staging buffer', (t) => {
  const a = native.stagingArea();
  const b = native.stagingArea();
  t.is(a.buffer, b.buffer);
  t.is(stagingArea().buffer, a.buffer);
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

deviceTest('emptyStaged checks the request it reads', (t, device) => {
  const d = parseDevice(device, 'test');
  const before = gx.memory.stats(device).liveTensors;
  const st = stagingArea();
  const request = (ndim: number, dims: number[], dtype = 0, type = d.typeCode, index = d.index): void => {
    st.set([ndim, dtype, type, index, ...dims], STAGED_EMPTY);
  };
  const fails = (cls: ErrorClass, re: RegExp): void => void t.throws(() => native.emptyStaged(), { instanceOf: cls, message: re });
  request(17, []);
  fails(RangeError, /at most 16 dimensions, got 17/);
  request(-1, []);
  fails(TypeError, /ndim must be a non-negative integer, got -1/);
  request(1, [2.5]);
  fails(TypeError, /shape\[0\] must be a non-negative integer, got 2.5/);
  request(2, [3, -3]);
  fails(TypeError, /shape\[1\] must be a non-negative integer, got -3/);
  request(1, [Number.NaN]);
  fails(TypeError, /shape\[0\] must be a non-negative integer, got nan/i);
  request(1, [4], 99);
  fails(TypeError, /unknown dtype code 99/);
  request(1, [4], 0, 7);
  fails(TypeError, /unknown device type 7/);
  request(1, [4], 0, 1, 64);
  // A CPU-only core has no CUDA devices to count: any CUDA device is refused, saying why.
  if (native.cudaCompiled) fails(RangeError, /cuda:64|device index 64/);
  else fails(Error, /built for the CPU only/);
  t.is(gx.memory.stats(device).liveTensors, before);
  request(2, [2, 3]);
  using x = new gx.Tensor(native.emptyStaged());
  t.deepEqual(x.shape, [2, 3]);
  t.is(x.device.toString(), d.toString());
});
