// Binary built-in ops against plain-JS references on random inputs, on every
// device: every claimed dtype, broadcasting (size-1, 0-d, zero-size,
// non-contiguous views), JS numbers on either side, mixed dtypes, `out`
// (poisoned first), in place; bad input errors that name the op and shapes.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, poisonCache, poisonOf } from './helpers';
import { BINARY_NAMES, BINARY_REF, BINARY_SPECS, gxFunction, INEXACT_BINARY, type BinaryName } from './elementwise-reference';
import {
  ALL_DTYPES, broadcastIndex, cast, close, computeOf, isFloat, live, load, make, numel, randomIn, round, tolerance,
  values, type Compute, type Domain, type V,
} from './ops-reference';

type Kind = (typeof BINARY_SPECS)[BinaryName]['kind'];

interface Case {
  kind: Kind;
  /** The reference in the compute type (numbers for float/double, bigints for int, 0/1 for bool). */
  ref: (a: V, b: V, c: Compute) => V | boolean;
  dtypes: readonly gx.DType[];
  /** Input domains by dtype class. */
  domain?: (d: gx.DType, side: 'a' | 'b') => Domain;
  /** Results may differ from the reference by rounding (pow). */
  inexact?: boolean;
  /** JS numbers to try as the other operand, by the tensor's dtype. */
  scalars: (d: gx.DType) => (number | bigint | boolean)[];
}

const NUMERIC = ALL_DTYPES.filter((d) => d !== 'bool');
const floatScalars = [2.5, 3, -1.25];
const scalarsFor = (d: gx.DType): (number | bigint | boolean)[] =>
  d === 'bool' ? [true, 2, 0.5] : isFloat(d) ? floatScalars : d === 'uint8' ? [3, 2.5] : d === 'int64' ? [3, -7n, 2.5] : [3, -2, 2.5];

/** Where an op needs other inputs than the defaults (every dtype it claims, scalarsFor, any values). */
const OVERRIDES: Partial<Record<BinaryName, Partial<Case>>> = {
  div: {
    scalars: (d) => (d === 'bool' ? [2, 0.5] : [4, -2.5]),
    domain: (d, side) => (side === 'b' ? { avoidZero: true } : {}),
  },
  pow: {
    scalars: (d) => (isFloat(d) ? [2, 0.5, -1.5] : [2, 3, 0]),
    domain: (d, side) => (isFloat(d) ? (side === 'a' ? { lo: 0.5, hi: 2 } : { lo: -3, hi: 3 })
      : side === 'a' ? { lo: d === 'uint8' ? 0 : -4, hi: 4 } : { lo: 0, hi: 5 }),
  },
  remainder: {
    scalars: (d) => (isFloat(d) ? [3, -2.5] : d === 'uint8' ? [3] : [3, -3]),
    domain: (d, side) => (side === 'b' ? { avoidZero: true, ...(isFloat(d) ? { lo: -20, hi: 20 } : d === 'uint8' ? {} : { lo: -50, hi: 50 }) } : {}),
  },
  fmod: {
    scalars: (d) => (isFloat(d) ? [3, -2.5] : d === 'uint8' ? [3] : [3, -3]),
    domain: (d, side) => (side === 'b' ? { avoidZero: true, ...(isFloat(d) ? { lo: -20, hi: 20 } : d === 'uint8' ? {} : { lo: -50, hi: 50 }) } : {}),
  },
  // Zero divisors included: integers give 0, floats x / 0 (NOTE [ Floor division ] in ops/binary/functors.h).
  floorDivide: {
    scalars: (d) => (isFloat(d) ? [3, -2.5, 0] : d === 'uint8' ? [3, 0] : [3, -3, -1, 0]),
    domain: (d, side) => (side === 'b' ? (isFloat(d) ? { lo: -20, hi: 20 } : d === 'uint8' ? { lo: 0, hi: 20 } : { lo: -50, hi: 50 }) : {}),
  },
  logicalAnd: { scalars: () => [0, 2, true, 0.5] },
  logicalOr: { scalars: () => [0, false, 1.5] },
  logicalXor: { scalars: () => [0, 7, true] },
};

