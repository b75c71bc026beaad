import test from 'ava';
import { flattenNested, MAX_NESTED_DIMS } from '../lib/core/nested';

const FN = 'gx.tensor';

test('bare scalars give shape []', (t) => {
  t.deepEqual(flattenNested(3.5, FN), { shape: [], values: [3.5], kind: 'number' });
  t.deepEqual(flattenNested(true, FN), { shape: [], values: [true], kind: 'boolean' });
  t.deepEqual(flattenNested(7n, FN), { shape: [], values: [7n], kind: 'bigint' });
});

test('nested arrays give C-order values and the shape', (t) => {
  t.deepEqual(flattenNested([1, 2, 3], FN), { shape: [3], values: [1, 2, 3], kind: 'number' });
  t.deepEqual(flattenNested([[1, 2, 3], [4, 5, 6]], FN), {
    shape: [2, 3],
    values: [1, 2, 3, 4, 5, 6],
    kind: 'number',
  });
  t.deepEqual(flattenNested([[[true], [false]]], FN), {
    shape: [1, 2, 1],
    values: [true, false],
    kind: 'boolean',
  });
  t.deepEqual(flattenNested([[1n, -2n]], FN), { shape: [1, 2], values: [1n, -2n], kind: 'bigint' });
  const r = flattenNested([[NaN, Infinity]], FN);
  t.deepEqual(r.shape, [1, 2]);
  t.true(Number.isNaN(r.values[0]));
  t.is(r.values[1], Infinity);
});

test('empty arrays give kind "empty"', (t) => {
  t.deepEqual(flattenNested([], FN), { shape: [0], values: [], kind: 'empty' });
  t.deepEqual(flattenNested([[], []], FN), { shape: [2, 0], values: [], kind: 'empty' });
  t.deepEqual(flattenNested([[[]]], FN), { shape: [1, 1, 0], values: [], kind: 'empty' });
});

test('typed arrays count as arrays', (t) => {
  t.deepEqual(flattenNested([new Float32Array([1, 2]), new Float32Array([3, 4])], FN), {
    shape: [2, 2],
    values: [1, 2, 3, 4],
    kind: 'number',
  });
  t.deepEqual(flattenNested(new BigInt64Array([5n, 6n]), FN), { shape: [2], values: [5n, 6n], kind: 'bigint' });
});

test('a leaf of the wrong type is a TypeError naming the path and value', (t) => {
  t.throws(() => flattenNested([[1, 2], ['x', 3]], FN), {
    instanceOf: TypeError,
    message: 'gx.tensor: data[1][0] is a string ("x"); expected a number, boolean or bigint',
  });
  t.throws(() => flattenNested([1, null], FN), {
    instanceOf: TypeError,
    message: 'gx.tensor: data[1] is null; expected a number, boolean or bigint',
  });
  t.throws(() => flattenNested([1, undefined], FN), {
    instanceOf: TypeError,
    message: 'gx.tensor: data[1] is undefined; expected a number, boolean or bigint',
  });
  t.throws(() => flattenNested([{}], FN), {
    instanceOf: TypeError,
    message: 'gx.tensor: data[0] is an object; expected a number, boolean or bigint',
  });
  t.throws(() => flattenNested([new Map()], FN), {
    instanceOf: TypeError,
    message: 'gx.tensor: data[0] is an object (Map); expected a number, boolean or bigint',
  });
  t.throws(() => flattenNested('abc', 'gx.full'), {
    instanceOf: TypeError,
    message: 'gx.full: data is a string ("abc"); expected a number, boolean or bigint',
  });
  // Holes in sparse arrays read as undefined.
  t.throws(() => flattenNested([1, , 3], FN), { instanceOf: TypeError, message: /data\[1\] is undefined/ });
});

