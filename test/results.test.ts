// Results that behave like torch's (NOTE [ Named results ] in lib/ops/named.ts):
// multi-result ops destructure by position and read by name; arange takes its
// options after any of its numbers; clamp takes { min, max }; x.get takes
// index lists; a chunked tensor prints a summary.
import test from 'ava';
import * as util from 'util';

import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

const randomMatrix = (n: number, m: number, seed: number, device: string): gx.Tensor<'float64'> => {
  const r = rng(seed);
  return gx.tensor(Array.from({ length: n * m }, () => r() * 2 - 1), { dtype: 'float64', device }).reshape([n, m]);
};

deviceTest('multi-result ops destructure as [a, b] and read by name, the same tensors', (t, device) => {
  gx.tidy(() => {
    const x = randomMatrix(4, 6, 1, device);
    const sq = gx.add(gx.matmul(x, x.T), gx.mul(gx.eye(4, { dtype: 'float64', device }), 4));
    const cases: [string, readonly gx.Tensor[], Record<string, gx.Tensor>, string[]][] = [];
    const add = (name: string, r: readonly gx.Tensor[] & object, names: string[]): void => {
      cases.push([name, r, r as unknown as Record<string, gx.Tensor>, names]);
    };
    add('topk', gx.topk(x, 2), ['values', 'indices']);
    add('sort', gx.sort(x, 0), ['values', 'indices']);
    add('kthvalue', x.kthvalue(3), ['values', 'indices']);
    add('svd', gx.linalg.svd(x, { fullMatrices: false }), ['U', 'S', 'Vh']);
    add('eigh', gx.linalg.eigh(sq), ['eigenvalues', 'eigenvectors']);
    add('qr', gx.linalg.qr(x.T), ['Q', 'R']);
    add('slogdet', gx.linalg.slogdet(sq), ['sign', 'logabsdet']);
    for (const [name, r, byName, names] of cases) {
      t.is(r.length, names.length, name);
      names.forEach((n, i) => t.is(r[i], byName[n], `${name}: [${i}] is .${n}`));
      t.true(r.every((v) => v instanceof gx.Tensor), name);
      t.deepEqual(Object.keys(r), names.map((_, i) => String(i)), `${name}: the names are not enumerated`);
      t.true(Object.isFrozen(r), name);
    }
    // Typed by position: values keep x's dtype, indices are int64.
    const [values, indices] = gx.topk(x, 3, { largest: false });
    const v: gx.Tensor<'float64'> = values;
    const i: gx.Tensor<'int64'> = indices;
    const want = x.toNested() as number[][];
    const got = i.toNested() as number[][];
    got.forEach((row, k) => row.forEach((j, c) => t.is((v.toNested() as number[][])[k][c], want[k][j])));
    const [sign, logabsdet] = gx.linalg.slogdet(sq);
    const det = Number(gx.linalg.det(sq).item());
    t.true(Math.abs(Number(sign.item()) * Math.exp(Number(logabsdet.item())) - det) < 1e-9 * Math.abs(det));
    t.is(sign.item(), Math.sign(det));
  });
});

test('a named result is tidied once and JSON sees the tuple', (t) => {
  const r = gx.tidy(() => gx.topk(gx.tensor([3, 1, 2]), 2));
  t.false(r.values.isDisposed);
  t.deepEqual(r.indices.toNested(), [0, 2]);
  t.is(JSON.stringify(r.indices.toNested()), '[0,2]');
  for (const x of r) x.dispose();
  t.true(r.values.isDisposed && r.indices.isDisposed);
});

deviceTest('arange takes its options after one, two or three numbers', (t, device) => {
  using a = gx.arange(10, 20, { device });
  t.deepEqual(a.toNested(), Array.from({ length: 10 }, (_, k) => 10 + k));
  t.is(a.device.type, device);
  using b = gx.arange(5, { dtype: 'float64', device });
  t.deepEqual([b.dtype, b.toNested()], ['float64', [0, 1, 2, 3, 4]]);
  using c = gx.arange(1, 2, 0.25, { device });
  t.deepEqual(c.toNested(), [1, 1.25, 1.5, 1.75]);
  using d = gx.arange(0, 6, undefined, { dtype: 'int32', device });
  t.deepEqual([d.dtype, d.toNested()], ['int32', [0, 1, 2, 3, 4, 5]]);
  t.throws(() => gx.arange(1, 2, 3, 4 as never), { instanceOf: TypeError, message: /^gx\.arange: expected \(end\), \(start, end\) or \(start, end, step\)/ });
  t.throws(() => gx.arange({ device } as never), { instanceOf: TypeError, message: /^gx\.arange: expected/ });
  t.throws(() => gx.arange(0, '3' as never), { message: /^gx\.arange: end must be a number/ });
});

