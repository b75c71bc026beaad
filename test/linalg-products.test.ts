// dot, vdot, outer, cross, trace, diag, diagonal, triu and tril (and their
// Tensor methods) against plain-JS references on random inputs, on every
// device: every float dtype and the integer ones where torch takes them,
// non-contiguous (transposed) inputs, broadcasting, offsets, empty tensors,
// views that write through, gradients (gradcheck in float64), errors that
// name the op and the argument, and no tensor left behind.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTestSerial, type TestDevice } from './helpers';
import { expectClose, noLeaks, noStrayTensors, numelOf, offsetOf, randomTensor, rtolOf, unravel, valuesOf, type Arr } from './linalg-reference';

const FLOATS: gx.DType[] = ['float32', 'float64', 'float16', 'bfloat16'];
const INTS: gx.DType[] = ['int8', 'int16', 'int32', 'int64', 'uint8'];

/** The value a dtype stores for an exact integer v (wrapping as the integer dtypes do). */
function wrapInt(v: number, dtype: gx.DType): number {
  const bits: Record<string, [number, boolean]> = { int8: [8, true], int16: [16, true], int32: [32, true], int64: [64, true], uint8: [8, false] };
  const [b, signed] = bits[dtype];
  const w = signed ? BigInt.asIntN(b, BigInt(v)) : BigInt.asUintN(b, BigInt(v));
  return Number(w);
}

// --- references -------------------------------------------------------------------

function diagonalRef(x: Arr, offset: number, d1: number, d2: number): Arr {
  const n1 = x.shape[d1], n2 = x.shape[d2];
  const len = Math.max(0, offset >= 0 ? Math.min(n1, n2 - offset) : Math.min(n1 + offset, n2));
  const rest = x.shape.map((_, d) => d).filter((d) => d !== d1 && d !== d2);
  const shape = [...rest.map((d) => x.shape[d]), len];
  const values = Array.from({ length: numelOf(shape) }, (_, i) => {
    const p = unravel(i, shape);
    const q = new Array<number>(x.shape.length).fill(0);
    rest.forEach((d, k) => { q[d] = p[k]; });
    const k = p[p.length - 1];
    q[d1] = offset >= 0 ? k : k - offset;
    q[d2] = offset >= 0 ? k + offset : k;
    return x.values[offsetOf(q, x.shape)];
  });
  return { shape, values };
}

function triangleRef(x: Arr, offset: number, upper: boolean): Arr {
  const [m, n] = x.shape.slice(-2);
  return {
    shape: x.shape.slice(),
    values: x.values.map((v, i) => {
      const r = Math.floor(i / n) % m, c = i % n;
      return (upper ? c - r >= offset : c - r <= offset) ? v : 0;
    }),
  };
}

function crossRef(a: Arr, b: Arr, axis: number): Arr {
  const shape = a.shape.map((s, i) => Math.max(s, b.shape[i]));
  const at = (x: Arr, p: number[]): number => x.values[offsetOf(p.map((v, d) => (x.shape[d] === 1 ? 0 : v)), x.shape)];
  const values = Array.from({ length: numelOf(shape) }, (_, i) => {
    const p = unravel(i, shape);
    const k = p[axis], u = (k + 1) % 3, v = (k + 2) % 3;
    const q = (j: number): number[] => p.map((e, d) => (d === axis ? j : e));
    return at(a, q(u)) * at(b, q(v)) - at(a, q(v)) * at(b, q(u));
  });
  return { shape, values };
}

// --- dot, vdot, outer -------------------------------------------------------------