test('mixed leaf kinds are a TypeError', (t) => {
  t.throws(() => flattenNested([1, 2, true], FN), {
    instanceOf: TypeError,
    message:
      'gx.tensor: data[2] is a boolean but earlier elements are numbers; nested arrays must hold one kind of value',
  });
  t.throws(() => flattenNested([[1n], [2]], FN), {
    instanceOf: TypeError,
    message:
      'gx.tensor: data[1][0] is a number but earlier elements are bigints; nested arrays must hold one kind of value',
  });
  t.throws(() => flattenNested([false, 0n], FN), {
    instanceOf: TypeError,
    message: /data\[1\] is a bigint but earlier elements are booleans/,
  });
});

test('ragged arrays are a RangeError', (t) => {
  t.throws(() => flattenNested([[1, 2, 3], [4, 5]], FN), {
    instanceOf: RangeError,
    message: 'gx.tensor: ragged nested array: data[1] has length 2 but data[0] has length 3',
  });
  t.throws(() => flattenNested([[[1, 2], [3, 4]], [[5, 6], [7]]], FN), {
    instanceOf: RangeError,
    message: 'gx.tensor: ragged nested array: data[1][1] has length 1 but data[0][0] has length 2',
  });
  t.throws(() => flattenNested([[], [1]], FN), {
    instanceOf: RangeError,
    message: 'gx.tensor: ragged nested array: data[1] has length 1 but data[0] has length 0',
  });
});

test('arrays mixed with scalars at one level are a RangeError', (t) => {
  t.throws(() => flattenNested([[1], 2], FN), {
    instanceOf: RangeError,
    message: 'gx.tensor: ragged nested array: data[1] is a number but data[0] is an array',
  });
  t.throws(() => flattenNested([1, [2]], FN), {
    instanceOf: RangeError,
    message: 'gx.tensor: ragged nested array: data[1] is an array but data[0] is a number',
  });
  t.throws(() => flattenNested([[[1], [2]], [[3], 'x']], FN), {
    instanceOf: RangeError,
    message: 'gx.tensor: ragged nested array: data[1][1] is a string ("x") but data[0][0] is an array',
  });
});

test('more than 16 dimensions is a RangeError; exactly 16 is fine', (t) => {
  t.is(MAX_NESTED_DIMS, 16);
  let ok: unknown = 1;
  for (let i = 0; i < 16; i++) ok = [ok];
  const r = flattenNested(ok, FN);
  t.is(r.shape.length, 16);
  t.deepEqual(r.values, [1]);
  t.throws(() => flattenNested([ok], FN), { instanceOf: RangeError, message: /gx\.tensor: .*more than 16 dimensions/ });
  // A self-referencing array ends in the same error instead of looping forever.
  const cyclic: unknown[] = [];
  cyclic.push(cyclic);
  t.throws(() => flattenNested(cyclic, FN), { instanceOf: RangeError, message: /more than 16 dimensions/ });
});

test('a long error value is shortened', (t) => {
  const err = t.throws(() => flattenNested(['y'.repeat(100)], FN), { instanceOf: TypeError });
  t.true(err.message.includes(`"${'y'.repeat(40)}..."`));
  t.false(err.message.includes('y'.repeat(41)));
});

test('1e6 elements flatten quickly', (t) => {
  const rows: number[][] = [];
  for (let i = 0; i < 1000; i++) {
    const row = new Array<number>(1000);
    for (let j = 0; j < 1000; j++) row[j] = i * 1000 + j;
    rows.push(row);
  }
  const start = performance.now();
  const r = flattenNested(rows, FN);
  const ms = performance.now() - start;
  t.deepEqual(r.shape, [1000, 1000]);
  t.is(r.values.length, 1_000_000);
  t.is(r.values[123_456], 123_456);
  t.is(r.kind, 'number');
  t.true(ms < 2000, `took ${ms.toFixed(0)} ms`);

  const flat: unknown[] = Array.from({ length: 1_000_000 }, (_, i) => i % 3 === 0);
  const f = flattenNested(flat, FN);
  t.deepEqual(f.shape, [1_000_000]);
  t.is(f.values[999_999], true);
  // An error at the very end of a big array still names the exact path.
  flat[999_999] = 'z';
  t.throws(() => flattenNested(flat, FN), { message: /data\[999999\] is a string \("z"\)/ });
});
