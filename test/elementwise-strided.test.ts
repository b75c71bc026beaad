// Broadcast and strided elementwise ops on every device (NOTE [ The strided
// elementwise kernel ] in ops/common/cuda_loops.cuh): a per-channel bias
// (1, C, 1, 1) over (N, C, H, W), row and column broadcasts, permuted
// (non-contiguous) operands, JS scalars and three-input ops, at sizes that are
// not multiples of a thread's 4 elements or of a block's 1024, in float32 (the
// typed strided kernel on CUDA), float64, float16 and int32 (the general
// kernel). Checked against a JS reference that rounds like the kernels
// (Math.fround for float32: +, -, *, / round once, so the figures are exact),
// and on CUDA, float32's typed path against the general one (an operand of
// another dtype holding the same values sends the same op to the general
// kernel) bit for bit.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, randomValues, rng, sameValues } from './helpers';

type Op = 'add' | 'sub' | 'mul' | 'div';
const OPS: readonly Op[] = ['add', 'sub', 'mul', 'div'];

/** [output shape, a's shape, b's shape]: each broadcasts to the output. */
const SHAPES: readonly [number[], number[], number[]][] = [
  [[3, 5, 7, 9], [3, 5, 7, 9], [1, 5, 1, 1]],        // a per-channel bias, 945 elements
  [[2, 37, 33, 17], [2, 37, 33, 17], [1, 37, 1, 1]], // 41514: many blocks, a partial last one
  [[4, 6, 8, 8], [1, 6, 1, 1], [4, 6, 8, 8]],        // the bias first
  [[7, 13], [7, 13], [13]],                          // a row
  [[7, 13], [7, 1], [7, 13]],                        // a column
  [[5, 3, 11], [5, 1, 11], [3, 1]],                  // both broadcast
  [[1, 1023], [1, 1023], [1]],                       // one short of a block's elements
];

const numel = (s: readonly number[]): number => s.reduce((x, y) => x * y, 1);

/** The element of `shape` (row-major index of the output) that broadcasting reads. */
function broadcastIndex(out: readonly number[], shape: readonly number[], i: number): number {
  let idx = 0, stride = 1, rest = i;
  for (let d = out.length - 1; d >= 0; d--) {
    const pos = rest % out[d];
    rest = Math.floor(rest / out[d]);
    const sd = d - (out.length - shape.length);
    if (sd < 0) continue;
    if (shape[sd] !== 1) idx += pos * stride;
    stride *= shape[sd];
  }
  return idx;
}

const JS_OP: Record<Op, (x: number, y: number) => number> = {
  add: (x, y) => x + y, sub: (x, y) => x - y, mul: (x, y) => x * y, div: (x, y) => x / y,
};

/** Values of dtype that keep division away from zero (int32 divides as float: true division). */
function values(dtype: gx.DType, n: number, seed: number): number[] {
  const v = Array.from(randomValues(dtype, n, seed) as ArrayLike<number>, Number);
  return v.map((x) => (x === 0 ? 1 : x));
}

function reference(op: Op, dtype: gx.DType, out: number[], sa: number[], a: number[], sb: number[], b: number[]): number[] {
  const round = dtype === 'float32' ? Math.fround : (x: number): number => x;
  return Array.from({ length: numel(out) }, (_, i) =>
    round(JS_OP[op](a[broadcastIndex(out, sa, i)], b[broadcastIndex(out, sb, i)])));
}

function call(op: Op, a: gx.Tensor, b: gx.Tensor): gx.Tensor {
  return op === 'add' ? gx.add(a, b) : op === 'sub' ? gx.sub(a, b) : op === 'mul' ? gx.mul(a, b) : gx.div(a, b);
}

deviceTest('float32 and float64 broadcasts (per-channel bias, rows, columns) equal a JS reference exactly', (t, d) => {
  let seed = 1;
  for (const dtype of ['float32', 'float64'] as const) {
    for (const [out, sa, sb] of SHAPES) {
      for (const op of OPS) {
        gx.tidy(() => {
          const av = values(dtype, numel(sa), seed++), bv = values(dtype, numel(sb), seed++);
          const a = gx.tensor(av, { dtype, device: d, shape: sa }), b = gx.tensor(bv, { dtype, device: d, shape: sb });
          const y = call(op, a, b);
          t.deepEqual([...y.shape], out);
          sameValues(t, Array.from(y.toArraySync() as Float32Array), reference(op, dtype, out, sa, av, sb, bv), `${dtype} ${op} ${out}`);
        });
      }
    }
  }
});

deviceTest('permuted (non-contiguous) operands and JS scalars in broadcasts equal the reference', (t, d) => {
  gx.tidy(() => {
    const shape = [3, 10, 6, 5];  // viewed as (3, 5, 6, 10) through a permute
    const xv = values('float32', numel(shape), 41), bv = values('float32', 5, 42);
    const x = gx.permute(gx.tensor(xv, { device: d, shape }), [0, 3, 2, 1]);
    const b = gx.tensor(bv, { device: d, shape: [1, 5, 1, 1] });
    const contiguous = gx.tensor(Array.from(x.toArraySync() as Float32Array), { device: d, shape: [3, 5, 6, 10] });
    const want = reference('mul', 'float32', [3, 5, 6, 10], [3, 5, 6, 10], Array.from(contiguous.toArraySync() as Float32Array), [1, 5, 1, 1], bv);
    sameValues(t, Array.from(gx.mul(x, b).toArraySync() as Float32Array), want, 'permuted * bias');
    // A scalar beside a strided operand: (x + 2.5) with x permuted.
    const s = Array.from(gx.add(x, 2.5).toArraySync() as Float32Array);
    sameValues(t, s, Array.from(contiguous.toArraySync() as Float32Array, (v) => Math.fround(v + 2.5)), 'permuted + scalar');
    // A transposed matrix plus a row: both operands strided differently.
    const m = gx.tensor(values('float32', 9 * 14, 43), { device: d, shape: [9, 14] }).transpose(0, 1);
    const row = gx.tensor(values('float32', 9, 44), { device: d, shape: [9] });
    const mc = Array.from(gx.tensor(Array.from(m.toArraySync() as Float32Array), { shape: [14, 9] }).toArraySync() as Float32Array);
    sameValues(t, Array.from(gx.sub(m, row).toArraySync() as Float32Array),
      reference('sub', 'float32', [14, 9], [14, 9], mc, [9], Array.from(row.toArraySync() as Float32Array)), 'transposed - row');
  });
});

