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
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { DIFFERENTIABILITY } from '../lib/autograd/declarations';
import { caller, exportedNames, hasMethod, isGetter, SAMPLES, sampleOf } from './op-samples';

/** An argument no export takes: an object (so an options parameter reads it) with a key no op knows. */
const probe = (): object => ({ argumentNoOpTakes: true });

/** The name an export's errors start with: gx.name, gx.linalg.name, Tensor.name (a method that is a gx function may use either). */
function namesOf(key: string): RegExp {
  const bare = key.replace(/^#/, '').replace(/^Tensor\./, '').replace(/^linalg\./, '');
  return new RegExp(`(gx|Tensor|gx\\.linalg|linalg)\\.${bare}\\b|\\b${bare}\\b`);
}

/** The exports the walks call: each with a sample, and its method form (`#name`) where it has one; not getters, nor Tensor.cuda. */
function walkedKeys(): string[] {
  return Object.keys(DIFFERENTIABILITY).filter((k) => SAMPLES[k] !== undefined && k !== 'Tensor.cuda' && !(k.startsWith('Tensor.') && isGetter(k.slice(7))))
    .flatMap((k) => (hasMethod(k) ? [k, `#${k}`] : [k]));
}

test('every export refuses an argument past the ones it takes, naming itself', (t) => {
  const keys = walkedKeys();
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

test('every export refuses an argument past its options, naming itself', (t) => {
  // The walk above lands its probe in the options place of a sample that leaves them out, so an op that reads
  // options and drops what follows them (`gx.exp(a, {}, 1)`) passed it. Here the sample's optional arguments
  // left out are given as undefined (none, one or two of them), then empty options, then the probe: a call
  // that returns dropped an argument. (Where the empty options land in a place that is not an options place,
  // the call throws for that reason; the next count of undefineds moves them along.)
  const keys = walkedKeys();
  const silent: string[] = [];
  const unnamed: string[] = [];
  for (const key of keys) {
    for (let gap = 0; gap <= 2; gap++) {
      const failed = gx.tidy(() => gx.noGrad(() => {
        const args = [...sampleOf(key).args('cpu'), ...Array<undefined>(gap).fill(undefined), {}];
        try {
          caller(key, true)(...args, probe());
          silent.push(`${key} (${args.length} arguments, then the probe)`);
          return true;
        } catch (e) {
          const m = (e as Error).message;
          if (/takes \(|argument/.test(m) && !namesOf(key).test(m)) unnamed.push(`${key}: ${m.slice(0, 120)}`);
          return false;
        }
      }));
      if (failed) break;
    }
  }
  t.deepEqual(silent, [], 'these ignore an argument after their options');
  t.deepEqual(unnamed, [], 'these refuse without naming themselves');
});

const T = (): gx.Tensor => gx.tensor([1, 2, 3]);
const opts = (): object => ({});
/** Full calls of the exports that are not ops on values (declared 'none'), by key; a method's first argument is `this`. */
const OTHER_CALLS: Record<string, () => unknown[]> = {
  tensor: () => [[1, 2], opts()], empty: () => [[2], opts()], zeros: () => [[2], opts()], ones: () => [[2], opts()],
  full: () => [[2], 1, opts()], eye: () => [2, 3, opts()], arange: () => [0, 4, 1, opts()], linspace: () => [0, 1, 5, opts()], logspace: () => [0, 1, 5, 2, opts()],
  rand: () => [[2], opts()], randn: () => [[2], opts()], randint: () => [0, 5, [2], opts()], uniform: () => [0, 1, [2], opts()],
  randperm: () => [4, opts()], promoteTypes: () => ['float32', 'int32'], canCast: () => ['int32', 'float32'], manualSeed: () => [1],
  setFloat32MatmulPrecision: () => [gx.getFloat32MatmulPrecision()], getFloat32MatmulPrecision: () => [], isGradEnabled: () => [],
  noGrad: () => [() => 1], enableGrad: () => [() => 1], tidy: () => [() => 1], camelCase: () => ['a_b'],
  grad: () => [(x: gx.Tensor) => x.sum(), 0], valueAndGrad: () => [(x: gx.Tensor) => x.sum(), 0],
  chunked: () => [T(), { chunks: [[2, 1]] }],
  'Tensor.toArraySync': () => [T(), opts()], 'Tensor.item': () => [gx.tensor([1])], 'Tensor.itemBigInt': () => [gx.tensor([1], { dtype: 'int64' })],
  'Tensor.toNested': () => [T(), opts()], 'Tensor.dispose': () => [T()], 'Tensor.toString': () => [T()], 'Tensor.size': () => [T(), 0],
  'Tensor.dim': () => [T()], 'Tensor.isContiguous': () => [T()], 'Tensor.requiresGrad_': () => [gx.tensor([1, 2]), true],
  'Tensor.retainGrad': () => [gx.tensor([1, 2]).requiresGrad_().mul(2)], 'Tensor.registerHook': () => [gx.tensor([1, 2]).requiresGrad_(), () => undefined],
  'Tensor.backward': () => { const x = gx.tensor([1, 2]).requiresGrad_(); return [x.mul(2).sum(), null, opts()]; },
};
/** Async exports: the refusal is a rejected promise. */
const ASYNC_CALLS: Record<string, (file: string) => unknown[]> = {
  save: (file) => [file, T(), opts()], loadTensors: (file) => [file, opts()], loadTensor: (file) => [file, opts()],
  inspectTensors: (file) => [file, opts()], 'Tensor.toArray': () => [T(), opts()],
};
/** Exports not walked here, and why. */
const NOT_WALKED: Record<string, string> = {
  resultType: 'takes any number of operands', sl: 'takes any number of bounds', mapBlocks: 'takes any number of blocks, then options',
  load: 'builds an extension (test/build.test.ts)', loadInline: 'builds an extension', loadLibrary: 'loads a built library',
  withStream: 'needs a stream (test/streams.test.ts)', benchmark: 'times its function for a while', elementwiseKernel: 'compiles a kernel',
  reductionKernel: 'compiles a kernel', vectorize: 'compiles a kernel', fuse: 'compiles a kernel', backends: 'a namespace',
  'Tensor.handle': '@internal (its argument names the caller)', 'Tensor.address': '@internal', 'Tensor.knownAddress': '@internal',
  'Tensor.info': '@internal', 'Tensor.toDevice': '@internal', 'Tensor.recordStream': 'needs a stream',
};

/** The call of `key` with `args` (a method's `this` first) and the probe after them. */
function callWithProbe(key: string, args: unknown[]): unknown {
  if (key.startsWith('Tensor.')) {
    const [self, ...rest] = args;
    return (Reflect.get(self as object, key.slice(7)) as (...a: unknown[]) => unknown).apply(self, [...rest, probe()]);
  }
  return (Reflect.get(gx, key) as (...a: unknown[]) => unknown)(...args, probe());
}

test('every export that is not an op refuses an argument past the ones it takes, naming itself', async (t) => {
  const keys = exportedNames().filter((k) => DIFFERENTIABILITY[k] === 'none' && SAMPLES[k] === undefined && !(k.startsWith('Tensor.') && isGetter(k.slice(7))));
  const unlisted = keys.filter((k) => OTHER_CALLS[k] === undefined && ASYNC_CALLS[k] === undefined && NOT_WALKED[k] === undefined);
  t.deepEqual(unlisted, [], 'give these a full call in OTHER_CALLS or ASYNC_CALLS (or a reason in NOT_WALKED)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-arity-'));
  const file = path.join(dir, 't.safetensors');
  await gx.save(file, { t: gx.tensor([1, 2]) });
  const silent: string[] = [];
  const unnamed: string[] = [];
  const check = (key: string, e: unknown): void => {
    if (!namesOf(key).test((e as Error).message)) unnamed.push(`${key}: ${(e as Error).message.slice(0, 120)}`);
  };
  for (const key of Object.keys(OTHER_CALLS)) {
    try {
      gx.tidy(() => { callWithProbe(key, OTHER_CALLS[key]()); });
      silent.push(key);
    } catch (e) {
      check(key, e);
    }
  }
  for (const key of Object.keys(ASYNC_CALLS)) {
    try {
      await callWithProbe(key, ASYNC_CALLS[key](key === 'save' ? path.join(dir, 'saved.safetensors') : file));
      silent.push(key);
    } catch (e) {
      check(key, e);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  t.deepEqual(silent, [], 'these ignore an argument they do not take');
  t.deepEqual(unnamed, [], 'these refuse without naming themselves');
});
