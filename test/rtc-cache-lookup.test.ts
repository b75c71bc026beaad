// The kernel cache's warm path (NOTE [ Warm lookup ] in lib/rtc/cache-lookup.ts):
// cachedImage() finds what compile() stored, under the same key, for the
// requests it keys (NVRTC named by a file, no include), and leaves every
// other request to compile(); in a fresh process it loads no compiler. And
// NVRTC's -minimal (NOTE [ Minimal NVRTC ]): passed where NVRTC takes it,
// dropped where it predates it; and the prefetch of NVRTC's files.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { knownDeviceCount } from '../lib/core/device';
import { cachedImage, diskGet, kernelCacheDir } from '../lib/rtc/cache-lookup';
import { compile, kernelCacheKey, type RtcNative } from '../lib/rtc/compiler';
import { nvrtcTakesMinimal } from '../lib/rtc/nvrtc-backend';
import { prefetchNvrtc, resetNvrtcPrefetch } from '../lib/rtc/nvrtc-prefetch';

const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-cache-lookup-'));
process.env.GPUEXT_CACHE_DIR = ROOT;
test.after.always(() => fs.rmSync(ROOT, { recursive: true, force: true }));

/** A stand-in for libnvrtc: a file the core would name first (its identity is in the key). */
const LIB = path.join(ROOT, 'libnvrtc.so.13.0.88');
fs.writeFileSync(LIB, 'not really a library');

/** An NVRTC binding named by LIB, of `version`, whose compiles give a random image; it records the options of each compile. */
function fakeNvrtc(version = '13.0', file: string | null = LIB): { native: RtcNative; compiles: string[][] } {
  const compiles: string[][] = [];
  const native: RtcNative = {
    rtcInfo: () => ({ nvrtc: version, nvrtcPath: LIB, driver: true }),
    nvrtcCandidates: () => (file === null ? ['libnvrtc.so.13'] : [file]),
    nvrtcCompile(_source, _name, options) {
      compiles.push(options);
      const image = new Uint8Array(64).map(() => Math.floor(Math.random() * 256));
      image.set([0x7f, 0x45, 0x4c, 0x46]);
      return { ok: true, log: '', image, ptx: false, loweredNames: {} };
    },
  };
  return { native, compiles };
}

let serial = 0;
function kernel(body = 'x[i] = x[i] * 2.0f;'): string {
  serial++;
  return `#ifndef GUARD_${serial}\n#define GUARD_${serial}\n#endif\nextern "C" __global__ void f${serial}(float* x, int n) {\n` +
    `  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) ${body}\n}\n`;
}

test('a compiled request is found by cachedImage under compile()\'s key, with the same image, from disk and then from memory', (t) => {
  for (const options of [[], ['--fmad=false', '-minimal'], ['-D', 'N=4', '--use_fast_math'], ['-I', ROOT, '-DM=2']]) {
    const req = { source: kernel(), name: 'gx_module.cu', arch: 'sm_90', options };
    const { native } = fakeNvrtc();
    const r = compile(req, { native, memory: false });
    t.is(r.cached, false);
    const hit = cachedImage(req, fakeNvrtc().native);
    t.truthy(hit, `options ${JSON.stringify(options)}`);
    t.is(hit?.key, r.key);
    t.is(hit?.key, kernelCacheKey(req, { native }));
    t.is(hit?.cached, 'disk');
    t.deepEqual(Array.from(hit?.image ?? []), Array.from(r.image));
    const again = cachedImage(req, fakeNvrtc().native);
    t.is(again?.cached, 'memory');
    t.deepEqual(Array.from(again?.image ?? []), Array.from(r.image));
  }
});

test('cachedImage leaves to compile() what it does not key: an include, a pre-include, NVRTC by soname; and misses what is not cached', (t) => {
  const { native } = fakeNvrtc();
  const header = path.join(ROOT, 'h.cuh');
  fs.writeFileSync(header, '#define SCALE 3.0f\n');
  const withInclude = { source: `#include "${header}"\n${kernel('x[i] *= SCALE;')}`, name: 'k.cu', arch: 'sm_90', options: [] };
  compile(withInclude, { native });
  t.is(cachedImage(withInclude, native), undefined, 'a source that includes a header');
  const preInclude = { source: kernel('x[i] *= SCALE;'), name: 'k.cu', arch: 'sm_90', options: ['-include', header] };
  compile(preInclude, { native });
  t.is(cachedImage(preInclude, native), undefined, 'a pre-included header');
  const plain = { source: kernel(), name: 'k.cu', arch: 'sm_90', options: [] };
  compile(plain, { native: fakeNvrtc('13.0', null).native });
  t.is(cachedImage(plain, fakeNvrtc('13.0', null).native), undefined, 'NVRTC found by the loader, not by a file');
  t.is(cachedImage(plain, null), undefined, 'no binding');
  const stored = { ...plain, source: kernel() };
  compile(stored, { native });
  t.truthy(cachedImage(stored, fakeNvrtc().native));
  t.is(cachedImage({ ...stored, arch: 'sm_80' }, fakeNvrtc().native), undefined, 'another arch');
  t.is(cachedImage({ ...stored, options: ['-DX=1'] }, fakeNvrtc().native), undefined, 'other options');
  t.is(cachedImage({ ...stored, options: ['-arch=sm_90'] }, fakeNvrtc().native), undefined, 'options compile() refuses');
  // Another NVRTC installed at the same path: another key.
  const other = { ...plain, source: kernel() };
  compile(other, { native });
  fs.writeFileSync(LIB, 'another NVRTC, another size');
  try {
    t.is(cachedImage(other, fakeNvrtc().native), undefined);
  } finally {
    fs.writeFileSync(LIB, 'not really a library');
  }
});

