// gx.linalg.vectorNorm, matrixNorm and norm, and Tensor.norm, against
// plain-JS references on random inputs, on every device: every order (any
// real, Infinity, -Infinity, 0; 'fro', 'nuc', 1, -1, 2, -2, Infinity,
// -Infinity), every axis form, keepdims, the dtype option, every float dtype,
// non-contiguous inputs, empty tensors, torch's overflow behaviour (no
// scaling: float32 1e20 gives inf; float16 squares in float), NaN,
// gradients (gradcheck in float64, the zero vector's gradient 0, ties of the
// max norm split), torch.linalg.norm's dispatch, and errors naming the
// function and the argument.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTestSerial } from './helpers';
import { expectClose, noLeaks, noStrayTensors, numelOf, offsetOf, randomTensor, rtolOf, unravel, valuesOf, type Arr } from './linalg-reference';

const FLOATS: gx.DType[] = ['float32', 'float64', 'float16', 'bfloat16'];

// --- references -------------------------------------------------------------------

/** x reduced over `axes` by f, each line in C order (kept axes as size 1 with keepdims). */
function reduceRef(x: Arr, axes: readonly number[], f: (line: number[]) => number, keepdims = false): Arr {
  const ax = axes.map((a) => (a < 0 ? a + x.shape.length : a));
  const keptDims = x.shape.map((_, d) => d).filter((d) => !ax.includes(d));
  const outShape = keptDims.map((d) => x.shape[d]);
  const lines: number[][] = Array.from({ length: numelOf(outShape) }, () => []);
  x.values.forEach((v, i) => {
    const p = unravel(i, x.shape);
    lines[offsetOf(keptDims.map((d) => p[d]), outShape)].push(v);
  });
  return { shape: keepdims ? x.shape.map((s, d) => (ax.includes(d) ? 1 : s)) : outShape, values: lines.map(f) };
}

const sum = (l: number[]): number => l.reduce((a, b) => a + b, 0);

function pnorm(p: number): (l: number[]) => number {
  return (l) => {
    const a = l.map(Math.abs);
    if (a.some(Number.isNaN)) return Number.NaN;
    if (p === Infinity) return a.length === 0 ? Number.NaN : Math.max(...a);
    if (p === -Infinity) return a.length === 0 ? Number.NaN : Math.min(...a);
    if (p === 0) return a.filter((v) => v !== 0).length;
    return sum(a.map((v) => v ** p)) ** (1 / p);
  };
}

/** The singular values of an m x n row-major matrix, descending (one-sided Jacobi in double). */
function singularValues(values: readonly number[], m: number, n: number): number[] {
  // Work on the orientation with no more columns than rows.
  const tall = m >= n;
  const rows = tall ? m : n, cols = tall ? n : m;
  const a = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (tall ? values[i * n + j] : values[j * n + i])));
  for (let sweep = 0; sweep < 80; sweep++) {
    let rotated = false;
    for (let p = 0; p < cols; p++) {
      for (let q = p + 1; q < cols; q++) {
        let alpha = 0, beta = 0, gamma = 0;
        for (let i = 0; i < rows; i++) {
          alpha += a[i][p] ** 2;
          beta += a[i][q] ** 2;
          gamma += a[i][p] * a[i][q];
        }
        if (Math.abs(gamma) <= 1e-300 || Math.abs(gamma) <= 1e-16 * Math.sqrt(alpha * beta)) continue;
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        const tt = Math.sign(zeta || 1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + tt * tt), s = c * tt;
        for (let i = 0; i < rows; i++) {
          const up = a[i][p], uq = a[i][q];
          a[i][p] = c * up - s * uq;
          a[i][q] = s * up + c * uq;
        }
      }
    }
    if (!rotated) break;
  }
  return Array.from({ length: cols }, (_, j) => Math.sqrt(sum(a.map((r) => r[j] ** 2)))).sort((u, v) => v - u);
}

