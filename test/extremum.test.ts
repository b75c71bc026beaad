// gx.max / gx.min and their methods in torch's three forms (NOTE [ The forms
// of max and min ]): all elements, one axis ({ values, indices }, the first
// extremum, NaN counting as one), a list of axes (as amax), and two tensors
// (maximum), against JS references on random inputs with ties and NaNs, on
// every device; gradients to one element; refusals; gx.fuse's view of them.
import type { ExecutionContext } from 'ava';
import test from 'ava';

import * as gx from '../lib';
import { fusedKernel } from '../lib/jit/fuse';
import { deviceTest, rng } from './helpers';

/** A [3, 5, 4] float64 tensor of a few levels (ties) with some NaNs, and its values. */
function sample(seed: number, d: string, nanRate = 0): { x: gx.Tensor; v: number[] } {
  const r = rng(seed);
  const v = Array.from({ length: 60 }, () => (r() < nanRate ? NaN : Math.floor(r() * 6) - 3));
  return { x: gx.tensor(v, { dtype: 'float64', device: d }).reshape([3, 5, 4]), v };
}

/** Along `axis` of a [3, 5, 4] array: the extremum of each line (NaN wins) and its first index. */
function alongRef(v: number[], axis: number, largest: boolean): { values: number[]; indices: number[] } {
  const shape = [3, 5, 4], strides = [20, 4, 1];
  const rest = [0, 1, 2].filter((a) => a !== axis);
  const values: number[] = [], indices: number[] = [];
  for (let i = 0; i < shape[rest[0]]; i++) {
    for (let j = 0; j < shape[rest[1]]; j++) {
      const line = Array.from({ length: shape[axis] }, (_, k) => v[i * strides[rest[0]] + j * strides[rest[1]] + k * strides[axis]]);
      let at = line.findIndex(Number.isNaN);
      if (at < 0) {
        const best = largest ? Math.max(...line) : Math.min(...line);
        at = line.indexOf(best);
      }
      values.push(line[at]);
      indices.push(at);
    }
  }
  return { values, indices };
}

const nums = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint>, Number);
const sameAll = (t: ExecutionContext, got: number[], want: number[], what: string): void => {
  t.is(got.length, want.length, what);
  t.true(got.every((g, i) => (Number.isNaN(want[i]) ? Number.isNaN(g) : g === want[i])), `${what}: ${got} vs ${want}`);
};

deviceTest('max / min along one axis give { values, indices } (also [values, indices]): the first extremum, NaN counting as one, every form', (t, d) => {
  gx.tidy(() => {
    for (const [seed, nanRate] of [[1, 0], [2, 0.1]] as const) {
      const { x, v } = sample(seed, d, nanRate);
      for (const largest of [true, false]) {
        const f = largest ? gx.max : gx.min, name = largest ? 'max' : 'min';
        for (const axis of [0, 1, 2, -1]) {
          const want = alongRef(v, (axis + 3) % 3, largest);
          const [values, indices] = f(x, axis);
          sameAll(t, nums(values), want.values, `${name} values axis ${axis} seed ${seed}`);
          sameAll(t, nums(indices), want.indices, `${name} indices axis ${axis} seed ${seed}`);
          t.is(indices.dtype, 'int64');
          const o = f(x, { axis, keepdims: true });
          t.deepEqual(o.values.shape, x.shape.map((s, k) => (k === (axis + 3) % 3 ? 1 : s)));
          sameAll(t, nums(o.indices), want.indices, `${name} { axis, keepdims }`);
          const m = largest ? x.max(axis) : x.min({ axis });
          sameAll(t, nums(m.values), want.values, `Tensor.${name}`);
        }
      }
    }
    // Integers and bools.
    const ints = gx.tensor([3, 7, 7, -1, 2, 2], { dtype: 'int32', device: d }).reshape([2, 3]);
    const mi = gx.max(ints, 1);
    t.deepEqual([mi.values.dtype, mi.values.toNested(), mi.indices.toNested()], ['int32', [7, 2], [1, 1]]);
    const b = gx.tensor([false, true, true, false, false, false], { dtype: 'bool', device: d }).reshape([2, 3]);
    const mb = gx.min(b, 1);
    t.deepEqual([mb.values.dtype, mb.values.toNested(), mb.indices.toNested()], ['bool', [false, false], [0, 0]]);
    // A 0-d input: itself and index 0.
    const s = gx.max(gx.tensor(2.5, { device: d }), 0);
    t.deepEqual([s.values.shape, s.values.item(), s.indices.item()], [[], 2.5, 0]);
  });
});

