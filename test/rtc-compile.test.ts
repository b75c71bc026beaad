// The compile path of run-time kernels and its cache (lib/rtc/compiler.ts,
// cache.ts) and compile errors (errors.ts); kernel signatures are
// rtc-signature.test.ts's.
// Compiling needs no GPU: it goes through NVRTC where the core loads it (the
// GPU machine) and through nvcc otherwise (CI), and these tests check
// whichever is there. Every test uses its own temporary cache directory and
// its own source text (the memory cache is per process, keyed by content).
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { computeKey, diskGet, diskPut, evict, headerFingerprints, parseIncludes, SIZE_FILE, type CacheEntry } from '../lib/rtc/cache';
import { ledgerCounts, scan } from '../lib/rtc/cache-evict';
import {
  backendInfo, cacheStats, clearKernelCache, compile, CompileError, cudaIncludeDir, kernelCacheKey, normalizeOptions, nvccArgsFor,
  type CompileOptions, type CompileRequest, type RtcNative,
} from '../lib/rtc/compiler';
import { parseCompilerLog } from '../lib/rtc/errors';

const root = path.resolve(__dirname, '../..');
const compilerJs = path.join(root, 'dist/lib/rtc/compiler.js');
const REQUIRE_CUDA = process.env.GPUEXT_REQUIRE_CUDA === '1';

const tmpdirs: string[] = [];
test.after.always(() => {
  for (const d of tmpdirs) fs.rmSync(d, { recursive: true, force: true });
});

function tmpdir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `gpuext-rtc-test-${prefix}-`));
  tmpdirs.push(d);
  return d;
}

// Nothing else in this process should touch the user's cache.
process.env.GPUEXT_CACHE_DIR = tmpdir('default');

const INFO = backendInfo();
/** A test that needs a compiler (NVRTC or nvcc); skipped when there is none, failed under GPUEXT_REQUIRE_CUDA=1. */
function compilerTest(title: string, body: (t: ExecutionContext) => void | Promise<void>): void {
  if (INFO.backend !== null) {
    test(title, body);
  } else if (REQUIRE_CUDA) {
    test(title, (t) => t.fail(`GPUEXT_REQUIRE_CUDA=1 but no compiler: ${INFO.nvrtcError ?? ''}; ${INFO.nvccMissing ?? ''}`));
  } else {
    test.skip(`${title} (skipped: neither NVRTC nor nvcc is available)`, () => undefined);
  }
}

function kernel(tag: string, body = 'x[i] = x[i] * 2.0f;'): string {
  return `// ${tag}\nextern "C" __global__ void f(float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) ${body}\n}\n`;
}

function isElf(image: Uint8Array): boolean {
  return image[0] === 0x7f && image[1] === 0x45 && image[2] === 0x4c && image[3] === 0x46;
}

/** Runs a node script in a child process; resolves with its stdout parsed as JSON. */
function child(script: string, env: Record<string, string>): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['-e', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    p.on('close', (status) => resolve({ status, out, err }));
  });
}

/** A script that compiles `req` with dist/lib/rtc/compiler.js and prints { cached, key, backend, bytes }. */
function compileScript(req: CompileRequest, opts: CompileOptions = {}): string {
  return `const c = require(${JSON.stringify(compilerJs)});
const r = c.compile(${JSON.stringify(req)}, ${JSON.stringify(opts)});
process.stdout.write(JSON.stringify({ cached: r.cached, key: r.key, backend: r.backend, bytes: r.image.length }));`;
}

function parseChild(t: ExecutionContext, r: { status: number | null; out: string; err: string }): { cached: string | false; key: string; backend: string; bytes: number } {
  t.is(r.status, 0, r.err);
  const v: unknown = JSON.parse(r.out);
  if (typeof v !== 'object' || v === null || !('key' in v) || !('cached' in v) || !('backend' in v) || !('bytes' in v)) {
    throw new Error(`unexpected child output: ${r.out}`);
  }
  const cached = v.cached === 'memory' || v.cached === 'disk' ? v.cached : false;
  return { cached, key: String(v.key), backend: String(v.backend), bytes: Number(v.bytes) };
}

// ---------------------------------------------------------------------------
// Compiling and the cache

