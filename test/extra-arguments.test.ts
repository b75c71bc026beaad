// Arguments an op does not take were dropped without a word: gx.mm(a, b,
// { out }) never wrote out, gx.scatter(..., { reduce: 'add' }) assigned, and
// gx.linalg.solve(a, b, { left: false }) solved A X = B. scatter and solve
// now take those options; the ops without options refuse anything after
// their last parameter, naming the form they take, as functions and as
// Tensor methods (a method names itself, Tensor.trace, and its own form).
import test from 'ava';

import * as gx from '../lib';
import { sameValues } from './helpers';

/** Values within `tol` of the expected ones (float64 solves are exact to rounding, not bit for bit). */
function near(t: import('ava').ExecutionContext, got: ArrayLike<number | bigint>, want: readonly number[], what: string, tol: number): void {
  t.is(got.length, want.length, what);
  for (let k = 0; k < want.length; k++) t.true(Math.abs(Number(got[k]) - want[k]) <= tol, `${what}: element ${k} is ${String(got[k])}, not ${want[k]}`);
}

test('ops without options refuse a trailing { out } (or any other argument), as functions and as methods', (t) => {
  gx.tidy(() => {
    const m = gx.tensor([[1, 2], [3, 4]]), v = gx.tensor([1, 2]), i = gx.tensor([[0n, 1n]]), out = gx.zeros([2, 2]);
    const extra = { out };
    const calls: [string, () => unknown][] = [
      ['gx.mm', () => (gx.mm as (...a: unknown[]) => unknown)(m, m, extra)],
      ['gx.bmm', () => (gx.bmm as (...a: unknown[]) => unknown)(m.unsqueeze(0), m.unsqueeze(0), extra)],
      ['gx.dot', () => (gx.dot as (...a: unknown[]) => unknown)(v, v, extra)],
      ['gx.vdot', () => (gx.vdot as (...a: unknown[]) => unknown)(v, v, extra)],
      ['gx.outer', () => (gx.outer as (...a: unknown[]) => unknown)(v, v, extra)],
      ['gx.kron', () => (gx.kron as (...a: unknown[]) => unknown)(m, m, extra)],
      ['gx.tensordot', () => (gx.tensordot as (...a: unknown[]) => unknown)(m, m, 1, extra)],
      ['Tensor.trace', () => (m.trace as (...a: unknown[]) => unknown)(extra)],
      ['Tensor.triu', () => (m.triu as (...a: unknown[]) => unknown)(0, extra)],
      ['gx.tril', () => (gx.tril as (...a: unknown[]) => unknown)(m, 0, extra)],
      ['Tensor.diag', () => (m.diag as (...a: unknown[]) => unknown)(0, extra)],
      ['gx.cross', () => (gx.cross as (...a: unknown[]) => unknown)(gx.ones([3]), gx.ones([3]), -1, extra)],
      ['Tensor.gather', () => (m.gather as (...a: unknown[]) => unknown)(0, i, extra)],
      ['Tensor.indexSelect', () => (m.indexSelect as (...a: unknown[]) => unknown)(0, gx.tensor([1n]), extra)],
      ['Tensor.take', () => (m.take as (...a: unknown[]) => unknown)(gx.tensor([1n]), extra)],
      ['Tensor.scatterAdd', () => (m.scatterAdd as (...a: unknown[]) => unknown)(0, i, 1, extra)],
      ['Tensor.maskedFill', () => (m.maskedFill as (...a: unknown[]) => unknown)(m.gt(2), 0, extra)],
      ['gx.linalg.inv', () => (gx.linalg.inv as (...a: unknown[]) => unknown)(m, extra)],
      ['gx.linalg.det', () => (gx.linalg.det as (...a: unknown[]) => unknown)(m, extra)],
    ];
    for (const [fn, call] of calls) {
      t.throws(call, { instanceOf: TypeError, message: new RegExp(`^${fn.replace(/\./g, '\\.')}: takes \\(.*\\); it takes no further argument or options`) }, fn);
    }
    sameValues(t, out.toArraySync(), [0, 0, 0, 0], 'nothing was written into out');
    sameValues(t, m.triu(1).toArraySync(), [0, 2, 0, 0], 'the parameters they take still work');
  });
});

