// Second derivatives through ops whose derivative formula is first order only
// (FIRST_ORDER_ONLY in lib/autograd/declarations.ts: linalg's formulas call
// kernels that do not record). A Hessian through one came out silently wrong
// (det's), zero (slogdet's, the nuclear norm's) or NaN (svd's, eigh's); now
// any derivative of such a formula's result throws, naming the op, while the
// first derivative, with createGraph or not, is what it was.
import test from 'ava';

import * as gx from '../lib';
import { sameValues } from './helpers';

const F64 = { dtype: 'float64' } as const;
const spd = (): gx.Tensor => gx.tensor([[4, 1, 0.5], [1, 3, 0.25], [0.5, 0.25, 2]], F64);

const THROUGH: [string, (a: gx.Tensor) => gx.Tensor][] = [
  ['linalg.det', (a) => gx.linalg.det(a)],
  ['linalg.slogdet', (a) => gx.linalg.slogdet(a).logabsdet],
  ['linalg.solve', (a) => gx.linalg.solve(a, gx.ones([3], F64)).sum()],
  ['linalg.cholesky', (a) => gx.linalg.cholesky(a).sum()],
  ['linalg.qr', (a) => gx.linalg.qr(a).R.sum()],
  ['linalg.eigh', (a) => gx.linalg.eigvalsh(a).sum()],
  ['linalg.svd', (a) => gx.linalg.svd(a).S.sum()],
  ['linalg.matrixNorm', (a) => gx.linalg.matrixNorm(a, 'nuc')],
];

test('a Hessian through a first-order-only derivative throws, naming the op', (t) => {
  for (const [op, f] of THROUGH) {
    gx.tidy(() => {
      t.throws(() => gx.autograd.functional.hessian(f, spd()), {
        message: new RegExp(`gx\\.${op.replace('.', '\\.')}: its derivative is first order only .* a second derivative through gx\\.${op.replace('.', '\\.')}`),
      }, op);
    });
  }
});

test('their first derivatives are unchanged, with createGraph too; inv, whose formula records, has a Hessian', (t) => {
  gx.tidy(() => {
    // d det A / dA = det(A) A^-T, here the cofactor matrix of [[2, 1], [1, 3]].
    const a = gx.tensor([[2, 1], [1, 3]], F64);
    sameValues(t, gx.autograd.grad((x: gx.Tensor) => gx.linalg.det(x))(a).toArraySync(), [3, -1, -1, 2]);
    const x = gx.tensor([[2, 1], [1, 3]], F64);
    x.requiresGrad = true;
    const [, g] = gx.autograd.functional.vjp((y: gx.Tensor) => gx.linalg.det(y), x, undefined, { createGraph: true });
    sameValues(t, g.toArraySync(), [3, -1, -1, 2], 'with createGraph: the value, usable as a value');
    // inv's Hessian against central differences of its (exact) gradient.
    const f = (y: gx.Tensor): gx.Tensor => gx.linalg.inv(y).sum();
    const h = gx.autograd.functional.hessian(f, a).toArraySync() as Float64Array;
    const grad = gx.autograd.grad(f);
    const eps = 1e-6, base = a.toArraySync() as Float64Array;
    for (let j = 0; j < 4; j++) {
      const plus = Float64Array.from(base), minus = Float64Array.from(base);
      plus[j] += eps;
      minus[j] -= eps;
      const gp = grad(gx.tensor(plus, F64).reshape(2, 2)).toArraySync() as Float64Array;
      const gm = grad(gx.tensor(minus, F64).reshape(2, 2)).toArraySync() as Float64Array;
      for (let i = 0; i < 4; i++) t.true(Math.abs(h[i * 4 + j] - (gp[i] - gm[i]) / (2 * eps)) < 1e-6, `inv's Hessian [${i}, ${j}]`);
    }
  });
});

// prod's gradient was g * prod / x_i: NaN at a zero, where it is the product of the others (torch's
// prod_safe_zeros_backward). Now exact with any zeros, along axes too, and differentiable again.
test('prod\'s gradient with zeros is the product of the others; its Hessian too', (t) => {
  gx.tidy(() => {
    const grad = (v: number[][] | number[], f: (x: gx.Tensor) => gx.Tensor): number[] => {
      const x = gx.tensor(v, F64);
      x.requiresGrad = true;
      f(x).backward();
      return Array.from(x.grad?.toArraySync() as Float64Array);
    };
    t.deepEqual(grad([0, 5, 2], (x) => gx.prod(x)), [10, 0, 0]);
    t.deepEqual(grad([0, 5, 0], (x) => gx.prod(x)), [0, 0, 0]);
    t.deepEqual(grad([3, 5, 2], (x) => gx.prod(x)), [10, 6, 15]);
    t.deepEqual(grad([[0, 5, 2], [1, 2, 3]], (x) => gx.prod(x, 1).sum()), [10, 0, 0, 6, 3, 2], 'along an axis');
    t.deepEqual(grad([[0, 5], [2, 3]], (x) => gx.prod(x, 0).sum()), [2, 3, 0, 5], 'along the first axis');
    t.deepEqual(grad([[1, 2], [0, 4]], (x) => gx.prod(x)), [0, 0, 8, 0], 'over every axis');
    // The Hessian of a b c at (0, 5, 2): the off-diagonal entries are the third element.
    const h = gx.autograd.functional.hessian((x: gx.Tensor) => gx.prod(x), gx.tensor([0, 5, 2], F64));
    t.deepEqual(Array.from(h.toArraySync() as Float64Array), [0, 2, 5, 2, 0, 0, 5, 0, 0]);
  });
});

// pow's and std's gradients where the plain formula divides by zero or takes log(0): torch masks them to 0
// (pow_backward_self / _exponent, std_backward); they were NaN or -Infinity.
test('pow\'s gradient at a zero exponent or base, and std\'s at zero spread, are 0 as torch\'s', (t) => {
  gx.tidy(() => {
    const grads = (v: number[], f: (x: gx.Tensor) => gx.Tensor): number[] => {
      const x = gx.tensor(v, F64);
      x.requiresGrad = true;
      f(x).sum().backward();
      return Array.from(x.grad?.toArraySync() as Float64Array);
    };
    t.deepEqual(grads([0, 2], (x) => gx.pow(x, 0)), [0, 0], 'd x^0 / dx');
    t.deepEqual(grads([0, 2, 3], (x) => gx.pow(x, 2)), [0, 4, 6], 'd x^2 / dx, unchanged');
    t.deepEqual(grads([0, 1, 2], (y) => gx.pow(0, y)), [0, 0, 0], 'd 0^y / dy for y >= 0');
    const y = grads([0.5], (v) => gx.pow(3, v));
    t.true(Math.abs(y[0] - 3 ** 0.5 * Math.log(3)) < 1e-12, 'd 3^y / dy, unchanged');
    t.deepEqual(grads([1, 1, 1], (x) => gx.std(x)), [0, 0, 0], 'std of a constant');
    const x = gx.tensor([[1, 1, 1], [1, 2, 3]], F64);
    x.requiresGrad = true;
    gx.std(x, 1).sum().backward();
    t.deepEqual(Array.from(x.grad?.toArraySync() as Float64Array), [0, 0, 0, -0.5, 0, 0.5], 'a constant row and a spread one');
  });
});
