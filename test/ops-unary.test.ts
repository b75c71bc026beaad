// Unary built-in ops, where, clamp and astype against plain-JS references on
// random inputs, on every device: every claimed dtype, non-contiguous views,
// `out` (poisoned first), in place, bad input, no leaks.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, poisonCache, poisonOf } from './helpers';
import { gxFunction, UNARY_NAMES, UNARY_REF, UNARY_SPECS, type UnaryName } from './elementwise-reference';
import {
  ALL_DTYPES, broadcastIndex, cast, close, computeOf, isFloat, live, load, make, numel, randomIn, round,
  tolerance, values, type Compute, type Domain, type V,
} from './ops-reference';

interface Case {
  /** float: integer and bool inputs give float32; keep: the dtype stays, bool is refused. */
  kind: 'float' | 'keep';
  /** In the compute type: numbers for float/double, bigints for int. */
  ref: (x: V, c: Compute, common: gx.DType) => V;
  domain?: (d: gx.DType) => Domain;
  /** Absolute tolerance on top of the result dtype's relative one (float ops). */
  atol?: number;
}

/** Inputs and tolerances per op (any values where none is given). */
const OVERRIDES: Partial<Record<UnaryName, Partial<Case>>> = {
  exp: { domain: () => ({ lo: -20, hi: 20 }) },
  log: { domain: (d) => ({ lo: d === 'bool' ? 0 : 1e-2, hi: 100, avoidZero: d !== 'bool' }) },
  log1p: { domain: () => ({ lo: -0.9, hi: 100 }), atol: 1e-7 },
  sqrt: { domain: () => ({ lo: 0, hi: 100 }) },
  rsqrt: { domain: () => ({ lo: 1e-2, hi: 100, avoidZero: true }) },
  sin: { domain: () => ({ lo: -10, hi: 10 }), atol: 1e-6 },
  cos: { domain: () => ({ lo: -10, hi: 10 }), atol: 1e-6 },
  tanh: { domain: () => ({ lo: -5, hi: 5 }), atol: 1e-7 },
  sigmoid: { domain: () => ({ lo: -20, hi: 20 }), atol: 1e-7 },
  gelu: { domain: () => ({ lo: -4, hi: 4 }), atol: 2e-6 },
  softplus: { domain: () => ({ lo: -30, hi: 30 }), atol: 1e-7 },
  round: { domain: (d) => (isFloat(d) ? { lo: -8, hi: 8 } : {}) },
  tan: { domain: () => ({ lo: -1.5, hi: 1.5 }), atol: 1e-6 },
  asin: { domain: () => ({ lo: -1, hi: 1 }), atol: 1e-7 },
  acos: { domain: () => ({ lo: -1, hi: 1 }), atol: 1e-7 },
  atan: { atol: 1e-7 },
  sinh: { domain: () => ({ lo: -10, hi: 10 }), atol: 1e-7 },
  cosh: { domain: () => ({ lo: -10, hi: 10 }) },
  asinh: { atol: 1e-7 },
  acosh: { domain: () => ({ lo: 1, hi: 100 }), atol: 1e-7 },
  atanh: { domain: () => ({ lo: -0.99, hi: 0.99 }), atol: 1e-7 },
  expm1: { domain: () => ({ lo: -20, hi: 20 }), atol: 1e-7 },
  exp2: { domain: () => ({ lo: -20, hi: 20 }) },
  log2: { domain: (d) => ({ lo: d === 'bool' ? 0 : 1e-2, hi: 100, avoidZero: d !== 'bool' }), atol: 1e-7 },
  log10: { domain: (d) => ({ lo: d === 'bool' ? 0 : 1e-2, hi: 100, avoidZero: d !== 'bool' }), atol: 1e-7 },
  erf: { domain: () => ({ lo: -4, hi: 4 }), atol: 1e-7 },
  erfc: { domain: () => ({ lo: -4, hi: 4 }), atol: 1e-7 },
  erfinv: { domain: () => ({ lo: -0.99, hi: 0.99 }), atol: 1e-6 },
  reciprocal: { domain: (d) => ({ avoidZero: d !== 'bool' }) },
  silu: { domain: () => ({ lo: -20, hi: 20 }), atol: 1e-7 },
  mish: { domain: () => ({ lo: -20, hi: 20 }), atol: 1e-7 },
  selu: { domain: () => ({ lo: -20, hi: 20 }), atol: 1e-7 },
  elu: { domain: () => ({ lo: -20, hi: 20 }), atol: 1e-7 },
  logSigmoid: { domain: () => ({ lo: -20, hi: 20 }), atol: 1e-7 },
  hardsigmoid: { domain: () => ({ lo: -5, hi: 5 }) },
  hardtanh: { domain: () => ({ lo: -3, hi: 3 }) },
};

