// ChunkedTensor.max / min in gx.max's forms (NOTE [ Chunked max and min ]):
// the whole-tensor element, and along one axis `{ values, indices }` with
// indices counted along the whole axis, against gx.max / gx.min on the whole
// tensor, for tensors chunked along the axis, across it and both, with ties
// (the first occurrence, also across blocks) and NaN; amax / amin as values
// only; blocks over two devices where there is a GPU; no tensor left behind.
import * as gx from '../lib';
import { deviceTestSerial, rng } from './helpers';

/** Values from a few levels (ties), NaN at `nanRate` for floats. */
function tied(n: number, seed: number, nanRate: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => (r() < nanRate ? NaN : Math.floor(r() * 5) - 2));
}

/** Exact equality of two tensors' elements (NaN equal to NaN, -0.0 told from 0.0), as plain numbers. */
function same(a: gx.Tensor, b: gx.Tensor): boolean {
  const x = Array.from(a.toArraySync() as ArrayLike<number | bigint>, Number), y = Array.from(b.toArraySync() as ArrayLike<number | bigint>, Number);
  return x.length === y.length && x.every((v, k) => Object.is(v, y[k]));
}

deviceTestSerial('ChunkedTensor.max / min: gx.max\'s forms, global indices, ties and NaN across blocks, amax / amin', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const devices = device === 'cpu' ? [device] : [device, 'cpu'];
  const cases: [gx.DType, number, (number | number[])[]][] = [
    ['float64', 0.05, [4, 10]], ['float64', 0.05, [13, 3]], ['float32', 0.1, [[2, 5, 6], [7, 3]]], ['float64', 0, [13, 10]],
    ['int32', 0, [5, 4]], ['bool', 0, [[6, 7], 3]],
  ];
  let seed = 1;
  for (const [dtype, nanRate, chunks] of cases) {
    gx.tidy(() => {
      const v = tied(130, seed++, nanRate);
      const x = dtype === 'bool' ? gx.tensor(v.map((e) => e > 0), { device }).reshape([13, 10]) : gx.tensor(v, { dtype, device }).reshape([13, 10]);
      using c = gx.chunked(x, { chunks, devices });
      const what = `${dtype} chunks ${JSON.stringify(chunks)} on ${devices.join(', ')}`;
      for (const largest of [true, false]) {
        const name = largest ? 'max' : 'min';
        const whole = largest ? gx.max(x) : gx.min(x);
        t.true(same(largest ? c.max() : c.min(), whole), `${name}() ${what}`);
        for (const axis of [0, 1, -1]) {
          const [cv, ci] = largest ? c.max(axis) : c.min(axis);
          using values = cv, indices = ci;
          const want = largest ? gx.max(x, axis) : gx.min(x, axis);
          t.deepEqual([values.shape, indices.shape, indices.dtype], [want.values.shape, want.indices.shape, 'int64'], `${name}(${axis}) ${what}: shapes`);
          t.true(same(values.compute(), want.values), `${name}(${axis}) ${what}: values`);
          t.deepEqual(indices.compute().toNested(), want.indices.toNested(), `${name}(${axis}) ${what}: indices`);
          using a = largest ? c.amax(axis) : c.amin(axis);
          t.true(same(a.compute(), largest ? gx.amax(x, axis) : gx.amin(x, axis)), `a${name}(${axis}) ${what}`);
        }
        t.true(same(largest ? c.amax() : c.amin(), whole), `a${name}() ${what}`);
      }
    });
  }
  gx.tidy(() => {
    // A tie across blocks goes to the earlier block, and the first NaN of a line wins wherever it lies.
    const x = gx.tensor([[1, 7, 3, 7, 7], [NaN, 2, 9, NaN, 1], [0, 1, -4, 1, NaN]], { dtype: 'float64', device });
    using c = gx.chunked(x, { chunks: [2, [2, 1, 2]], devices });
    const m = c.max(1), n = c.min(1);
    t.deepEqual(m.indices.compute().toNested(), [1, 0, 4]);
    t.deepEqual(n.indices.compute().toNested(), [0, 0, 4]);  // NaN counts as the minimum too
    t.deepEqual(c.max(0).indices.compute().toNested(), [1, 0, 1, 1, 2]);
    for (const r of [m, n]) for (const p of r) p.dispose();
    t.throws(() => c.max(2), { instanceOf: RangeError, message: /^ChunkedTensor\.max: axis 2 is out of range for 2 dimensions/ });
    t.throws(() => c.amin(-3), { instanceOf: RangeError, message: /^ChunkedTensor\.amin: axis -3 is out of range/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});