compilerTest('compile uses NVRTC when the core has it, else nvcc; the image is a cubin; the second compile hits memory', (t) => {
  const cacheDir = tmpdir('basic');
  const req = { source: kernel('basic'), name: 'kernel.cu', arch: 'sm_90' };
  const r = compile(req, { cacheDir });
  t.is(r.backend, INFO.nvrtc !== null ? 'nvrtc' : 'nvcc');
  t.is(r.cached, false);
  t.false(r.ptx);
  t.true(r.image.byteLength > 0);
  t.true(isElf(r.image), 'a cubin is an ELF file');
  t.regex(r.key, /^[0-9a-f]{64}$/);
  const again = compile(req, { cacheDir });
  t.is(again.cached, 'memory');
  t.is(again.key, r.key);
  t.deepEqual(Buffer.from(again.image), Buffer.from(r.image));
  const disk = compile(req, { cacheDir, memory: false });
  t.is(disk.cached, 'disk');
  t.deepEqual(Buffer.from(disk.image), Buffer.from(r.image));
  t.is(kernelCacheKey(req, { cacheDir }), r.key);
  const stats = cacheStats(path.join(cacheDir, 'kernels'));
  t.is(stats.entries, 1);
  t.true(stats.bytes >= r.image.byteLength);
});

compilerTest('compute_XY compiles to PTX text ending in a NUL byte', (t) => {
  const r = compile({ source: kernel('ptx'), name: 'kernel.cu', arch: 'compute_90' }, { cacheDir: tmpdir('ptx') });
  t.true(r.ptx);
  t.is(r.image[r.image.length - 1], 0);
  const text = Buffer.from(r.image.subarray(0, r.image.length - 1)).toString('utf8');
  t.regex(text, /\.entry\s+f\s*\(/);
  t.regex(text, /\.target\s+sm_90/);
});

compilerTest('a new process hits the disk cache, with the same key (no random part in keys)', async (t) => {
  const cacheDir = tmpdir('xproc');
  const req = { source: kernel('xproc'), name: 'kernel.cu', arch: 'sm_90', options: ['-DSCALE=2'] };
  const env = { GPUEXT_CACHE_DIR: cacheDir };
  const first = parseChild(t, await child(compileScript(req), env));
  const second = parseChild(t, await child(compileScript(req), env));
  t.is(first.cached, false);
  t.is(second.cached, 'disk');
  t.is(first.key, second.key);
  t.is(second.bytes, first.bytes);
  // And this process computes the same key, and hits the entry the children wrote.
  t.is(kernelCacheKey(req, { cacheDir }), first.key);
  const here = compile(req, { cacheDir });
  t.is(here.cached, 'disk');
  t.is(here.key, first.key);
});

compilerTest('processes compiling the same kernel at once all succeed and leave one whole entry', async (t) => {
  const cacheDir = tmpdir('race');
  const req = { source: kernel('race'), name: 'kernel.cu', arch: 'sm_90' };
  const runs = await Promise.all([0, 1, 2, 3].map(() => child(compileScript(req), { GPUEXT_CACHE_DIR: cacheDir })));
  const keys = new Set(runs.map((r) => parseChild(t, r).key));
  t.is(keys.size, 1);
  const dir = path.join(cacheDir, 'kernels');
  t.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('.tmp-')), [], 'no temporary files left');
  t.is(cacheStats(dir).entries, 1);
  t.truthy(diskGet(dir, [...keys][0]), 'the entry checks out');
});

compilerTest('changing an included header (found through -I, also nested) changes the key', (t) => {
  const dir = tmpdir('hdr');
  const inc = path.join(dir, 'inc');
  fs.mkdirSync(inc);
  fs.writeFileSync(path.join(inc, 'scale.h'), '#pragma once\n#include "deep.h"\n#define SCALE 2.0f\n');
  fs.writeFileSync(path.join(inc, 'deep.h'), '#pragma once\n#define OFFSET 1.0f\n');
  const source = `#include "scale.h"\n${kernel('hdr', 'x[i] = x[i] * SCALE + OFFSET;')}`;
  const req = { source, name: 'kernel.cu', arch: 'sm_90', options: ['-I', inc] };
  const cacheDir = tmpdir('hdr-cache');
  const k1 = kernelCacheKey(req, { cacheDir });
  t.is(kernelCacheKey(req, { cacheDir }), k1, 'stable');
  fs.writeFileSync(path.join(inc, 'scale.h'), '#pragma once\n#include "deep.h"\n#define SCALE 3.0f\n');
  const k2 = kernelCacheKey(req, { cacheDir });
  t.not(k2, k1);
  fs.writeFileSync(path.join(inc, 'deep.h'), '#pragma once\n#define OFFSET 5.0f\n');
  const k3 = kernelCacheKey(req, { cacheDir });
  t.not(k3, k2, 'a header included by a header counts too');
  // The header is really found by the compiler through the same -I.
  const r = compile(req, { cacheDir });
  t.is(r.key, k3);
  t.is(r.cached, false);
  fs.writeFileSync(path.join(inc, 'scale.h'), '#pragma once\n#include "deep.h"\n#define SCALE 4.0f\n');
  t.is(compile(req, { cacheDir }).cached, false, 'a changed header recompiles');
  // A pre-included header (-include) counts the same way.
  fs.writeFileSync(path.join(inc, 'pre.h'), '#define PRE 1.0f\n');
  const pre = { source: kernel('pre', 'x[i] = PRE;'), name: 'kernel.cu', arch: 'sm_90', options: ['-I', inc, '-include', 'pre.h'] };
  const p1 = compile(pre, { cacheDir });
  fs.writeFileSync(path.join(inc, 'pre.h'), '#define PRE 2.0f\n');
  t.not(kernelCacheKey(pre, { cacheDir }), p1.key);
});