// Every op of ops/op-list.js: its dtype rule from there, its reference from elementwise-reference.ts.
const CASES = Object.fromEntries(BINARY_NAMES.map((name): [BinaryName, Case] => [name, {
  kind: BINARY_SPECS[name].kind, ref: BINARY_REF[name], scalars: scalarsFor, inexact: INEXACT_BINARY.has(name),
  dtypes: 'noBool' in BINARY_SPECS[name] ? NUMERIC : ALL_DTYPES, ...OVERRIDES[name],
}])) as Record<BinaryName, Case>;

type Fn = (a: gx.Operand, b: gx.Operand, opts?: gx.OutOptions) => gx.Tensor;
const FN = Object.fromEntries(BINARY_NAMES.map((name) => [name, gxFunction(name)])) as Record<BinaryName, Fn>;

/** The dtype an op computes in and the dtype of its result, for these operands. */
function dtypesOf(c: Case, a: gx.Operand, b: gx.Operand): { common: gx.DType; result: gx.DType } {
  let common = gx.resultType(a, b);
  if (c.kind === 'div' && !isFloat(common)) common = 'float32';
  return { common, result: c.kind === 'compare' || c.kind === 'logical' ? 'bool' : common };
}

/** What `a op b` holds, element by element (C order over the broadcast shape). */
function expected(c: Case, a: gx.Operand, b: gx.Operand, outShape: readonly number[], outDtype?: gx.DType): V[] {
  const { common, result } = dtypesOf(c, a, b);
  const comp: Compute = c.kind === 'logical' ? 'bool' : computeOf(common);
  const side = (x: gx.Operand): ((i: number) => V) => {
    if (x instanceof gx.Tensor) {
      const vals = values(x);
      const idx = broadcastIndex(outShape, x.shape);
      return (i) => load(vals[idx(i)], x.dtype, comp, common);
    }
    // A JS scalar enters in the compute type directly (no rounding through a 16-bit common dtype).
    const s: V = typeof x === 'boolean' ? (x ? 1 : 0) : x;
    const v: V = comp === 'int' ? BigInt(s) : comp === 'bool' ? (Number(s) !== 0 ? 1 : 0) : comp === 'float' ? Math.fround(Number(s)) : Number(s);
    return () => v;
  };
  const fa = side(a), fb = side(b);
  const out: V[] = [];
  for (let i = 0; i < numel(outShape); i++) {
    const r = c.ref(fa(i), fb(i), comp);
    const v = typeof r === 'boolean' ? (r ? 1 : 0) : round(r, comp);
    out.push(cast(v, outDtype ?? result));
  }
  return out;
}

function check(t: import('ava').ExecutionContext, name: BinaryName, a: gx.Operand, b: gx.Operand, what: string,
  opts?: gx.OutOptions): void {
  const c = CASES[name];
  const aShape = a instanceof gx.Tensor ? a.shape : [];
  const bShape = b instanceof gx.Tensor ? b.shape : [];
  const len = Math.max(aShape.length, bShape.length);
  const pad = (s: readonly number[]): number[] => [...new Array<number>(len - s.length).fill(1), ...s];
  const outShape = pad(aShape).map((d, i) => (d === 1 ? pad(bShape)[i] : d));
  const r = FN[name](a, b, opts);
  try {
    const { result } = dtypesOf(c, a, b);
    const outDtype = opts?.out?.dtype ?? result;
    t.is(r.dtype, outDtype, `${what}: dtype`);
    t.deepEqual(r.shape, outShape, `${what}: shape`);
    close(t, values(r), expected(c, a, b, outShape, outDtype), what, c.inexact ? tolerance(isFloat(outDtype) ? outDtype : 'float64') : 0);
  } finally {
    if (opts?.out === undefined) r.dispose();
  }
}

const NAMES = Object.keys(CASES) as BinaryName[];