deviceTest('max / min of everything, over a list of axes (as amax / amin), and of two tensors (as maximum / minimum)', (t, d) => {
  gx.tidy(() => {
    const { x, v } = sample(3, d);
    t.is(gx.max(x).item(), Math.max(...v));
    t.is(x.min().item(), Math.min(...v));
    t.deepEqual(gx.max(x, [0, 2]).toNested(), gx.amax(x, [0, 2]).toNested());
    t.deepEqual(x.min({ axis: [1], keepdims: true }).toNested(), gx.amin(x, 1, { keepdims: true }).toNested());
    t.deepEqual(gx.max(x, null).shape, []);
    const y = sample(4, d).x;
    t.deepEqual(gx.max(x, y).toNested(), gx.maximum(x, y).toNested());
    t.deepEqual(x.min(y).toNested(), gx.minimum(x, y).toNested());
    const out = gx.empty([3, 5, 4], { dtype: 'float64', device: d });
    gx.max(x, y, { out });
    t.deepEqual(out.toNested(), gx.maximum(x, y).toNested());
  });
});

deviceTest('the values\' gradient reaches the one element the index names (torch\'s max.dim; amax shares it among ties)', (t, d) => {
  gx.tidy(() => {
    // torch: torch.max([[1, 3, 3, 2], [nan, 1, nan, 0]], 1).values.sum().backward() gives [[0, 1, 0, 0], [1, 0, 0, 0]].
    const x = gx.tensor([[1, 3, 3, 2], [NaN, 1, NaN, 0]], { dtype: 'float64', device: d }).requiresGrad_();
    gx.sum(gx.max(x, 1).values).backward();
    t.deepEqual(x.grad?.toNested(), [[0, 1, 0, 0], [1, 0, 0, 0]]);
    const y = gx.tensor([[1, 3, 3, 2]], { dtype: 'float64', device: d }).requiresGrad_();
    gx.sum(gx.amax(y, 1)).backward();
    t.deepEqual(y.grad?.toNested(), [[0, 0.5, 0.5, 0]]);
    const z = gx.rand([3, 4], { dtype: 'float64', device: d }).requiresGrad_();
    const r = gx.autograd.gradcheck((a) => gx.min(a, 0, { keepdims: true }).values, [z], { raiseException: false });
    t.true(r.ok, JSON.stringify(r.worst));
  });
});

deviceTest('refusals name the function: out and dtype with one axis, an empty axis, an axis out of range', (t, d) => {
  gx.tidy(() => {
    const x = gx.rand([2, 3], { device: d });
    t.throws(() => gx.max(x, 1, { out: gx.empty([2], { device: d }) } as gx.ExtremumOptions), { instanceOf: TypeError, message: /^gx\.max: with one axis it gives \{ values, indices \} and takes no out; .*gx\.amax\(x, axis, \{ out \}\)/ });
    t.throws(() => x.min({ axis: 0, dtype: 'float64' } as gx.ExtremumOptions & { axis: number }), { instanceOf: TypeError, message: /^Tensor\.min: takes no dtype option/ });
    t.throws(() => gx.max(gx.empty([3, 0], { device: d }), 1), { instanceOf: RangeError, message: /^gx\.max: cannot reduce zero elements/ });
    t.throws(() => x.max(2), { instanceOf: RangeError, message: /^Tensor\.max: axis 2 is out of range/ });
    t.throws(() => gx.max(x, 1, { keepdim: true } as gx.ExtremumOptions), { instanceOf: TypeError, message: /^gx\.max: unknown option 'keepdim'; did you mean 'keepdims'/ });
  });
});

test('gx.fuse fuses amax along an axis; max along one axis (its result is { values, indices }) runs unfused, saying to fuse amax', (t) => {
  const f = gx.fuse((x: gx.Tensor) => gx.amax(gx.exp(x), 1));
  const x = gx.rand([3, 4]);
  t.deepEqual(f(x).toNested(), gx.amax(gx.exp(x), 1).toNested());
  const g = gx.fuse((a: gx.Tensor) => gx.max(gx.exp(a), 1).values);
  t.deepEqual(g(x).toNested(), gx.max(gx.exp(x), 1).values.toNested(), 'not a final reduction: it runs unfused');
  // Returning max along one axis (not a tensor, so gx.fuse's type refuses it: called as plain JS would): it runs
  // unfused, giving what the eager call gives, and source() says why.
  for (const [body, what] of [[(a: gx.Tensor) => gx.max(gx.exp(a), 1), 'max'], [(a: gx.Tensor) => gx.exp(a).min({ axis: -1 }), 'min']] as const) {
    const h: unknown = Reflect.apply(gx.fuse, undefined, [body]);
    t.is(fusedKernel(h as object, x), undefined);
    const [v, i] = Reflect.apply(h as (a: gx.Tensor) => gx.SortResult, undefined, [x]);
    t.deepEqual([v.toNested(), i.toNested()], [body(x).values.toNested(), body(x).indices.toNested()]);
    t.throws(() => Reflect.apply(Reflect.get(h as object, 'source') as (a: gx.Tensor) => string, undefined, [x]),
      { message: new RegExp(`${what} along one axis gives \\{ values, indices \\}; fuse gx\\.a${what}\\(x, axis\\), the reduction`) });
  }
  x.dispose();
});