// Every op of ops/op-list.js: its dtype rule from there, its reference from elementwise-reference.ts.
const CASES = Object.fromEntries(UNARY_NAMES.map((name): [UnaryName, Case] =>
  [name, { kind: UNARY_SPECS[name].kind, ref: UNARY_REF[name], ...OVERRIDES[name] }])) as Record<UnaryName, Case>;
const NAMES = UNARY_NAMES;

type Fn = (x: gx.Tensor, opts?: gx.OutOptions) => gx.Tensor;
const FN = Object.fromEntries(UNARY_NAMES.map((name) => [name, gxFunction(name)])) as Record<UnaryName, Fn>;

function resultDtype(c: Case, d: gx.DType): gx.DType {
  return c.kind === 'float' && !isFloat(d) ? 'float32' : d;
}

function expected(c: Case, x: gx.Tensor, outDtype: gx.DType): V[] {
  const common = resultDtype(c, x.dtype);
  const comp = computeOf(common);
  return values(x).map((v) => cast(round(c.ref(load(v, x.dtype, comp, common), comp, common), comp), outDtype));
}

function check(t: import('ava').ExecutionContext, name: UnaryName, x: gx.Tensor, what: string, opts?: gx.OutOptions): void {
  const c = CASES[name];
  const r = FN[name](x, opts);
  try {
    const outDtype = opts?.out?.dtype ?? resultDtype(c, x.dtype);
    t.is(r.dtype, outDtype, `${what}: dtype`);
    t.deepEqual(r.shape, x.shape, `${what}: shape`);
    // The value is computed in the op's own result dtype and then converted to
    // out's: it is as exact as the coarser of the two (float32 exp stored in a
    // float64 out carries float32's rounding).
    const computed = resultDtype(c, x.dtype);
    const coarser = tolerance(computed) > tolerance(outDtype) ? computed : outDtype;
    const rtol = c.kind === 'float' ? tolerance(coarser) : 0;
    const atol = c.kind === 'float' ? Math.max(c.atol ?? 0, coarser === 'float16' || coarser === 'bfloat16' ? 1e-3 : 0) * (coarser === 'float64' ? 1e-6 : 1) : 0;
    close(t, values(r), expected(c, x, outDtype), what, rtol, atol);
  } finally {
    if (opts?.out === undefined) r.dispose();
  }
}

for (const name of NAMES) {
  deviceTest(`${name}: every dtype it claims, contiguous and not`, (t, device) => {
    const c = CASES[name];
    let seed = 1;
    const dtypes = c.kind === 'float' ? ALL_DTYPES : ALL_DTYPES.filter((d) => d !== 'bool');
    for (const d of dtypes) {
      const dom = c.domain?.(d) ?? {};
      for (const shape of [[3, 5], [1027], []]) {
        using x = make(randomIn(d, numel(shape), seed++, dom), d, shape, device);
        poisonCache(device, numel(shape), resultDtype(c, d));
        check(t, name, x, `${name}(${d} ${JSON.stringify(shape)}) on ${device}`);
      }
      using base = make(randomIn(d, 15, seed++, dom), d, [3, 5], device);
      using tr = base.asStrided([5, 3], [1, 5], 0);
      check(t, name, tr, `${name}(transposed ${d}) on ${device}`);
      using stepped = base.asStrided([7], [2], 1);
      check(t, name, stepped, `${name}(stepped ${d}) on ${device}`);
    }
    using empty = gx.zeros([0, 3], { device });
    using r = FN[name](empty);
    t.deepEqual(r.shape, [0, 3]);
  });
}