compilerTest('eviction keeps the disk cache under GPUEXT_KERNEL_CACHE_MAX_BYTES', async (t) => {
  const cacheDir = tmpdir('evict');
  const dir = path.join(cacheDir, 'kernels');
  const one = compile({ source: kernel('evict-probe'), name: 'kernel.cu', arch: 'sm_90' }, { cacheDir: tmpdir('evict-probe') });
  const entryBytes = one.image.byteLength + 600;
  const max = Math.floor(entryBytes * 2.5);
  // A child with the bound in its environment compiles five kernels.
  const script = `const c = require(${JSON.stringify(compilerJs)});
const keys = [];
for (let i = 0; i < 5; i++) keys.push(c.compile({ source: ${JSON.stringify(kernel('evict'))} + '// ' + i + '\\n', name: 'kernel.cu', arch: 'sm_90' }).key);
process.stdout.write(JSON.stringify(keys));`;
  const r = await child(script, { GPUEXT_CACHE_DIR: cacheDir, GPUEXT_KERNEL_CACHE_MAX_BYTES: String(max) });
  t.is(r.status, 0, r.err);
  const keys: unknown = JSON.parse(r.out);
  if (!Array.isArray(keys)) throw new Error(r.out);
  const stats = cacheStats(dir);
  t.true(stats.bytes <= max, `${stats.bytes} bytes on disk, bound ${max}`);
  t.true(stats.entries >= 1 && stats.entries < 5, `${stats.entries} entries`);
  t.true(fs.existsSync(path.join(dir, `${String(keys[4])}.json`)), 'the newest entry stays');
  t.false(fs.existsSync(path.join(dir, `${String(keys[0])}.json`)), 'the oldest went');
  // The same through the option, in this process.
  const opt = tmpdir('evict-opt');
  for (let i = 0; i < 4; i++) compile({ source: `${kernel('evict-opt')}// ${i}\n`, name: 'kernel.cu', arch: 'sm_90' }, { cacheDir: opt, maxBytes: max });
  t.true(cacheStats(path.join(opt, 'kernels')).bytes <= max);
});

test('the kernel directory keeps its size in a ledger: writes add to it, and scan only past the bound, without it, or a day on (NOTE [ Size ledger ])', (t) => {
  const dir = path.join(tmpdir('ledger'), 'kernels');
  const entry = (n: number): CacheEntry => ({ image: new Uint8Array(1000).fill(n), ptx: false, loweredNames: {}, log: '', backend: 'nvcc' });
  const keys = Array.from({ length: 6 }, (_, i) => computeKey({ source: `l${i}`, options: [], nameExpressions: [], arch: 'sm_90', backend: 'nvcc', compilerVersion: 'x', headers: [] }));
  const ledgerFile = path.join(dir, SIZE_FILE);
  const ledger = (): { bytes: number; countedAt: number } => JSON.parse(fs.readFileSync(ledgerFile, 'utf8')) as { bytes: number; countedAt: number };
  const scansOf = (f: () => void): number => {
    const before = ledgerCounts.scans;
    f();
    return ledgerCounts.scans - before;
  };
  const big = { dir, maxBytes: 1 << 30 };
  t.is(scansOf(() => diskPut(big, keys[0], entry(0))), 1, 'the first write finds no ledger: it scans');
  t.is(scansOf(() => { diskPut(big, keys[1], entry(1)); diskPut(big, keys[2], entry(2)); }), 0, 'later writes add to the ledger');
  t.is(ledger().bytes, cacheStats(dir).bytes, 'the ledger holds what a scan counts');
  // Past the bound: the write scans and evicts, and the ledger starts again from the scan.
  const one = cacheStats(dir).bytes / 3;
  t.is(scansOf(() => diskPut({ dir, maxBytes: Math.floor(one * 3.5) }, keys[3], entry(3))), 1);
  t.true(cacheStats(dir).entries < 4, 'evicted down to the bound');
  t.is(ledger().bytes, cacheStats(dir).bytes);
  // A ledger counted more than a day ago is counted again; so is one that does not parse.
  fs.writeFileSync(ledgerFile, JSON.stringify({ bytes: ledger().bytes, countedAt: Date.now() - 25 * 3600 * 1000 }));
  t.is(scansOf(() => diskPut(big, keys[4], entry(4))), 1, 'a day-old ledger');
  t.true(Date.now() - ledger().countedAt < 60_000);
  fs.writeFileSync(ledgerFile, '{"bytes": "many"');
  t.is(scansOf(() => diskPut(big, keys[5], entry(5))), 1, 'an unreadable ledger');
  t.is(ledger().bytes, cacheStats(dir).bytes);
  // The ledger is not an entry: never counted, listed or evicted as one; clearing the cache removes it.
  t.is(scan(dir).entries.size, cacheStats(dir).entries);
  clearKernelCache(dir);
  t.false(fs.existsSync(ledgerFile));
  t.is(scansOf(() => diskPut(big, keys[0], entry(0))), 1, 'after a clear the next write scans');
});

