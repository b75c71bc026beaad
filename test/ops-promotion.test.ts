// The type promotion table (lib/ops/promotion.ts) against PyTorch's
// documented behaviour: torch.promote_types for every pair of dtypes,
// torch.result_type with 0-d tensors and Python scalars, torch.can_cast.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest } from './helpers';

// torch.promote_types(row, column), rows and columns in gx.DTYPES order:
// float32 float64 float16 bfloat16 int8 int16 int32 int64 uint8 bool
// (PyTorch's _promoteTypesLookup in c10/core/ScalarType.cpp, restricted to these dtypes).
const f4 = 'float32', f8 = 'float64', f2 = 'float16', bf = 'bfloat16', i1 = 'int8', i2 = 'int16', i4 = 'int32', i8 = 'int64',
  u1 = 'uint8', b1 = 'bool';
const PROMOTE: readonly (readonly gx.DType[])[] = [
  /* float32  */ [f4, f8, f4, f4, f4, f4, f4, f4, f4, f4],
  /* float64  */ [f8, f8, f8, f8, f8, f8, f8, f8, f8, f8],
  /* float16  */ [f4, f8, f2, f4, f2, f2, f2, f2, f2, f2],
  /* bfloat16 */ [f4, f8, f4, bf, bf, bf, bf, bf, bf, bf],
  /* int8     */ [f4, f8, f2, bf, i1, i2, i4, i8, i2, i1],
  /* int16    */ [f4, f8, f2, bf, i2, i2, i4, i8, i2, i2],
  /* int32    */ [f4, f8, f2, bf, i4, i4, i4, i8, i4, i4],
  /* int64    */ [f4, f8, f2, bf, i8, i8, i8, i8, i8, i8],
  /* uint8    */ [f4, f8, f2, bf, i2, i2, i4, i8, u1, u1],
  /* bool     */ [f4, f8, f2, bf, i1, i2, i4, i8, u1, b1],
];

test('promoteTypes matches torch.promote_types for all 100 pairs', (t) => {
  t.deepEqual(gx.DTYPES, [f4, f8, f2, bf, i1, i2, i4, i8, u1, b1]);
  for (let r = 0; r < 10; r++) {
    for (let c = 0; c < 10; c++) {
      const a = gx.DTYPES[r], b = gx.DTYPES[c];
      t.is(gx.promoteTypes(a, b), PROMOTE[r][c], `promoteTypes(${a}, ${b})`);
    }
  }
});

// torch.result_type(a, b) with tensors of dimensions, 0-d tensors and Python
// scalars (JS: integral numbers stand for Python ints, others for floats).
type Spec = { dtype: gx.DType; dims: boolean } | number | bigint | boolean;
const T = (dtype: gx.DType): Spec => ({ dtype, dims: true });
const Z = (dtype: gx.DType): Spec => ({ dtype, dims: false });
const RESULT_TYPE: readonly [Spec, Spec, gx.DType][] = [
  // torch docs: result_type(tensor([1, 2], dtype=int32), 1.0) -> float32
  [T(i4), 1.5, f4],
  // torch docs: result_type(tensor([1, 2], dtype=uint8), tensor(1)) -> uint8
  [T(u1), Z(i8), u1],
  [T(i1), 1000, i1],
  [T(f2), 2.5, f2],
  [T(bf), 2.5, bf],
  [T(f4), 2, f4],
  [T(i4), 2, i4],
  [T(i2), 5n, i2],
  [T(b1), 1, i8],
  [T(b1), 1.5, f4],
  [T(b1), true, b1],
  [T(f4), true, f4],
  [T(i4), true, i4],
  [T(i4), Z(f8), f8],
  [T(i4), Z(f2), f2],
  [T(f4), Z(f8), f4],
  [T(f2), Z(f4), f2],
  [T(i1), Z(i8), i1],
  [T(b1), Z(u1), u1],
  [T(b1), Z(f8), f8],
  [T(i1), T(u1), i2],
  [T(f2), T(bf), f4],
  [T(i8), T(f2), f2],
  [Z(i4), 2.5, f4],
  [Z(f2), 2.5, f2],
  [Z(i4), Z(f2), f2],
  [Z(u1), Z(i1), i2],
  [Z(b1), 3, i8],
  [Z(i2), 3, i2],
  [2.5, T(i8), f4],
  [7, T(u1), u1],
];

function realize(s: Spec, made: gx.Tensor[]): gx.Operand {
  if (typeof s !== 'object') return s;
  const t = gx.zeros(s.dims ? [2] : [], { dtype: s.dtype });
  made.push(t);
  return t;
}

function show(s: Spec): string {
  return typeof s === 'object' ? `${s.dims ? '' : '0-d '}${s.dtype} tensor` : `${typeof s} ${String(s)}`;
}

test('resultType ranks dimensioned tensors, 0-d tensors and JS scalars as torch.result_type', (t) => {
  const made: gx.Tensor[] = [];
  try {
    for (const [a, b, want] of RESULT_TYPE) {
      t.is(gx.resultType(realize(a, made), realize(b, made)), want, `resultType(${show(a)}, ${show(b)})`);
    }
    // More than two operands: each rank promotes within itself first.
    const [x, y] = [realize(T(i1), made), realize(Z(f8), made)];
    t.is(gx.resultType(x, y, 3), f8);
    t.is(gx.resultType(realize(T(u1), made), realize(T(i1), made), 2.5), f4);
  } finally {
    for (const m of made) m.dispose();
  }
});