deviceTestSerial('dot and vdot: every float dtype through matmul, integers wrapping, strided and empty vectors', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of [...FLOATS, ...INTS]) {
      const int = INTS.includes(dtype);
      const opts = int ? { lo: dtype === 'uint8' ? 0 : -60, hi: 60 } : {};
      const a = randomTensor([37], dtype, device, 1, opts), b = randomTensor([37], dtype, device, 2, opts);
      const exact = a.arr.values.reduce((s, v, i) => s + v * b.arr.values[i], 0);
      const want = { shape: [], values: [int ? wrapInt(exact, dtype) : exact] };
      const d = gx.dot(a.t, b.t);
      t.is(d.dtype, dtype);
      expectClose(t, d, want, `gx.dot ${dtype}`, rtolOf(dtype) * 10, int ? 0 : 1e-3);
      expectClose(t, gx.vdot(a.t, b.t), want, `gx.vdot ${dtype}`, rtolOf(dtype) * 10, int ? 0 : 1e-3);
      expectClose(t, a.t.dot(b.t), want, `Tensor.dot ${dtype}`, rtolOf(dtype) * 10, int ? 0 : 1e-3);
    }
    // Strided views (every other element, and a column of a matrix).
    const m = randomTensor([6, 4], 'float64', device, 3);
    const col = m.t.sliceDims(null, 1), row = m.t.sliceDims(0).slice(0, 0, null, 1);
    const every = m.t.reshape([24]).slice(0, 0, 12, 2);
    const colv = [0, 1, 2, 3, 4, 5].map((i) => m.arr.values[i * 4 + 1]);
    const evv = [0, 1, 2, 3, 4, 5].map((i) => m.arr.values[2 * i]);
    expectClose(t, gx.dot(col, every), { shape: [], values: [colv.reduce((s, v, i) => s + v * evv[i], 0)] }, 'strided dot', 1e-12);
    t.deepEqual(valuesOf(gx.dot(row, row)), [m.arr.values.slice(0, 4).reduce((s, v) => s + v * v, 0)]);
    // Empty vectors: 0.
    t.deepEqual(valuesOf(gx.dot(gx.zeros([0], { device }), gx.zeros([0], { device }))), [0]);
    t.deepEqual(valuesOf(gx.dot(gx.zeros([0], { dtype: 'int32', device }), gx.zeros([0], { dtype: 'int32', device }))), [0]);
  });
});

deviceTestSerial('outer: products of every pair, dtypes promoted as mul, strided and empty inputs', (t, device) => {
  noLeaks(t, device, () => {
    for (const [da, db, dr] of [['float32', 'float32', 'float32'], ['float64', 'float32', 'float64'], ['int32', 'float16', 'float16'],
      ['int64', 'int8', 'int64'], ['bfloat16', 'bfloat16', 'bfloat16'], ['bool', 'bool', 'bool']] as [gx.DType, gx.DType, gx.DType][]) {
      const a = randomTensor([5], da, device, 4), b = randomTensor([3], db, device, 5);
      const o = gx.outer(a.t, b.t);
      t.is(o.dtype, dr, `${da} x ${db}`);
      const want = { shape: [5, 3], values: a.arr.values.flatMap((u) => b.arr.values.map((v) => (dr === 'bool' ? Number(u && v) : u * v))) };
      expectClose(t, o, want, `outer ${da} ${db}`, rtolOf(dr), 0);
      expectClose(t, a.t.outer(b.t), want, `Tensor.outer ${da} ${db}`, rtolOf(dr), 0);
    }
    const m = randomTensor([4, 3], 'float32', device, 6, { transposed: true });
    const c = m.t.sliceDims(null, 2);
    expectClose(t, gx.outer(c, c), { shape: [4, 4], values: [0, 1, 2, 3].flatMap((i) => [0, 1, 2, 3].map((j) => m.arr.values[i * 3 + 2] * m.arr.values[j * 3 + 2])) },
      'outer of a strided column', 1e-6);
    t.deepEqual(gx.outer(gx.zeros([0], { device }), gx.ones([3], { device })).shape, [0, 3]);
  });
});

// --- cross ----------------------------------------------------------------------

deviceTestSerial('cross: along any axis, broadcasting, every float and integer dtype, transposed and empty inputs', (t, device) => {
  noLeaks(t, device, () => {
    const cases: [number[], number[], number][] = [[[4, 3], [4, 3], -1], [[2, 1, 3], [1, 5, 3], 2], [[3, 4], [3, 1], 0], [[3], [3], 0], [[2, 3, 2], [2, 3, 2], 1]];
    for (const dtype of [...FLOATS, 'int32', 'int64', 'int8', 'uint8'] as gx.DType[]) {
      for (const [sa, sb, axis] of cases) {
        const opts = INTS.includes(dtype) ? { lo: 0, hi: 9 } : {};
        const a = randomTensor(sa, dtype, device, 7, opts), b = randomTensor(sb, dtype, device, 8, opts);
        const want = crossRef(a.arr, b.arr, axis < 0 ? axis + sa.length : axis);
        if (INTS.includes(dtype)) want.values = want.values.map((v) => wrapInt(v, dtype));
        const got = axis === -1 ? gx.cross(a.t, b.t) : gx.cross(a.t, b.t, axis);
        t.is(got.dtype, dtype);
        expectClose(t, got, want, `cross ${dtype} ${JSON.stringify(sa)} x ${JSON.stringify(sb)} axis ${axis}`, rtolOf(dtype) * 4, INTS.includes(dtype) ? 0 : 1e-2);
        expectClose(t, a.t.cross(b.t, axis), want, `Tensor.cross ${dtype}`, rtolOf(dtype) * 4, INTS.includes(dtype) ? 0 : 1e-2);
      }
    }
    // Transposed (non-contiguous) operands: [3, 5] read as [5, 3].
    const a = randomTensor([5, 3], 'float64', device, 9, { transposed: true }), b = randomTensor([5, 3], 'float64', device, 10, { transposed: true });
    t.false(a.t.isContiguous());
    expectClose(t, gx.cross(a.t, b.t), crossRef(a.arr, b.arr, 1), 'transposed cross', 1e-12);
    expectClose(t, gx.linalg.cross(a.t, b.t, 1), crossRef(a.arr, b.arr, 1), 'gx.linalg.cross', 1e-12);
    t.deepEqual(gx.cross(gx.zeros([0, 3], { device }), gx.zeros([0, 3], { device })).shape, [0, 3]);
    t.deepEqual(valuesOf(gx.cross(gx.tensor([1, 0, 0], { device }), gx.tensor([0, 1, 0], { device }))), [0, 0, 1]);
  });
});