test('eviction removes the least recently used entries first, down to 90% of the bound; a hit touches its entry', (t) => {
  const dir = path.join(tmpdir('lru'), 'kernels');
  const big = { dir, maxBytes: 1 << 30 };
  const entry = (n: number): CacheEntry => ({ image: new Uint8Array(1000).fill(n), ptx: false, loweredNames: {}, log: '', backend: 'nvcc' });
  const keys = ['a', 'b', 'c', 'd'].map((s) => computeKey({ source: s, options: [], nameExpressions: [], arch: 'sm_90', backend: 'nvcc', compilerVersion: 'x', headers: [] }));
  keys.slice(0, 3).forEach((k, i) => diskPut(big, k, entry(i)));
  const now = Date.now() / 1000;
  // a is oldest, then b, then c.
  keys.slice(0, 3).forEach((k, i) => {
    for (const ext of ['.bin', '.json']) fs.utimesSync(path.join(dir, k + ext), now - 300 + i * 100, now - 300 + i * 100);
  });
  // A hit on a makes it the most recent.
  t.truthy(diskGet(dir, keys[0]));
  t.true(fs.statSync(path.join(dir, `${keys[0]}.json`)).mtimeMs / 1000 > now - 10, 'the hit touched it');
  diskPut(big, keys[3], entry(3));
  const sizeOf = (k: string): number => fs.statSync(path.join(dir, `${k}.bin`)).size + fs.statSync(path.join(dir, `${k}.json`)).size;
  const total = keys.reduce((s, k) => s + sizeOf(k), 0);
  // A bound just under the total: removing b (the least recently used) brings it under 90%.
  const maxBytes = Math.ceil((total - sizeOf(keys[1])) / 0.9) + 2;
  t.true(total > maxBytes);
  const res = evict({ dir, maxBytes }, keys[3]);
  t.is(res.removedEntries, 1);
  t.false(fs.existsSync(path.join(dir, `${keys[1]}.json`)), 'b went');
  for (const k of [keys[0], keys[2], keys[3]]) t.truthy(diskGet(dir, k));
  t.true(res.bytes <= maxBytes * 0.9);
  // Under the bound: nothing goes.
  t.is(evict({ dir, maxBytes: 1 << 30 }).removedEntries, 0);
  clearKernelCache(dir);
  t.is(cacheStats(dir).entries, 0);
  t.is(cacheStats(dir).bytes, 0);
});

compilerTest('a corrupt or partial disk entry is a miss and gets rewritten', (t) => {
  const cacheDir = tmpdir('corrupt');
  const dir = path.join(cacheDir, 'kernels');
  const req = { source: kernel('corrupt'), name: 'kernel.cu', arch: 'sm_90' };
  const r = compile(req, { cacheDir });
  const bin = path.join(dir, `${r.key}.bin`);
  const json = path.join(dir, `${r.key}.json`);
  fs.writeFileSync(bin, Buffer.from(r.image).subarray(0, 100));
  t.is(diskGet(dir, r.key), undefined, 'a truncated image');
  const again = compile(req, { cacheDir, memory: false });
  t.is(again.cached, false);
  t.truthy(diskGet(dir, r.key), 'rewritten whole');
  fs.writeFileSync(json, '{"format":1,"key":');
  t.is(compile(req, { cacheDir, memory: false }).cached, false, 'a partial .json');
  fs.rmSync(bin);
  t.is(compile(req, { cacheDir, memory: false }).cached, false, 'a missing .bin');
  t.is(compile(req, { cacheDir, memory: false }).cached, 'disk');
});

