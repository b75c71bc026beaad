// Saving and loading tensors (lib/io/): safetensors, .npy and .npz round
// trips for every dtype, empty and 0-d tensors, views; the NumPy-written
// fixtures of test/fixtures/io (make_fixtures.py) read back to their values,
// and written again byte for byte; files gpuext writes read by NumPy
// (check_gpuext_files.py, when python3 with numpy is here); damaged files
// refused with errors naming the function and the file; atomic writes; no
// tensor left behind.
import test from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import { open } from 'fs/promises';
import path from 'path';

import * as gx from '../lib';
import { DTYPES } from '../lib/generated/dtypes';
import { writeAtomically } from '../lib/io/atomic';
import { saveNpz } from '../lib/io/npz';
import { releaseSources, takeSources } from '../lib/io/sources';
import { parseDevice } from '../lib/core/device';
import { FileRangeReader } from '../lib/io/readers';
import { CHUNK, cOrderBlocks, readTensorData } from '../lib/io/tensor-data';
import { cudaTest, deviceTest, deviceTestSerial, poisonCache, randomValues, sameValues, type TestDevice } from './helpers';
import { disposeAll, escape, fixture, rejects, same, useTmpDir, valuesOf, type Values } from './io-helpers';

const { tmpPath, tmpDir } = useTmpDir();
const NUMPY_DTYPES = DTYPES.filter((d) => d !== 'bfloat16');

// --- round trips ------------------------------------------------------------

const FORMATS = [
  { ext: 'safetensors', opts: {} },
  { ext: 'npy', opts: {} },
  { ext: 'npz', opts: {} },
  { ext: 'npz', opts: { compressed: true } },
] as const;

deviceTest('every dtype round-trips through safetensors, .npy and .npz (stored and deflated)', async (t, device: TestDevice) => {
  for (const { ext, opts } of FORMATS) {
    for (const dtype of ext === 'safetensors' ? DTYPES : NUMPY_DTYPES) {
      const values = randomValues(dtype, 15, 7);
      using x = gx.tensor(values, { dtype, device, shape: [3, 5] });
      const file = tmpPath(`rt-${dtype}.${ext}`);
      await gx.save(file, x, opts);
      using y = await gx.loadTensor(file, { device });
      same(t, y, dtype, [3, 5], values, `${dtype} .${ext}${'compressed' in opts ? ' compressed' : ''}`, device);
    }
  }
});

deviceTest('a record of every dtype round-trips, with names and safetensors metadata', async (t, device: TestDevice) => {
  for (const { ext, opts } of FORMATS.filter((f) => f.ext !== 'npy')) {
    const dtypes = ext === 'safetensors' ? DTYPES : NUMPY_DTYPES;
    const record: Record<string, gx.Tensor> = {};
    dtypes.forEach((dtype, i) => {
      record[`layer.${i}/${dtype}`] = gx.tensor(randomValues(dtype, 6, i), { dtype, device, shape: [2, 3] });
    });
    const file = tmpPath(`record.${ext}`);
    const metadata = ext === 'safetensors' ? { metadata: { format: 'pt', 'ünïcode': 'välue' } } : {};
    await gx.save(file, record, { ...opts, ...metadata });
    const back = await gx.loadTensors(file, { device });
    t.deepEqual(Object.keys(back).sort(), Object.keys(record).sort(), `.${ext}: names`);
    for (const [name, x] of Object.entries(record)) same(t, back[name], x.dtype, [2, 3], valuesOf(x), `.${ext} ${name}`, device);
    if (ext === 'safetensors') t.deepEqual((await gx.inspectTensors(file)).metadata, { format: 'pt', 'ünïcode': 'välue' });
    disposeAll(back);
    disposeAll(record);
  }
});

