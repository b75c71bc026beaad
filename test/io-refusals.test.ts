// Files gpuext refuses (lib/io/): dtypes it has none of, damaged
// safetensors, .npy and .npz files, missing paths, and saves it cannot
// write, each with an error naming the function and the file; a save that
// fails leaves nothing behind (atomic writes). Round trips are io.test.ts's.
import test from 'ava';
import fs from 'fs';
import { open } from 'fs/promises';
import path from 'path';

import * as gx from '../lib';
import { writeAtomically } from '../lib/io/atomic';
import { ZipWriter } from '../lib/io/zip';
import { sameValues, type ErrorClass } from './helpers';
import { escape, fixture, rejects, same, useTmpDir, valuesOf } from './io-helpers';

const { tmpPath, tmpDir } = useTmpDir();

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
    // JSON.parse kept the last of two keys: the first tensor vanished and the error was 'a gap of 8 bytes'.
    ['a tensor named twice', safetensorsFile(undefined, 16, `{"a":${JSON.stringify(F32(0, 8))},"a":${JSON.stringify(F32(8, 16))}}`), /tensor 'a' appears twice in the header; this is not a safetensors file, or it is damaged/],
    ['a name escaped the second time', safetensorsFile(undefined, 8, `{"ab":${JSON.stringify(F32(0, 8))},"a\\u0062":${JSON.stringify(F32(0, 8))}}`), /tensor 'ab' appears twice in the header/],
    ['a field twice', safetensorsFile(undefined, 8, '{"a":{"dtype":"I32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}'), /key 'dtype' appears twice in tensor 'a'; /],
    ['a metadata key twice', safetensorsFile(undefined, 8, `{"__metadata__":{"k":"1","k":"2"},"a":${JSON.stringify(F32(0, 8))}}`), /key 'k' appears twice in "__metadata__"; /],
    ['metadata twice', safetensorsFile(undefined, 0, '{"__metadata__":{"k":"1"},"__metadata__":{"k":"2"}}'), /"__metadata__" appears twice in the header; /],
  ];
  for (const [what, bytes, re] of cases) {
    const file = tmpPath('bad.safetensors');
    fs.writeFileSync(file, bytes);
    const err = await rejects(t, gx.loadTensors(file), Error, new RegExp(`^gx\\.loadTensors: ${escape(file)}: ${re.source}`));
    t.truthy(err, what);
  }
  // gx.inspectTensors and gx.loadTensor read the same header: a name twice is refused, naming each function.
  const dup = tmpPath('dup.safetensors');
  fs.writeFileSync(dup, safetensorsFile(undefined, 16, `{"w":${JSON.stringify(F32(0, 8))},"w":${JSON.stringify(F32(8, 16))}}`));
  await rejects(t, gx.inspectTensors(dup), Error, new RegExp(`^gx\\.inspectTensors: ${escape(dup)}: tensor 'w' appears twice in the header`));
  await rejects(t, gx.loadTensor(dup), Error, new RegExp(`^gx\\.loadTensor: ${escape(dup)}: tensor 'w' appears twice in the header`));
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
  const missing = path.join(tmpDir(), 'no-such-file.safetensors');
  const err = await rejects(t, gx.loadTensors(missing), Error, new RegExp(`^gx\\.loadTensors: ${escape(missing)}: ENOENT`));
  t.is((err as Error & { code?: string }).code, 'ENOENT');
  await rejects(t, gx.inspectTensors(tmpDir(), { format: 'npz' }), Error, new RegExp(`^gx\\.inspectTensors: ${escape(tmpDir())}: is not a regular file`));
  await rejects(t, gx.save(path.join(tmpDir(), 'no-dir', 'x.npy'), gx.tensor([1])), Error, /^gx\.save: .*no-dir\/x\.npy: ENOENT/);
});

// --- argument errors ----------------------------------------------------------

test('save refuses what it cannot write, naming the function and the tensor', async (t) => {
  const x = gx.tensor([1, 2]);
  const gone = gx.tensor([3]);
  gone.dispose();
  const dir = fs.mkdtempSync(path.join(tmpDir(), 'args-'));  // its own: other tests' saves are under way in the shared one
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

// options.metadata as a Map or a Date had no own keys and saved as {}; an argument after the options was dropped.
test('save\'s metadata is a plain object or a Map of strings; the file functions refuse arguments after their last', async (t) => {
  using x = gx.tensor([1, 2], { dtype: 'float32' });
  const file = tmpPath('meta.safetensors');
  await gx.save(file, { x }, { metadata: new Map([['step', '100'], ['__proto__', 'p']]) });
  const { metadata } = await gx.inspectTensors(file);
  t.deepEqual(Object.entries(metadata), [['step', '100'], ['__proto__', 'p']], 'a Map\'s entries, "__proto__" a key like any other');
  await rejects(t, gx.save(file, x, { metadata: new Date() as never }), TypeError, /^gx\.save: options\.metadata must be an object of strings \(\{ key: 'value' \}\) or a Map of them, got an object \(\[object Date\]\)/);
  await rejects(t, gx.save(file, x, { metadata: new Map([[1, 'a']]) as never }), TypeError, /^gx\.save: options\.metadata has the key number 1; safetensors metadata maps strings to strings/);
  await rejects(t, gx.save(file, x, { metadata: new Map([['a', 1]]) as never }), TypeError, /^gx\.save: options\.metadata\['a'\] must be a string/);
  t.deepEqual((await gx.inspectTensors(file)).metadata, metadata, 'the refused saves left the file as it was');
  const loose = gx as unknown as Record<'save' | 'loadTensors' | 'loadTensor' | 'inspectTensors', (...a: unknown[]) => Promise<unknown>>;
  const other = tmpPath('extra.npy');
  await rejects(t, loose.save(other, x, {}, { compressed: true }), TypeError, /^gx\.save: takes \(path, data, \{ format, metadata, compressed \}\?\); it takes no further argument or options \(got an object/);
  t.false(fs.existsSync(other), 'nothing written');
  for (const name of ['loadTensors', 'loadTensor', 'inspectTensors'] as const) {
    await rejects(t, loose[name](file, {}, 'x'), TypeError, new RegExp(`^gx\\.${name}: takes \\(path, \\{ .* \\}\\?\\); it takes no further argument or options \\(got a string \\("x"\\)\\)`));
  }
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
  const dir = fs.mkdtempSync(path.join(tmpDir(), 'atomic-'));
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