/** A matrix norm of x over axes [r, c] (normalized), the other axes kept in order. */
function matrixNormRef(x: Arr, ord: number | string, r: number, c: number, keepdims = false): Arr {
  const nd = x.shape.length;
  const rest = x.shape.map((_, d) => d).filter((d) => d !== r && d !== c);
  const outShape = rest.map((d) => x.shape[d]);
  const [m, n] = [x.shape[r], x.shape[c]];
  const values = Array.from({ length: numelOf(outShape) }, (_, o) => {
    const p = unravel(o, outShape);
    const q = new Array<number>(nd).fill(0);
    rest.forEach((d, k) => { q[d] = p[k]; });
    const mat = Array.from({ length: m * n }, (_, e) => {
      q[r] = Math.floor(e / n);
      q[c] = e % n;
      return x.values[offsetOf(q, x.shape)];
    });
    if (ord === 'fro') return Math.sqrt(sum(mat.map((v) => v * v)));
    if (ord === 'nuc' || ord === 2 || ord === -2) {
      const s = singularValues(mat, m, n);
      return ord === 'nuc' ? sum(s) : ord === 2 ? s[0] : s[s.length - 1];
    }
    const colSums = Array.from({ length: n }, (_, j) => sum(Array.from({ length: m }, (_, i) => Math.abs(mat[i * n + j]))));
    const rowSums = Array.from({ length: m }, (_, i) => sum(Array.from({ length: n }, (_, j) => Math.abs(mat[i * n + j]))));
    const o2 = ord as number;
    const list = Math.abs(o2) === 1 ? colSums : rowSums;
    return o2 > 0 ? Math.max(...list) : Math.min(...list);
  });
  return { shape: keepdims ? x.shape.map((s, d) => (d === r || d === c ? 1 : s)) : outShape, values };
}

const ORDS = [2, 1, Infinity, -Infinity, 0, 3, 0.5, -1, -2.5];

// --- vector norms ------------------------------------------------------------------

deviceTestSerial('vectorNorm: every order, axis form, keepdims and float dtype, against the reference', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of FLOATS) {
      const x = randomTensor([3, 4, 5], dtype, device, 1);
      const tol = rtolOf(dtype) * 4;
      for (const ord of ORDS) {
        const axesList: (number | number[] | undefined)[] = [undefined, 0, -1, [0, 2], [2, 1, 0], []];
        for (const axis of axesList) {
          const axes = axis === undefined || (Array.isArray(axis) && axis.length === 0) ? [0, 1, 2] : typeof axis === 'number' ? [axis] : axis;
          for (const keepdims of [false, true]) {
            const want = reduceRef(x.arr, axes, pnorm(ord), keepdims);
            const what = `vectorNorm ${dtype} ord ${ord} axis ${JSON.stringify(axis)} keepdims ${keepdims}`;
            const got = gx.linalg.vectorNorm(x.t, ord, axis, { keepdims });
            t.is(got.dtype, dtype);
            expectClose(t, got, want, what, tol, 1e-30);
            expectClose(t, gx.linalg.vectorNorm(x.t, { ord, axis, keepdims }), want, `${what} (options)`, tol, 1e-30);
          }
        }
      }
      expectClose(t, gx.linalg.vectorNorm(x.t), reduceRef(x.arr, [0, 1, 2], pnorm(2)), `${dtype}: the default is the 2-norm of everything`, tol);
    }
  });
});