compilerTest('name expressions lower templates to their symbols (cubin and PTX)', (t) => {
  const source = '// names\ntemplate<typename T> __global__ void f(T* x, int n) { x[threadIdx.x] = n; }\n' +
    'namespace ns { template<int N> __global__ void g(float* x) { x[0] = N; } }\n';
  const nameExpressions = ['f<float>', 'f<double>', 'ns::g<3>'];
  const want = { 'f<float>': '_Z1fIfEvPT_i', 'f<double>': '_Z1fIdEvPT_i', 'ns::g<3>': '_ZN2ns1gILi3EEEvPf' };
  const cacheDir = tmpdir('names');
  const cubin = compile({ source, name: 'names.cu', arch: 'sm_90', nameExpressions }, { cacheDir });
  t.deepEqual(cubin.loweredNames, want);
  const ptx = compile({ source, name: 'names.cu', arch: 'compute_90', nameExpressions }, { cacheDir });
  t.deepEqual(ptx.loweredNames, want);
  t.deepEqual(compile({ source, name: 'names.cu', arch: 'sm_90', nameExpressions }, { cacheDir, memory: false }).loweredNames, want, 'cached with the image');
  // Also through nvcc where NVRTC is the default (the two must agree).
  if (INFO.backend === 'nvrtc' && INFO.nvcc) {
    t.deepEqual(compile({ source, name: 'names.cu', arch: 'sm_90', nameExpressions }, { cacheDir, backend: 'nvcc' }).loweredNames, want);
  }
});

compilerTest('a syntax error throws CompileError with the numbered source lines around it', (t) => {
  const source = 'extern "C" __global__ void f(float* x) {\n  int i = threadIdx.x;\n  x[i] = y;\n}\n';
  const err = t.throws(() => compile({ source, name: 'kernel.cu', arch: 'sm_90' }, { cacheDir: tmpdir('syntax') }));
  if (!(err instanceof CompileError)) {
    t.fail(`expected CompileError, got ${String(err)}`);
    return;
  }
  t.is(err.name, 'CompileError');
  t.is(err.programName, 'kernel.cu');
  t.is(err.source, source);
  t.regex(err.log, /identifier "y" is undefined/);
  t.deepEqual(err.errors.map((e) => [e.line, e.file]), [[3, 'kernel.cu']]);
  t.true(err.message.startsWith("gx.RawKernel: compiling 'kernel.cu' failed:\nkernel.cu(3): error: identifier \"y\" is undefined\n"), err.message);
  t.true(err.message.includes('    1 | extern "C" __global__ void f(float* x) {\n    2 |   int i = threadIdx.x;\n  > 3 |   x[i] = y;\n    4 | }'), err.message);
  t.false(/gpuext-rtc-/.test(err.message + err.log), 'no temporary paths');
  // A missing header names it; a bad name expression says which.
  const missing = t.throws(() => compile({ source: '#include "nothere.h"\n__global__ void f() {}\n', name: 'k2.cu', arch: 'sm_90' }, { cacheDir: tmpdir('syntax2') }));
  t.true(missing instanceof CompileError);
  t.regex(missing?.message ?? '', /nothere\.h/);
  t.regex(missing?.message ?? '', /> 1 \| #include "nothere.h"/);
  const badName = t.throws(() => compile({ source: 'template<typename T> __global__ void f(T* x) {}\n', name: 'k3.cu', arch: 'sm_90', nameExpressions: ['f<flaot>'] }, { cacheDir: tmpdir('syntax3') }));
  t.true(badName instanceof CompileError || /f<flaot>/.test(badName?.message ?? ''), badName?.message);
  if (INFO.backend === 'nvcc') t.regex(badName?.message ?? '', /in name expression 'f<flaot>'/);
});

compilerTest('bad requests are TypeErrors; a missing forced nvcc says how to get one', async (t) => {
  const cacheDir = tmpdir('bad');
  const src = kernel('bad');
  t.throws(() => compile({ source: src, name: 'k.cu', arch: 'sm90' }, { cacheDir }), { instanceOf: TypeError, message: /arch 'sm90' is not an arch like 'sm_90'/ });
  t.throws(() => compile({ source: src, name: 'k.cu', arch: 'sm_90', options: ['-arch=sm_80'] }, { cacheDir }), { instanceOf: TypeError, message: /give the arch as the arch option/ });
  t.throws(() => compile({ source: src, name: 'k.cu', arch: 'sm_90', nameExpressions: ['f;'] }, { cacheDir }), { instanceOf: TypeError, message: /name expression 0/ });
  t.throws(() => compile({ source: src, name: '', arch: 'sm_90' }, { cacheDir }), { instanceOf: TypeError });
  const r = await child(`const c = require(${JSON.stringify(compilerJs)});
try { c.compile({ source: 'x', name: 'k.cu', arch: 'sm_90' }, { backend: 'nvcc' }); } catch (e) { process.stdout.write(e.message); }`,
  { GPUEXT_NVCC: '/nonexistent/nvcc', GPUEXT_CACHE_DIR: cacheDir });
  t.regex(r.out, /nvcc was asked for but nvcc not found at \/nonexistent\/nvcc.*Install the CUDA toolkit/);
});

// ---------------------------------------------------------------------------
// Without a compiler: NVRTC injected, options, logs, messages

function fakeNvrtc(reply: (source: string, name: string, options: string[]) => { ok: boolean; log: string }): { native: RtcNative; calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    native: {
      rtcInfo: () => ({ nvrtc: 'fake-12.8', driver: false }),
      nvrtcCompile(source, name, options, nameExpressions, arch) {
        calls.push([name, arch, ...options]);
        const r = reply(source, name, options);
        const lowered: Record<string, string> = {};
        for (const e of nameExpressions) lowered[e] = `_lowered_${e.length}`;
        return { ...r, image: r.ok ? new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 2, 3]) : undefined, ptx: arch.startsWith('compute_'), loweredNames: lowered };
      },
    },
  };
}