deviceTest('float16 and int32 broadcasts (the general kernel) equal the reference', (t, d) => {
  gx.tidy(() => {
    const av = values('float16', 2 * 6 * 5 * 3, 51), bv = values('float16', 6, 52);
    const a = gx.tensor(av, { dtype: 'float16', device: d, shape: [2, 6, 5, 3] });
    const b = gx.tensor(bv, { dtype: 'float16', device: d, shape: [1, 6, 1, 1] });
    const f16 = Array.from(gx.add(a, b).astype('float32').toArraySync() as Float32Array);
    // float16 adds in float and rounds once to float16: the reference rounds through a float16 tensor.
    const ref = gx.tensor(reference('add', 'float32', [2, 6, 5, 3], [2, 6, 5, 3], av, [1, 6, 1, 1], bv), { shape: [2, 6, 5, 3] });
    sameValues(t, f16, Array.from(ref.astype('float16').astype('float32').toArraySync() as Float32Array), 'float16 + bias');
    const iv = Array.from({ length: 4 * 7 * 3 }, (_, i) => (i * 7919) % 2001 - 1000), jv = [3, -5, 11, 2, -8, 6, 1];
    const i32 = gx.add(gx.tensor(iv, { dtype: 'int32', device: d, shape: [4, 7, 3] }), gx.tensor(jv, { dtype: 'int32', device: d, shape: [7, 1] }));
    t.is(i32.dtype, 'int32');
    sameValues(t, Array.from(i32.toArraySync() as Int32Array), reference('add', 'int32', [4, 7, 3], [4, 7, 3], iv, [7, 1], jv), 'int32 + column');
  });
});

deviceTest('comparisons and lerp (bool output, three inputs, a scalar weight) over broadcasts equal the reference', (t, d) => {
  gx.tidy(() => {
    const r = rng(61);
    const shape = [3, 4, 5, 7];
    const av = values('float32', numel(shape), 62), bv = values('float32', 4, 63);
    const a = gx.tensor(av, { device: d, shape }), b = gx.tensor(bv, { device: d, shape: [1, 4, 1, 1] });
    const gt = gx.gt(a, b);
    t.is(gt.dtype, 'bool');
    const want = Array.from({ length: numel(shape) }, (_, i) => (av[i] > bv[broadcastIndex(shape, [1, 4, 1, 1], i)] ? 1 : 0));
    sameValues(t, Array.from(gt.toArraySync() as Uint8Array, Number), want, 'gt');
    // lerp with a weight of value 1 or 0 gives an end exactly (torch.lerp's contract).
    const wv = Array.from({ length: 5 * 7 }, () => (r() < 0.5 ? 0 : 1));
    const w = gx.tensor(wv, { device: d, shape: [5, 7] });
    const l = Array.from(gx.lerp(a, b, w).toArraySync() as Float32Array);
    sameValues(t, l, Array.from({ length: numel(shape) }, (_, i) =>
      (wv[i % 35] === 1 ? bv[broadcastIndex(shape, [1, 4, 1, 1], i)] : av[i])), 'lerp with 0/1 weights');
    sameValues(t, Array.from(gx.lerp(a, b, 1).toArraySync() as Float32Array),
      Array.from({ length: numel(shape) }, (_, i) => bv[broadcastIndex(shape, [1, 4, 1, 1], i)]), 'lerp with the scalar weight 1');
  });
});

deviceTest('on each device the typed float32 path equals the general kernel bit for bit (add, div, lerp; a float16 operand takes the general one)', (t, d) => {
  gx.tidy(() => {
    const shape = [2, 9, 11, 13];
    const x = gx.tensor(values('float32', numel(shape), 71), { device: d, shape });
    const b16 = gx.tensor(values('float16', 9, 72), { dtype: 'float16', device: d, shape: [1, 9, 1, 1] });
    const b32 = b16.astype('float32');  // the same values (float16 widens exactly)
    const w = gx.tensor(values('float32', 13, 73).map((v) => v / 200), { device: d, shape: [13] });
    const same = (p: gx.Tensor, q: gx.Tensor, what: string): void => {
      t.is(p.dtype, 'float32');
      sameValues(t, Array.from(p.toArraySync() as Float32Array), Array.from(q.toArraySync() as Float32Array), what);
    };
    same(gx.add(x, b32), gx.add(x, b16), 'add');
    same(gx.div(x, b32), gx.div(x, b16), 'div');
    same(gx.lerp(x, b32, w), gx.lerp(x, b16, w), 'lerp');
  });
});

test('the shape table holds what its comments say', (t) => {
  t.is(numel(SHAPES[0][0]), 945);
  t.true(numel(SHAPES[1][0]) % 1024 !== 0 && numel(SHAPES[1][0]) > 4 * 1024);
});