deviceTestSerial('vectorNorm: dtype converts first (without narrowing), non-contiguous inputs, 0-d and size-1 axes', (t, device) => {
  noLeaks(t, device, () => {
    const h = randomTensor([6, 7], 'float16', device, 2);
    const up = gx.linalg.vectorNorm(h.t, 2, 1, { dtype: 'float32' });
    t.is(up.dtype, 'float32');
    expectClose(t, up, reduceRef(h.arr, [1], pnorm(2)), 'float16 input in float32', 1e-6);
    t.is(gx.linalg.vectorNorm(h.t, { dtype: 'float64' }).dtype, 'float64');
    const tr = randomTensor([5, 4], 'float64', device, 3, { transposed: true });
    t.false(tr.t.isContiguous());
    for (const ord of ORDS) expectClose(t, gx.linalg.vectorNorm(tr.t, ord, 0), reduceRef(tr.arr, [0], pnorm(ord)), `transposed, ord ${ord}`, 1e-12);
    const s = gx.tensor(-2.5, { dtype: 'float64', device });
    t.deepEqual(valuesOf(gx.linalg.vectorNorm(s)), [2.5]);
    t.deepEqual(valuesOf(gx.linalg.vectorNorm(s, 0)), [1]);
    const col = gx.tensor([[-3], [4]], { device });
    t.deepEqual(valuesOf(gx.linalg.vectorNorm(col, 2, 1)), [3, 4]);
    t.deepEqual(valuesOf(gx.linalg.vectorNorm(col, 0, 1, { keepdims: true })), [1, 1]);
  });
});

deviceTestSerial('vectorNorm: as torch, unscaled (float32 overflows past 1e19), 16-bit floats square in float, NaN propagates', (t, device) => {
  noLeaks(t, device, () => {
    // float16: 30000^2 overflows float16 but not the float the reduction computes in (torch: 42426.4).
    const h = gx.tensor([30000, 30000], { dtype: 'float16', device });
    expectClose(t, gx.linalg.vectorNorm(h), { shape: [], values: [42432] }, 'float16 30000s', 1e-3);
    t.is(Number(gx.linalg.vectorNorm(gx.tensor([60000, 1], { dtype: 'float16', device }), 2).item()), 60000);
    // float32: sqrt(sum(x^2)) with no scaling, as torch.linalg.vector_norm: 1e20^2 is inf in float32.
    t.is(Number(gx.linalg.vectorNorm(gx.tensor([1e20, 1e20], { device })).item()), Infinity);
    t.is(Number(gx.linalg.vectorNorm(gx.tensor([1e18, 1e18], { device })).item()), Math.fround(Math.SQRT2 * 1e18));
    t.is(Number(gx.linalg.vectorNorm(gx.tensor([1e20, 1e20], { dtype: 'float64', device })).item()), Math.SQRT2 * 1e20);
    // One element per line: |x| (torch's shortcut), no square.
    t.is(Number(gx.linalg.vectorNorm(gx.tensor([1e20], { device })).item()), Math.fround(1e20));
    const n = gx.tensor([1, Number.NaN, 3], { device });
    for (const ord of [2, 1, Infinity, -Infinity, 3]) t.true(Number.isNaN(Number(gx.linalg.vectorNorm(n, ord).item())), `NaN, ord ${ord}`);
    t.is(Number(gx.linalg.vectorNorm(n, 0).item()), 3, 'NaN counts as nonzero');
  });
});

deviceTestSerial('long contiguous rows (the vectorized per-output CUDA reduction): norms, sum, mean, max, argmax, var, aligned or not', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of ['float32', 'float16', 'bfloat16'] as gx.DType[]) {
      for (const [rows, cols, offset] of [[5, 4099, 0], [3, 4096, 0], [7, 1030, 0], [2, 60001, 0], [4, 4099, 1], [3, 2051, 3]]) {
        // (|x| <= 1 on the long rows: their 1-norm stays inside float16.)
        const full = randomTensor([rows * cols + offset], dtype, device, rows + cols + offset, cols > 10000 ? { lo: -1, hi: 1 } : { lo: -3, hi: 3 });
        // A view from element `offset` on: its rows start unaligned unless offset is 0.
        const x = full.t.slice(0, offset, rows * cols + offset).reshape([rows, cols]);
        const arr = { shape: [rows, cols], values: full.arr.values.slice(offset) };
        const what = `${dtype} [${rows}, ${cols}] from element ${offset}`;
        const tol = rtolOf(dtype) * 8;
        for (const ord of [2, 1, Infinity, 0]) expectClose(t, gx.linalg.vectorNorm(x, ord, -1), reduceRef(arr, [1], pnorm(ord)), `vectorNorm ${ord} ${what}`, tol);
        expectClose(t, gx.sum(x, 1), reduceRef(arr, [1], sum), `sum ${what}`, tol, 0.05);
        expectClose(t, gx.mean(x, 1), reduceRef(arr, [1], (l) => sum(l) / l.length), `mean ${what}`, tol, 1e-4);
        expectClose(t, gx.amax(x, 1), reduceRef(arr, [1], (l) => Math.max(...l)), `max ${what}`);
        expectClose(t, gx.argmax(x, 1), reduceRef(arr, [1], (l) => l.indexOf(Math.max(...l))), `argmax ${what} (the first maximum)`);
        const variance = (l: number[]): number => { const m = sum(l) / l.length; return sum(l.map((v) => (v - m) ** 2)) / (l.length - 1); };
        expectClose(t, gx.var(x, 1), reduceRef(arr, [1], variance), `var ${what}`, tol * 4, 1e-4);
      }
    }
  });
});