test('canCast matches torch.can_cast', (t) => {
  for (const from of gx.DTYPES) {
    for (const to of gx.DTYPES) {
      const fk = gx.DTYPE_INFO[from].kind, tk = gx.DTYPE_INFO[to].kind;
      // Not floating into integer; not anything but bool into bool.
      const want = !(fk === 'f' && (tk === 'i' || tk === 'u')) && !(from !== 'bool' && to === 'bool');
      t.is(gx.canCast(from, to), want, `canCast(${from}, ${to})`);
    }
  }
  t.true(gx.canCast('int64', 'float16'));
  t.true(gx.canCast('bool', 'uint8'));
  t.false(gx.canCast('float32', 'int64'));
  t.false(gx.canCast('int8', 'bool'));
});

test('op result dtypes follow the table: div is true division, comparisons give bool, sums of integers int64', (t) => {
  using i = gx.tensor(new Int32Array([1, 2, 3]));
  using u = gx.tensor(new Uint8Array([1, 2, 3]));
  using h = gx.ones([3], { dtype: 'float16' });
  using b = gx.tensor([true, false, true]);
  using s = gx.tensor(new Int8Array([1, 2, 3]));
  const cases: [() => gx.Tensor, gx.DType][] = [
    [() => gx.div(i, i), 'float32'],
    [() => gx.div(i, 2), 'float32'],
    [() => gx.div(h, i), 'float16'],
    [() => gx.add(u, s), 'int16'],
    [() => gx.mul(b, b), 'bool'],
    [() => gx.add(b, 1), 'int64'],
    [() => gx.lt(h, 2.5), 'bool'],
    [() => gx.logicalAnd(i, h), 'bool'],
    [() => gx.exp(i), 'float32'],
    [() => gx.exp(h), 'float16'],
    [() => gx.abs(i), 'int32'],
    [() => gx.sum(i), 'int64'],
    [() => gx.sum(b), 'int64'],
    [() => gx.prod(u), 'int64'],
    [() => gx.sum(h), 'float16'],
    [() => gx.mean(h), 'float16'],
    [() => gx.max(u), 'uint8'],
    [() => gx.argmax(h), 'int64'],
    [() => gx.where(b, i, 2.5), 'float32'],
    [() => gx.clamp(i, 0, 2), 'int32'],
    [() => gx.clamp(i, 0.5), 'float32'],
    [() => gx.sum(i, { dtype: 'float64' }), 'float64'],
  ];
  for (const [f, want] of cases) {
    const r = f();
    t.is(r.dtype, want, f.toString());
    r.dispose();
  }
});

// NOTE [ Operands converted to the common dtype ] (ops/common/hd.h): a 0-d
// operand of a wider integer type does not widen the result, and its value is
// converted to the result's dtype before computing, as in torch.
deviceTest('a 0-d operand of a wider integer type is converted to the common dtype first', (t, device) => {
  const u8 = (v: number): gx.Tensor => gx.tensor([v], { dtype: 'uint8', device });
  const ops = { minimum: gx.minimum, maximum: gx.maximum, eq: gx.eq, lt: gx.lt, remainder: gx.remainder };
  const cases: [keyof typeof ops, gx.Tensor, gx.Tensor, number | boolean][] = [
    ['minimum', u8(1), gx.tensor(-1, { dtype: 'int16', device }), 1],           // -1 -> 255
    ['eq', u8(94), gx.tensor(-8610, { dtype: 'int16', device }), true],          // -8610 -> 94
    ['remainder', u8(221), gx.tensor(815421721, { dtype: 'int32', device }), 21], // -> 25
    ['maximum', gx.tensor([3], { dtype: 'int8', device }), gx.tensor(300, { dtype: 'int32', device }), 44],  // 300 -> 44
    ['lt', gx.tensor([100], { dtype: 'int16', device }), gx.tensor(65636, { dtype: 'int64', device }), false], // -> 100
  ];
  for (const [op, a, b, want] of cases) {
    using r = ops[op](a, b);
    t.is(r.dtype, typeof want === 'boolean' ? 'bool' : a.dtype, op);
    t.is(r.item(), want, `${op}(${a.dtype} ${a.item()}, ${b.dtype} ${b.item()})`);
    a.dispose();
    b.dispose();
  }
});

// NOTE [ JS numbers to 16-bit floats ] (lib/core/dtype.ts): by way of float32, on every path.
deviceTest('a JS number becomes float16 the same way on every path', (t, device) => {
  const x = 1 + 2 ** -11 + 2 ** -40;  // 1 through float32, 1 + 2^-10 if rounded directly
  using a = gx.tensor([x], { dtype: 'float16', device });
  using b0 = gx.tensor([x], { dtype: 'float32', device });
  using b = b0.astype('float16');
  using c = gx.full([1], x, { dtype: 'float16', device });
  using d = gx.tensor(Float64Array.of(x), { dtype: 'float16', device });
  for (const v of [a, b, c, d]) t.is(v.item(), 1);
});

deviceTest('logical ops test a wider 0-d operand after converting it to the common dtype', (t, device) => {
  using a = gx.tensor([1, 0], { dtype: 'uint8', device });
  using b = gx.tensor(256, { dtype: 'int16', device });   // 0 as uint8
  using and = gx.logicalAnd(a, b);
  t.deepEqual(Array.from(and.toArraySync()), [0, 0]);
  using f = gx.tensor([0, 2], { device });
  using tiny = gx.tensor(5e-324, { dtype: 'float64', device });  // 0 as float32
  using or = gx.logicalOr(f, tiny);
  t.deepEqual(Array.from(or.toArraySync()), [0, 1]);
  using xor = gx.logicalXor(f, gx.tensor(0.5, { dtype: 'float64', device }));
  t.deepEqual(Array.from(xor.toArraySync()), [1, 0]);
});