deviceTest('clamp takes { min, max } as it takes (min, max), with out', (t, device) => {
  gx.tidy(() => {
    const r = rng(3);
    const x = gx.tensor(Array.from({ length: 24 }, () => r() * 4 - 2), { device }).reshape([4, 6]);
    const eq = (a: gx.Tensor, b: gx.Tensor, what: string): void => {
      t.deepEqual(a.toNested(), b.toNested(), what);
    };
    eq(gx.clamp(x, { min: 0 }), gx.clamp(x, 0), 'min only');
    eq(gx.clamp(x, { max: 0.5 }), gx.clamp(x, undefined, 0.5), 'max only');
    eq(x.clamp({ min: -1, max: 1 }), gx.clamp(x, -1, 1), 'method');
    const out = gx.empty([4, 6], { device });
    t.is(gx.clamp(x, { min: -0.5, max: 0.5, out }), out);
    eq(out, gx.clamp(x, -0.5, 0.5), 'out');
    const y = x.clone();
    y.clamp_({ min: 0 });
    eq(y, gx.clamp(x, 0), 'in place');
    t.throws(() => gx.clamp(x, { min: 0 } as never, 1), { instanceOf: TypeError, message: /^gx\.clamp: takes \(x, \{ min, max \}\) or \(x, min, max, options\)/ });
    t.throws(() => gx.clamp(x, { lo: 0 } as never), { message: /^gx\.clamp.*lo/ });
    t.throws(() => gx.clamp(x, {}), { instanceOf: TypeError, message: /^gx\.clamp: needs min or max/ });
    t.throws(() => y.clamp_({ min: 0, out } as never), { message: /^Tensor\.clamp_.*out/ });
  });
});

deviceTest('x.get and x.set take index lists, as x.index takes arrays', (t, device) => {
  gx.tidy(() => {
    const r = rng(4);
    const x = gx.tensor(Array.from({ length: 60 }, () => Math.round(r() * 100)), { device }).reshape([3, 4, 5]);
    const same = (expr: string, ...items: gx.IndexItem[]): void => {
      t.deepEqual(x.get(expr).toNested(), x.index(...items).toNested(), expr);
    };
    same(':, [0, 2]', gx.sl(), [0, 2]);
    same('[2, 0], 1:3', [2, 0], gx.sl(1, 3));
    same('[True, False, True]', [true, false, true]);
    same('..., [-1, 0, -1]', '...', [-1, 0, -1]);
    same('[[0, 1], [1, 2]], 0, [+3, 1]', [[0, 1], [1, 2]], 0, [3, 1]);
    // The reference by hand, for one of them.
    const v = x.toNested() as number[][][];
    t.deepEqual(x.get('1, [3, 0], ::2').toNested(), [3, 0].map((j) => [0, 2, 4].map((k) => v[1][j][k])));
    const y = x.clone();
    y.set(':, [0, 2]', 0);
    t.deepEqual(y.toNested(), v.map((m) => m.map((row, j) => (j === 0 || j === 2 ? row.map(() => 0) : row))));
    for (const bad of ['[0, a]', '[0, 1', '[0.5]', '[[0], 1]]']) {
      t.throws(() => x.get(bad), { message: /^Tensor\.get: / }, bad);
    }
  });
});

test('a chunked tensor prints a summary in String and util.inspect', (t) => {
  using x = gx.arange(12).reshape([4, 3]);
  const c = gx.chunked(x, { chunks: [2, 3] });
  const want = 'ChunkedTensor(shape [4, 3], int64, chunks [[2, 2], [3]], 2 blocks on cpu)';
  t.is(String(c), want);
  t.is(util.inspect(c), want);
  t.is(`${c}`, want);
  c.dispose();
  t.is(String(c), 'ChunkedTensor(shape [4, 3], int64, chunks [[2, 2], [3]], disposed)');
});
