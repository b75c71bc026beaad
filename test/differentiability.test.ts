// Every export tells the truth about its gradient (NOTE [ One declaration per
// op ] in lib/autograd/declarations.ts). The walk below takes every gx
// function, every gx.linalg function and every Tensor method and property,
// finds its declaration, and calls it with float64 inputs that require grad:
// formula and composite ops must record and pass gradcheck; nondifferentiable
// ones must give results that do not require grad; notImplemented ones must
// throw naming themselves (and work under gx.noGrad); in-place ones are
// declared as their out-of-place twin (their samples write a recorded
// copy). An export without a declaration, or a declared op without a sample
// call (test/op-samples.ts), fails the walk.
import test from 'ava';

import * as gx from '../lib';
import { DIFFERENTIABILITY, differentiability } from '../lib/autograd/declarations';
import { deviceTestSerial } from './helpers';
import { caller, exportedNames, floating, gradInputs, keysOf, SAMPLES, sampleOf, tensorsOf } from './op-samples';

test('every export and Tensor method has exactly one declaration, and every declaration a sample call here', (t) => {
  const names = exportedNames();
  const undeclared = names.filter((n) => differentiability(n) === undefined);
  t.deepEqual(undeclared, [], 'declare these in lib/autograd/declarations.ts');
  const stale = Object.keys(DIFFERENTIABILITY).filter((k) => !names.includes(k));
  t.deepEqual(stale, [], 'declared but not exported');
  const unsampled = names.filter((n) => differentiability(n) !== 'none' && SAMPLES[n] === undefined);
  t.deepEqual(unsampled, [], 'give these a sample call in test/op-samples.ts');
  t.true(names.length > 200, `${names.length} names`);
});

deviceTestSerial('formula and composite ops record, and gradcheck passes in float64', (t, d) => {
  const failures: string[] = [];
  for (const key of [...keysOf('formula', d), ...keysOf('composite', d)]) {
    gx.tidy(() => {
      const args = sampleOf(key).args(d);
      const call = caller(key);
      try {
        const outs = tensorsOf(call(...args)).filter(floating);
        if (outs.length === 0 || outs.some((o) => !o.requiresGrad)) {
          failures.push(`${key}: a floating result does not require grad`);
          return;
        }
        const inputs = gradInputs(args);
        const fn = (...xs: gx.Tensor[]): gx.Tensor[] => {
          let k = 0;
          const swap = (a: unknown): unknown => (a instanceof gx.Tensor && a.requiresGrad ? xs[k++] : Array.isArray(a) ? a.map(swap) : a);
          return tensorsOf(call(...args.map(swap))).filter(floating);
        };
        const r = gx.autograd.gradcheck(fn, inputs, { raiseException: false, ...sampleOf(key).gradcheck });
        if (!r.ok) failures.push(`${key}: gradcheck ${JSON.stringify(r.worst)}`);
      } catch (e) {
        failures.push(`${key}: threw ${(e as Error).message}`);
      }
    });
  }
  t.deepEqual(failures, []);
});

deviceTestSerial('nondifferentiable ops give results that do not require grad', (t, d) => {
  const failures: string[] = [];
  for (const key of keysOf('nondifferentiable', d)) {
    gx.tidy(() => {
      try {
        const outs = tensorsOf(caller(key)(...sampleOf(key).args(d)));
        if (outs.some((o) => o.requiresGrad)) failures.push(`${key}: a result requires grad`);
      } catch (e) {
        failures.push(`${key}: threw ${(e as Error).message}`);
      }
    });
  }
  t.deepEqual(failures, []);
});

deviceTestSerial('notImplemented ops refuse an input that requires grad, naming themselves, and run under noGrad', (t, d) => {
  const keys = keysOf('notImplemented', d);
  for (const key of keys) {
    gx.tidy(() => {
      const args = sampleOf(key).args(d);
      const fn = key.startsWith('#') ? `Tensor\\.${key.slice(1)}` : key.startsWith('Tensor.') ? key.replace('.', '\\.') : `gx\\.${key.replace('.', '\\.')}`;
      t.throws(() => caller(key)(...args), { message: new RegExp(`^${fn}: the derivative is not implemented; detach\\(\\) the input or call it under gx\\.noGrad\\(\\)`) }, key);
      t.notThrows(() => gx.noGrad(() => caller(key)(...args)), key);
    });
  }
  t.true(keys.length > 0);
});
