// One fresh process's first jit call, timed by part: require('gpuext'), CUDA
// initialization, building the kernel object (gx.jit.rawkernel(...) or
// gx.vectorize(...)) and the first call (translation or its cache, NVRTC or
// the kernel cache, module load, launch, synchronize). bench/jit.bench.ts
// spawns it twice per cache state (an empty GPUEXT_CACHE_DIR, then the same
// one warm); run alone it profiles the host side:
//
//   node dist/bench/jit-first-call.js rawkernel|vectorize [--cpu]
//
// Without a GPU (or with --cpu) the "first call" is the translation alone
// (`.source()`), which is what a warm cache saves. Prints one JSON line:
// wall ms and CPU ms (user + system: robust to a loaded machine) per part,
// the translation counts, whether acorn, the translator, the compiler
// front and node:inspector were loaded, and the code cache's counts.
import * as path from 'path';

import type * as GX from '../lib';

type Lap = { wall: number; cpu: number };

function timer(): (name: string) => void {
  let t = process.hrtime.bigint();
  let c = process.cpuUsage();
  return (name) => {
    const nt = process.hrtime.bigint();
    const nc = process.cpuUsage();
    laps[name] = { wall: Number(nt - t) / 1e6, cpu: (nc.user - c.user + nc.system - c.system) / 1e3 };
    t = nt;
    c = nc;
  };
}
const laps: Record<string, Lap> = {};

function main(): void {
  const mode = process.argv[2] ?? 'rawkernel';
  const forceCpu = process.argv.includes('--cpu');
  const lap = timer();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const gx = require(path.join(__dirname, '..', 'lib')) as typeof GX;
  lap('require');
  const cuda = !forceCpu && gx.cuda.isAvailable();
  const device = cuda ? 'cuda' : 'cpu';
  const one = gx.ones([1], { device });
  if (cuda) gx.cuda.synchronize();
  lap('init');
  const SQRT_2PI = Math.sqrt(2 * Math.PI);
  const { jit } = gx;
  if (mode === 'rawkernel') {
    const square = jit.rawkernel(function elementwise_square(x: GX.jit.Array, y: GX.jit.Array, size: number) {
      const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
      const ntid = jit.gridDim.x * jit.blockDim.x;
      for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
    });
    lap('construct');
    if (cuda) {
      square([1], [32], [one, one, 1]);
      gx.cuda.synchronize();
    } else {
      square.source(one, one, 1);
    }
  } else {
    const gaussianPdf = gx.vectorize(['float32(float32, float32, float32)'],
      (x, mean, sigma) => Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI));
    lap('construct');
    if (cuda) {
      gaussianPdf(one, 0, 1).dispose();
      gx.cuda.synchronize();
    } else {
      gaussianPdf.source();
    }
  }
  lap('firstCall');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { translationCounts } = require(path.join(__dirname, '..', 'lib', 'jit', 'translation-cache')) as typeof import('../lib/jit/translation-cache');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ptxCounts } = require(path.join(__dirname, '..', 'lib', 'rtc', 'raw')) as typeof import('../lib/rtc/raw');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { codeCacheCounts } = require(path.join(__dirname, '..', 'lib', 'platform', 'code-cache')) as typeof import('../lib/platform/code-cache');
  const loaded = (re: RegExp): boolean => Object.keys(require.cache).some((k) => re.test(k));
  /** Node's builtin modules loaded so far (process.moduleLoadList, which @types/node does not declare). */
  const builtinLoaded = (name: string): boolean => {
    const list: unknown = Reflect.get(process, 'moduleLoadList');
    return Array.isArray(list) && list.includes(`NativeModule ${name}`);
  };
  console.log(JSON.stringify({
    mode, device, laps,
    firstMs: laps.construct.wall + laps.firstCall.wall,
    firstCpuMs: laps.construct.cpu + laps.firstCall.cpu,
    counts: translationCounts,
    acornLoaded: loaded(/[\\/]acorn[\\/]/),
    translatorLoaded: loaded(/[\\/]jit[\\/](kernel-gen|typer|vectorize-gen)\.js$/),
    // A warm first launch finds its image without the compiler front (NOTE [ Warm lookup ] in lib/rtc/cache-lookup.ts).
    compilerLoaded: loaded(/[\\/]rtc[\\/]compiler\.js$/),
    inspectorLoaded: builtinLoaded('inspector'),
    // Loaded as PTX by the driver (NOTE [ PTX path ]) or compiled from CUDA source.
    ptxLoaded: ptxCounts.loaded,
    // The driver's part of the first call: its JIT of the PTX (cold), or its cache of it (warm).
    ptxLoadMs: ptxCounts.loadMs,
    // Modules compiled from V8's code cache and entries refused (NOTE [ Code cache ]): a cold call without it costs about twice as much.
    codeCache: codeCacheCounts,
  }));
}

main();