deviceTest('empty and 0-d tensors round-trip in every format', async (t, device: TestDevice) => {
  for (const { ext, opts } of FORMATS) {
    for (const shape of [[0], [2, 0, 3], []]) {
      using x = shape.length === 0 ? gx.tensor(-2.5, { dtype: 'float64', device }) : gx.zeros(shape, { dtype: 'int16', device });
      const file = tmpPath(`empty.${ext}`);
      await gx.save(file, x, opts);
      using y = await gx.loadTensor(file, { device });
      same(t, y, x.dtype, shape, valuesOf(x), `.${ext} shape [${shape.join(', ')}]`, device);
    }
  }
  const empty = tmpPath('none.safetensors');
  await gx.save(empty, {});
  t.deepEqual(await gx.loadTensors(empty), {}, 'a record of no tensors');
  t.is(fs.readFileSync(empty).length, 16, '8 bytes of length, "{}" padded to 8');
});

deviceTest('views, transposes, slices and broadcasts save their values in C order', async (t, device: TestDevice) => {
  using base = gx.arange(60, { dtype: 'float32', device }).view(3, 4, 5);
  const views: [string, gx.Tensor][] = [
    ['transpose', base.transpose(0, 2)],
    ['permute', gx.permute(base, [1, 2, 0])],
    ['narrow', base.narrow(1, 1, 2)],
    ['step slice', gx.sliceDims(base, null, [null, null, 2], [1, null, 2])],
    ['expand', gx.arange(3, { dtype: 'int32', device }).view(3, 1).expand([3, 4])],
    ['offset view', base.narrow(0, 2, 1).view(4, 5)],
  ];
  for (const { ext, opts } of FORMATS) {
    for (const [what, v] of views) {
      const file = tmpPath(`view.${ext}`);
      await gx.save(file, v, opts);
      using y = await gx.loadTensor(file, { device });
      t.true(y.isContiguous());
      same(t, y, v.dtype, v.shape, valuesOf(v), `.${ext} ${what}`, device);
    }
  }
  for (const [, v] of views) v.dispose();
});

deviceTestSerial('tensors larger than a chunk save and load block by block (views, deflate, Fortran and big-endian files)', async (t, device: TestDevice) => {
  const saved = CHUNK.bytes;
  CHUNK.bytes = 24;  // a few elements: every tensor below takes many blocks, some smaller than a row
  try {
    using m = gx.tensor(randomValues('float64', 7 * 9, 3), { dtype: 'float64', device, shape: [7, 9] });
    using mt = m.transpose(0, 1);
    using c = gx.tensor(randomValues('int16', 3 * 4 * 5, 4), { dtype: 'int16', device, shape: [3, 4, 5] });
    using cs = gx.sliceDims(c, null, [null, null, 2], null);
    for (const { ext, opts } of FORMATS) {
      for (const [what, v] of [['transposed float64', mt], ['sliced int16', cs], ['contiguous float64', m]] as const) {
        const file = tmpPath(`chunked.${ext}`);
        await gx.save(file, v, opts);
        using y = await gx.loadTensor(file, { device });
        same(t, y, v.dtype, v.shape, valuesOf(v), `.${ext} ${what}`, device);
      }
    }
    // NumPy's Fortran-order and big-endian files, read in chunks.
    for (const name of ['fortran_int16_3d.npy', 'big_float16_fortran.npy', 'big_int64.npy']) {
      using y = await gx.loadTensor(fixture(name), { device });
      const want = expectedOf(name).tensor;
      same(t, y, want.dtype, want.shape, expectedValues(want), name, device);
    }
  } finally {
    CHUNK.bytes = saved;
  }
});

deviceTestSerial('a tensor of several staging chunks loads whole, each byte where it was (the core\'s file reads)', async (t, device: TestDevice) => {
  // 2 x 32 MiB staging chunks and a ragged end; an odd-length float16 after it
  // starts its data at an offset no page or chunk boundary lines up with.
  const n = (64 << 20) / 4 + 3073;
  using a = gx.arange(n, { dtype: 'int32', device });
  using b = gx.tensor(randomValues('float16', 1001, 9), { dtype: 'float16', device });
  const file = tmpPath('large.safetensors');
  await gx.save(file, { a, b });
  poisonCache(device, n, 'int32');
  const back = await gx.loadTensors(file, { device });
  t.true(gx.equal(back.a, a), 'every element of a');
  same(t, back.b, 'float16', [1001], valuesOf(b), 'b', device);
  disposeAll(back);
});

