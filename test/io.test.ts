// Saving and loading tensors (lib/io/): safetensors, .npy and .npz round
// trips for every dtype, empty and 0-d tensors, views; the NumPy-written
// fixtures of test/fixtures/io (make_fixtures.py) read back to their values,
// and written again byte for byte; files gpuext writes read by NumPy
// (check_gpuext_files.py, when python3 with numpy is here); damaged files
// refused with errors naming the function and the file; atomic writes; no
// tensor left behind.
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import { open } from 'fs/promises';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { DTYPES } from '../lib/generated/dtypes';
import { writeAtomically } from '../lib/io/atomic';
import { saveNpz } from '../lib/io/npz';
import { releaseSources, takeSources } from '../lib/io/sources';
import { parseDevice } from '../lib/device';
import { FileRangeReader } from '../lib/io/readers';
import { CHUNK, cOrderBlocks, readTensorData } from '../lib/io/tensor-data';
import { ZipWriter } from '../lib/io/zip';
import { cudaTest, deviceTest, deviceTestSerial, poisonCache, randomValues, sameValues, type ErrorClass, type TestDevice } from './helpers';

const root = path.resolve(__dirname, '../..');
const fixtures = path.join(root, 'test/fixtures/io');
const fixture = (name: string): string => path.join(fixtures, name);