// --- trace, diag, diagonal --------------------------------------------------------------

deviceTestSerial('diagonal is a view over any two axes with any offset; diag copies or builds; trace sums', (t, device) => {
  noLeaks(t, device, () => {
    const x = randomTensor([3, 4, 5], 'float32', device, 11);
    for (const [offset, a1, a2] of [[0, 0, 1], [1, 0, 1], [-2, 0, 1], [2, 1, 2], [-1, 2, 0], [0, -1, -3], [9, 0, 2], [-9, 1, 2]]) {
      const want = diagonalRef(x.arr, offset, a1 < 0 ? a1 + 3 : a1, a2 < 0 ? a2 + 3 : a2);
      expectClose(t, gx.diagonal(x.t, offset, a1, a2), want, `diagonal(${offset}, ${a1}, ${a2})`);
      expectClose(t, gx.diagonal(x.t, { offset, axis1: a1, axis2: a2 }), want, `diagonal({ ${offset}, ${a1}, ${a2} })`);
      expectClose(t, x.t.diagonal(offset, a1, a2), want, `Tensor.diagonal(${offset}, ${a1}, ${a2})`);
    }
    expectClose(t, gx.diagonal(x.t), diagonalRef(x.arr, 0, 0, 1), 'defaults: offset 0, axes 0 and 1');
    // A view: writing it writes x.
    const m = gx.zeros([3, 3], { device });
    gx.diagonal(m).fill_(7);
    t.deepEqual(valuesOf(m), [7, 0, 0, 0, 7, 0, 0, 0, 7]);
    // Of a transposed input.
    const tr = randomTensor([4, 3], 'float64', device, 12, { transposed: true });
    expectClose(t, gx.diagonal(tr.t, 1), diagonalRef(tr.arr, 1, 0, 1), 'diagonal of a transposed view');
    // diag: 2-d -> a copy of the diagonal, 1-d -> a matrix.
    for (const dtype of ['float64', 'float16', 'int32', 'bool'] as gx.DType[]) {
      const a = randomTensor([4, 6], dtype, device, 13);
      for (const k of [0, 2, -3, 7]) {
        const d = gx.diag(a.t, k);
        expectClose(t, d, diagonalRef(a.arr, k, 0, 1), `diag 2-d ${dtype} ${k}`);
        t.true(d.isContiguous(), 'a copy');
      }
      const v = randomTensor([3], dtype, device, 14);
      for (const k of [0, 1, -2]) {
        const n = 3 + Math.abs(k);
        const want = Array.from({ length: n * n }, (_, i) => {
          const r = Math.floor(i / n), c = i % n;
          return c - r === k ? v.arr.values[k >= 0 ? r : c] : 0;
        });
        expectClose(t, gx.diag(v.t, k), { shape: [n, n], values: want }, `diag 1-d ${dtype} ${k}`);
        expectClose(t, v.t.diag(k), { shape: [n, n], values: want }, `Tensor.diag ${dtype} ${k}`);
      }
    }
    t.deepEqual(gx.diag(gx.zeros([0], { device })).shape, [0, 0]);
    t.deepEqual(gx.diag(gx.zeros([0], { device }), 2).shape, [2, 2]);
    t.deepEqual(gx.diag(gx.zeros([0, 3], { device })).shape, [0]);
    // trace: floats keep their dtype, integers and bool sum in int64.
    for (const [dtype, want] of [['float32', 'float32'], ['float16', 'float16'], ['int32', 'int64'], ['uint8', 'int64'], ['bool', 'int64']] as [gx.DType, gx.DType][]) {
      const a = randomTensor([4, 3], dtype, device, 15, dtype === 'uint8' ? { lo: 0, hi: 200 } : {});
      const tr = gx.trace(a.t);
      t.is(tr.dtype, want);
      t.deepEqual(tr.shape, []);
      const sum = [0, 1, 2].reduce((s, i) => s + a.arr.values[i * 3 + i], 0);
      expectClose(t, tr, { shape: [], values: [sum] }, `trace ${dtype}`, rtolOf(dtype) * 4, 0);
      expectClose(t, a.t.trace(), { shape: [], values: [sum] }, `Tensor.trace ${dtype}`, rtolOf(dtype) * 4, 0);
    }
    t.deepEqual(valuesOf(gx.trace(gx.ones([0, 3], { device }))), [0]);
  });
});