deviceTestSerial('a file that ends before a tensor\'s bytes do rejects naming the function and the file, and frees the tensor', async (t, device: TestDevice) => {
  const file = tmpPath('short.bin');
  fs.writeFileSync(file, Buffer.alloc(100, 7));
  const live = gx.memory.stats(device).liveTensors;
  const fh = await open(file, 'r');
  try {
    // A reader told the range is longer than the file, as when a file shrinks under a load.
    const reader = new FileRangeReader(fh, 0, 4000, { fn: 'gx.loadTensors', path: file });
    await t.throwsAsync(readTensorData(reader, { shape: [1000], dtype: 'float32' }, parseDevice(device, 'test'), 'the data'), {
      message: new RegExp(`^gx\\.loadTensors: ${escape(file)}: the file ended at offset 100, 3900 bytes short`),
    });
  } finally {
    await fh.close();
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'the half-read tensor was freed');
});

test('cOrderBlocks tiles a layout in C order with blocks of at most the limit', (t) => {
  const shape = [3, 4, 5], strides = [20, 5, 1];
  for (const max of [1, 3, 5, 7, 20, 21, 59, 60, 1000]) {
    const seen: number[] = [];
    for (const b of cOrderBlocks(shape, strides, 0, max)) {
      t.true(b.numel <= max && b.numel > 0, `max ${max}: block of ${b.numel}`);
      // Every element of the block, in C order over its own shape.
      const idx = new Array<number>(b.shape.length).fill(0);
      for (let i = 0; i < b.numel; i++) {
        seen.push(b.offset + idx.reduce((acc, v, d) => acc + v * b.strides[d], 0));
        for (let d = b.shape.length - 1; d >= 0 && ++idx[d] === b.shape[d]; d--) idx[d] = 0;
      }
    }
    t.deepEqual(seen, Array.from({ length: 60 }, (_, i) => i), `max ${max}`);
  }
});

test('names round-trip as they are: non-ASCII, slashes, "__proto__"', async (t) => {
  for (const ext of ['safetensors', 'npz']) {
    const record: Record<string, gx.Tensor> = {};
    for (const name of ['ü/layer.0', 'a b', '']) record[name] = gx.tensor([1, 2]);
    Object.defineProperty(record, '__proto__', { value: gx.tensor([3]), enumerable: true });
    const file = tmpPath(`names.${ext}`);
    await gx.save(file, record);
    const back = await gx.loadTensors(file);
    t.deepEqual(Object.keys(back).sort(), ['', '__proto__', 'a b', 'ü/layer.0'], ext);
    t.is(Object.getPrototypeOf(back), Object.prototype, `${ext}: "__proto__" is a key, not the prototype`);
    sameValues(t, valuesOf(back.__proto__ as unknown as gx.Tensor), [3]);
    disposeAll(back);
    disposeAll(record);
  }
});

test('a lone tensor is named "tensor" in safetensors and .npy, "arr_0" in .npz; loadTensor wants exactly one', async (t) => {
  using x = gx.tensor([1, 2, 3]);
  for (const [ext, name] of [['safetensors', 'tensor'], ['npz', 'arr_0'], ['npy', 'tensor']]) {
    const file = tmpPath(`lone.${ext}`);
    await gx.save(file, x);
    t.deepEqual(Object.keys((await gx.inspectTensors(file)).tensors), [name], ext);
    const r = await gx.loadTensors(file);
    t.deepEqual(Object.keys(r), [name]);
    disposeAll(r);
  }
  const two = tmpPath('two.safetensors');
  await gx.save(two, { a: x, b: x });
  await rejects(t, gx.loadTensor(two), Error, new RegExp(`^gx\\.loadTensor: ${escape(two)}: holds more than one tensor \\('a', 'b', \\.\\.\\.\\); load them with gx\\.loadTensors`));
  const none = tmpPath('none.npz');
  await gx.save(none, {});
  await rejects(t, gx.loadTensor(none), Error, /^gx\.loadTensor: .*none\.npz: holds no tensor/);
});

