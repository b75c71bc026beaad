// The dtype list's columns (csrc/include/gpuext/dtype_list.h) as the faces
// generated from them use them: the typestr a .npy file says and the name a
// .safetensors header says for each dtype (checked against NumPy's and
// safetensors' own names, written out here as those libraries spell them:
// numpy.dtype(d).str on a little-endian machine, safetensors' Dtype enum),
// the dtype a typed array stands for, and the compute dtype the run-time
// reductions and jit functions take for a dtype.
import test from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib/index';
import { dtypeOfTypedArray } from '../lib/core/dtype';
import { COMPUTE_DTYPE, DTYPES, NPY_TYPESTR, SAFETENSORS_NAME, type DType } from '../lib/generated/dtypes';
import { computeDType } from '../lib/jit/types';
import { cudaTest, rng } from './helpers';

const NUMPY_STR: { readonly [K in DType]?: string } = {
  float32: '<f4', float64: '<f8', float16: '<f2', int8: '|i1', int16: '<i2', int32: '<i4', int64: '<i8', uint8: '|u1', bool: '|b1',
};
const SAFETENSORS: { readonly [K in DType]: string } = {
  float32: 'F32', float64: 'F64', float16: 'F16', bfloat16: 'BF16', int8: 'I8', int16: 'I16', int32: 'I32', int64: 'I64', uint8: 'U8', bool: 'BOOL',
};

/** Random values a dtype holds exactly. */
function values(dtype: DType, n: number, rand: () => number): number[] | bigint[] | boolean[] {
  if (dtype === 'bool') return Array.from({ length: n }, () => rand() < 0.5);
  if (dtype === 'int64') return Array.from({ length: n }, () => BigInt(Math.floor(rand() * 2 ** 40) - 2 ** 39));
  const info = gx.DTYPE_INFO[dtype];
  if (info.kind === 'f') return Array.from({ length: n }, () => Math.round((rand() - 0.5) * 64) / 4);  // exact in every float
  const bits = info.itemsize * 8;
  const [lo, span] = info.kind === 'u' ? [0, 2 ** bits] : [-(2 ** (bits - 1)), 2 ** bits];
  return Array.from({ length: n }, () => lo + Math.floor(rand() * span));
}

const list = (a: ArrayLike<number | bigint>): (number | bigint)[] => Array.from(a);

async function roundTrip(t: { is: (a: unknown, b: unknown, m?: string) => void; deepEqual: (a: unknown, b: unknown, m?: string) => void }, ext: string,
  header: (bytes: Buffer) => string | undefined, want: { readonly [K in DType]?: string }): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-dtype-cols-'));
  try {
    const rand = rng(ext.length * 97);
    for (const dtype of DTYPES) {
      if (want[dtype] === undefined) continue;
      const file = path.join(dir, `${dtype}.${ext}`);
      const data = values(dtype, 5 + Math.floor(rand() * 20), rand);
      using x = gx.tensor(data, { dtype });
      await gx.save(file, ext === 'npy' ? x : { x });
      t.is(header(fs.readFileSync(file)), want[dtype], `${dtype}: the file's dtype`);
      using y = await gx.loadTensor(file);
      t.is(y.dtype, dtype, `${dtype} reads back as itself`);
      t.deepEqual(list(await y.toArray()), list(await x.toArray()), `${dtype}: the values`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('.npy files say NumPy\'s typestr of each dtype (bfloat16 has none) and read back', async (t) => {
  t.deepEqual(NPY_TYPESTR, NUMPY_STR);
  await roundTrip(t, 'npy', (b) => /'descr': '([^']*)'/.exec(b.subarray(10, 10 + b.readUInt16LE(8)).toString('latin1'))?.[1], NUMPY_STR);
});

test('.safetensors headers say safetensors\' name of each dtype and read back', async (t) => {
  t.deepEqual(SAFETENSORS_NAME, SAFETENSORS);
  const dtypeOf = (b: Buffer): string | undefined => {
    const json = JSON.parse(b.subarray(8, 8 + Number(b.readBigUInt64LE(0))).toString('utf8')) as Record<string, { dtype?: string }>;
    return json.x?.dtype;
  };
  await roundTrip(t, 'safetensors', dtypeOf, SAFETENSORS);
});

test('a typed array stands for the dtype viewed through it without decoding', (t) => {
  const rand = rng(7);
  const n = 3 + Math.floor(rand() * 5);
  const cases: [ArrayBufferView & { length: number }, DType | undefined][] = [
    [new Float32Array(n).map(() => rand()), 'float32'], [new Float64Array(n).map(() => rand()), 'float64'],
    [new Int8Array(n).map(() => rand() * 200 - 100), 'int8'], [new Int16Array(n).map(() => rand() * 2e4), 'int16'],
    [new Int32Array(n).map(() => rand() * 2e9), 'int32'], [new BigInt64Array(n).map(() => BigInt(Math.floor(rand() * 1e12))), 'int64'],
    [new Uint8Array(n).map(() => rand() * 255), 'uint8'], [new Uint8ClampedArray(n).map(() => rand() * 255), 'uint8'],
    [new Uint16Array(n), undefined], [new Uint32Array(n), undefined], [new BigUint64Array(n), undefined],
  ];
  for (const [a, want] of cases) {
    t.is(dtypeOfTypedArray(a as Parameters<typeof dtypeOfTypedArray>[0]), want, a.constructor.name);
    if (want === undefined) continue;
    using x = gx.tensor(a as Parameters<typeof gx.tensor>[0]);
    t.is(String(x.dtype), want, `gx.tensor(${a.constructor.name})`);
  }
});

test('the compute dtype: float32 for the 16-bit floats, as jit functions take it', (t) => {
  for (const d of DTYPES) {
    const info = gx.DTYPE_INFO[d];
    const want = d === 'float16' || d === 'bfloat16' ? 'float32' : info.kind === 'f' ? d : 'int64';
    t.is(COMPUTE_DTYPE[d], want, d);
    // jit code computes small integers in C's int, floats as the list says.
    t.is(String(computeDType(d)), info.kind === 'f' ? want : d === 'int64' || d === 'bool' ? d : 'int32', `jit: ${d}`);
  }
});

// The run-time reductions accumulate a float16 output in float32: 4096 ones summed in float16 would stop at
// 2048 (2049 has no float16), in float32 they reach 4096, which float16 holds.
cudaTest('gx.reductionKernel sums a float16 output in its compute dtype', async (t) => {
  const sum = gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'sum_f16_columns' });
  using x = gx.ones([4096], { dtype: 'float16', device: 'cuda' });
  using y = sum(x);
  t.is((await y.toArray())[0], 4096);
});
