// Every export refuses an argument it does not take. A function that drops a
// trailing argument computes something other than what its caller asked for
// (`mm(a, b, { out })` never wrote out; `scatter(..., { reduce: 'add' })`
// assigned; `x.flip(0, 1)` flipped axis 0 only), with no word. The walk takes
// every export with a sample call (test/op-samples.ts) and calls it with the
// sample's arguments, then a plain object with a key no op knows: the call
// must throw an error that names the export. (Where the sample leaves
// optional arguments out, the probe lands in an options place, whose unknown
// key must be refused as well.)
import test from 'ava';

import * as gx from '../lib';
import { DIFFERENTIABILITY } from '../lib/autograd/declarations';
import { caller, hasMethod, isGetter, SAMPLES, sampleOf } from './op-samples';

/** An argument no export takes: an object (so an options parameter reads it) with a key no op knows. */
const probe = (): object => ({ argumentNoOpTakes: true });

/** The name an export's errors start with: gx.name, gx.linalg.name, Tensor.name (a method that is a gx function may use either). */
function namesOf(key: string): RegExp {
  const bare = key.replace(/^#/, '').replace(/^Tensor\./, '').replace(/^linalg\./, '');
  return new RegExp(`(gx|Tensor|gx\\.linalg|linalg)\\.${bare}\\b|\\b${bare}\\b`);
}

test('every export refuses an argument past the ones it takes, naming itself', (t) => {
  const keys = Object.keys(DIFFERENTIABILITY).filter((k) => SAMPLES[k] !== undefined && k !== 'Tensor.cuda' && !(k.startsWith('Tensor.') && isGetter(k.slice(7))))
    .flatMap((k) => (hasMethod(k) ? [k, `#${k}`] : [k]));
  const silent: string[] = [];
  const unnamed: string[] = [];
  for (const key of keys) {
    gx.tidy(() => gx.noGrad(() => {
      const args = sampleOf(key).args('cpu');
      try {
        caller(key, true)(...args, probe());
        silent.push(key);
      } catch (e) {
        if (!namesOf(key).test((e as Error).message)) unnamed.push(`${key}: ${(e as Error).message.slice(0, 120)}`);
      }
    }));
  }
  t.deepEqual(silent, [], 'these ignore an argument they do not take');
  t.deepEqual(unnamed, [], 'these refuse without naming themselves');
  t.true(keys.length > 250, `${keys.length} exports walked`);
});