test('the format comes from options.format, else the extension; loading an unknown extension reads the first bytes', async (t) => {
  using x = gx.tensor([[1, 2], [3, 4]], { dtype: 'int32' });
  for (const format of ['safetensors', 'npy', 'npz'] as const) {
    const file = tmpPath(`x.${format}.bin`);
    await gx.save(file, x, { format });
    t.is((await gx.inspectTensors(file)).format, format, `${format} sniffed`);
    using y = await gx.loadTensor(file, { format });
    sameValues(t, valuesOf(y), [1, 2, 3, 4]);
  }
  const plain = tmpPath('weights.bin');
  await gx.save(plain, x);
  t.is((await gx.inspectTensors(plain)).format, 'safetensors', 'other extensions save as safetensors');
});

// --- NumPy's files ---------------------------------------------------------

interface Expected {
  dtype: gx.DType;
  shape: number[];
  values: (number | string | boolean)[];
}
const EXPECTED = JSON.parse(fs.readFileSync(fixture('expected.json'), 'utf8')) as Record<string, Record<string, Expected>>;

function expectedOf(file: string): Record<string, Expected> {
  return EXPECTED[file];
}

/** expected.json's values as toArray gives them: int64 from strings, 'nan' and '±inf', booleans as 0 and 1. */
function expectedValues(e: Expected): Values {
  if (e.dtype === 'int64') return e.values.map((v) => BigInt(v as string));
  return e.values.map((v) => (typeof v === 'boolean' ? Number(v) : v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : (v as number)));
}

deviceTest('NumPy and reference-safetensors fixtures load with their values (C, Fortran, big-endian, versions 1-3, npz stored and deflated)', async (t, device: TestDevice) => {
  t.true(Object.keys(EXPECTED).length >= 20);
  for (const [file, tensors] of Object.entries(EXPECTED)) {
    const back = await gx.loadTensors(fixture(file), { device });
    t.deepEqual(Object.keys(back).sort(), Object.keys(tensors).sort(), `${file}: names`);
    for (const [name, e] of Object.entries(tensors)) same(t, back[name], e.dtype, e.shape, expectedValues(e), `${file} ${name}`, device);
    disposeAll(back);
  }
});

test('inspectTensors reads dtypes, shapes and metadata from the headers alone', async (t) => {
  const info = await gx.inspectTensors(fixture('all_dtypes.safetensors'));
  t.is(info.format, 'safetensors');
  t.deepEqual(info.metadata, { format: 'pt', note: 'written by make_fixtures.py' });
  t.deepEqual(info.tensors['bfloat16.weight'], { dtype: 'bfloat16', shape: [3, 2] });
  t.deepEqual(info.tensors['z.scalar'], { dtype: 'float32', shape: [] });
  // In data order: widest dtypes first, as the reference writer orders them.
  t.deepEqual(Object.keys(info.tensors).slice(0, 3), ['int64.weight', 'float64.weight', 'float32.weight']);
  const npz = await gx.inspectTensors(fixture('compressed.npz'));
  t.deepEqual(npz.tensors.fortran, { dtype: 'float64', shape: [2, 3] });
  t.deepEqual(npz.metadata, {});
  t.deepEqual((await gx.inspectTensors(fixture('fortran_int16_3d.npy'))).tensors, { tensor: { dtype: 'int16', shape: [2, 3, 4] } });
});