deviceTestSerial('vectorNorm of empty tensors: 0 where the order has an identity, an error where it has none', (t, device) => {
  noLeaks(t, device, () => {
    const e = gx.zeros([0, 3], { device });
    for (const ord of [2, 1, 0, 3]) t.deepEqual(valuesOf(gx.linalg.vectorNorm(e, ord)), [0], `ord ${ord}`);
    t.deepEqual(gx.linalg.vectorNorm(e, Infinity, 1).shape, [0], 'a non-empty axis of an empty tensor');
    t.deepEqual(valuesOf(gx.linalg.vectorNorm(e, 2, 0)), [0, 0, 0]);
    for (const ord of [Infinity, -Infinity, -1]) {
      t.throws(() => gx.linalg.vectorNorm(e, ord), { instanceOf: RangeError, message: /^gx\.linalg\.vectorNorm: the (inf|-inf|-1) norm of zero elements is not defined \(no identity\): input of shape \[0, 3\], axis 0 is empty/ });
    }
  });
});

// --- gradients ----------------------------------------------------------------------

deviceTestSerial('vectorNorm gradients: gradcheck for every order; 0 (not NaN) at the zero vector; max-norm ties split', (t, device) => {
  noLeaks(t, device, () => {
    const leaf = (shape: number[], seed: number): gx.Tensor => randomTensor(shape, 'float64', device, seed, { lo: 0.5, hi: 2 }).t.mul(gx.tensor([1, -1, 1, -1], { dtype: 'float64', device }).reshape([1, 4])).detach().requiresGrad_();
    for (const ord of [2, 1, Infinity, -Infinity, 3, 1.5, 0.5, -1]) {
      for (const axis of [undefined, 1, [0, 1]]) {
        const x = leaf([3, 4], 10);
        t.true(gx.autograd.gradcheck((v) => gx.linalg.vectorNorm(v, ord, axis), [x]).ok, `ord ${ord} axis ${JSON.stringify(axis)}`);
      }
    }
    const x0 = leaf([3, 4], 11);
    t.true(gx.autograd.gradcheck((v) => gx.linalg.vectorNorm(v, 2, 0, { keepdims: true }), [x0]).ok, 'keepdims');
    // The zero vector (and a zero row): gradient 0, as torch, not NaN.
    for (const ord of [2, 3, 1.5, 1, Infinity]) {
      const z = gx.zeros([2, 3], { dtype: 'float64', device }).requiresGrad_();
      gx.linalg.vectorNorm(z, ord).backward();
      const g = valuesOf(z.grad as gx.Tensor);
      t.true(g.every((v) => !Number.isNaN(v)), `ord ${ord}: no NaN in ${g}`);
      if (ord !== Infinity && ord !== 1) t.deepEqual(g, [0, 0, 0, 0, 0, 0], `ord ${ord}: zero gradient`);
    }
    const rows = gx.tensor([[0, 0], [3, 4]], { dtype: 'float64', device }).requiresGrad_();
    gx.sum(gx.linalg.vectorNorm(rows, 2, 1)).backward();
    expectClose(t, rows.grad as gx.Tensor, { shape: [2, 2], values: [0, 0, 0.6, 0.8] }, 'a zero row and a 3-4-5 row', 1e-15);
    // Ties of the max norm share the gradient (torch's rule).
    const tie = gx.tensor([3, -3, 1], { dtype: 'float64', device }).requiresGrad_();
    gx.linalg.vectorNorm(tie, Infinity).backward();
    t.deepEqual(valuesOf(tie.grad as gx.Tensor), [0.5, -0.5, 0]);
    // ord 0: no gradient anywhere.
    const c = gx.tensor([1, 0, 2], { dtype: 'float64', device }).requiresGrad_();
    gx.linalg.vectorNorm(c, 0).backward();
    t.deepEqual(valuesOf(c.grad as gx.Tensor), [0, 0, 0]);
    // A converted input (dtype) gets its gradient in its own dtype.
    const f = gx.tensor([3, 4], { device }).requiresGrad_();
    gx.linalg.vectorNorm(f, 2, undefined, { dtype: 'float64' }).backward();
    t.is((f.grad as gx.Tensor).dtype, 'float32');
    expectClose(t, f.grad as gx.Tensor, { shape: [2], values: [0.6, 0.8] }, 'float32 gradient through float64', 1e-6);
  });
});

