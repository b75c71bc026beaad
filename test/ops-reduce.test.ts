// Reductions (sum, prod, mean, max, min, argmax, argmin) against plain-JS
// references on random inputs, on every device: every claimed dtype, one
// axis, several, all, keepdims, negative axes, 0-d and empty inputs, long
// reductions (the multi-block CUDA paths), non-contiguous inputs, `out`,
// bad input, no leaks.
import * as gx from '../lib';
import { deviceTest, deviceTestSerial, poisonOf } from './helpers';
import { ALL_DTYPES, cast, close, closeEach, isFloat, live, make, numel, randomIn, tolerance, values, type V } from './ops-reference';

type Name = 'sum' | 'prod' | 'mean' | 'max' | 'min' | 'argmax' | 'argmin';
// max and min are the reductions, gx.amax and gx.amin (gx.max along one axis gives { values, indices }: test/extremum.test.ts).
const FN = {
  sum: gx.sum, prod: gx.prod, mean: gx.mean, max: gx.amax, min: gx.amin, argmax: gx.argmax, argmin: gx.argmin,
} as const;
type Opts = { axis?: number | number[]; keepdims?: boolean; dtype?: gx.DType; out?: gx.Tensor };
const call = (name: Name, x: gx.Tensor, opts?: Opts): gx.Tensor => Reflect.apply(FN[name], undefined, [x, opts]) as gx.Tensor;

function resultDtype(name: Name, d: gx.DType, asked?: gx.DType): gx.DType {
  if (name === 'argmax' || name === 'argmin') return 'int64';
  if (name === 'max' || name === 'min') return d;
  if (asked !== undefined) return asked;
  return name === 'mean' || isFloat(d) ? d : 'int64';
}

