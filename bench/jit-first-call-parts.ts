// The host side of a jit kernel's first call, part by part, in fresh
// processes (what bench/jit-first-call.ts times whole on a GPU): require
// gpuext, load the translator (acorn, the typer, the emitter), translate
// (parse, type, emit: `.source()`), and the kernel cache's lookup of the
// compiled image as RawModule.load makes it (a stand-in NVRTC named by a
// file: the warm lookup's hit, what a warm first call pays before
// cuModuleLoadData, or compile()'s front and write on a miss; no compile
// runs). Cold: an empty cache directory; warm: the same one again.
//
//   node dist/bench/jit-first-call-parts.js [rawkernel|vectorize] [runs]
//
// Prints the median CPU ms (user + system: robust to a loaded machine) of each
// part over `runs` cold/warm pairs, and which heavy modules each state loaded.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type * as GX from '../lib';
import type { RtcNative } from '../lib/rtc/rtc-native';

type Laps = Record<string, number>;

/** CPU ms since the last lap, by name. */
function cpuLaps(): { lap: (name: string) => void; laps: Laps } {
  const laps: Laps = {};
  let c = process.cpuUsage();
  return {
    laps,
    lap: (name) => {
      const n = process.cpuUsage();
      laps[name] = (n.user - c.user + n.system - c.system) / 1e3;
      c = n;
    },
  };
}

/* eslint-disable @typescript-eslint/no-require-imports */
function child(mode: string): void {
  const { lap, laps } = cpuLaps();
  const lib = path.join(__dirname, '..', 'lib');
  const gx = require(lib) as typeof GX;
  lap('require');
  const one = gx.ones([1]);
  lap('firstOp');
  const { jit } = gx;
  const cached = fs.readdirSync(process.env.GPUEXT_CACHE_DIR ?? '').length > 0;
  if (!cached) {
    require(path.join(lib, 'jit', mode === 'rawkernel' ? 'kernel-gen' : 'vectorize-gen'));
    lap('loadTranslator');
  }
  let source: string;
  if (mode === 'rawkernel') {
    const square = jit.rawkernel(function elementwise_square(x: GX.jit.Array, y: GX.jit.Array, size: number) {
      const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
      const ntid = jit.gridDim.x * jit.blockDim.x;
      for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
    });
    source = square.source(one, one, 1);
  } else {
    const SQRT_2PI = Math.sqrt(2 * Math.PI);
    const pdf = gx.vectorize(['float32(float32, float32, float32)'],
      (x, mean, sigma) => Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI));
    source = pdf.source();
  }
  lap(cached ? 'translationHit' : 'translate');
  if (mode === 'rawkernel') {
    // The image as RawModule.load finds it, with the jit's options, through a stand-in NVRTC named by a file (none here):
    // the warm lookup (NOTE [ Warm lookup ]), else compile() (its front, key and write; the stand-in's compile is free).
    const { compileOptions, exactMath } = require(path.join(lib, 'jit', 'rawkernel')) as typeof import('../lib/jit/rawkernel');
    const native: RtcNative = {
      rtcInfo: () => ({ nvrtc: '13.0', nvrtcPath: process.execPath, driver: true }),
      nvrtcCandidates: () => [process.execPath],
      nvrtcCompile: () => ({ ok: true, log: '', image: new Uint8Array(4096).fill(7), ptx: false, loweredNames: {} }),
    };
    const req = { source, name: 'gx_module.cu', options: compileOptions(source, exactMath([])), arch: 'sm_90' };
    const hit = (require(path.join(lib, 'rtc', 'cache-lookup')) as typeof import('../lib/rtc/cache-lookup')).cachedImage(req, native);
    if (hit === undefined) (require(path.join(lib, 'rtc', 'compiler')) as typeof import('../lib/rtc/compiler')).compile(req, { native });
    lap(hit === undefined ? 'imageCompile' : 'imageHit');
  }
  const loaded = (re: RegExp): boolean => Object.keys(require.cache).some((k) => re.test(k));
  console.log(JSON.stringify({ laps, acorn: loaded(/[\\/]acorn[\\/]/), translator: loaded(/[\\/]jit[\\/](kernel-gen|typer)\.js$/),
    compiler: loaded(/[\\/]rtc[\\/]compiler\.js$/) }));
}
/* eslint-enable @typescript-eslint/no-require-imports */

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function main(): void {
  const mode = process.argv[2] ?? 'rawkernel';
  if (process.argv[3] === '--child') return child(mode);
  const runs = Number(process.argv[3] ?? 5);
  const states: Record<string, { laps: Laps[]; acorn: boolean; translator: boolean; compiler: boolean }> = {};
  for (let i = 0; i < runs; i++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-parts-'));
    for (const state of ['cold', 'warm']) {
      const r = spawnSync(process.execPath, [__filename, mode, '--child'], { env: { ...process.env, GPUEXT_CACHE_DIR: dir }, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`jit-first-call-parts: the ${state} child failed: ${r.stderr}`);
      const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { laps: Laps; acorn: boolean; translator: boolean; compiler: boolean };
      (states[state] ??= { laps: [], acorn: out.acorn, translator: out.translator, compiler: out.compiler }).laps.push(out.laps);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  for (const [state, s] of Object.entries(states)) {
    const parts = Object.keys(s.laps[0]).map((k) => `${k} ${median(s.laps.map((l) => l[k])).toFixed(1)}`);
    console.log(`${mode} ${state} (CPU ms, median of ${runs}): ${parts.join(', ')}; acorn ${s.acorn ? 'loaded' : 'not loaded'}, translator ${s.translator ? 'loaded' : 'not loaded'}` +
      `${mode === 'rawkernel' ? `, compiler ${s.compiler ? 'loaded' : 'not loaded'}` : ''}`);
  }
}

main();