// The reference reader's "__metadata__" is an Option: null is none, and the file loads (gpuext refused it).
test('a safetensors "__metadata__" of null is no metadata, as the reference reader reads it', async (t) => {
  const json = '{"__metadata__":null,"w":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}';
  const padded = json + ' '.repeat((8 - (json.length % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(padded.length));
  const file = tmpPath('null-metadata.safetensors');
  fs.writeFileSync(file, Buffer.concat([length, Buffer.from(padded), Buffer.from(Int32Array.of(7, -9).buffer)]));
  t.deepEqual(await gx.inspectTensors(file), { format: 'safetensors', tensors: { w: { dtype: 'int32', shape: [2] } }, metadata: {} });
  using w = await gx.loadTensor(file);
  t.deepEqual(w.toNested(), [7, -9]);
});

test('files written again are byte for byte what NumPy and the reference safetensors writer wrote', async (t) => {
  // safetensors: the same tensors and metadata give the same bytes.
  const info = await gx.inspectTensors(fixture('all_dtypes.safetensors'));
  const st = await gx.loadTensors(fixture('all_dtypes.safetensors'));
  const again = tmpPath('again.safetensors');
  await gx.save(again, st, { metadata: info.metadata });
  t.true(fs.readFileSync(again).equals(fs.readFileSync(fixture('all_dtypes.safetensors'))), 'all_dtypes.safetensors');
  disposeAll(st);
  // .npy: as np.save writes (header, padding, version 1.0), for C-order files of every NumPy dtype.
  for (const name of [...NUMPY_DTYPES.map((d) => `c_${d}.npy`), 'special_float32.npy', 'scalar_float64.npy', 'empty_int32.npy']) {
    using x = await gx.loadTensor(fixture(name));
    const file = tmpPath(name);
    await gx.save(file, x);
    t.true(fs.readFileSync(file).equals(fs.readFileSync(fixture(name))), name);
  }
});

// --- leaks ------------------------------------------------------------------------

deviceTestSerial('saves and loads, failed ones included, leave no tensor behind', async (t, device: TestDevice) => {
  using x = gx.tensor(randomValues('int64', 10, 2), { dtype: 'int64', device, shape: [2, 5] });
  using xt = x.transpose(0, 1);
  const before = gx.memory.stats(device).liveTensors;
  for (const { ext, opts } of FORMATS) {
    const file = tmpPath(`leak.${ext}`);
    await gx.save(file, ext === 'npy' ? xt : { a: x, b: xt }, opts);
    disposeAll(await gx.loadTensors(file, { device }));
    await t.throwsAsync(gx.save(file, { a: x, b: 1 } as unknown as Record<string, gx.Tensor>));
    if (ext === 'npz' && !('compressed' in opts)) {
      // The second entry damaged: the first, already loaded, is disposed.
      const bytes = fs.readFileSync(file);
      const at = bytes.indexOf('b.npy');  // the local header's name (the central directory's comes later)
      bytes[at + 'b.npy'.length + bytes.readUInt16LE(at - 2) + 130] ^= 0xff;
      fs.writeFileSync(file, bytes);
      await t.throwsAsync(gx.loadTensors(file, { device }), { message: /CRC-32/ });
    }
  }
  await t.throwsAsync(gx.loadTensor(fixture('stored.npz'), { device }), { message: /more than one tensor/ });
  await t.throwsAsync(gx.loadTensors(fixture('unsupported_uint32.npy'), { device }));
  t.is(gx.memory.stats(device).liveTensors, before);
});

// --- ZIP64, NumPy reading gpuext's files, CUDA -------------------------------------

test('.npz files with ZIP64 records (forced on small files) round-trip', async (t) => {
  using a = gx.tensor(randomValues('float64', 6, 5), { dtype: 'float64', shape: [2, 3] });
  using b = gx.tensor([true, false, true]);
  for (const compressed of [false, true]) {
    const file = tmpPath(`zip64-${compressed}.npz`);
    const sources = takeSources({ a, b }, 'test', 'arr_0');
    try {
      await writeAtomically({ fn: 'test', path: file }, (fh) => saveNpz(fh, sources, compressed, true));
    } finally {
      releaseSources(sources);
    }
    const back = await gx.loadTensors(file);
    same(t, back.a, 'float64', [2, 3], valuesOf(a), `a, compressed ${compressed}`);
    same(t, back.b, 'bool', [3], [1, 0, 1], `b, compressed ${compressed}`);
    disposeAll(back);
  }
});

/** python3 with numpy, or why not. */
function python(): string | undefined {
  const r = spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8' });
  return r.status === 0 ? 'python3' : undefined;
}

test('NumPy reads what gpuext writes, and the files are byte for byte NumPy\'s and the reference writer\'s', async (t) => {
  const py = python();
  const dir = fs.mkdtempSync(path.join(tmpDir(), 'numpy-'));
  const expected: Record<string, Record<string, unknown>> = {};
  const entry = (x: gx.Tensor): unknown => {
    const values = Array.from(valuesOf(x), (v) =>
      typeof v === 'bigint' ? String(v) : x.dtype === 'bool' ? v !== 0 : Number.isNaN(v) ? 'nan' : v === Infinity ? 'inf' : v === -Infinity ? '-inf' : v);
    return { dtype: x.dtype, shape: [...x.shape], values };
  };
  const record: Record<string, gx.Tensor> = {};
  for (const dtype of DTYPES) record[dtype] = gx.tensor(randomValues(dtype, 12, 9), { dtype, shape: [3, 4] });
  record.special = gx.tensor([NaN, Infinity, -Infinity, -0, 1e-45]);
  record.scalar = gx.tensor(3n);
  record.empty = gx.zeros([0, 2], { dtype: 'uint8' });
  record.transposed = record.float64.transpose(0, 1);
  const numpyOnes = Object.fromEntries(Object.entries(record).filter(([, x]) => x.dtype !== 'bfloat16'));
  for (const [name, x] of Object.entries(numpyOnes)) {
    await gx.save(path.join(dir, `${name}.npy`), x);
    expected[`${name}.npy`] = { tensor: entry(x) };
  }
  await gx.save(path.join(dir, 'stored.npz'), numpyOnes);
  await gx.save(path.join(dir, 'deflated.npz'), numpyOnes, { compressed: true });
  await gx.save(path.join(dir, 'all.safetensors'), record, { metadata: { format: 'pt', n: '1' } });
  const sources = takeSources(numpyOnes, 'test', 'arr_0');
  try {
    await writeAtomically({ fn: 'test', path: path.join(dir, 'zip64.npz') }, (fh) => saveNpz(fh, sources, true, true));
  } finally {
    releaseSources(sources);
  }
  const all = Object.fromEntries(Object.entries(numpyOnes).map(([k, x]) => [k, entry(x)]));
  expected['stored.npz'] = all;
  expected['deflated.npz'] = all;
  expected['zip64.npz'] = all;
  expected['all.safetensors'] = { ...Object.fromEntries(Object.entries(record).map(([k, x]) => [k, entry(x)])), __metadata__: { format: 'pt', n: '1' } };
  fs.writeFileSync(path.join(dir, 'expected.json'), JSON.stringify(expected));
  disposeAll(record);
  if (py === undefined) {
    t.log('python3 with numpy is not available here: the files were written but not checked with NumPy');
    t.pass();
    return;
  }
  const r = spawnSync(py, [fixture('check_gpuext_files.py'), dir], { encoding: 'utf8', timeout: 120_000 });
  t.is(r.status, 0, `check_gpuext_files.py:\n${r.stdout}${r.stderr}`);
  t.log(r.stderr.trim());
});

cudaTest('loading straight to a GPU: every tensor lands on the device asked for, and GPU tensors save', async (t) => {
  const back = await gx.loadTensors(fixture('all_dtypes.safetensors'), { device: 'cuda:0' });
  for (const [name, e] of Object.entries(expectedOf('all_dtypes.safetensors'))) same(t, back[name], e.dtype, e.shape, expectedValues(e), name, 'cuda');
  const file = tmpPath('from-gpu.safetensors');
  await gx.save(file, back);
  const cpu = await gx.loadTensors(file);
  for (const [name, e] of Object.entries(expectedOf('all_dtypes.safetensors'))) same(t, cpu[name], e.dtype, e.shape, expectedValues(e), `${name} (back on the cpu)`);
  disposeAll(back);
  disposeAll(cpu);
  using f = await gx.loadTensor(fixture('fortran_float32.npy'), { device: 'cuda' });
  const e = expectedOf('fortran_float32.npy').tensor;
  same(t, f, 'float32', e.shape, expectedValues(e), 'Fortran order on the GPU', 'cuda');
});