/** For each output (C order), the list of (value, index-within-the-reduction) it reduces. */
function groups(vals: readonly V[], shape: readonly number[], axes: readonly number[]): V[][] {
  const kept = shape.map((_, i) => i).filter((i) => !axes.includes(i));
  const outCount = numel(kept.map((i) => shape[i]));
  const out: V[][] = Array.from({ length: outCount }, () => []);
  const idx = new Array<number>(shape.length).fill(0);
  for (let flat = 0; flat < vals.length; flat++) {
    let o = 0;
    for (const k of kept) o = o * shape[k] + idx[k];
    out[o].push(vals[flat]); // C order within the group: the reduced dims' C order
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/** The reference result and the tolerance of each output. */
function reference(name: Name, x: gx.Tensor, axes: readonly number[], asked?: gx.DType): { want: V[]; atol: number[] } {
  const d = x.dtype;
  const res = resultDtype(name, d, asked);
  const compute = asked ?? d;
  const gs = groups(values(x), x.shape, axes);
  const want: V[] = [], atol: number[] = [];
  for (const g of gs) {
    const nums = g.map((v) => (isFloat(compute) ? Number(cast(v, compute)) : v));
    switch (name) {
      case 'sum':
      case 'mean': {
        if (isFloat(compute)) {
          let s = 0, mag = 0;
          for (const v of nums) { s += Number(v); mag += Math.abs(Number(v)); }
          const r = name === 'mean' ? s / g.length : s;
          want.push(cast(r, res));
          // Float accumulation (CUDA) is looser than the result's rounding.
          const acc = compute === 'float64' ? 1e-13 : 3e-6;
          atol.push(acc * (name === 'mean' ? mag / Math.max(g.length, 1) : mag) + tolerance(res) * Math.abs(r));
        } else {
          let s = 0n;
          for (const v of nums) s += BigInt(v);
          want.push(cast(s, res));
          atol.push(0);
        }
        break;
      }
      case 'prod': {
        if (isFloat(compute)) {
          let p = 1;
          for (const v of nums) p *= Number(v);
          want.push(cast(p, res));
          atol.push((tolerance(res) + 1e-6 * g.length) * Math.abs(p));
        } else {
          let p = 1n;
          for (const v of nums) p = BigInt.asIntN(64, p * BigInt(v));
          want.push(cast(p, res));
          atol.push(0);
        }
        break;
      }
      case 'max':
      case 'min': {
        let best: V | undefined;
        for (const v of nums) {
          if (typeof v === 'number' && Number.isNaN(v)) { best = v; break; }
          if (best === undefined || (name === 'max' ? v > best : v < best)) best = v;
        }
        want.push(cast(best as V, res));
        atol.push(0);
        break;
      }
      case 'argmax':
      case 'argmin': {
        let bi = 0;
        for (let i = 1; i < nums.length; i++) {
          const v = nums[i], b = nums[bi];
          if (typeof b === 'number' && Number.isNaN(b)) break;
          if ((typeof v === 'number' && Number.isNaN(v)) || (name === 'argmax' ? v > b : v < b)) bi = i;
        }
        want.push(BigInt(bi));
        atol.push(0);
        break;
      }
    }
  }
  return { want, atol };
}

function check(t: import('ava').ExecutionContext, name: Name, x: gx.Tensor, opts: Opts, what: string): void {
  const shape = x.shape;
  // No axis, or an empty list (as torch.sum(x, dim=[])), reduces every axis.
  const every = opts.axis === undefined || (Array.isArray(opts.axis) && opts.axis.length === 0);
  const axisList = every ? shape.map((_, i) => i) : (typeof opts.axis === 'number' ? [opts.axis] : opts.axis as number[])
    .map((a) => (a < 0 ? a + Math.max(shape.length, 1) : a));
  const axes = shape.length === 0 ? [] : axisList;
  const r = call(name, x, opts);
  try {
    const outShape = opts.keepdims ? shape.map((s, i) => (axes.includes(i) ? 1 : s)) : shape.filter((_, i) => !axes.includes(i));
    t.deepEqual(r.shape, outShape, `${what}: shape`);
    const res = opts.out?.dtype ?? resultDtype(name, x.dtype, opts.dtype);
    t.is(r.dtype, res, `${what}: dtype`);
    const { want, atol } = reference(name, x, axes, opts.dtype);
    closeEach(t, values(r), want, atol, what);
  } finally {
    if (opts.out === undefined) r.dispose();
  }
}

const DTYPES: Record<Name, readonly gx.DType[]> = {
  sum: ALL_DTYPES, prod: ALL_DTYPES, mean: ['float32', 'float64', 'float16', 'bfloat16'], max: ALL_DTYPES, min: ALL_DTYPES,
  argmax: ALL_DTYPES.filter((d) => d !== 'bool'), argmin: ALL_DTYPES.filter((d) => d !== 'bool'),
};

for (const name of Object.keys(FN) as Name[]) {
  deviceTest(`${name}: every dtype it claims over one axis, several, all, keepdims and negative axes`, (t, device) => {
    let seed = 1;
    for (const d of DTYPES[name]) {
      const dom = name === 'prod' ? (isFloat(d) ? { lo: 0.5, hi: 1.5 } : { lo: -3, hi: 3 }) : {};
      using x = make(randomIn(d, 60, seed++, dom), d, [3, 4, 5], device);
      const axesList: (number | number[] | undefined)[] = name.startsWith('arg') ? [undefined, 0, 1, 2, -1] : [undefined, 0, 1, 2, -1, [0, 2], [1, 2], [0, 1, 2], []];
      for (const axis of axesList) {
        for (const keepdims of [false, true]) {
          check(t, name, x, { axis, keepdims }, `${name}(${d} [3, 4, 5], axis ${JSON.stringify(axis)}, keepdims ${keepdims}) on ${device}`);
        }
      }
      using tr = x.asStrided([5, 3, 4], [1, 20, 5], 0); // a permuted view
      for (const axis of name.startsWith('arg') ? [0, 2] : [0, [1, 2], undefined]) {
        check(t, name, tr, { axis }, `${name}(permuted ${d}, axis ${JSON.stringify(axis)}) on ${device}`);
      }
      using z = make(randomIn(d, 1, seed++, dom), d, [], device);
      check(t, name, z, {}, `${name}(0-d ${d}) on ${device}`);
      check(t, name, z, { axis: 0 }, `${name}(0-d ${d}, axis 0) on ${device}`);
    }
  });
}

deviceTest('long reductions: full, few outputs with many elements, many outputs with few', (t, device) => {
  let seed = 100;
  for (const d of ['float32', 'float16', 'bfloat16', 'float64', 'int32', 'uint8'] as const) {
    using big = make(randomIn(d, 100003, seed++), d, [100003], device);
    for (const name of ['sum', 'max', 'min', 'argmax', 'argmin'] as const) {
      check(t, name, big, {}, `${name}(${d} [100003]) on ${device}`);
    }
    if (isFloat(d)) check(t, 'mean', big, {}, `mean(${d} [100003]) on ${device}`);
    using rows = make(randomIn(d, 2 * 30001, seed++), d, [2, 30001], device);
    check(t, 'sum', rows, { axis: 1 }, `sum(${d} [2, 30001], axis 1) on ${device}`);
    check(t, 'argmin', rows, { axis: 1 }, `argmin(${d} [2, 30001], axis 1) on ${device}`);
    check(t, 'sum', rows, { axis: 0 }, `sum(${d} [2, 30001], axis 0) on ${device}`);
    using tall = make(randomIn(d, 40000 * 3, seed++), d, [40000, 3], device);
    check(t, 'sum', tall, { axis: 1 }, `sum(${d} [40000, 3], axis 1) on ${device}`);
    check(t, 'max', tall, { axis: 1 }, `max(${d} [40000, 3], axis 1) on ${device}`);
    check(t, 'sum', tall, { axis: 0 }, `sum(${d} [40000, 3], axis 0) on ${device}`);
    using tview = tall.asStrided([3, 40000], [1, 3], 0);
    check(t, 'sum', tview, {}, `sum(transposed ${d} [3, 40000]) on ${device}`);
    check(t, 'argmax', tview, { axis: 1 }, `argmax(transposed ${d} [3, 40000], axis 1) on ${device}`);
  }
  // An offset (unaligned) contiguous run: the general path.
  using v = make(randomIn('float32', 5003, 7), 'float32', [5003], device);
  using off = v.asStrided([5000], [1], 3);
  check(t, 'sum', off, {}, `sum(offset view) on ${device}`);
});

deviceTest('empty inputs: sum 0, prod 1, mean NaN; empty kept dims give empty results', (t, device) => {
  using e = gx.zeros([3, 0], { device });
  for (const [name, want] of [['sum', 0], ['prod', 1], ['mean', Number.NaN]] as const) {
    using r = call(name, e, { axis: 1 });
    t.deepEqual(r.shape, [3]);
    close(t, values(r), [want, want, want], `${name} over an empty axis on ${device}`);
    using all = call(name, e);
    close(t, values(all), [want], `${name} of an empty tensor on ${device}`);
  }
  using r0 = gx.amax(e, { axis: 0 });
  t.deepEqual(r0.shape, [0]);
  using ie = gx.zeros([0], { dtype: 'int32', device });
  using s = gx.sum(ie);
  t.is(s.dtype, 'int64');
  t.is(s.item(), 0);
  t.throws(() => gx.amax(e, { axis: 1 }), { instanceOf: RangeError, message: 'gx.amax: cannot reduce zero elements (input of shape [3, 0], axis 1): max has no identity' });
  t.throws(() => gx.argmin(e), { instanceOf: RangeError, message: /^gx\.argmin: cannot reduce zero elements \(input of shape \[3, 0\]\)/ });
});

deviceTest('dtype option and out: sums computed in the asked dtype; results written into out', (t, device) => {
  using i = make(randomIn('int32', 12, 30), 'int32', [3, 4], device);
  check(t, 'sum', i, { axis: 1, dtype: 'float64' }, `sum(int32, dtype float64) on ${device}`);
  check(t, 'mean', i, { dtype: 'float32' }, `mean(int32, dtype float32) on ${device}`);
  using h = make(randomIn('float16', 12, 31), 'float16', [3, 4], device);
  check(t, 'sum', h, { axis: 0, dtype: 'float32' }, `sum(float16, dtype float32) on ${device}`);
  using out = gx.full([3], poisonOf('float64') as number, { dtype: 'float64', device });
  using f = make(randomIn('float32', 12, 32), 'float32', [3, 4], device);
  t.is(gx.sum(f, { axis: 1, out }), out);
  check(t, 'sum', f, { axis: 1, out }, `sum(float32, { out: float64 }) on ${device}`);
  using kout = gx.full([3, 1], poisonOf('int64') as bigint, { dtype: 'int64', device });
  check(t, 'argmax', f, { axis: 1, keepdims: true, out: kout }, `argmax(..., keepdims, { out }) on ${device}`);
  using m = f.mean(1);
  t.deepEqual(m.shape, [3]);
  using chain = f.add(1).mul(2).sum();
  t.is(chain.shape.length, 0);
  t.true(Math.abs((chain.item() as number) - values(f).reduce<number>((a, v) => a + (Number(v) + 1) * 2, 0)) < 1e-3);
});

deviceTest('reductions: bad axes and dtypes name the op, the shape and the axis', (t, device) => {
  using x = gx.ones([2, 3], { device });
  using i = gx.ones([2, 3], { dtype: 'int32', device });
  using b = gx.ones([2], { dtype: 'bool', device });
  t.throws(() => gx.sum(x, 2), { instanceOf: RangeError, message: 'gx.sum: axis 2 is out of range for an input of shape [2, 3] (2 dimensions; valid: -2 to 1)' });
  t.throws(() => x.max({ axis: -3 }), { instanceOf: RangeError, message: /^Tensor\.max: axis -3 is out of range for an input of shape \[2, 3\]/ });
  t.throws(() => gx.sum(x, [0, -2]), { instanceOf: RangeError, message: 'gx.sum: axis [0,-2] names dimension 0 twice' });
  t.throws(() => Reflect.apply(gx.argmax, undefined, [x, { axis: [0, 1] }]), { instanceOf: TypeError, message: /^gx\.argmax: takes one axis/ });
  t.throws(() => gx.mean(i), { instanceOf: TypeError, message: /^gx\.mean: dtype int32 is not supported \(got int32 \[2, 3\]\); mean needs a floating-point input/ });
  t.throws(() => gx.argmax(b), { instanceOf: TypeError, message: 'gx.argmax: dtype bool is not supported (got bool [2])' });
  t.throws(() => Reflect.apply(gx.max, undefined, [x, { dtype: 'float64' }]), { instanceOf: TypeError, message: /^gx\.max: takes no dtype option/ });
  t.throws(() => Reflect.apply(gx.sum, undefined, [x, { axis: 'a' }]), { instanceOf: TypeError, message: /^gx\.sum: axis must be a number or an array of numbers/ });
  using wrong = gx.empty([2], { device });
  t.throws(() => gx.sum(x, { axis: 0, out: wrong }), { message: 'gx.sum: out has shape [2] but the result has shape [3]' });
  using iout = gx.empty([3], { dtype: 'int32', device });
  t.throws(() => gx.sum(x, { axis: 0, out: iout }), { instanceOf: TypeError, message: 'gx.sum: the result\'s dtype float32 cannot be written into out of dtype int32' });
});

deviceTestSerial('reductions leave no tensors behind', (t, device) => {
  using x = gx.ones([4, 5], { device });
  using big = gx.ones([20000], { device });
  const before = live(device);
  for (const name of Object.keys(FN) as Name[]) {
    call(name, x).dispose();
    call(name, x, { axis: 1, keepdims: true }).dispose();
    call(name, big).dispose();
  }
  t.throws(() => gx.sum(x, 5));
  t.is(live(device), before);
});

// Found by the fuzz suite (test/fuzz/): { dtype } converts the input before reducing, as torch does.
deviceTest('sum, prod and mean with { dtype } convert the input to it first', (t, device) => {
  using a = gx.tensor([1e300, -1e300], { dtype: 'float64', device });
  t.true(Number.isNaN(gx.sum(a, { dtype: 'float32' }).item()), 'inf + -inf');
  using b = gx.tensor([0.5], { device });
  t.is(gx.sum(b, { dtype: 'bool' }).item(), true);
  using c = gx.tensor([65520, -249, -8], { dtype: 'int32', device });
  t.is(gx.sum(c, { dtype: 'float16' }).item(), Infinity);
  using d = gx.tensor([-1], { dtype: 'int8', device });
  using out = gx.zeros([], { dtype: 'int32', device });
  gx.sum(d, { dtype: 'uint8', out });
  t.is(out.item(), 255);
  using e = gx.tensor([0.5, 3], { device });
  t.is(gx.prod(e, { dtype: 'int32' }).item(), 0);
  t.is(gx.mean(gx.tensor([1e300, 1], { dtype: 'float64', device }), { dtype: 'float32' }).item(), Infinity);
});

deviceTest('var and std of one non-finite element are NaN', (t, device) => {
  for (const v of [NaN, Infinity, -Infinity]) {
    using x = gx.tensor([v], { device });
    t.true(Number.isNaN(gx.var(x, { correction: 0 }).item()), `var([${v}])`);
    t.true(Number.isNaN(gx.std(x, { correction: 0 }).item()), `std([${v}])`);
  }
  using y = gx.tensor([[2, NaN], [5, 5]], { device });
  const r = gx.var(y, { axis: 1, correction: 0 }).toArraySync();
  t.true(Number.isNaN(r[0]));
  t.is(r[1], 0);
});
