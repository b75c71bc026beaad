// The ops made by lib/ops/axis-function.ts (reductions, scans, statistics,
// softmax, sort): each refuses an argument after its options with its own name
// and form, as function and as method, and passes what it takes through in
// order. test/arity.test.ts walks every export for a refusal naming it; this
// pins the whole message of each shape the factory makes.
import test from 'ava';

import * as gx from '../lib';
import { sameValues } from './helpers';

type Loose = (...a: unknown[]) => unknown;

test('one argument before the options: the form and the count of extra arguments, as function and method', (t) => {
  gx.tidy(() => {
    const x = gx.tensor([[1, 2], [3, 4]]);
    const cases: [string, () => unknown, string][] = [
      ['gx.sum', () => (gx.sum as Loose)(x, 0, {}, 5), 'gx.sum: takes (x, axis?, options?); it takes no further argument or options (got number 5)'],
      ['gx.max', () => (gx.max as Loose)(x, 0, {}, 5, 6), 'gx.max: takes (x, arg?, options?); it takes no further argument or options (got number 5 and 1 more)'],
      ['gx.var', () => (gx.var as Loose)(x, 0, {}, 'z'), 'gx.var: takes (x, axis?, options?); it takes no further argument or options (got a string ("z"))'],
      ['gx.cumsum', () => (gx.cumsum as Loose)(x, 0, {}, 5), 'gx.cumsum: takes (x, axis, options?); it takes no further argument or options (got number 5)'],
      ['gx.softmax', () => (gx.softmax as Loose)(x, 0, {}, 5), 'gx.softmax: takes (x, axis, options?); it takes no further argument or options (got number 5)'],
      ['Tensor.sum', () => (x.sum as Loose).call(x, 0, {}, 5), 'Tensor.sum: takes (axis?, options?); it takes no further argument or options (got number 5)'],
      ['Tensor.cummax', () => (x.cummax as Loose).call(x, 0, {}, 5), 'Tensor.cummax: takes (axis, options?); it takes no further argument or options (got number 5)'],
      ['Tensor.nansum', () => (x.nansum as Loose).call(x, 0, {}, 5, 6, 7), 'Tensor.nansum: takes (axis?, options?); it takes no further argument or options (got number 5 and 2 more)'],
    ];
    for (const [what, call, message] of cases) t.throws(call, { instanceOf: TypeError, message }, what);
  });
});

test('two arguments before the options: the form, as function and method', (t) => {
  gx.tidy(() => {
    const x = gx.tensor([[1, 2], [3, 4]]);
    const cases: [() => unknown, string][] = [
      [() => (gx.topk as Loose)(x, 1, 1, {}, 5), 'gx.topk: takes (x, k, axis?, options?); it takes no further argument or options (got number 5)'],
      [() => (gx.quantile as Loose)(x.astype('float32'), 0.5, 1, {}, 5), 'gx.quantile: takes (x, q, axis?, options?); it takes no further argument or options (got number 5)'],
      [() => (gx.diff as Loose)(x, 1, 0, {}, 5), 'gx.diff: takes (x, n?, axis?, options?); it takes no further argument or options (got number 5)'],
      [() => (x.kthvalue as Loose).call(x, 1, 1, {}, 5), 'Tensor.kthvalue: takes (k, axis?, options?); it takes no further argument or options (got number 5)'],
    ];
    for (const [call, message] of cases) t.throws(call, { instanceOf: TypeError, message });
  });
});

test('the made ops pass their arguments through in order and carry their names', (t) => {
  gx.tidy(() => {
    const x = gx.tensor([[1, 5], [3, 4]]);
    sameValues(t, gx.sum(x, 0).toArraySync(), [4, 9], 'sum over axis 0');
    sameValues(t, x.sum(1, { keepdims: true }).toArraySync(), [6, 7], 'the method, with options');
    const [v, i] = gx.topk(x, 1, 0);
    sameValues(t, v.toArraySync(), [3, 5], 'topk: k, then the axis');
    sameValues(t, i.toArraySync(), [1n, 0n]);
    sameValues(t, x.kthvalue(1, 1).values.toArraySync(), [1, 3], 'kthvalue as a method');
    sameValues(t, gx.diff(x, 1, 0).toArraySync(), [2, -1], 'diff: n, then the axis');
    sameValues(t, gx.cummax(x, 0).values.toArraySync(), [1, 5, 3, 5], 'cummax: its flag passed through');
  });
  t.deepEqual([gx.sum.name, gx.var.name, gx.topk.name, gx.tensor([1]).nanmedian.name], ['sum', 'var', 'topk', 'nanmedian']);
});

test('any and all are made by the factories: the function and the method name themselves in every error', (t) => {
  gx.tidy(() => {
    const x = gx.tensor([[1, 0], [3, 4]]);
    const cases: [() => unknown, ErrorConstructor, string][] = [
      [() => (gx.any as Loose)(x, 0, {}, 5), TypeError, 'gx.any: takes (x, axis?, options?); it takes no further argument or options (got number 5)'],
      [() => (gx.all as Loose)(x, 0, {}, 5, 6), TypeError, 'gx.all: takes (x, axis?, options?); it takes no further argument or options (got number 5 and 1 more)'],
      [() => (x.any as Loose).call(x, 0, {}, 5), TypeError, 'Tensor.any: takes (axis?, options?); it takes no further argument or options (got number 5)'],
      [() => (x.all as Loose).call(x, 0, {}, 5), TypeError, 'Tensor.all: takes (axis?, options?); it takes no further argument or options (got number 5)'],
      // The implementation's own errors name the caller (the method said gx.any).
      [() => x.any(5), RangeError, 'Tensor.any: axis 5 is out of range for an input of shape [2, 2] (2 dimensions; valid: -2 to 1)'],
      [() => x.all({ axis: 2 }), RangeError, 'Tensor.all: axis 2 is out of range for an input of shape [2, 2] (2 dimensions; valid: -2 to 1)'],
      [() => gx.all(x, -3), RangeError, 'gx.all: axis -3 is out of range for an input of shape [2, 2] (2 dimensions; valid: -2 to 1)'],
      [() => (gx.any as Loose)(3), TypeError, "gx.any: argument 'input' must be a Tensor, got number 3"],
    ];
    for (const [call, instanceOf, message] of cases) t.throws(call, { instanceOf, message });
    // Their values and names pass through the factories (torch: x.any(1) is [True, True], x.all() False).
    sameValues(t, x.any(1).toArraySync(), [1, 1], 'Tensor.any over axis 1');
    sameValues(t, gx.all(x, 0, { keepdims: true }).toArraySync(), [1, 0], 'gx.all over axis 0, keepdims');
    t.is(x.all().item(), false);
    t.deepEqual([gx.any.name, gx.all.name, x.any.name, x.all.name], ['any', 'all', 'any', 'all']);
  });
});