for (const name of NAMES) {
  deviceTest(`${name}: every dtype it claims, same shapes, broadcast shapes, JS numbers on either side`, (t, device) => {
    const c = CASES[name];
    let seed = 1;
    for (const d of c.dtypes) {
      const dom = (side: 'a' | 'b'): Domain => c.domain?.(d, side) ?? {};
      const shapes: [number[], number[]][] = [[[3, 5], [3, 5]], [[4, 1, 5], [3, 1]], [[1027], [1027]]];
      for (const [sa, sb] of shapes) {
        using a = make(randomIn(d, numel(sa), seed++, dom('a')), d, sa, device);
        using b = make(randomIn(d, numel(sb), seed++, dom('b')), d, sb, device);
        poisonCache(device, numel(sa) * 4, 'float64');
        check(t, name, a, b, `${name}(${d} ${JSON.stringify(sa)}, ${d} ${JSON.stringify(sb)}) on ${device}`);
      }
      using x = make(randomIn(d, 15, seed++, dom('a')), d, [3, 5], device);
      using y = make(randomIn(d, 15, seed++, dom('b')), d, [3, 5], device);
      for (const s of c.scalars(d)) {
        check(t, name, x, s, `${name}(${d} [3, 5], ${typeof s} ${String(s)}) on ${device}`);
        if (name !== 'pow' || !isFloat(d) || Number(s) > 0) {
          check(t, name, s, y, `${name}(${typeof s} ${String(s)}, ${d} [3, 5]) on ${device}`);
        }
      }
    }
  });
}

deviceTest('mixed dtypes promote before computing, 16-bit commons rounding other inputs through them', (t, device) => {
  const pairs: [gx.DType, gx.DType][] = [
    ['int8', 'uint8'], ['int32', 'float32'], ['float16', 'int32'], ['bfloat16', 'float32'], ['float16', 'bfloat16'],
    ['bool', 'int16'], ['int64', 'float64'], ['uint8', 'bool'], ['float16', 'float64'],
  ];
  let seed = 100;
  for (const [da, db] of pairs) {
    using a = make(randomIn(da, 12, seed++, { lo: -3000, hi: 3000 }), da, [3, 4], device);
    using b = make(randomIn(db, 4, seed++, { avoidZero: true, lo: -3000, hi: 3000 }), db, [4], device);
    for (const name of ['add', 'mul', 'div', 'maximum', 'lt', 'eq', 'logicalXor'] as const) {
      check(t, name, a, b, `${name}(${da} [3, 4], ${db} [4]) on ${device}`);
    }
  }
  // A 0-d tensor of a higher category raises the result; of the same category it does not.
  using i = make(randomIn('int32', 6, 7), 'int32', [2, 3], device);
  using z64 = make([2.5], 'float64', [], device);
  using z8 = make([100], 'int64', [], device);
  check(t, 'add', i, z64, `add(int32 [2, 3], 0-d float64) on ${device}`);
  check(t, 'mul', i, z8, `mul(int32 [2, 3], 0-d int64) on ${device}`);
});

deviceTest('broadcasting edge cases: 0-d tensors, size-1 dims, zero-size dims', (t, device) => {
  let seed = 200;
  const cases: [number[], number[]][] = [
    [[], []], [[], [2, 3]], [[2, 3], []], [[1, 5], [3, 1]], [[1], [4]], [[2, 1, 1], [1, 3, 1]],
    [[0, 3], [3]], [[2, 0], [2, 1]], [[0], []], [[3, 0, 2], [1, 2]],
  ];
  for (const [sa, sb] of cases) {
    for (const d of ['float32', 'int64', 'float16'] as const) {
      using a = make(randomIn(d, numel(sa), seed++), d, sa, device);
      using b = make(randomIn(d, numel(sb), seed++, { avoidZero: true }), d, sb, device);
      for (const name of ['add', 'sub', 'div', 'ge'] as const) check(t, name, a, b, `${name}(${d} ${JSON.stringify(sa)}, ${d} ${JSON.stringify(sb)}) on ${device}`);
    }
  }
  using e = gx.zeros([0, 4], { device });
  using r = gx.add(e, 1);
  t.deepEqual(r.shape, [0, 4]);
});

