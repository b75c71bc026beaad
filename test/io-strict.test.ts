// Files read as strictly as their reference readers (lib/io/zip-read.ts,
// npy.ts, safetensors.ts; NOTE [ Strict zip reading ], NOTE [ Bounded loads ]).
//
// The .npz and .npy cases of test/fixtures/io/strict/cases.json were made
// hostile byte by byte by make_strict.py, which recorded NumPy's verdict on
// each (np.load, every array read; NumPy 2.4.6, Python 3.11.7): each must be
// refused where NumPy refuses it, and load the same arrays (dtype, shape,
// SHA-256 of the bytes) where NumPy loads it, but for the deliberate
// differences of STRICTER, each with its reason. Every file that loads must
// inspect to the same names, dtypes and shapes. Zip bombs are loaded in a
// child process that reports its peak memory. safetensors headers are judged
// against the reference reader (huggingface/safetensors, tensor.rs).
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'child_process';
import { createHash } from 'crypto';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { promisify } from 'util';
import * as zlib from 'zlib';

import * as gx from '../lib';
import { parsePythonLiteral, type PyValue } from '../lib/io/python-literal';
import { MAX_ENTRIES } from '../lib/io/safetensors';
import { decodeCp437 } from '../lib/io/zip-read';
import { buildZip, deflatedZeros, npyHeader, type RawEntry } from './zip-build';

const root = path.resolve(__dirname, '..', '..');
const CASES = JSON.parse(fs.readFileSync(path.join(root, 'test/fixtures/io/strict/cases.json'), 'utf8')) as Cases;

type Described = { dtype: string; shape: number[]; sha256: string } | { bytes: number };
type Verdict = { ok: Record<string, Described>; names?: number } | { error: string };
type Patch = { runs: [number, string][] } | { prefix: number; middle: string; suffix: number };
interface Cases {
  numpy: string;
  /** Python's bytes(range(256)).decode('cp437'). */
  cp437: string;
  /** ast.literal_eval's verdicts, tagged (make_strict.py's tagged()). */
  literals: { text: string; python: unknown }[];
  bases: Record<string, string>;
  npz: { desc: string; base: string; patch: Patch; numpy: Verdict }[];
  npy: { desc: string; file: string; numpy: Verdict }[];
}

/**
 * Where gpuext refuses what NumPy loads, on purpose: the error's pattern and
 * why. Nothing else may differ.
 */
const STRICTER: [RegExp, string][] = [
  [/holds a NUL character/, 'zipfile cuts a name at NUL, so two names could read as one'],
  [/its local header says/, 'zipfile reads the sizes and method from the directory alone; the local header must agree with it'],
  [/is not an \.npy array/, 'np.load hands a member that is not .npy back as bytes; gx.loadTensors loads tensors only'],
  [/but \d+ follow the header|inflates to more than/, 'bytes after an array in its entry: NumPy stops reading there (and skips the CRC-32 check)'],
  [/beyond deflate's 1032:1/, 'a size deflate cannot reach'],
  [/appears twice|overlap/, 'entries named twice or overlapping (a zip bomb\'s shape)'],
  [/its sizes say ZIP64 but it has no ZIP64 extra field/,
    'a directory size of 0xFFFFFFFF with no ZIP64 field: zipfile takes 4 GiB as the size, and NumPy reads only what the array needs'],
  [/the central directory is truncated: entry \d+ runs \d+ bytes past its end/, 'a directory entry running past the directory\'s end: zipfile reads what is there'],
  [/the central directory \(\d+ bytes at offset \d+\) (ends|runs)/,
    'a directory whose size or offset does not meet the end records: zipfile shifts every offset by the difference, reading a damaged file as another (or as empty)'],
];

let tmp: string;
test.before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-strict-'));
});
test.after.always(() => {
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
});

function applyPatch(base: Buffer, p: Patch): Buffer {
  if ('runs' in p) {
    const out = Buffer.from(base);
    for (const [at, hex] of p.runs) Buffer.from(hex, 'hex').copy(out, at);
    return out;
  }
  return Buffer.concat([base.subarray(0, p.prefix), Buffer.from(p.middle, 'hex'), base.subarray(base.length - p.suffix)]);
}

