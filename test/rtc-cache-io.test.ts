// The kernel cache's file and hash calls (lib/rtc/cache-io.ts): the core
// addon's SHA-256, file identity and entry reads give exactly what Node's
// crypto and fs give, so processes with and without the addon share keys and
// entries (NOTE [ First lookup ]).
import test from 'ava';
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { native } from '../lib/core/native';
import { computeKey, diskGet, diskPut } from '../lib/rtc/cache';
import { fileIdentity, isFile, readEntryFiles, sha256Hex } from '../lib/rtc/cache-io';
import { rng } from './helpers';

const root = path.resolve(__dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-cache-io-'));
test.after.always(() => fs.rmSync(dir, { recursive: true, force: true }));

function nodeSha(parts: (string | Uint8Array)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

test('native sha256 matches crypto on strings and bytes of every length up to 300', (t) => {
  const r = rng(7);
  for (let n = 0; n <= 300; n++) {
    const bytes = new Uint8Array(n);
    for (let i = 0; i < n; i++) bytes[i] = Math.floor(r() * 256);
    let text = '';
    for (let i = 0; i < n; i++) text += String.fromCharCode(32 + Math.floor(r() * 95));
    t.is(native.sha256([bytes]), nodeSha([bytes]), `bytes, length ${n}`);
    t.is(native.sha256([text]), nodeSha([text]), `text, length ${n}`);
  }
});

test('native sha256 hashes parts in order, strings as UTF-8 (lone surrogates as U+FFFD, as crypto does)', (t) => {
  const cases: (string | Uint8Array)[][] = [
    [],
    [''],
    ['abc'], // FIPS 180-2 example
    ['ab', '', 'c'],
    ['kernel ü ∑ 漢字 😀', '\0', 'extern "C" __global__ void k() {}'],
    ['lone \ud800 high', 'lone \udc00 low', 'pair \ud83d\ude00'],
    [new Uint8Array([0, 255, 1]), 'x', new Uint8Array(0)],
  ];
  for (const parts of cases) t.is(native.sha256(parts), nodeSha(parts), JSON.stringify(parts.map(String)));
  t.is(native.sha256(['abc']), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.is(native.sha256(['a'.repeat(1_000_000)]), nodeSha(['a'.repeat(1_000_000)]), 'one million bytes');
  const view = new Uint8Array([9, 8, 7, 6, 5]).subarray(1, 4);
  t.is(native.sha256([view]), nodeSha([Uint8Array.from([8, 7, 6])]), 'a view hashes its own bytes only');
  t.is(sha256Hex(['a', 'b']), nodeSha(['ab']));
});

test('the portable SHA-256 (GPUEXT_SHA256_PORTABLE=1, for a Node without OpenSSL\'s SHA256) gives the same digests', (t) => {
  const script = `
    const { native } = require(${JSON.stringify(path.join(root, 'dist/lib/core/native.js'))});
    const out = [];
    for (let n = 0; n <= 300; n += 7) out.push(native.sha256([new Uint8Array(n).fill(n & 255), 'ü\\ud800' + 'x'.repeat(n)]));
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, GPUEXT_SHA256_PORTABLE: '1' } });
  t.is(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim()) as string[];
  let k = 0;
  for (let n = 0; n <= 300; n += 7) t.is(got[k++], nodeSha([new Uint8Array(n).fill(n & 255), 'ü\ud800' + 'x'.repeat(n)]), `length ${n}`);
});

test('native sha256 refuses what is neither a string nor bytes', (t) => {
  const e = t.throws(() => native.sha256(['ok', 5 as unknown as string]));
  t.regex(e?.message ?? '', /sha256: parts\[1\] must be a string or a typed array/);
  t.throws(() => native.sha256('abc' as unknown as string[]), { message: /'parts' must be an array/ });
});

test('fileIdentity names a file as Node would (name, device and inode, size, mtime); links followed; directories and missing files have none', (t) => {
  const file = path.join(dir, 'lib.so.1');
  fs.writeFileSync(file, 'x'.repeat(123));
  const link = path.join(dir, 'lib.so');
  fs.symlinkSync(file, link);
  const st = fs.statSync(file);
  const id = `${st.dev}:${st.ino} ${st.size} ${st.mtimeMs}`;
  t.is(fileIdentity(file), `${file} ${id}`);
  t.is(fileIdentity(link), `${link} ${id}`);
  t.true(isFile(link));
  t.is(fileIdentity(dir), undefined);
  t.false(isFile(dir));
  t.is(fileIdentity(path.join(dir, 'missing')), undefined);
  t.false(isFile(path.join(dir, 'missing')));
});

test('readEntryFiles reads both files, hashes the image and touches the .json (the entry\'s last use); a missing half is a miss', (t) => {
  const key = 'ab'.repeat(32);
  const base = path.join(dir, key);
  const image = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 255);
  fs.writeFileSync(`${base}.json`, '{"format":1}\n');
  fs.writeFileSync(`${base}.bin`, image);
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(`${base}.json`, old, old);
  fs.utimesSync(`${base}.bin`, old, old);
  const e = readEntryFiles(dir, key);
  t.truthy(e);
  t.is(e?.meta, '{"format":1}\n');
  t.deepEqual(Array.from(e?.image ?? []), Array.from(image));
  t.is(e?.imageSha256, nodeSha([image]));
  t.true(fs.statSync(`${base}.json`).mtimeMs > old.getTime() + 1000, '.json touched');
  fs.rmSync(`${base}.bin`);
  t.is(readEntryFiles(dir, key), undefined);
  t.throws(() => native.readCacheEntry(dir, '../etc'), { message: /is not a cache key/ });
});

test('a process using Node crypto and fs (GPUEXT_CACHE_IO=node) computes the same keys and reads the same entries', (t) => {
  const parts = { source: 'extern "C" __global__ void k() {} // ü \ud800', options: ['-DN=4'], nameExpressions: [], arch: 'sm_90',
    backend: 'nvrtc' as const, compilerVersion: 'nvrtc file /x 1 2', headers: ['"a.h" 00'] };
  const key = computeKey(parts);
  const entryDir = path.join(dir, 'kernels');
  diskPut({ dir: entryDir, maxBytes: 1 << 30 }, key, { image: Uint8Array.from([1, 2, 3, 4]), ptx: false, loweredNames: {}, log: 'w', backend: 'nvrtc' });
  const script = `
    const cache = require(${JSON.stringify(path.join(root, 'dist/lib/rtc/cache.js'))});
    const key = cache.computeKey(${JSON.stringify(parts)});
    const e = cache.diskGet(${JSON.stringify(entryDir)}, key);
    console.log(JSON.stringify({ key, image: e ? Array.from(e.image) : null }));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_IO: 'node' } });
  t.is(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout.trim()) as { key: string; image: number[] | null };
  t.is(o.key, key);
  t.deepEqual(o.image, [1, 2, 3, 4]);
  t.deepEqual(Array.from(diskGet(entryDir, key)?.image ?? []), [1, 2, 3, 4]);
});