test('a corrupt entry is a miss for cachedImage as for compile()', (t) => {
  const req = { source: kernel(), name: 'k.cu', arch: 'sm_90', options: ['--fmad=false'] };
  const r = compile(req, { native: fakeNvrtc().native, memory: false });
  const bin = path.join(kernelCacheDir(), `${r.key}.bin`);
  const bytes = fs.readFileSync(bin);
  bytes[bytes.length - 1] ^= 0xff;
  fs.writeFileSync(bin, bytes);
  t.is(diskGet(kernelCacheDir(), r.key), undefined);
  t.is(cachedImage(req, fakeNvrtc().native), undefined);
});

test('in a fresh process, a hit through cachedImage loads neither the compiler nor the cache\'s writer', (t) => {
  const req = { source: kernel(), name: 'gx_module.cu', arch: 'sm_90', options: ['--fmad=false', '-minimal'] };
  const r = compile(req, { native: fakeNvrtc().native });
  const lib = path.join(__dirname, '..', 'lib');
  const script = `
const lib = ${JSON.stringify(lib)};
require(lib);
const { cachedImage } = require(lib + '/rtc/cache-lookup');
const native = { rtcInfo: () => { throw new Error('NVRTC loaded'); }, nvrtcCandidates: () => [${JSON.stringify(LIB)}],
  nvrtcCompile: () => { throw new Error('compiled'); } };
const hit = cachedImage(${JSON.stringify(req)}, native);
const loaded = (re) => Object.keys(require.cache).some((k) => re.test(k));
console.log(JSON.stringify({ key: hit && hit.key, bytes: hit && Array.from(hit.image),
  compiler: loaded(/rtc[\\\\/](compiler|cache|nvrtc-backend|nvcc-backend)\\.js$/),
  childProcess: process.moduleLoadList.includes('NativeModule child_process') }));`;
  const c = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: ROOT } });
  t.is(c.status, 0, c.stderr);
  const out = JSON.parse(c.stdout.trim().split('\n').pop() ?? '{}') as { key: string; bytes: number[]; compiler: boolean; childProcess: boolean };
  t.is(out.key, r.key);
  t.deepEqual(out.bytes, Array.from(r.image));
  t.false(out.compiler, 'compiler.ts, cache.ts or a backend was loaded');
  t.false(out.childProcess);
});

test('NVRTC takes -minimal from 12.4 on; an older one compiles without it, under the same key', (t) => {
  t.deepEqual(['11.8', '12.0', '12.3', '12.4', '12.10', '13.0', 'fake', ''].map(nvrtcTakesMinimal), [false, false, false, true, true, true, false, false]);
  t.false(nvrtcTakesMinimal(null));
  for (const [version, kept] of [['12.3', false], ['12.4', true], ['13.0', true]] as const) {
    const { native, compiles } = fakeNvrtc(version);
    const req = { source: kernel(), name: 'k.cu', arch: 'sm_90', options: ['--fmad=false', '-minimal'] };
    const r = compile(req, { native });
    t.is(compiles.length, 1);
    t.is(compiles[0].includes('-minimal'), kept, `NVRTC ${version}: ${compiles[0].join(' ')}`);
    t.true(compiles[0].includes('--fmad=false'), 'the other options stay');
    t.is(r.key, kernelCacheKey(req, { native }), 'the key covers the options as asked');
  }
  // Without -minimal asked, none is added.
  const { native, compiles } = fakeNvrtc('13.0');
  compile({ source: kernel(), name: 'k.cu', arch: 'sm_90', options: ['--fmad=false'] }, { native });
  t.false(compiles[0].includes('-minimal'));
});

test.serial('the NVRTC prefetch reads the library and its builtins beside it, once per process, and only for NVRTC named by a file', async (t) => {
  resetNvrtcPrefetch();
  // A process that has found no GPU reads nothing: this file asks for no device before (on a GPU machine, the count is above 0).
  t.not(knownDeviceCount(), 0);
  const dir = fs.mkdtempSync(path.join(ROOT, 'prefetch-'));
  const lib = path.join(dir, 'libnvrtc.so.13');
  const builtins = path.join(dir, 'libnvrtc-builtins.so.13.0');
  fs.writeFileSync(lib, new Uint8Array(9 * 1024 * 1024 + 123).map(() => Math.floor(Math.random() * 256)));
  fs.writeFileSync(builtins, new Uint8Array(4321).fill(5));
  fs.writeFileSync(path.join(dir, 'libcudart.so.13'), 'not NVRTC\'s');
  const native = { ...fakeNvrtc().native, nvrtcCandidates: () => [lib, 'libnvrtc.so.13'] };
  t.deepEqual(prefetchNvrtc(fakeNvrtc('13.0', null).native), [], 'a bare soname: nothing to read');
  t.deepEqual(prefetchNvrtc(null), []);
  const bytes = await new Promise<number>((resolve) => {
    t.deepEqual(prefetchNvrtc(native, resolve).sort(), [builtins, lib].sort());
  });
  t.is(bytes, 9 * 1024 * 1024 + 123 + 4321, 'every byte of both files was read');
  t.deepEqual(prefetchNvrtc(native), [], 'once per process');
  resetNvrtcPrefetch();
});
