// gx.tidy's scopes (NOTE [ Tidy scopes are arrays ] in lib/core/tidy.ts):
// what each scope disposes and keeps through nesting, tensors that leave a
// scope, and the compaction of a long scope most of whose tensors left it.
import test from 'ava';
import * as gx from '../lib';
import { closeScope, openScope, trackedLength, untrack } from '../lib/core/tidy';

const live = (): number => gx.memory.stats('cpu').liveTensors;

test.serial('nested scopes: what the inner keeps joins the outer, which disposes it unless it returns it too', (t) => {
  const before = live();
  let fromInner: gx.Tensor | undefined;
  let innerTemp: gx.Tensor | undefined;
  const kept = gx.tidy(() => {
    const a = gx.ones([3]);
    fromInner = gx.tidy(() => {
      innerTemp = gx.mul(a, 2);
      return [gx.add(innerTemp, 1), { also: gx.full([2], 7) }];
    })[0] as gx.Tensor;
    t.true(innerTemp?.isDisposed, 'the inner scope disposed its temporary');
    t.false(fromInner.isDisposed, 'what the inner scope returned lives on in the outer');
    return gx.mul(fromInner, 10);
  });
  t.true(innerTemp?.isDisposed, 'the inner temporary is gone');
  t.true(fromInner?.isDisposed, 'the outer scope disposed what the inner one kept, as it did not return it');
  t.deepEqual(Array.from(kept.toArraySync() as Float32Array), [30, 30, 30]);
  t.is(live(), before + 1, 'only the returned tensor is left');
  kept.dispose();
  t.is(live(), before);
});

test.serial('a tensor returned twice over, or tracked twice, is kept once and disposed once', (t) => {
  const before = live();
  const [p, q, r] = gx.tidy(() => {
    const x = gx.ones([2]);
    return gx.tidy(() => [x, x, gx.mul(x, 3)]);
  });
  t.is(p, q, 'the same tensor twice');
  t.false(p.isDisposed);
  p.dispose();
  t.is(live(), before + 1);
  r.dispose();
  // Returned by an outer scope after it was returned by an inner one, and a disposed one among them.
  const [z] = gx.tidy(() => gx.tidy(() => [gx.zeros([1]), p, q]));
  t.false(z.isDisposed);
  z.dispose();
  t.is(live(), before);
});

test.serial('a scope that threw disposes everything made in it, kept or not, and the enclosing scope goes on', (t) => {
  const before = live();
  const outer = gx.tidy(() => {
    const a = gx.ones([2]);
    t.throws(() => gx.tidy(() => {
      gx.mul(a, 2);
      gx.tidy(() => gx.ones([4]));
      throw new Error('boom');
    }), { message: 'boom' });
    return gx.add(a, 1);
  });
  t.is(live(), before + 1);
  outer.dispose();
  t.is(live(), before);
});

test.serial('tensors that leave a long scope are dropped from its list, not held until it closes', (t) => {
  const before = live();
  const startLength = trackedLength();
  const scope = openScope();
  const left: gx.Tensor[] = [];
  try {
    for (let i = 0; i < 1000; i++) left.push(untrack(gx.zeros([1])));
    const stay = gx.ones([1]);
    t.true(trackedLength() - startLength < 200, `the list holds ${trackedLength() - startLength} entries after 1000 tensors left it`);
    t.false(stay.isDisposed);
  } finally {
    closeScope(scope, undefined);
  }
  t.is(trackedLength(), startLength, 'closed: the list is back where the scope opened');
  t.true(left.every((x) => !x.isDisposed), 'the tensors that left were not disposed by the scope');
  left.forEach((x) => x.dispose());
  t.is(live(), before);
});