deviceTest('unary out and in place: results converted to out\'s dtype; in place keeps the dtype', (t, device) => {
  using x = make(randomIn('float32', 12, 5, { lo: 0.1, hi: 5 }), 'float32', [3, 4], device);
  for (const od of ['float32', 'float64', 'float16'] as const) {
    using out = gx.full([3, 4], poisonOf(od) as number, { dtype: od, device });
    t.is(gx.exp(x, { out }), out);
    check(t, 'exp', x, `exp(float32, { out: ${od} }) on ${device}`, { out });
  }
  using iout = gx.full([3, 4], poisonOf('int64') as bigint, { dtype: 'int64', device });
  using i = make(randomIn('int16', 12, 6), 'int16', [3, 4], device);
  check(t, 'abs', i, `abs(int16, { out: int64 }) on ${device}`, { out: iout });
  for (const name of ['exp', 'sqrt', 'neg', 'abs', 'floor', 'relu', 'sigmoid'] as const) {
    using y = make(randomIn('float16', 12, 7, { lo: 0, hi: 4 }), 'float16', [3, 4], device);
    const want = expected(CASES[name], y, 'float16');
    const method = `${name}_` as 'exp_';
    t.is(y[method](), y);
    t.is(y.dtype, 'float16');
    close(t, values(y), want, `float16.${name}_() on ${device}`, CASES[name].kind === 'float' ? tolerance('float16') : 0, 1e-3);
  }
  using k = make(randomIn('int32', 6, 8), 'int32', [6], device);
  const want = values(k).map((v) => -Number(v));
  t.is(k.neg_(), k);
  close(t, values(k), want, `int32.neg_() on ${device}`);
  t.throws(() => k.exp_(), { instanceOf: TypeError, message: /^Tensor\.exp_: the result's dtype float32 cannot be stored in self of dtype int32/ });
});

deviceTest('where: condition, tensors and JS numbers broadcast; the result dtype is theirs promoted', (t, device) => {
  let seed = 20;
  using cond = make(randomIn('bool', 12, seed++), 'bool', [3, 4], device);
  using row = make(randomIn('bool', 4, seed++), 'bool', [4], device);
  const cases: [gx.Tensor, gx.Operand, gx.Operand][] = [];
  using a = make(randomIn('float32', 12, seed++), 'float32', [3, 4], device);
  using b = make(randomIn('int32', 4, seed++), 'int32', [4], device);
  using h = make(randomIn('float16', 3, seed++), 'float16', [3, 1], device);
  using i8 = make(randomIn('int8', 12, seed++), 'int8', [3, 4], device);
  cases.push([cond, a, b], [cond, b, a], [row, a, 0], [cond, 2.5, h], [row, h, b], [cond, i8, -3], [cond, 1, 0], [row, true, i8]);
  using tr = a.asStrided([4, 3], [1, 4], 0);
  using ctr = cond.asStrided([4, 3], [1, 4], 0);
  cases.push([ctr, tr, 7]);
  for (const [c, x, y] of cases) {
    const r = gx.where(c, x, y);
    try {
      const common = gx.resultType(x, y);
      const comp = computeOf(common);
      const shapes = [c.shape, ...[x, y].filter((v): v is gx.Tensor => v instanceof gx.Tensor).map((v) => v.shape)];
      const len = Math.max(...shapes.map((s) => s.length));
      const shape = new Array<number>(len).fill(1);
      for (const s of shapes) s.forEach((d, k) => { if (d !== 1) shape[len - s.length + k] = d; });
      t.deepEqual(r.shape, shape);
      t.is(r.dtype, common);
      const cv = values(c), ci = broadcastIndex(shape, c.shape);
      const side = (v: gx.Operand): ((i: number) => V) => {
        if (v instanceof gx.Tensor) {
          const vals = values(v), idx = broadcastIndex(shape, v.shape);
          return (i) => load(vals[idx(i)], v.dtype, comp, common);
        }
        const s: V = typeof v === 'boolean' ? (v ? 1 : 0) : v;
        return () => (comp === 'int' ? BigInt(s) : comp === 'float' ? Math.fround(Number(s)) : Number(s));
      };
      const fx = side(x), fy = side(y);
      const want = Array.from({ length: numel(shape) }, (_, i) => cast(cv[ci(i)] ? fx(i) : fy(i), common));
      close(t, values(r), want, `where(${[c, x, y].map((v) => (v instanceof gx.Tensor ? `${v.dtype} ${JSON.stringify(v.shape)}` : String(v))).join(', ')}) on ${device}`);
    } finally {
      r.dispose();
    }
  }
  using m = a.where(cond, 0);
  close(t, values(m), values(a).map((v, i) => (values(cond)[i] ? v : 0)), `Tensor.where on ${device}`);
});

deviceTest('clamp: either bound optional, min > max gives max, NaN stays, integer tensors with number bounds', (t, device) => {
  let seed = 40;
  const ref = (v: number, lo?: number, hi?: number): number => {
    if (Number.isNaN(v)) return v;
    let r = v;
    if (lo !== undefined && r < lo) r = lo;
    if (hi !== undefined && r > hi) r = hi;
    return r;
  };
  for (const d of ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'int32', 'int64', 'uint8'] as const) {
    using x = make(randomIn(d, 20, seed++, isFloat(d) ? { lo: -20, hi: 20 } : { lo: -60, hi: 60 }), d, [4, 5], device);
    for (const [lo, hi] of [[-10, 10], [undefined, 5], [2, undefined], [5, 2], [-1000, 1000]] as const) {
      // An integer dtype takes the bounds as torch converts them: a uint8 -10 is 246 (so min > max, and max wins, as
      // torch.clamp(uint8, -10, 10) gives 10 everywhere); -1000 fits neither int8 nor uint8, and torch refuses it.
      if ((d === 'int8' || d === 'uint8') && lo === -1000) {
        t.throws(() => gx.clamp(x, lo, hi), { instanceOf: RangeError, message: `gx.clamp: min -1000 is out of range for ${d} ${d === 'int8' ? '[-128, 127]' : '[0, 255] (or -255 to -1, which wrap)'}` });
        continue;
      }
      const asBound = (b: number | undefined): number | undefined => (d === 'uint8' && b !== undefined && b < 0 ? b + 256 : b);
      const r = gx.clamp(x, lo, hi);
      try {
        t.is(r.dtype, d);
        const want = values(x).map((v) => cast(ref(Number(v), asBound(lo), asBound(hi)), d));
        close(t, values(r), want, `clamp(${d}, ${lo}, ${hi}) on ${device}`);
      } finally {
        r.dispose();
      }
    }
  }
  using i = make([1, 5, 9], 'int32', [3], device);
  using f = gx.clamp(i, 2.5, 7);
  t.is(f.dtype, 'float32');
  close(t, values(f), [2.5, 5, 7], `clamp(int32, 2.5, 7) on ${device}`);
  using n = gx.tensor([Number.NaN, -3, 3], { device });
  close(t, values(n.clamp(-1, 1)), [Number.NaN, -1, 1], `clamp keeps NaN on ${device}`);
  using y = gx.tensor([-3, 0.5, 3], { device });
  t.is(y.clamp_(0, 1), y);
  close(t, values(y), [0, 0.5, 1], `clamp_ on ${device}`);
});

deviceTest('astype: every pair of dtypes converts as a C++ cast (floats truncate toward zero, bool is nonzero)', (t, device) => {
  let seed = 60;
  for (const from of ALL_DTYPES) {
    for (const to of ALL_DTYPES) {
      // In range of every target, so the float-to-integer conversions are defined.
      const dom: Domain = isFloat(from) ? { lo: to === 'uint8' || to === 'bool' ? 0 : -100, hi: 100 } : from === 'int64' ? { lo: -1e12, hi: 1e12 } : {};
      using x = make(randomIn(from, 24, seed++, dom), from, [2, 3, 4], device);
      using y = gx.astype(x, to);
      t.is(y.dtype, to);
      t.deepEqual(y.shape, [2, 3, 4]);
      close(t, values(y), values(x).map((v) => cast(v, to)), `astype(${from} -> ${to}) on ${device}`);
    }
  }
  using base = make(randomIn('float32', 12, 99), 'float32', [3, 4], device);
  using tr = base.asStrided([4, 3], [1, 4], 0);
  using h = tr.astype('float16');
  close(t, values(h), values(tr).map((v) => cast(v, 'float16')), `astype of a transposed view on ${device}`);
});

deviceTest('unary bad input names the op and the dtype or argument', (t, device) => {
  using b = gx.ones([3], { dtype: 'bool', device });
  using x = gx.ones([3], { device });
  t.throws(() => gx.neg(b), { instanceOf: TypeError, message: 'gx.neg: dtype bool is not supported (got bool [3])' });
  t.throws(() => b.abs(), { instanceOf: TypeError, message: 'Tensor.abs: dtype bool is not supported (got bool [3])' });
  t.throws(() => Reflect.apply(gx.exp, undefined, [3]), { instanceOf: TypeError, message: "gx.exp: argument 'self' must be a Tensor, got number 3" });
  t.throws(() => gx.where(x, x, x), { instanceOf: TypeError, message: /^gx\.where: condition must be a bool tensor, got float32 \[3\]/ });
  using c = gx.ones([2], { dtype: 'bool', device });
  t.throws(() => gx.where(c, x, 0), { message: /^gx\.where: shapes \[2\] and \[3\] do not broadcast/ });
  t.throws(() => gx.clamp(x), { instanceOf: TypeError, message: 'gx.clamp: needs min or max (or both)' });
  t.throws(() => Reflect.apply(gx.clamp, undefined, [x, 'a']), { instanceOf: TypeError, message: /^gx\.clamp: min must be a number or bigint/ });
  t.throws(() => Reflect.apply(gx.astype, undefined, [x, 'float8']), { instanceOf: TypeError, message: /^gx\.astype: unknown dtype "float8"/ });
  using wrong = gx.empty([4], { device });
  t.throws(() => gx.exp(x, { out: wrong }), { message: 'gx.exp: out has shape [4] but the result has shape [3]' });
});

deviceTestSerial('unary ops, where, clamp and astype leave no tensors behind', (t, device) => {
  using x = gx.ones([2, 3], { device });
  using c = gx.ones([2, 3], { dtype: 'bool', device });
  const before = live(device);
  for (const name of NAMES) FN[name](x).dispose();
  gx.where(c, x, 0).dispose();
  gx.clamp(x, 0, 1).dispose();
  x.astype('int8').dispose();
  x.exp_().log_();
  t.throws(() => gx.neg(c));
  t.throws(() => x.astype('nope' as gx.DType));
  t.is(live(device), before);
});

test('unary result dtypes: float ops promote integers to float32, the rest keep the dtype', (t) => {
  for (const name of NAMES) {
    for (const d of ALL_DTYPES) {
      if (CASES[name].kind === 'keep' && d === 'bool') continue;
      using x = gx.zeros([1], { dtype: d });
      using r = FN[name](x);
      t.is(r.dtype, resultDtype(CASES[name], d), `${name}(${d})`);
    }
  }
});