deviceTest('non-contiguous inputs: transposed, stepped and stride-0 views', (t, device) => {
  let seed = 300;
  for (const d of ['float32', 'float16', 'int32', 'int8', 'float64', 'bool'] as const) {
    using base = make(randomIn(d, 15, seed++), d, [3, 5], device);
    using tr = base.asStrided([5, 3], [1, 5], 0); // base transposed
    using other = make(randomIn(d, 15, seed++, { avoidZero: true }), d, [5, 3], device);
    using long = make(randomIn(d, 9, seed++), d, [9], device);
    using stepped = long.asStrided([4], [2], 1); // elements 1, 3, 5, 7
    using row = make(randomIn(d, 3, seed++), d, [3], device);
    using bcast = row.asStrided([5, 3], [0, 1], 0); // a stride-0 broadcast view
    for (const name of ['add', 'mul', 'maximum', 'lt', 'logicalOr'] as const) {
      check(t, name, tr, other, `${name}(transposed ${d}, ${d}) on ${device}`);
      check(t, name, other, tr, `${name}(${d}, transposed ${d}) on ${device}`);
      check(t, name, tr, tr, `${name}(transposed, itself) on ${device}`);
      check(t, name, stepped, 2, `${name}(stepped ${d}, 2) on ${device}`);
      check(t, name, bcast, tr, `${name}(stride-0 ${d}, transposed ${d}) on ${device}`);
    }
  }
  // A view at an odd offset: not 16-byte aligned, so CUDA takes the general kernel.
  using v = make(randomIn('float32', 1030, 9), 'float32', [1030], device);
  using odd = v.asStrided([1027], [1], 3);
  check(t, 'add', odd, odd, `add(offset view, itself) on ${device}`);
});

deviceTest('out: results go into the given tensor (poisoned first), converted to its dtype', (t, device) => {
  let seed = 400;
  using a = make(randomIn('float32', 12, seed++), 'float32', [3, 4], device);
  using b = make(randomIn('float32', 4, seed++), 'float32', [4], device);
  for (const od of ['float32', 'float64', 'float16'] as const) {
    using out = gx.full([3, 4], poisonOf(od) as number, { dtype: od, device });
    const r = gx.add(a, b, { out });
    t.is(r, out, 'returns out');
    check(t, 'add', a, b, `add(..., { out: ${od} }) on ${device}`, { out });
  }
  using bout = gx.full([3, 4], 0, { dtype: 'int32', device });
  check(t, 'gt', a, b, `gt(..., { out: int32 }) on ${device}`, { out: bout });
  using i = make(randomIn('int16', 12, seed++), 'int16', [3, 4], device);
  using iout = gx.full([3, 4], poisonOf('int64') as bigint, { dtype: 'int64', device });
  check(t, 'mul', i, 3, `mul(int16, 3, { out: int64 }) on ${device}`, { out: iout });
  // A non-contiguous out (a transposed view) gets every element.
  using tbase = gx.full([4, 3], Number.NaN, { device });
  using tout = tbase.asStrided([3, 4], [1, 3], 0);
  check(t, 'sub', a, b, `sub(..., { out: a transposed view }) on ${device}`, { out: tout });
  // An out whose elements share memory cannot hold a result.
  using row = gx.zeros([4], { device });
  using expanded = row.asStrided([3, 4], [0, 1], 0);
  t.throws(() => gx.add(a, b, { out: expanded }), { message: /^gx\.add: out \(shape \[3, 4\], strides \[0, 1\]\) has elements that share memory/ });
  t.throws(() => expanded.add_(1), { message: /^Tensor\.add_: self \(shape \[3, 4\], strides \[0, 1\]\) has elements that share memory/ });
  // out aliasing an input exactly is fine (elementwise).
  using c = make(randomIn('float32', 12, seed++), 'float32', [3, 4], device);
  const want = expected(CASES.mul, c, a, [3, 4]);
  gx.mul(c, a, { out: c });
  close(t, values(c), want, `mul(c, a, { out: c }) on ${device}`);
});