test('with NVRTC present it is the backend: options go through normalized, results are cached, its version is in the key', (t) => {
  const { native, calls } = fakeNvrtc(() => ({ ok: true, log: 'a warning' }));
  const cacheDir = tmpdir('fake');
  const req = { source: kernel('fake'), name: 'kernel.cu', arch: 'sm_90', options: ['-I', '/x/inc', '-D N=4', '--use_fast_math'], nameExpressions: ['f'] };
  const r = compile(req, { native, cacheDir });
  t.is(r.backend, 'nvrtc');
  t.is(r.cached, false);
  t.is(r.log, 'a warning');
  t.deepEqual(r.loweredNames, { f: '_lowered_1' });
  // The toolkit's include directory goes last (NVRTC searches none by itself).
  const cudaInc = cudaIncludeDir();
  t.deepEqual(calls, [['kernel.cu', 'sm_90', '-I/x/inc', '-DN=4', '--use_fast_math', ...(cudaInc !== null ? [`-I${cudaInc}`] : [])]]);
  t.is(compile(req, { native, cacheDir }).cached, 'memory');
  t.is(compile(req, { native, cacheDir, memory: false }).cached, 'disk');
  t.is(calls.length, 1);
  const other = fakeNvrtc(() => ({ ok: true, log: '' }));
  other.native.rtcInfo = () => ({ nvrtc: 'fake-13.0', driver: false });
  t.not(kernelCacheKey(req, { native: other.native, cacheDir }), r.key, 'another NVRTC version, another key');
  t.not(kernelCacheKey({ ...req, arch: 'sm_80' }, { native, cacheDir }), r.key);
  t.not(kernelCacheKey({ ...req, options: ['--use_fast_math', '-I', '/x/inc', '-D N=4'] }, { native, cacheDir }), r.key, 'option order counts');
  t.not(kernelCacheKey({ ...req, nameExpressions: ['g'] }, { native, cacheDir }), r.key);
  t.not(kernelCacheKey({ ...req, source: `${req.source} ` }, { native, cacheDir }), r.key);
  t.throws(() => compile(req, { native: null, backend: 'nvrtc', cacheDir }), { message: /NVRTC was asked for but cannot be used/ });
});

test('NVRTC named by its file: a disk hit loads nothing, another file is another key, a compile checks the file it loaded', (t) => {
  const cacheDir = tmpdir('nvrtc-file');
  const lib = path.join(cacheDir, 'libnvrtc.so.13.0.88');
  fs.writeFileSync(lib, 'not really a library');
  const withFile = (loadedFrom: string): { native: RtcNative; infoCalls: () => number; calls: string[][] } => {
    const f = fakeNvrtc(() => ({ ok: true, log: '' }));
    let infoCalls = 0;
    f.native.nvrtcCandidates = () => [path.join(cacheDir, 'missing.so'), lib, 'libnvrtc.so.13'];
    f.native.rtcInfo = () => {
      infoCalls++;
      return { nvrtc: '13.0', nvrtcPath: loadedFrom, driver: true };
    };
    return { native: f.native, infoCalls: () => infoCalls, calls: f.calls };
  };
  const req = { source: kernel('nvrtc-file'), name: 'k.cu', arch: 'sm_90' };
  const first = withFile(lib);
  const r = compile(req, { native: first.native, cacheDir });
  t.is(r.cached, false);
  t.is(first.calls.length, 1);
  // A new process (a fresh binding): the disk hit asks NVRTC nothing.
  const second = withFile(lib);
  const hit = compile(req, { native: second.native, cacheDir, memory: false });
  t.is(hit.cached, 'disk');
  t.is(hit.key, r.key);
  t.is(second.infoCalls(), 0, 'NVRTC was not loaded for a hit');
  // The file changes (another NVRTC installed there): another key.
  fs.writeFileSync(lib, 'another NVRTC, another size');
  t.not(kernelCacheKey(req, { native: withFile(lib).native, cacheDir }), r.key);
  // NVRTC loaded from somewhere else than the file the key names: the result is not stored on disk.
  const stray = withFile('libnvrtc.so.13');
  const req2 = { ...req, source: kernel('nvrtc-stray') };
  t.is(compile(req2, { native: stray.native, cacheDir }).cached, false);
  t.is(compile(req2, { native: withFile(lib).native, cacheDir, memory: false }).cached, false, 'nothing was stored under the file key');
});