/** The SHA-256 (16 hex digits) of a tensor's C-order bytes, as make_strict.py hashes NumPy's arrays. */
function sha(x: gx.Tensor): string {
  const a = x.toArraySync() as unknown as ArrayBufferView;
  return createHash('sha256').update(Buffer.from(a.buffer, a.byteOffset, a.byteLength)).digest('hex').slice(0, 16);
}

interface Tally {
  files: number;
  /** Verdicts that differ from NumPy's, but for STRICTER: none expected. */
  mismatches: string[];
  bothLoad: number;
  bothRefuse: number;
  stricter: Map<string, number>;
  worstMs: number;
}

function newTally(): Tally {
  return { files: 0, mismatches: [], bothLoad: 0, bothRefuse: 0, stricter: new Map(), worstMs: 0 };
}

/** Loads and inspects `file`, and judges the outcome against NumPy's verdict. */
async function judge(t: ExecutionContext, file: string, desc: string, numpy: Verdict, tally: Tally): Promise<void> {
  tally.files++;
  const t0 = performance.now();
  let loaded: Record<string, gx.Tensor> | undefined;
  let error: Error | undefined;
  try {
    loaded = await gx.loadTensors(file);
  } catch (err) {
    error = err as Error;
  }
  tally.worstMs = Math.max(tally.worstMs, performance.now() - t0);
  if (error !== undefined) {
    t.true(error instanceof Error, `${desc}: a non-Error was thrown`);
    t.true(error.message.startsWith(`gx.loadTensors: ${file}: `), `${desc}: the error names neither the function nor the file: ${error.message}`);
    if ('error' in numpy) {
      tally.bothRefuse++;
      return;
    }
    const why = STRICTER.find(([re]) => re.test(error!.message));
    if (why === undefined) {
      tally.mismatches.push(`${desc}: NumPy loads it, gpuext refuses: ${error.message}`);
    } else {
      tally.stricter.set(why[1], (tally.stricter.get(why[1]) ?? 0) + 1);
    }
    return;
  }
  try {
    if ('error' in numpy) {
      tally.mismatches.push(`${desc}: NumPy refuses it (${numpy.error}), gpuext loads ${Object.keys(loaded!).join(', ')}`);
      return;
    }
    tally.bothLoad++;
    t.deepEqual(Object.keys(loaded!).sort(), Object.keys(numpy.ok).sort(), `${desc}: names`);
    for (const [name, want] of Object.entries(numpy.ok)) {
      const x = loaded![name];
      if (x === undefined || 'bytes' in want) continue;
      t.is(x.dtype as string, want.dtype, `${desc}: ${name}'s dtype`);
      t.deepEqual([...x.shape], want.shape, `${desc}: ${name}'s shape`);
      t.is(sha(x), want.sha256, `${desc}: ${name}'s bytes`);
    }
    // Whatever loads also inspects, to the same names, dtypes and shapes.
    const info = await gx.inspectTensors(file);
    t.deepEqual(Object.keys(info.tensors), Object.keys(loaded!), `${desc}: inspect's names`);
    for (const [name, x] of Object.entries(loaded!)) t.deepEqual(info.tensors[name], { dtype: x.dtype, shape: [...x.shape] }, `${desc}: inspect of ${name}`);
  } finally {
    for (const x of Object.values(loaded ?? {})) x.dispose();
  }
}

function report(t: ExecutionContext, what: string, tally: Tally): void {
  t.log(`${what}: ${tally.files} files judged against NumPy ${CASES.numpy}: ${tally.bothLoad} load as in NumPy, ${tally.bothRefuse} refused as by NumPy, ` +
    `${tally.mismatches.length} other differences; slowest load ${tally.worstMs.toFixed(1)} ms`);
  for (const [why, n] of tally.stricter) t.log(`  refused where NumPy loads (deliberate), ${n}: ${why}`);
  t.deepEqual(tally.mismatches, [], 'verdicts that differ from NumPy\'s');
}