deviceTest('integer remainder and fmod by 0 give 0, and INT_MIN % -1 gives 0, never trapping: every integer dtype, tensor and number divisors', (t, device) => {
  gx.tidy(() => {
    // NumPy 2: np.remainder(a, 0), np.fmod(a, 0) and np.remainder(a, -1) are [0, 0, 0, 0] for a = [INT_MIN, 7, -7, 0]
    // (torch raises ZeroDivisionError on the CPU for the first two; x % -1 is 0 for every x).
    const MIN: Record<string, number> = { int8: -128, int16: -32768, int32: -(2 ** 31) };
    const zeros = ['0', '0', '0', '0'];
    for (const dtype of ['int8', 'int16', 'int32', 'int64', 'uint8'] as const) {
      const of = (v: number[]): gx.Tensor => gx.tensor(dtype === 'int64' ? v.map(BigInt) : v, { dtype, device });
      const a = dtype === 'int64' ? gx.tensor([-(2n ** 63n), 7n, -7n, 0n], { dtype, device }) : of([MIN[dtype] ?? 200, 7, dtype === 'uint8' ? 9 : -7, 0]);
      const strings = (y: gx.Tensor): string[] => Array.from(y.toArraySync() as ArrayLike<number | bigint>, String);
      for (const op of ['remainder', 'fmod'] as const) {
        t.deepEqual(strings(gx[op](a, of([0, 0, 0, 0]))), zeros, `${op}(${dtype}, zero tensor)`);
        t.deepEqual(strings(gx[op](a, 0)), zeros, `${op}(${dtype}, 0)`);
        t.deepEqual(strings(gx[op](7, of([0, 0, 0, 0]))), zeros, `${op}(7, ${dtype} zeros)`);
        if (dtype === 'uint8') continue;
        t.deepEqual(strings(gx[op](a, of([-1, -1, -1, -1]))), zeros, `${op}(${dtype}, -1 tensor)`);
        t.deepEqual(strings(gx[op](a, -1)), zeros, `${op}(${dtype}, -1)`);
      }
    }
  });
});

deviceTest('in place: add_, sub_, mul_, div_, pow_, remainder_ keep self\'s shape and dtype', (t, device) => {
  let seed = 500;
  for (const [d, od, s] of [['float32', 'float32', 2.5], ['float16', 'float32', 3], ['int32', 'int8', 3], ['float64', 'int32', -2]] as const) {
    for (const name of ['add', 'sub', 'mul', 'div', 'pow', 'remainder'] as const) {
      if (name === 'div' && !isFloat(d)) continue;
      if (name === 'pow' && !isFloat(d)) continue;
      const dom: Domain = name === 'pow' ? { lo: 0.5, hi: 2 } : {};
      using x = make(randomIn(d, 12, seed++, dom), d, [3, 4], device);
      using y = make(randomIn(od, 4, seed++, name === 'pow' ? { lo: -2, hi: 2 } : { avoidZero: true, lo: -20, hi: 20 }), od, [4], device);
      for (const other of [y, s] as gx.Operand[]) {
        const before = values(x);
        using copy = make(before, d, [3, 4], device);
        const want = expected(CASES[name], copy, other, [3, 4], d);
        const method = `${name}_` as 'add_';
        const r = x[method](other);
        t.is(r, x, `${name}_ returns this`);
        t.is(x.dtype, d);
        close(t, values(x), want, `${d}.${name}_(${other instanceof gx.Tensor ? `${od} [4]` : String(other)}) on ${device}`,
          name === 'pow' ? tolerance(d) : 0);
      }
    }
  }
});

deviceTest('in place on a non-contiguous self writes through the view', (t, device) => {
  using base = make(randomIn('float32', 15, 600), 'float32', [3, 5], device);
  using tr = base.asStrided([5, 3], [1, 5], 0);
  using other = make(randomIn('float32', 3, 601), 'float32', [3], device);
  const want = expected(CASES.mul, tr, other, [5, 3], 'float32');
  t.is(tr.mul_(other), tr);
  close(t, values(tr), want, `transposed.mul_(row) on ${device}`);
});