test('an NVRTC compile error is a CompileError with numbered lines (NVRTC log format)', (t) => {
  const log = 'kernel.cu(3): error: identifier "y" is undefined\n    x[i] = y;\n           ^\n\n1 error detected in the compilation of "kernel.cu".\n';
  const { native } = fakeNvrtc(() => ({ ok: false, log }));
  const source = 'extern "C" __global__ void f(float* x) {\n  int i = threadIdx.x;\n  x[i] = y;\n}\n';
  const err = t.throws(() => compile({ source, name: 'kernel.cu', arch: 'sm_90' }, { native, cacheDir: tmpdir('fake-err') }));
  if (!(err instanceof CompileError)) {
    t.fail(String(err));
    return;
  }
  t.is(err.message, [
    "gx.RawKernel: compiling 'kernel.cu' failed:",
    'kernel.cu(3): error: identifier "y" is undefined',
    '    1 | extern "C" __global__ void f(float* x) {',
    '    2 |   int i = threadIdx.x;',
    '  > 3 |   x[i] = y;',
    '    4 | }',
  ].join('\n'));
  t.is(err.log, log);
  t.is(err.backend, 'nvrtc');
  t.deepEqual(err.errors, [{ line: 3, column: 10, message: 'identifier "y" is undefined', file: 'kernel.cu' }]);
});

test('NVRTC name-expression errors (reported in __nv_name_map) say which name expression', (t) => {
  const log = '__nv_name_map(2): error: identifier "flaot" is undefined\n  #pragma nv_mangled_name f<flaot>\n                            ^\n\n' +
    '2 errors detected in the compilation of "names.cu".\n';
  const err = new CompileError({ log, source: 'template<typename T> __global__ void f(T* x) {}\n', programName: 'names.cu' });
  t.is(err.message, "gx.RawKernel: compiling 'names.cu' failed:\n__nv_name_map(2): error: identifier \"flaot\" is undefined\n    (in name expression 'f<flaot>')");
});

compilerTest('CUDA headers (<cuda_fp16.h>) are found by either backend', (t) => {
  const source = '// fp16\n#include <cuda_fp16.h>\nextern "C" __global__ void f(__half* x) { x[threadIdx.x] = __float2half(1.0f); }\n';
  const cacheDir = tmpdir('fp16');
  t.true(compile({ source, name: 'fp16.cu', arch: 'sm_90' }, { cacheDir }).image.byteLength > 0);
  if (INFO.backend === 'nvrtc' && INFO.nvcc) t.true(compile({ source, name: 'fp16.cu', arch: 'sm_90' }, { cacheDir, backend: 'nvcc' }).image.byteLength > 0);
});