let tmp: string;
test.before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-io-'));
});
test.after('no save, failed or not, left a temporary file behind', (t) => {
  const left = fs.readdirSync(tmp, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tmp'));
  t.deepEqual(left, []);
});
test.after.always(() => {
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
});

let counter = 0;
/** A fresh path in the temporary directory. */
function tmpPath(name: string): string {
  return path.join(tmp, `${counter++}-${name}`);
}

const NUMPY_DTYPES = DTYPES.filter((d) => d !== 'bfloat16');
type Values = ArrayLike<number | bigint>;

function valuesOf(t: gx.Tensor): Values {
  return t.toArraySync() as Values;
}

/** Asserts `t` has this dtype, shape and (C-order) values, on `device`. */
function same(t: ExecutionContext, x: gx.Tensor, dtype: gx.DType, shape: readonly number[], values: Values, what: string, device = 'cpu'): void {
  t.is(x.dtype, dtype, `${what}: dtype`);
  t.deepEqual([...x.shape], [...shape], `${what}: shape`);
  t.is(x.device.type, device.startsWith('cuda') ? 'cuda' : 'cpu', `${what}: device`);
  sameValues(t, valuesOf(x), values, what);
}

function disposeAll(r: Record<string, gx.Tensor>): void {
  for (const x of Object.values(r)) x.dispose();
}

/** Awaits `p`, asserting it rejects with `cls` and a message matching `re`; returns the error. */
async function rejects(t: ExecutionContext, p: Promise<unknown>, cls: ErrorClass, re: RegExp): Promise<Error | undefined> {
  const err = await t.throwsAsync(p);
  t.true(err instanceof cls, `expected ${cls.name}, got ${err?.constructor.name}: ${err?.message}`);
  t.regex(err?.message ?? '', re);
  return err;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

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

test('dtypes gpuext has none of are refused, naming the function, the file and the dtype', async (t) => {
  await rejects(t, gx.loadTensors(fixture('unsupported_uint32.npy')), TypeError,
    new RegExp(`^gx\\.loadTensors: ${escape(fixture('unsupported_uint32.npy'))}: dtype '<u4' \\(unsigned integers wider than 8 bits\\) is not supported by gpuext; it reads <f4, <f8`));
  await rejects(t, gx.loadTensor(fixture('unsupported_complex64.npy')), TypeError, /^gx\.loadTensor: .*unsupported_complex64\.npy: dtype '<c8' \(complex numbers\) is not supported/);
  const st = tmpPath('f8.safetensors');
  fs.writeFileSync(st, safetensorsFile({ x: { dtype: 'F8_E4M3', shape: [2], data_offsets: [0, 2] } }, 2));
  await rejects(t, gx.loadTensors(st), TypeError, new RegExp(`^gx\\.loadTensors: ${escape(st)}: tensor 'x' has dtype "F8_E4M3", which gpuext does not support \\(supported: F32, F64, F16, BF16`));
});

// --- damaged files -----------------------------------------------------------

/** A safetensors file with this header (JSON, padded) and `dataBytes` zero bytes of data. */
function safetensorsFile(header: unknown, dataBytes: number, raw?: string): Buffer {
  let json = raw ?? JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([length, Buffer.from(json), Buffer.alloc(dataBytes)]);
}

const F32 = (begin: number, end: number, shape = [(end - begin) / 4]): object => ({ dtype: 'F32', shape, data_offsets: [begin, end] });

test('damaged safetensors files are refused with the function, the file and what is wrong', async (t) => {
  const cases: [string, Buffer, RegExp][] = [
    ['too short', Buffer.from([1, 2, 3]), /the file has 3 bytes, too few for a safetensors file/],
    ['header length past the end', Buffer.concat([Buffer.from([0x3f, 0x42, 0x0f, 0, 0, 0, 0, 0]), Buffer.alloc(112)]), /header length 999999 exceeds the file size 120; the file is truncated or not a safetensors file/],
    ['huge header length', Buffer.from([0, 0, 0, 0, 0, 0, 0, 0x80, 1, 2, 3]), /header length 9223372036854775808 exceeds the file size 11/],
    ['not JSON', safetensorsFile(undefined, 0, '{"a": [1, 2'), /the header is not valid JSON/],
    ['not UTF-8', Buffer.concat([Buffer.from([8, 0, 0, 0, 0, 0, 0, 0]), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x20, 0x20, 0x20, 0x20])]), /the header is not UTF-8 text/],
    ['not an object', safetensorsFile([1, 2], 0), /the header must start with '\{' \(a JSON object\)/],
    ['entry not an object', safetensorsFile({ a: 3 }, 0), /tensor 'a' in the header: expected an object \{ dtype, shape, data_offsets \}/],
    ['unknown dtype', safetensorsFile({ a: { dtype: 'XYZ', shape: [1], data_offsets: [0, 4] } }, 4), /tensor 'a' has dtype "XYZ", which gpuext does not support/],
    ['bad shape', safetensorsFile({ a: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, 4), /tensor 'a' in the header: shape must be an array of non-negative integers/],
    ['bad offsets', safetensorsFile({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 0] } }, 4), /tensor 'a' in the header: data_offsets must be \[begin, end\] with 0 <= begin <= end, got \[4,0\]/],
    ['shape and size disagree', safetensorsFile({ a: F32(0, 20, [2, 3]) }, 20), /tensor 'a' in the header: shape \[2, 3\] of F32 needs 24 bytes but data_offsets \[0,20\] span 20/],
    ['overlapping', safetensorsFile({ a: F32(0, 16), b: F32(8, 24) }, 24), /tensor 'b' \(data_offsets \[8, 24\]\) overlaps tensor 'a' \(data_offsets \[0, 16\]\)/],
    ['a gap', safetensorsFile({ a: F32(0, 8), b: F32(12, 16) }, 16), /a gap of 4 bytes before tensor 'b' \(data_offsets \[12, 16\]\); tensors' data must be packed/],
    ['out of range', safetensorsFile({ a: F32(0, 8), b: F32(8, 32) }, 16), /tensor 'b' \(data_offsets \[8, 32\]\) lies beyond the data, which has 16 bytes; the file is truncated/],
    ['trailing bytes', safetensorsFile({ a: F32(0, 8) }, 12), /the data section has 12 bytes but the tensors cover 8/],
    ['bad metadata', safetensorsFile({ __metadata__: { a: 1 } }, 0), /"__metadata__" in the header must map strings to strings/],
  ];
  for (const [what, bytes, re] of cases) {
    const file = tmpPath('bad.safetensors');
    fs.writeFileSync(file, bytes);
    const err = await rejects(t, gx.loadTensors(file), Error, new RegExp(`^gx\\.loadTensors: ${escape(file)}: ${re.source}`));
    t.truthy(err, what);
  }
  // A real file cut short anywhere: in the length, the header, the data.
  const whole = fs.readFileSync(fixture('all_dtypes.safetensors'));
  for (const cut of [5, 20, whole.length - 200, whole.length - 1]) {
    const file = tmpPath('cut.safetensors');
    fs.writeFileSync(file, whole.subarray(0, cut));
    await rejects(t, gx.loadTensors(file), Error, new RegExp(`^gx\\.loadTensors: ${escape(file)}: .*(too few|exceeds the file size|truncated)`));
  }
});