deviceTest('bad input: shapes that do not broadcast, dtypes an op does not take, devices, in-place and out mismatches', (t, device) => {
  using a = gx.ones([2, 3], { device });
  using b = gx.ones([4], { device });
  using i = gx.ones([2, 3], { dtype: 'int32', device });
  using i8 = gx.ones([2, 3], { dtype: 'int8', device });
  using bl = gx.ones([3], { dtype: 'bool', device });
  const e1 = t.throws(() => gx.add(a, b));
  t.is(e1?.message, 'gx.add: shapes [2, 3] and [4] do not broadcast (dimension 1 of the result: 3 vs 4)');
  t.throws(() => a.mul(b), { message: /^Tensor\.mul: shapes \[2, 3\] and \[4\] do not broadcast/ });
  t.throws(() => gx.sub(bl, bl), { instanceOf: TypeError, message: /^gx\.sub: bool operands are not supported \(got bool \[3\] and bool \[3\]\); for bool tensors use logicalXor/ });
  t.throws(() => gx.pow(bl, true), { message: /^gx\.pow: bool operands are not supported/ });
  t.throws(() => gx.remainder(bl, bl), { message: /^gx\.remainder: bool operands/ });
  t.throws(() => gx.pow(i, -1), { instanceOf: RangeError, message: /^gx\.pow: integers to negative integer powers are not allowed \(got int32 \[2, 3\] \*\* -1\)/ });
  t.throws(() => gx.add(i8, 1000), { instanceOf: RangeError, message: /^gx\.add: the number 1000 is out of range for int8/ });
  t.throws(() => gx.lt(i8, -129), { instanceOf: RangeError, message: /^gx\.lt: the number -129 is out of range for int8/ });
  t.throws(() => gx.add(2, 3), { instanceOf: TypeError, message: 'gx.add: needs at least one Tensor operand, got number 2 and number 3' });
  t.throws(() => Reflect.apply(gx.add, undefined, [a, 'x']), { instanceOf: TypeError, message: /^gx\.add: argument 'other' must be a Tensor, number, bigint or boolean, got a string/ });
  t.throws(() => i.add_(2.5), { instanceOf: TypeError, message: /^Tensor\.add_: the result's dtype float32 cannot be stored in self of dtype int32/ });
  using row = gx.ones([3], { device });
  t.throws(() => row.add_(a), { message: /^Tensor\.add_: the result has shape \[2, 3\], which in-place ops cannot write into self of shape \[3\]/ });
  using wrong = gx.empty([3, 2], { device });
  t.throws(() => gx.add(a, a, { out: wrong }), { message: 'gx.add: out has shape [3, 2] but the result has shape [2, 3]' });
  using iout = gx.empty([2, 3], { dtype: 'int32', device });
  t.throws(() => gx.add(a, 1, { out: iout }), { instanceOf: TypeError, message: 'gx.add: the result\'s dtype float32 cannot be written into out of dtype int32' });
  t.throws(() => Reflect.apply(gx.eq, undefined, [a, 1, { out: 'x' }]), { message: /^gx\.eq: options\.out must be a Tensor/ });
  const d = gx.ones([2], { device });
  d.dispose();
  t.throws(() => gx.add(d, 1), { message: /^gx\.add: this tensor was disposed/ });
  if (device === 'cuda') {
    using c = gx.ones([2, 3]);
    t.throws(() => gx.add(a, c), { message: "gx.add: argument 'other' is on cpu but 'self' is on cuda:0; move it with .to('cuda:0')" });
  }
  // The tensors involved are intact.
  t.deepEqual(Array.from(a.toArraySync()), [1, 1, 1, 1, 1, 1]);
});

deviceTestSerial('no leaks: results, failed calls and in-place ops leave the live tensor count as it was', (t, device) => {
  using a = gx.ones([2, 3], { device });
  using b = gx.ones([3], { device });
  using four = gx.ones([4], { device });
  using big = gx.ones([4, 3], { device });
  using mask = gx.ones([3], { dtype: 'bool', device });
  using iout = gx.empty([2, 3], { dtype: 'int32', device });
  const before = live(device);
  for (const name of NAMES) FN[name](a, b).dispose();
  for (const name of NAMES) FN[name](a, 2).dispose();
  for (const name of NAMES) FN[name](3, b).dispose();
  t.is(a.add_(b).mul_(1), a);
  const failing = [
    () => gx.add(a, four), () => a.add_(big), () => gx.sub(mask, true), () => gx.add(a, 1, { out: iout }),
    () => gx.add(a, b, { out: big }), () => Reflect.apply(gx.mul, undefined, [a, {}]),
  ];
  for (const f of failing) t.throws(f);
  t.is(live(device), before);
});