test('compile-error messages: at most 5 errors shown, context clipped at the ends, no parse shows the log', (t) => {
  const source = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n');
  const log = [1, 2, 4, 6, 8, 10, 12].map((n) => `prog.cu(${n}): error #20-D: bad ${n}`).join('\n') + '\nprog.cu(9): warning #177-D: unused\n';
  const err = new CompileError({ log, source, programName: 'prog.cu', what: 'gx.ElementwiseKernel' });
  t.is(err.errors.length, 7, 'warnings are not errors');
  t.true(err.message.startsWith("gx.ElementwiseKernel: compiling 'prog.cu' failed:\nprog.cu(1): error #20-D: bad 1\n  > 1 | line 1\n    2 | line 2\n    3 | line 3\n"), err.message);
  t.regex(err.message, /prog\.cu\(8\): error #20-D: bad 8\n {5}6 \| line 6\n {5}7 \| line 7\n  > {2}8 \| line 8\n {5}9 \| line 9\n    10 \| line 10\n/);
  t.false(err.message.includes('bad 10'));
  t.regex(err.message, /\(2 more errors; the full compiler output is in err\.log\)$/);
  const opaque = new CompileError({ log: 'nvcc fatal   : Unknown option \'-foo\'', source, programName: 'prog.cu' });
  t.is(opaque.errors.length, 0);
  t.is(opaque.message, "gx.RawKernel: compiling 'prog.cu' failed:\nnvcc fatal   : Unknown option '-foo'");
});

test('parseCompilerLog reads NVRTC, nvcc and gcc-preprocessor errors, not warnings', (t) => {
  const log = [
    'kernel.cu(3): error: identifier "y" is undefined',
    '    x[i] = y;',
    '           ^',
    'kernel.cu(4): warning #177-D: variable "z" was declared but never referenced',
    '/usr/include/x.h(7): catastrophic error: cannot open source file "q.h"',
    'kernel.cu:1:10: fatal error: nothere.h: No such file or directory',
    '    1 | #include "nothere.h"',
    'kernel.cu(9): error #20-D: identifier "w" is undefined',
  ].join('\n');
  t.deepEqual(parseCompilerLog(log).map((d) => [d.file, d.line, d.column, d.message]), [
    ['kernel.cu', 3, 10, 'identifier "y" is undefined'],
    ['/usr/include/x.h', 7, undefined, 'cannot open source file "q.h"'],
    ['kernel.cu', 1, 10, 'nothere.h: No such file or directory'],
    ['kernel.cu', 9, undefined, 'identifier "w" is undefined'],
  ]);
});

test('options are normalized to one token each, order kept; nvcc gets its spellings', (t) => {
  t.deepEqual(normalizeOptions(['-I', 'a', '-Ib', '--include-path=c', '-I d', '-D N=1', '-DM', '--define-macro=K=2', '-U', 'X',
    '-std=c++17', ' --use_fast_math ', '-include', 'pre.h', '-Xptxas', '-v', '']),
  ['-Ia', '-Ib', '-Ic', '-Id', '-DN=1', '-DM', '-DK=2', '-UX', '-std=c++17', '--use_fast_math', '--pre-include=pre.h', '--ptxas-options=-v']);
  for (const bad of ['-arch=sm_80', '--gpu-architecture=compute_80', '-arch', '-arch sm_80', '-gencode=arch=compute_80,code=sm_80', '-code=sm_80', '--gpu-code']) {
    t.throws(() => normalizeOptions([bad]), { instanceOf: TypeError, message: /give the arch as the arch option/ }, bad);
  }
  // An option that only begins like an arch option's name is another option.
  t.deepEqual(normalizeOptions(['-archive', '-codegen-x', '--gpu-architectures']), ['-archive', '-codegen-x', '--gpu-architectures']);
  t.throws(() => normalizeOptions(['-I']), { instanceOf: TypeError, message: /'-I' needs a value/ });
  t.deepEqual(nvccArgsFor(['-Iinc', '--minimal', '--pre-include=p.h', '--ptxas-options=-v', '--use_fast_math', '--no-source-include'], '/w'),
    ['-I/w/inc', '--pre-include', 'p.h', '-Xptxas=-v', '--use_fast_math']);
  t.throws(() => nvccArgsFor(['-default-device'], '/w'), { instanceOf: TypeError, message: /'-default-device' needs NVRTC/ });
});

test('header fingerprints: includes in comments do not count, missing headers count by name, found ones by content', (t) => {
  const dir = tmpdir('fp');
  fs.writeFileSync(path.join(dir, 'a.h'), '#include "b.h"\n');
  fs.writeFileSync(path.join(dir, 'b.h'), 'int b;\n');
  t.deepEqual(parseIncludes('// #include "x.h"\n/* #include <y.h> */\n  #  include <z.h>\n#include "w.h" // c\n#include MACRO\n'),
    [{ quoted: false, name: 'z.h' }, { quoted: true, name: 'w.h' }, { quoted: false, name: '#MACRO' }]);
  const fp = headerFingerprints('#include "a.h"\n#include <cuda_fp16.h>\n#include "a.h"\n', { cwd: '/', includeDirs: [dir] });
  t.is(fp.length, 3);
  t.regex(fp[0], /^"a\.h" [0-9a-f]{64}$/);
  t.regex(fp[1], /^"b\.h" [0-9a-f]{64}$/);
  t.is(fp[2], '<cuda_fp16.h> ?');
  // The main source's quoted includes are also looked up in the working directory (as NVRTC does).
  t.regex(headerFingerprints('#include "a.h"\n', { cwd: dir, includeDirs: [] })[0], /^"a\.h" [0-9a-f]{64}$/);
  t.deepEqual(headerFingerprints('#include <a.h>\n', { cwd: dir, includeDirs: [] }), ['<a.h> ?'], 'angle includes do not search the working directory');
});