// --- matrix norms ------------------------------------------------------------------------

const MATRIX_ORDS: gx.MatrixNormOrd[] = ['fro', 'nuc', 1, -1, 2, -2, Infinity, -Infinity];

deviceTestSerial('matrixNorm: every order on tall, wide and batched matrices, any two axes, keepdims, against the reference', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of ['float64', 'float32'] as gx.DType[]) {
      const tol = dtype === 'float64' ? 1e-10 : 2e-5;
      const shapes: [number[], [number, number] | undefined][] = [[[3, 4], undefined], [[5, 2], undefined], [[2, 3, 4], undefined], [[3, 2, 4], [0, 2]], [[4, 2, 3], [-1, 0]]];
      for (const [shape, axis] of shapes) {
        const x = randomTensor(shape, dtype, device, 20 + shape.length);
        const [r, c] = (axis ?? [-2, -1]).map((a) => (a < 0 ? a + shape.length : a));
        for (const ord of MATRIX_ORDS) {
          for (const keepdims of [false, true]) {
            const want = matrixNormRef(x.arr, ord, r, c, keepdims);
            const what = `matrixNorm ${dtype} ${JSON.stringify(shape)} ord ${ord} axis ${JSON.stringify(axis)} keepdims ${keepdims}`;
            expectClose(t, gx.linalg.matrixNorm(x.t, ord, axis, { keepdims }), want, what, tol, tol);
            expectClose(t, gx.linalg.matrixNorm(x.t, { ord, axis, keepdims }), want, `${what} (options)`, tol, tol);
          }
        }
      }
    }
    // 16-bit floats (the singular values in float32), and transposed inputs.
    const h = randomTensor([3, 3], 'bfloat16', device, 30);
    expectClose(t, gx.linalg.matrixNorm(h.t, 2), matrixNormRef(h.arr, 2, 0, 1), 'bfloat16 2-norm', 2e-2);
    t.is(gx.linalg.matrixNorm(h.t, 'nuc').dtype, 'bfloat16');
    const tr = randomTensor([2, 4, 3], 'float64', device, 31, { transposed: true });
    for (const ord of MATRIX_ORDS) expectClose(t, gx.linalg.matrixNorm(tr.t, ord), matrixNormRef(tr.arr, ord, 1, 2), `transposed, ord ${ord}`, 1e-10, 1e-12);
    // Empty: 'fro' and 'nuc' are 0; a batch of none is empty.
    t.deepEqual(valuesOf(gx.linalg.matrixNorm(gx.zeros([0, 3], { device }))), [0]);
    t.deepEqual(valuesOf(gx.linalg.matrixNorm(gx.zeros([3, 0], { device }), 'nuc')), [0]);
    t.deepEqual(gx.linalg.matrixNorm(gx.zeros([0, 2, 2], { device }), 2).shape, [0]);
    t.deepEqual(valuesOf(gx.linalg.matrixNorm(gx.zeros([0, 3], { device }), 1)), [0], 'no rows: every column sums to 0');
    // A max over no columns (singular values) is 0, a min over them is refused, as torch's (torch-audit.test.ts has all of them).
    t.deepEqual(valuesOf(gx.linalg.matrixNorm(gx.zeros([3, 0], { device }), 1)), [0], 'no columns: the largest column sum is 0');
    t.throws(() => gx.linalg.matrixNorm(gx.zeros([3, 0], { device }), -1), { instanceOf: RangeError, message: /^gx\.linalg\.matrixNorm: the -1 norm of matrices with no columns is not defined/ });
    t.throws(() => gx.linalg.matrixNorm(gx.zeros([3, 0], { device }), -2), { instanceOf: RangeError, message: /^gx\.linalg\.matrixNorm: the -2 norm of matrices with no singular values is not defined/ });
  });
});