// --- triu, tril ------------------------------------------------------------------

deviceTestSerial('triu and tril: batched, every offset, every dtype, transposed and empty inputs', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of [...FLOATS, ...INTS, 'bool'] as gx.DType[]) {
      const x = randomTensor([2, 3, 4], dtype, device, 16, dtype === 'uint8' ? { lo: 0, hi: 50 } : INTS.includes(dtype) ? { lo: -50, hi: 50 } : {});
      for (const k of [0, 1, -1, 3, -4, 9]) {
        const u = gx.triu(x.t, k), l = gx.tril(x.t, k);
        t.is(u.dtype, dtype);
        t.is(l.dtype, dtype);
        expectClose(t, u, triangleRef(x.arr, k, true), `triu ${dtype} ${k}`);
        expectClose(t, l, triangleRef(x.arr, k, false), `tril ${dtype} ${k}`);
        expectClose(t, x.t.triu(k), triangleRef(x.arr, k, true), `Tensor.triu ${dtype} ${k}`);
        expectClose(t, x.t.tril(k), triangleRef(x.arr, k, false), `Tensor.tril ${dtype} ${k}`);
      }
      expectClose(t, gx.triu(x.t), triangleRef(x.arr, 0, true), `triu ${dtype} default offset`);
    }
    const tr = randomTensor([2, 5, 3], 'float32', device, 17, { transposed: true });
    expectClose(t, gx.tril(tr.t, 1), triangleRef(tr.arr, 1, false), 'tril of a transposed batch');
    t.deepEqual(gx.triu(gx.zeros([0, 3], { device })).shape, [0, 3]);
    t.deepEqual(gx.tril(gx.zeros([2, 3, 0], { device })).shape, [2, 3, 0]);
  });
});

// --- gradients --------------------------------------------------------------------------

deviceTestSerial('gradients: gradcheck through dot, outer, cross (broadcast), trace, diag, diagonal, triu, tril', (t, device) => {
  noLeaks(t, device, () => {
    const leaf = (shape: number[], seed: number): gx.Tensor => randomTensor(shape, 'float64', device, seed).t.requiresGrad_();
    const check = (what: string, fn: (...xs: gx.Tensor[]) => gx.Tensor, inputs: gx.Tensor[]): void => {
      t.true(gx.autograd.gradcheck(fn, inputs).ok, what);
    };
    check('dot', (a, b) => gx.dot(a, b), [leaf([4], 20), leaf([4], 21)]);
    check('outer', (a, b) => gx.outer(a, b), [leaf([3], 22), leaf([2], 23)]);
    check('cross', (a, b) => gx.cross(a, b), [leaf([2, 1, 3], 24), leaf([1, 2, 3], 25)]);
    check('cross, axis 0', (a, b) => gx.cross(a, b, 0), [leaf([3, 2], 26), leaf([3, 2], 27)]);
    check('trace', (a) => gx.trace(a), [leaf([3, 4], 28)]);
    check('diag 2-d', (a) => gx.diag(a, 1), [leaf([3, 4], 29)]);
    check('diag 1-d', (a) => gx.diag(a, -1), [leaf([3], 30)]);
    check('diagonal', (a) => gx.diagonal(a, { offset: -1, axis1: 2, axis2: 0 }), [leaf([3, 2, 4], 31)]);
    check('triu', (a) => gx.triu(a, 1), [leaf([2, 3, 3], 32)]);
    check('tril', (a) => gx.tril(a, -1), [leaf([3, 4], 33)]);
    // The tie-free gradient of a diagonal view lands on the diagonal only.
    const x = leaf([3, 3], 34);
    gx.sum(gx.diagonal(x)).backward();
    t.deepEqual(valuesOf(x.grad as gx.Tensor), [1, 0, 0, 0, 1, 0, 0, 0, 1]);
  });
});