test('hostile .npz files: refused where NumPy refuses them, the same arrays where it loads them; inspect agrees with every load', async (t) => {
  const bases = Object.fromEntries(Object.entries(CASES.bases).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
  const tally = newTally();
  // Deflated entries were read through FileHandle streams, one listener each: 11 entries warned.
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.teardown(() => process.removeListener('warning', onWarning));
  for (const [i, c] of CASES.npz.entries()) {
    const file = path.join(tmp, `case-${i}.npz`);
    fs.writeFileSync(file, applyPatch(bases[c.base], c.patch));
    await judge(t, file, `npz case ${i} (${c.desc})`, c.numpy, tally);
  }
  report(t, '.npz', tally);
  t.true(tally.bothLoad > 100 && tally.bothRefuse > 100, 'both verdicts are well represented');
  await new Promise((r) => setImmediate(r));  // warnings are emitted on the next tick
  t.deepEqual(warnings, [], 'no process warning (MaxListenersExceededWarning)');
});

test('hostile .npy headers: NumPy\'s grammar and checks (tuples of ints, 3L in 1.0 and 2.0 only, nesting, sizes)', async (t) => {
  const tally = newTally();
  for (const [i, c] of CASES.npy.entries()) {
    const file = path.join(tmp, `case-${i}.npy`);
    fs.writeFileSync(file, Buffer.from(c.file, 'base64'));
    // An .npy file loads as one tensor named 'tensor'; NumPy's verdict names it 'arr'.
    const numpy: Verdict = 'ok' in c.numpy ? { ok: { tensor: c.numpy.ok.arr } } : c.numpy;
    await judge(t, file, `npy case ${i} (${c.desc})`, numpy, tally);
  }
  report(t, '.npy', tally);
  // The messages of the cases the issue names: NumPy's words, and no stack overflow.
  const message = async (desc: string): Promise<string> => {
    const i = CASES.npy.findIndex((c) => c.desc === desc);
    return (await t.throwsAsync(gx.loadTensors(path.join(tmp, `case-${i}.npy`))))?.message ?? '';
  };
  const tooBig = await message('shape (0, 2**53-1, 2**53-1)');
  t.regex(tooBig, /array is too big; `arr\.size \* arr\.dtype\.itemsize` is larger than the maximum possible size \(shape \(0, 9007199254740991, 9007199254740991\) of float64: /);
  t.true(tooBig.includes(`its dimensions, with each 0 counted as 1, span ${8n * (2n ** 53n - 1n) ** 2n} bytes`), tooBig);
  t.regex(await message('shape a list [2, 4]'), /shape is not valid: \[2, 4\]$/);
  t.regex(await message('shape (2L, 4L) in version 3.0'), /the header is not a Python literal \(a Python 2 long integer \('2L'\), which NumPy reads in \.npy headers of version 1\.0 and 2\.0 only/);
  t.regex(await message('nested 4000 deep'), /brackets nested more than 200 deep \(Python's parser limit\)/);
});

/** A child process loads `file` (with `maxBytes`) and reports the outcome and its peak memory's rise. */
async function loadInChild(file: string, maxBytes?: number): Promise<{ ok: boolean; message?: string; bytes?: number; ms: number; peakRiseBytes: number }> {
  const args = [path.join(__dirname, 'io-bomb-child.js'), file, ...(maxBytes === undefined ? [] : [String(maxBytes)])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

const MiB = 1 << 20;

test('zip bombs are refused within the load\'s bound, in a child process whose peak memory is measured', async (t) => {
  const header = npyHeader('<f4', [16 * MiB]);  // 64 MiB of float32 zeros
  const liarHeader = npyHeader('<f4', [MiB / 4]);
  const zeros = deflatedZeros(header, 64 * MiB);
  const entry = (name: string, over: Partial<RawEntry> = {}): RawEntry => ({ name, data: zeros, deflated: true, size: header.length + 64 * MiB, ...over });
  const write = (name: string, b: Buffer): string => {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, b);
    return file;
  };
  const cases: { name: string; file: string; maxBytes?: number; expect: RegExp | 'loads'; bound: number }[] = [
    // 16 honest entries of 64 MiB each (1 GiB from a 1 MB file): refused from the directory, nothing inflated.
    { name: '16 x 64 MiB, maxBytes 256 MiB', file: write('honest.npz', buildZip(Array.from({ length: 16 }, (_, i) => entry(`a${i}.npy`)))),
      maxBytes: 256 * MiB, expect: new RegExp(`its 16 arrays hold ${16 * (header.length + 64 * MiB)} bytes, more than the load's bound of ${256 * MiB} bytes \\(options\\.maxBytes\\)`), bound: 256 * MiB },
    // The same data under 16 names in the directory, all pointing at one local header (the issue's 262 KB file).
    { name: '16 directory entries on one 64 MiB entry', file: write('overlap.npz', buildZip(Array.from({ length: 16 }, (_, i) => entry(i === 0 ? 'a.npy' : `b${i}.npy`, { localOf: 0 })))),
      expect: /the name in the directory and in its local header \("a\.npy"\) differ/, bound: 64 * MiB },
    // The same, all under one name.
    { name: '16 directory entries named a.npy on one 64 MiB entry', file: write('overlap-same.npz', buildZip(Array.from({ length: 16 }, () => entry('a.npy', { localOf: 0 })))),
      expect: /entries 'a\.npy' and 'a\.npy' overlap/, bound: 64 * MiB },
    // An entry that says 1 MiB and inflates to 64 MiB: read to 1 MiB, then refused.
    { name: 'says 1 MiB, inflates to 64 MiB', file: write('liar.npz', buildZip([{ name: 'a.npy', data: deflatedZeros(liarHeader, 64 * MiB), deflated: true, size: liarHeader.length + MiB }])),
      expect: /entry 'a\.npy' inflates to more than the 1048704 bytes its directory entry says/, bound: MiB },
    // Sizes deflate cannot reach: 16 GiB declared from 64 KiB.
    { name: 'says 16 x 600 MiB from 16 x 1 MiB (default bound)', file: write('default.npz', buildZip(Array.from({ length: 16 }, (_, i) => ({ name: `a${i}.npy`, data: Buffer.alloc(MiB, i), deflated: true, size: 600 * MiB })))),
      expect: /its 16 arrays hold 10066329600 bytes, more than the load's bound of \d+ bytes/, bound: 64 * MiB },
    // A genuine 64 MiB deflated array under a 128 MiB bound loads, its memory within the bound.
    { name: 'a genuine 64 MiB array, maxBytes 128 MiB', file: write('genuine.npz', buildZip([entry('a.npy', { crc: zlibCrcOfZeros(header, 64 * MiB) })])),
      maxBytes: 128 * MiB, expect: 'loads', bound: 128 * MiB },
  ];
  let worst = 0;
  for (const c of cases) {
    const r = await loadInChild(c.file, c.maxBytes);
    t.log(`${c.name}: ${fs.statSync(c.file).size} bytes on disk; ${r.ok ? `loaded ${r.bytes} bytes` : 'refused'} in ${r.ms.toFixed(0)} ms; ` +
      `peak memory rose ${(r.peakRiseBytes / MiB).toFixed(1)} MiB (bound ${c.bound / MiB} MiB)`);
    if (c.expect === 'loads') t.true(r.ok, `${c.name}: ${r.message}`);
    else t.regex(r.message ?? 'loaded', c.expect, c.name);
    // Within the bound, plus 32 MiB of slack for the loader's own buffers and the runtime's heap growth.
    t.true(r.peakRiseBytes <= c.bound + 32 * MiB, `${c.name}: peak memory rose ${r.peakRiseBytes} bytes`);
    if (c.expect !== 'loads') worst = Math.max(worst, r.peakRiseBytes);
  }
  t.log(`worst peak memory rise of a hostile file: ${(worst / MiB).toFixed(1)} MiB`);
});

/** The CRC-32 of `head` then `n` zero bytes. */
function zlibCrcOfZeros(head: Buffer, n: number): number {
  let crc = zlib.crc32(head);
  const chunk = Buffer.alloc(MiB);
  for (let left = n; left > 0; left -= chunk.length) crc = zlib.crc32(chunk.subarray(0, Math.min(left, chunk.length)), crc);
  return crc;
}

test('names without the UTF-8 flag decode as IBM437, byte for byte as Python\'s cp437 codec', (t) => {
  t.is(decodeCp437(Uint8Array.from({ length: 256 }, (_, i) => i)), CASES.cp437);
});

/** A safetensors file of `header` (text, unpadded) and `data`. */
function safetensors(header: string, data = Buffer.alloc(0)): Buffer {
  const h = Buffer.from(header, 'utf8');
  const n = Buffer.alloc(8);
  n.writeBigUInt64LE(BigInt(h.length));
  return Buffer.concat([n, h, data]);
}

test('safetensors headers are checked before JSON.parse: the first byte, the nesting, the number of entries', async (t) => {
  const file = (name: string, b: Buffer): string => {
    const f = path.join(tmp, name);
    fs.writeFileSync(f, b);
    return f;
  };
  const refused = async (f: string, re: RegExp, what: string): Promise<number> => {
    const t0 = performance.now();
    const err = await t.throwsAsync(gx.inspectTensors(f), undefined, what);
    t.regex(err?.message ?? '', new RegExp(`^gx\\.inspectTensors: ${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${re.source}`), what);
    return performance.now() - t0;
  };
  // The issue's file: 100 MB of '[' (here 1 MB of them, then zeros to 100 MB: the first byte decides).
  const brackets = path.join(tmp, 'brackets.safetensors');
  fs.writeFileSync(brackets, safetensors('['.repeat(MiB)));
  const n = Buffer.alloc(8);
  n.writeBigUInt64LE(99_999_992n);
  const fd = fs.openSync(brackets, 'r+');
  fs.writeSync(fd, n, 0, 8, 0);
  fs.ftruncateSync(fd, 100_000_000);
  fs.closeSync(fd);
  const ms = await refused(brackets, /the header must start with '\{' \(a JSON object\), got byte 0x5b \("\["\)/, '100 MB of [');
  t.log(`a 100 MB header of '[' refused in ${ms.toFixed(1)} ms`);
  // The reference reader's own case: InvalidHeaderStart for a leading space.
  await refused(file('space.safetensors', safetensors(' {"a":1}')), /the header must start with '\{'/, 'a leading space');
  // serde_json's recursion limit (128): the reference refuses deeper headers (InvalidHeaderDeserialization).
  await refused(file('deep.safetensors', safetensors(`{"a":${'['.repeat(128)}${']'.repeat(128)}}`)), /the header nests more than 128 deep/, '129 deep');
  await refused(file('deep-ok.safetensors', safetensors(`{"a":${'['.repeat(127)}${']'.repeat(127)}}`)), /tensor 'a' in the header: expected an object/, '128 deep');
  // Brackets inside strings are not nesting.
  await refused(file('string.safetensors', safetensors(`{"${'['.repeat(300)}":5}`)), /tensor '\[+' in the header: expected an object/, 'brackets in a key');
  // More than MAX_ENTRIES entries (the reference has no bound: a million took 10.7 s and 1.9 GB), however spaced.
  const entries = Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => `"t${i}":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`);
  const many = file('many.safetensors', safetensors(`{${entries.join(' ,\n  ')}}`));
  const manyMs = await refused(many, new RegExp(`the header has more than ${MAX_ENTRIES} entries`), 'too many entries');
  t.log(`a header of ${MAX_ENTRIES + 1} entries (${(fs.statSync(many).size / MiB).toFixed(1)} MiB) refused in ${manyMs.toFixed(1)} ms`);
  const some = file('some.safetensors', safetensors(`{${entries.slice(0, 1000).join(',')}}`));
  t.is(Object.keys((await gx.inspectTensors(some)).tensors).length, 1000);
  // Shapes: the reference refuses an element count overflowing 64 bits (ValidationOverflow); we refuse spans past 2^53 - 1
  // bytes, [0, 2^30, 2^30] too (which the reference accepts: its strides would not be exact here).
  const shape = (dims: number[]): Buffer => safetensors(JSON.stringify({ x: { dtype: 'F32', shape: dims, data_offsets: [0, 0] } }));
  await refused(file('overflow.safetensors', shape([2 ** 26, 2 ** 26, 2 ** 26])), /tensor 'x' in the header: shape \[67108864, 67108864, 67108864\] of F32 is too large \(the reference reader: ValidationOverflow\)/, 'overflow');
  await refused(file('zero.safetensors', shape([0, 2 ** 30, 2 ** 30])), /tensor 'x' in the header: shape \[0, 1073741824, 1073741824\] of F32 is too large .*with each 0 counted as 1, span 4611686018427387904 bytes/, '0-size, huge span');
});

test('options.maxBytes bounds what a load reads, checked from the headers; it is checked itself', async (t) => {
  const x = gx.tensor(Float32Array.from({ length: 64 }, (_, i) => Math.sin(i)), { shape: [8, 8] });
  t.teardown(() => x.dispose());
  const npz = path.join(tmp, 'bound.npz'), st = path.join(tmp, 'bound.safetensors');
  await gx.save(npz, { a: x, b: x }, { compressed: true });
  await gx.save(st, { a: x });
  // Each entry: a 128-byte .npy header and 256 bytes of data.
  const err = await t.throwsAsync(gx.loadTensors(npz, { maxBytes: 500 }), { instanceOf: RangeError });
  t.regex(err?.message ?? '', /: its 2 arrays hold 768 bytes, more than the load's bound of 500 bytes \(options\.maxBytes\); pass a larger maxBytes/);
  const r = await gx.loadTensors(npz, { maxBytes: 768 });
  t.deepEqual(Object.keys(r), ['a', 'b']);
  for (const v of Object.values(r)) v.dispose();
  await t.throwsAsync(gx.loadTensor(st, { maxBytes: 100 }), { instanceOf: RangeError, message: /: the file has \d+ bytes, more than the load's bound of 100 bytes/ });
  (await gx.loadTensor(st, { maxBytes: Infinity })).dispose();
  for (const bad of [-1, 1.5, NaN, '10', 2 ** 60]) {
    await t.throwsAsync(gx.loadTensors(npz, { maxBytes: bad as number }), { instanceOf: TypeError, message: /^gx\.loadTensors: options\.maxBytes must be a non-negative integer or Infinity, got / });
  }
});

/** A parsed literal in make_strict.py's tagged form (ints exact, tuples apart from lists). */
function tagged(v: PyValue): unknown {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return { int: String(v) };
  if (typeof v === 'number') return { float: true };
  if (typeof v === 'string') return { str: v };
  if (v instanceof Map) return { dict: [...v].map(([k, x]) => [tagged(k), tagged(x)]) };
  if (v.kind === 'bytes') return { bytes: v.text };
  const items = v.items.map(tagged);
  return { [v.kind]: v.kind === 'set' ? items.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)) : items };
}

test('the .npy header parser reads literals as Python\'s ast.literal_eval does (NumPy\'s reader)', (t) => {
  // Where we refuse what literal_eval reads: forms repr() never writes.
  const stricter = new Set(["'''x'''"]);
  let agree = 0;
  for (const { text, python } of CASES.literals) {
    let ours: unknown;
    try {
      ours = tagged(parsePythonLiteral(text));
    } catch (err) {
      t.true(err instanceof SyntaxError, `${JSON.stringify(text)}: ${String(err)}`);
      ours = { error: true };
    }
    const theirs = typeof python === 'object' && python !== null && 'error' in python ? { error: true } : python;
    if (stricter.has(text)) {
      t.deepEqual(ours, { error: true }, text);
      continue;
    }
    t.deepEqual(ours, theirs, JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text));
    agree++;
  }
  t.log(`${agree} of ${CASES.literals.length} literals read as by ast.literal_eval, ${stricter.size} refused on purpose`);
});