deviceTestSerial('matrixNorm gradients: gradcheck for every order (2, -2 and nuc through the SVD)', (t, device) => {
  noLeaks(t, device, () => {
    for (const ord of MATRIX_ORDS) {
      for (const shape of [[3, 4], [2, 4, 3]]) {
        const x = randomTensor(shape, 'float64', device, 40 + shape.length).t.requiresGrad_();
        t.true(gx.autograd.gradcheck((v) => gx.linalg.matrixNorm(v, ord), [x], { atol: 1e-6 }).ok, `ord ${ord} ${JSON.stringify(shape)}`);
      }
    }
    const y = randomTensor([3, 2, 4], 'float64', device, 45).t.requiresGrad_();
    t.true(gx.autograd.gradcheck((v) => gx.linalg.matrixNorm(v, 'nuc', [2, 0], { keepdims: true }), [y], { atol: 1e-6 }).ok, 'nuc over axes [2, 0]');
  });
});

// --- norm (torch.linalg.norm) and Tensor.norm (torch.norm) ---------------------------------------

deviceTestSerial('linalg.norm dispatches as torch.linalg.norm; Tensor.norm as torch.Tensor.norm', (t, device) => {
  noLeaks(t, device, () => {
    const x = randomTensor([2, 3, 4], 'float64', device, 50);
    const m = randomTensor([3, 4], 'float64', device, 51);
    const v = randomTensor([5], 'float64', device, 52);
    const all = (a: Arr, p = 2): Arr => reduceRef(a, a.shape.map((_, d) => d), pnorm(p));
    expectClose(t, gx.linalg.norm(x.t), all(x.arr), 'no ord, no axis: the 2-norm of everything', 1e-12);
    expectClose(t, gx.linalg.norm(x.t, null, null, { keepdims: true }), reduceRef(x.arr, [0, 1, 2], pnorm(2), true), 'keepdims', 1e-12);
    expectClose(t, gx.linalg.norm(v.t, 3), all(v.arr, 3), 'a 1-d input with an ord: a vector norm', 1e-12);
    expectClose(t, gx.linalg.norm(m.t, 'nuc'), matrixNormRef(m.arr, 'nuc', 0, 1), 'a 2-d input with an ord: a matrix norm', 1e-10);
    expectClose(t, gx.linalg.norm(m.t, 1), matrixNormRef(m.arr, 1, 0, 1), '1 of a 2-d input: the matrix 1-norm', 1e-12);
    expectClose(t, gx.linalg.norm(x.t, 1, -1), reduceRef(x.arr, [2], pnorm(1)), 'one axis: a vector norm', 1e-12);
    expectClose(t, gx.linalg.norm(x.t, undefined, [2, 0]), matrixNormRef(x.arr, 'fro', 2, 0), 'two axes: a matrix norm, fro', 1e-12);
    expectClose(t, gx.linalg.norm(x.t, Infinity, [0, 2]), matrixNormRef(x.arr, Infinity, 0, 2), 'two axes with an ord', 1e-12);
    expectClose(t, gx.linalg.norm(x.t, { ord: -1, axis: [1] }), reduceRef(x.arr, [1], pnorm(-1)), 'options', 1e-12);
    t.throws(() => gx.linalg.norm(x.t, 2), { instanceOf: RangeError, message: /^gx\.linalg\.norm: with an ord and no axis the input must be 1-d .* or 2-d .*, got \[2, 3, 4\]/ });
    t.throws(() => gx.linalg.norm(x.t, 'fro', 1), { instanceOf: RangeError, message: /^gx\.linalg\.norm: ord 'fro' is a matrix norm's; it needs two axes/ });
    t.throws(() => gx.linalg.norm(x.t, 2, [0, 1, 2]), { instanceOf: RangeError, message: /^gx\.linalg\.norm: axis must name one axis .* or two/ });
    // Tensor.norm: p 'fro' over any one or two axes (or all), 'nuc' of a matrix, a number over any axes.
    expectClose(t, x.t.norm(), all(x.arr), "x.norm(): 'fro' of everything", 1e-12);
    expectClose(t, x.t.norm('fro', [0, 2]), reduceRef(x.arr, [0, 2], pnorm(2)), "x.norm('fro', [0, 2])", 1e-12);
    expectClose(t, x.t.norm(1, [0, 1, 2]), all(x.arr, 1), 'x.norm(1, all three axes): a vector norm', 1e-12);
    expectClose(t, x.t.norm(3, -1, { keepdims: true }), reduceRef(x.arr, [2], pnorm(3), true), 'x.norm(3, -1, { keepdims })', 1e-12);
    expectClose(t, m.t.norm('nuc'), matrixNormRef(m.arr, 'nuc', 0, 1), "m.norm('nuc')", 1e-10);
    expectClose(t, x.t.norm('nuc', [0, 2]), matrixNormRef(x.arr, 'nuc', 0, 2), "x.norm('nuc', [0, 2])", 1e-10);
    t.is(m.t.astype('float32').norm(2, null, { dtype: 'float64' }).dtype, 'float64');
    t.throws(() => x.t.norm('nuc'), { instanceOf: RangeError, message: /^Tensor\.norm: the nuclear norm without axes needs a 2-d input, got \[2, 3, 4\]/ });
    t.throws(() => x.t.norm('fro', [0, 1, 2]), { instanceOf: RangeError, message: /^Tensor\.norm: the Frobenius norm takes one or two axes/ });
    t.throws(() => x.t.norm('max' as never), { instanceOf: RangeError, message: /^Tensor\.norm: p must be a number, 'fro' or 'nuc', got 'max'/ });
  });
});

deviceTestSerial('the norms dispose every intermediate they make', (t, device) => {
  using x = randomTensor([2, 3, 4], 'float32', device, 70).t;
  using h = randomTensor([3, 3], 'float16', device, 71).t;
  using one = gx.ones([3, 1], { device });
  const calls: Record<string, () => gx.Tensor> = {
    'vectorNorm 2': () => gx.linalg.vectorNorm(x),
    'vectorNorm 0 over a size-1 axis': () => gx.linalg.vectorNorm(one, 0, 1),
    'vectorNorm 2 over a size-1 axis': () => gx.linalg.vectorNorm(one, 2, 1),
    'vectorNorm with dtype': () => gx.linalg.vectorNorm(x, 3, [0, 2], { dtype: 'float64' }),
    "linalg.norm 'nuc' of float16": () => gx.linalg.norm(h, 'nuc'),
    "x.norm('fro', [0, 1])": () => x.norm('fro', [0, 1]),
  };
  for (const ord of MATRIX_ORDS) calls[`matrixNorm ${ord}`] = () => gx.linalg.matrixNorm(x, ord, [0, 2], { keepdims: true });
  noStrayTensors(t, device, calls);
});

// --- errors ----------------------------------------------------------------------------------

function throwsNamed(t: ExecutionContext, fn: () => unknown, cls: typeof Error, re: RegExp): void {
  const e = t.throws(fn);
  t.true(e instanceof cls, `expected ${cls.name}, got ${e?.constructor.name}: ${e?.message}`);
  t.regex(e?.message ?? '', re);
}

deviceTestSerial('norm errors name the function and the argument', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.ones([2, 3], { device });
    throwsNamed(t, () => gx.linalg.vectorNorm(gx.ones([3], { dtype: 'int32', device })), TypeError, /^gx\.linalg\.vectorNorm: expected a floating-point tensor, got int32 \[3\]/);
    throwsNamed(t, () => gx.linalg.vectorNorm(x, 'fro' as never), TypeError, /^gx\.linalg\.vectorNorm: ord must be a number .*, got a string|^gx\.linalg\.vectorNorm: ord must be a number/);
    throwsNamed(t, () => gx.linalg.vectorNorm(x, Number.NaN), TypeError, /^gx\.linalg\.vectorNorm: ord must be a number/);
    throwsNamed(t, () => gx.linalg.vectorNorm(x, 2, 2), RangeError, /^gx\.linalg\.vectorNorm: axis 2 is out of range for an input of shape \[2, 3\]/);
    throwsNamed(t, () => gx.linalg.vectorNorm(x, 2, [1, -1]), RangeError, /^gx\.linalg\.vectorNorm: axis \[1,-1\] names dimension 1 twice/);
    throwsNamed(t, () => gx.linalg.vectorNorm(x, 2, 0, { dtype: 'float16' }), TypeError, /^gx\.linalg\.vectorNorm: the input's dtype float32 cannot be converted to dtype float16 without narrowing/);
    throwsNamed(t, () => gx.linalg.vectorNorm(x, 2, 0, { dtype: 'int32' as never }), TypeError, /^gx\.linalg\.vectorNorm: dtype must be a floating dtype, got int32/);
    throwsNamed(t, () => gx.linalg.vectorNorm(x, { ord: 1 }, 0), TypeError, /^gx\.linalg\.vectorNorm: takes ord and axis positionally or in one options object, not both/);
    throwsNamed(t, () => gx.linalg.vectorNorm(3 as never), TypeError, /^gx\.linalg\.vectorNorm: argument 'x' must be a Tensor/);
    throwsNamed(t, () => gx.linalg.matrixNorm(gx.ones([3], { device })), RangeError, /^gx\.linalg\.matrixNorm: needs a tensor of 2 or more dimensions/);
    throwsNamed(t, () => gx.linalg.matrixNorm(x, 3), RangeError, /^gx\.linalg\.matrixNorm: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, Infinity or -Infinity, got number 3/);
    throwsNamed(t, () => gx.linalg.matrixNorm(x, 'fro', [0, 0]), RangeError, /^gx\.linalg\.matrixNorm: axis \[0,0\] names dimension 0 twice/);
    throwsNamed(t, () => gx.linalg.matrixNorm(x, 'fro', [0] as never), TypeError, /^gx\.linalg\.matrixNorm: axis must be two axes \[row, column\]/);
    throwsNamed(t, () => gx.linalg.matrixNorm(gx.ones([2, 2], { dtype: 'int64', device })), TypeError, /^gx\.linalg\.matrixNorm: expected a floating-point tensor/);
    throwsNamed(t, () => gx.linalg.norm(gx.ones([2], { dtype: 'bool', device })), TypeError, /^gx\.linalg\.norm: expected a floating-point tensor/);
    throwsNamed(t, () => gx.ones([2], { dtype: 'uint8', device }).norm(), TypeError, /^Tensor\.norm: expected a floating-point tensor/);
  });
});