test("gx.scatter takes { reduce: 'add' } (torch's reduce='add'), and refuses other reductions, naming gx.scatterReduce", (t) => {
  gx.tidy(() => {
    const x = gx.tensor([[1, 5, 3], [7, 2, 0]]), i = gx.tensor([[0n], [0n]]), s = gx.tensor([[10], [10]]);
    sameValues(t, gx.scatter(x, 1, i, s, { reduce: 'add' }).toArraySync(), [11, 5, 3, 17, 2, 0]);
    sameValues(t, gx.scatter(x, 1, i, s).toArraySync(), [10, 5, 3, 10, 2, 0], 'without it: assigned');
    sameValues(t, x.clone().scatter_(1, i, s, { reduce: 'add' }).toArraySync(), [11, 5, 3, 17, 2, 0], 'in place');
    t.throws(() => gx.scatter(x, 1, i, s, { reduce: 'multiply' } as never), { instanceOf: TypeError, message: /^gx\.scatter: reduce must be 'add'.*gx\.scatterReduce/ });
    t.throws(() => gx.scatter(x, 1, i, s, 'add' as never), { instanceOf: TypeError, message: /^gx\.scatter: options must be an object/ });
  });
});

test('gx.linalg.solve takes { left: false }: X A = B, for matrices and vectors', (t) => {
  gx.tidy(() => {
    const a = gx.tensor([[2, 1], [1, 3]], { dtype: 'float64' }), b = gx.tensor([[1, 2], [3, 4], [5, 6]], { dtype: 'float64' });
    const x = gx.linalg.solve(a, b, { left: false });
    t.deepEqual(x.shape, [3, 2]);
    near(t, gx.matmul(x, a).toArraySync(), [1, 2, 3, 4, 5, 6], 'X A = B', 1e-12);
    const v = gx.tensor([1, 2], { dtype: 'float64' });
    near(t, gx.matmul(gx.linalg.solve(a, v, { left: false }).unsqueeze(0), a).toArraySync(), [1, 2], 'x A = b', 1e-12);
    near(t, gx.matmul(a, gx.linalg.solve(a, v, { left: true })).toArraySync(), [1, 2], 'left: true is A x = b', 1e-12);
    t.throws(() => gx.linalg.solve(a, v, { lefty: false } as never), { instanceOf: TypeError, message: /^gx\.linalg\.solve: unknown option 'lefty'; did you mean 'left'\?/ });
  });
});

test('cummax and cummin check their options (an unknown key was dropped); bincount refuses a positional minlength', (t) => {
  gx.tidy(() => {
    const x = gx.tensor([[1, 3, 2], [4, 0, 5]]);
    t.throws(() => (gx.cummax as (...a: unknown[]) => unknown)(x, 1, { foo: 1 }), { instanceOf: TypeError, message: /^gx\.cummax: unknown option 'foo'/ });
    t.throws(() => (x.cummin as (...a: unknown[]) => unknown).call(x, 1, { foo: 1 }), { instanceOf: TypeError, message: /^Tensor\.cummin: unknown option 'foo'/ });
    t.deepEqual(Array.from(gx.cummax(x, 1).values.toArraySync() as Float32Array), [1, 3, 3, 4, 4, 5], 'as before without options');
    const i = gx.tensor([1n, 2n]);
    t.throws(() => (gx.bincount as (...a: unknown[]) => unknown)(i, null, 5), { instanceOf: TypeError, message: /^gx\.bincount: takes \(x, \{ weights\?, minlength\? \}\)/ });
    t.deepEqual(gx.bincount(i, { minlength: 5 }).shape, [5]);
  });
});