deviceTestSerial('the helpers dispose every intermediate they make', (t, device) => {
  using v = gx.ones([3], { device });
  using iv = gx.ones([3], { dtype: 'int32', device });
  using m = gx.ones([2, 3, 4], { device });
  using b = gx.ones([3, 3], { dtype: 'bool', device });
  noStrayTensors(t, device, {
    dot: () => gx.dot(v, v), 'dot int32': () => gx.dot(iv, iv), outer: () => gx.outer(v, iv), cross: () => gx.cross(v, v),
    trace: () => gx.trace(b), 'diag 1-d': () => gx.diag(v, 1), 'diag 2-d': () => gx.diag(b, -1), diagonal: () => gx.diagonal(m, 1, 2, 0),
    triu: () => gx.triu(m, 1), tril: () => gx.tril(b),
  });
});

// --- errors -----------------------------------------------------------------------------

function throwsNamed(t: ExecutionContext, fn: () => unknown, cls: typeof Error, re: RegExp): void {
  const e = t.throws(fn);
  t.true(e instanceof cls, `expected ${cls.name}, got ${e?.constructor.name}: ${e?.message}`);
  t.regex(e?.message ?? '', re);
}

deviceTestSerial('errors name the op and the argument, and allocate nothing', (t: ExecutionContext, device: TestDevice) => {
  noLeaks(t, device, () => {
    const v3 = gx.ones([3], { device }), v4 = gx.ones([4], { device }), m = gx.ones([2, 3], { device });
    throwsNamed(t, () => gx.dot(m, v3), RangeError, /^gx\.dot: expected two 1-d tensors, got \[2, 3\] and \[3\]/);
    throwsNamed(t, () => gx.dot(v3, v4), RangeError, /^gx\.dot: the vectors have different lengths, 3 and 4/);
    throwsNamed(t, () => gx.dot(v3, gx.ones([3], { dtype: 'float64', device }) as never), TypeError, /^gx\.dot: expected vectors of one dtype, got float32 and float64/);
    throwsNamed(t, () => gx.vdot(gx.ones([2], { dtype: 'bool', device }), gx.ones([2], { dtype: 'bool', device })), TypeError, /^gx\.vdot: dtype bool is not supported/);
    throwsNamed(t, () => gx.dot(v3, 3 as never), TypeError, /^gx\.dot: argument 'b' must be a Tensor/);
    throwsNamed(t, () => gx.outer(m, v3), RangeError, /^gx\.outer: expected two 1-d tensors/);
    throwsNamed(t, () => gx.cross(gx.ones([2, 4], { device }), gx.ones([2, 4], { device })), RangeError, /^gx\.cross: axis -1 must have size 3 in both inputs/);
    throwsNamed(t, () => gx.cross(m, v3), RangeError, /^gx\.cross: the inputs must have the same number of dimensions/);
    throwsNamed(t, () => gx.cross(gx.ones([2, 3], { device }), gx.ones([4, 3], { device })), RangeError, /^gx\.cross: shapes \[2, 3\] and \[4, 3\] do not broadcast/);
    throwsNamed(t, () => gx.cross(m, m, 2), RangeError, /^gx\.cross: axis 2 is out of range for an input of shape \[2, 3\]/);
    throwsNamed(t, () => gx.cross(v3, gx.ones([3], { dtype: 'int32', device }) as never), TypeError, /^gx\.cross: expected inputs of one dtype/);
    throwsNamed(t, () => gx.trace(v3), RangeError, /^gx\.trace: expected a 2-d matrix, got \[3\]/);
    throwsNamed(t, () => gx.diag(gx.ones([2, 2, 2], { device })), RangeError, /^gx\.diag: expected a 1-d or 2-d tensor, got \[2, 2, 2\]/);
    throwsNamed(t, () => gx.diag(v3, 1.5), TypeError, /^gx\.diag: offset must be an integer/);
    throwsNamed(t, () => gx.diagonal(v3), RangeError, /^gx\.diagonal: needs a tensor of 2 or more dimensions/);
    throwsNamed(t, () => gx.diagonal(m, 0, 1, -1), RangeError, /^gx\.diagonal: axis1 and axis2 must be different dimensions, both are 1/);
    throwsNamed(t, () => gx.diagonal(m, 0, 0, 2), RangeError, /^gx\.diagonal: axis2 2 is out of range/);
    throwsNamed(t, () => gx.diagonal(m, { offset: 1 }, 0), TypeError, /^gx\.diagonal: takes offset and axes positionally or as options/);
    throwsNamed(t, () => gx.triu(v3), RangeError, /^gx\.triu: needs a tensor of 2 or more dimensions/);
    throwsNamed(t, () => m.tril('1' as never), TypeError, /^gx\.tril: offset must be an integer/);
  });
});