/** An .npy file: magic, version, header (padded to 64 with a newline) and `data`. */
function npyFile(header: string, data: Buffer, version = 1): Buffer {
  const lengthBytes = version === 1 ? 2 : 4;
  const unpadded = 8 + lengthBytes + header.length + 1;
  const text = header + ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(8 + lengthBytes);
  Buffer.from('\x93NUMPY', 'latin1').copy(prefix);
  prefix[6] = version;
  if (version === 1) prefix.writeUInt16LE(text.length, 8);
  else prefix.writeUInt32LE(text.length, 8);
  return Buffer.concat([prefix, Buffer.from(text, 'latin1'), data]);
}

test('damaged .npy files are refused with the function, the file and what is wrong', async (t) => {
  const ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const cases: [string, Buffer, ErrorClass, RegExp][] = [
    ['wrong magic', Buffer.from('PNG\r\n\x1a\n\0\0\0\0\0', 'latin1'), Error, /not a \.npy file \(it does not start with the magic "\\x93NUMPY"\)/],
    ['version 4', Buffer.concat([Buffer.from('\x93NUMPY\x04\x00', 'latin1'), Buffer.alloc(8)]), Error, /\.npy format version 4\.0 is not supported/],
    ['cut in the magic', Buffer.from('\x93NUM', 'latin1'), Error, /the file is truncated: the magic and version needs 8 bytes, only 4 are left/],
    ['cut in the header', npyFile(ok, Buffer.alloc(24)).subarray(0, 30), Error, /the file is truncated: the header needs 118 bytes, only 20 are left/],
    ['cut in the data', npyFile(ok, Buffer.alloc(20)), Error, /shape \[2, 3\] of float32 needs 24 bytes of data, but 20 follow the header; the file is truncated/],
    ['data to spare', npyFile(ok, Buffer.alloc(28)), Error, /shape \[2, 3\] of float32 needs 24 bytes of data, but 28 follow the header$/],
    ['garbled header', npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", Buffer.alloc(24)), Error, /the header is not a Python literal/],
    ['missing key', npyFile("{'descr': '<f4', 'shape': (2, 3), }", Buffer.alloc(24)), Error, /Header does not contain the correct keys: \['descr', 'shape'\]/],
    ['bad shape', npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", Buffer.alloc(24)), Error, /negative dimensions are not allowed: shape \(2, -3\)/],
    ['bad fortran_order', npyFile("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", Buffer.alloc(24)), Error, /fortran_order is not a valid bool: 0/],
    ['structured dtype', npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", Buffer.alloc(8)), TypeError, /the array has a structured dtype/],
    ['unknown dtype', npyFile("{'descr': '<q9', 'fortran_order': False, 'shape': (2,), }", Buffer.alloc(8)), TypeError, /dtype '<q9' is not supported by gpuext/],
  ];
  for (const [what, bytes, cls, re] of cases) {
    const file = tmpPath('bad.npy');
    fs.writeFileSync(file, bytes);
    t.truthy(await rejects(t, gx.loadTensors(file), cls, new RegExp(`^gx\\.loadTensors: ${escape(file)}: ${re.source}`)), what);
  }
  // Python 2's long integers (3L) and version 2.0's 4-byte length still read.
  const old = tmpPath('old.npy');
  fs.writeFileSync(old, npyFile("{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 1L), }", Buffer.from([1, 0, 255, 255]), 2));
  using x = await gx.loadTensor(old);
  same(t, x, 'int16', [2, 1], [1, -1], 'a Python 2 header in version 2.0');
});

test('damaged .npz files are refused: cut short, failing CRC, bad deflate data, other entries', async (t) => {
  const stored = fs.readFileSync(fixture('stored.npz'));
  const cut = tmpPath('cut.npz');
  fs.writeFileSync(cut, stored.subarray(0, stored.length - 30));
  await rejects(t, gx.loadTensors(cut), Error, new RegExp(`^gx\\.loadTensors: ${escape(cut)}: not a zip file \\(\\.npz\\): no end of central directory record`));
  // The last byte of the first entry's data ('weight.npy', stored) flipped: its CRC-32 fails.
  const flipped = Buffer.from(stored);
  const nameAt = flipped.indexOf('weight.npy');
  const dataStart = nameAt + 'weight.npy'.length + flipped.readUInt16LE(nameAt - 2);
  flipped[dataStart + 128 + 23] ^= 0xff;
  const crc = tmpPath('crc.npz');
  fs.writeFileSync(crc, flipped);
  await rejects(t, gx.loadTensors(crc), Error, new RegExp(`^gx\\.loadTensors: ${escape(crc)}: entry 'weight\\.npy' fails its CRC-32 check`));
  // Garbage in a deflated entry: zlib's error, with the function and the file.
  const compressed = Buffer.from(fs.readFileSync(fixture('compressed.npz')));
  const cAt = compressed.indexOf('weight.npy');
  compressed.fill(0xff, cAt + 'weight.npy'.length + compressed.readUInt16LE(cAt - 2), cAt + 'weight.npy'.length + compressed.readUInt16LE(cAt - 2) + 12);
  const bad = tmpPath('bad-deflate.npz');
  fs.writeFileSync(bad, compressed);
  await rejects(t, gx.loadTensors(bad), Error, new RegExp(`^gx\\.loadTensors: ${escape(bad)}: .*(invalid|incorrect|unknown)`));
  // A zip of something else than .npy files.
  const other = tmpPath('other.npz');
  const fh = await open(other, 'w');
  const zip = new ZipWriter(fh);
  await zip.add('readme.txt', 2, false, (sink) => sink.write(Buffer.from('hi')));
  await zip.finish();
  await fh.close();
  await rejects(t, gx.loadTensors(other), Error, /: entry 'readme\.txt' is not an \.npy array; an \.npz file holds only \.npy files$/);
});

test('missing files and directories are refused with the function and the path (and fs codes kept)', async (t) => {
  const missing = path.join(tmp, 'no-such-file.safetensors');
  const err = await rejects(t, gx.loadTensors(missing), Error, new RegExp(`^gx\\.loadTensors: ${escape(missing)}: ENOENT`));
  t.is((err as Error & { code?: string }).code, 'ENOENT');
  await rejects(t, gx.inspectTensors(tmp, { format: 'npz' }), Error, new RegExp(`^gx\\.inspectTensors: ${escape(tmp)}: is not a regular file`));
  await rejects(t, gx.save(path.join(tmp, 'no-dir', 'x.npy'), gx.tensor([1])), Error, /^gx\.save: .*no-dir\/x\.npy: ENOENT/);
});

// --- argument errors ----------------------------------------------------------

test('save refuses what it cannot write, naming the function and the tensor', async (t) => {
  const x = gx.tensor([1, 2]);
  const gone = gx.tensor([3]);
  gone.dispose();
  const dir = fs.mkdtempSync(path.join(tmp, 'args-'));  // its own: other tests' saves are under way in tmp
  const file = path.join(dir, 'args.safetensors');
  const err = await rejects(t, gx.save(file, { w: x, b: gone }), Error, /^gx\.save: tensor 'b' was disposed; save it before dispose\(\)/);
  t.is((err as Error & { code?: string }).code, 'GX_DISPOSED');
  await rejects(t, gx.save(file, gone), Error, /^gx\.save: the tensor was disposed/);
  await rejects(t, gx.save(file, { w: x, n: 3 } as unknown as Record<string, gx.Tensor>), TypeError, /^gx\.save: tensor 'n' must be a gx\.Tensor, got number 3/);
  await rejects(t, gx.save(file, [x] as unknown as gx.Tensor), TypeError, /^gx\.save: data must be a gx\.Tensor or a record of them/);
  using bf = gx.tensor([1, 2], { dtype: 'bfloat16' });
  await rejects(t, gx.save(path.join(dir, 'bf.npy'), bf), TypeError, /^gx\.save: the tensor is bfloat16, which NumPy has no dtype for, so an \.npy file cannot hold it; save x\.astype\('float32'\)/);
  await rejects(t, gx.save(path.join(dir, 'bf.npz'), { w: x, h: bf }), TypeError, /^gx\.save: tensor 'h' is bfloat16, which NumPy has no dtype for, so an \.npz file cannot hold it/);
  await rejects(t, gx.save(path.join(dir, 'rec.npy'), { w: x }), TypeError, /^gx\.save: an \.npy file holds one array; pass one tensor, or save a record as \.npz or \.safetensors/);
  await rejects(t, gx.save(file, { __metadata__: x }), TypeError, /^gx\.save: '__metadata__' cannot name a tensor in a safetensors file/);
  await rejects(t, gx.save(file, x, { metadata: { a: 1 } as unknown as Record<string, string> }), TypeError, /^gx\.save: options\.metadata\['a'\] must be a string/);
  await rejects(t, gx.save(path.join(dir, 'm.npz'), x, { metadata: {} }), TypeError, /^gx\.save: options\.metadata is for safetensors files; npz has no metadata/);
  await rejects(t, gx.save(file, x, { compressed: true }), TypeError, /^gx\.save: options\.compressed is for \.npz files, not safetensors/);
  await rejects(t, gx.save(file, x, { format: 'pt' as gx.FileFormat }), TypeError, /^gx\.save: unknown format "pt"; expected one of safetensors, npy, npz/);
  await rejects(t, gx.save('' as string, x), TypeError, /^gx\.save: path must be a non-empty string/);
  await rejects(t, gx.loadTensors(file, { device: 'tpu' }), TypeError, /^gx\.loadTensors: unknown device "tpu"/);
  t.deepEqual(fs.readdirSync(dir), [], 'nothing written, no temporary file left');
  x.dispose();
});

test('a tensor disposed while its save is under way is still written whole', async (t) => {
  const x = gx.arange(1000, { dtype: 'int32' });
  const file = tmpPath('disposed-during.npz');
  const saving = gx.save(file, { x }, { compressed: true });
  x.dispose();
  await saving;
  using y = await gx.loadTensor(file);
  sameValues(t, valuesOf(y), Int32Array.from({ length: 1000 }, (_, i) => i));
});

// --- atomic writes --------------------------------------------------------------

test('a save that fails leaves neither the file nor a temporary file; one over an existing file leaves it as it was', async (t) => {
  const dir = fs.mkdtempSync(path.join(tmp, 'atomic-'));
  using x = gx.tensor([1, 2, 3]);
  // The target is a directory: the data is written, then the rename fails.
  const target = path.join(dir, 'taken.safetensors');
  fs.mkdirSync(target);
  await rejects(t, gx.save(target, x), Error, new RegExp(`^gx\\.save: ${escape(target)}: E(ISDIR|EXIST|NOTEMPTY)`));
  t.deepEqual(fs.readdirSync(dir), ['taken.safetensors'], 'only the directory, no temporary file');
  // A write that fails half way (through the writer itself): the old file stays.
  const old = path.join(dir, 'old.npy');
  await gx.save(old, x);
  const before = fs.readFileSync(old);
  await rejects(t, writeAtomically({ fn: 'gx.save', path: old }, async (fh) => {
    await fh.write(Buffer.from('half a file'));
    throw new Error('disk full (simulated)');
  }), Error, new RegExp(`^gx\\.save: ${escape(old)}: disk full \\(simulated\\)`));
  t.true(fs.readFileSync(old).equals(before), 'the old file is intact');
  t.deepEqual(fs.readdirSync(dir).sort(), ['old.npy', 'taken.safetensors']);
  // And a save that succeeds replaces it whole, with its permissions, leaving nothing else.
  fs.chmodSync(old, 0o600);
  using y = gx.tensor([7, 8], { dtype: 'int8' });
  await gx.save(old, y);
  t.is(fs.statSync(old).mode & 0o777, 0o600, 'the permissions of the file replaced');
  using back = await gx.loadTensor(old);
  same(t, back, 'int8', [2], [7, 8], 'replaced');
  t.deepEqual(fs.readdirSync(dir).sort(), ['old.npy', 'taken.safetensors']);
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
  const dir = fs.mkdtempSync(path.join(tmp, 'numpy-'));
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
