// The compile half of the run-time kernel benchmark (rtc.bench.ts runs it):
// a cold compile in this process, and a disk-cache hit in new processes.
import { spawnSync } from 'child_process';

import * as gx from '../lib';
import { cacheStats, compile, kernelCacheDir, type CompileResult } from '../lib/rtc/compiler';
import { MiB, REPO, nowNs, elapsedNs, progress, numField, strField, lastJsonLine, childFailure } from './util';
import { LIB_DIR, COMPILER_JS, ARCH, PROGRAM, KERNEL, COLD_RUNS, DISK_PROCS, TOKEN, addSource, warnings, problems, errMsg, msOf } from './rtc-common';

// ---------------------------------------------------------------- 1. cold compile (gpuext)

export interface ColdFigures {
  backend: string;
  firstMs: number; // the warmup: the first compile in the process (loads the compiler)
  ms: number[];
  sources: string[];
  memoryHitMs: number;
  kernelMs?: number[]; // new gx.RawKernel(src).compile(): compile + module load, GPU only
  kernelSources: string[];
}

export function benchCold(root: string, cuda: boolean): ColdFigures | undefined {
  progress(`cold compile: ${COLD_RUNS} unique sources, arch ${ARCH}, cache ${root}`);
  const opts = { cacheDir: root };
  const run = (tag: string): { ns: number; r: CompileResult } => {
    const t0 = nowNs();
    const r = compile({ source: addSource(tag), name: PROGRAM, arch: ARCH }, opts);
    return { ns: elapsedNs(t0), r };
  };
  try {
    return coldRuns(run, opts, cuda);
  } catch (e) {
    problems.push(`cold compile failed: ${errMsg(e)}`);
    return undefined;
  }
}

function coldRuns(run: (tag: string) => { ns: number; r: CompileResult }, opts: { cacheDir: string }, cuda: boolean): ColdFigures {
  const first = run(`${TOKEN} warmup`);
  const ms: number[] = [];
  const sources: string[] = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    const tag = `${TOKEN} cold ${i}`;
    const { ns, r } = run(tag);
    if (r.cached !== false) warnings.push(`cold compile ${i}: came from the ${r.cached} cache (the source was meant to be new)`);
    if (r.image.byteLength === 0) problems.push(`cold compile ${i}: empty image`);
    ms.push(msOf(ns));
    sources.push(addSource(tag));
  }
  // The same source again in this process: the memory cache.
  const t0 = nowNs();
  const again = compile({ source: sources[0], name: PROGRAM, arch: ARCH }, opts);
  const memoryHitMs = msOf(elapsedNs(t0));
  if (again.cached !== 'memory') warnings.push(`compile() of a source compiled in this process: cached = ${String(again.cached)}, expected memory`);

  // With a GPU: what a user's first launch pays, compile + module load (CuPy's compile() does both).
  let kernelMs: number[] | undefined;
  const kernelSources: string[] = [];
  if (cuda) {
    kernelMs = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      const src = addSource(`${TOKEN} kernel ${i}`);
      const k0 = nowNs();
      new gx.RawKernel(src, KERNEL).compile();
      kernelMs.push(msOf(elapsedNs(k0)));
      kernelSources.push(src);
    }
  }
  return { backend: first.r.backend, firstMs: msOf(first.ns), ms, sources, memoryHitMs, kernelMs, kernelSources };
}

// ---------------------------------------------------------------- 2. disk-cache hit (gpuext, new processes)

// The child: loads gpuext as a program would, then times its first compile()
// (a disk hit) and a second one of another cached source ('compile-loaded':
// after an untimed backendInfo(), which loads NVRTC and finds the toolchain,
// so the timed call is the key and the read). In 'kernel' mode
// (GPU) it creates the context first and times new gx.RawKernel(src).compile()
// instead (compile through the cache + module load). Prints one JSON line.
const CHILD = `
'use strict';
const p = JSON.parse(process.argv[1]);
const out = {};
try {
  const gx = require(p.lib);
  const rtc = require(p.compiler);
  const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
  if (p.mode !== 'kernel') {
    if (p.mode === 'compile-loaded') rtc.backendInfo(); // loads the compiler binding, finds the toolchain: untimed
    let t0 = process.hrtime.bigint();
    const r1 = rtc.compile({ source: p.first, name: p.program, arch: p.arch }, { cacheDir: p.cacheDir });
    out.firstMs = ms(t0);
    t0 = process.hrtime.bigint();
    const r2 = rtc.compile({ source: p.second, name: p.program, arch: p.arch }, { cacheDir: p.cacheDir });
    out.secondMs = ms(t0);
    out.firstCached = String(r1.cached);
    out.secondCached = String(r2.cached);
    out.backend = r1.backend;
  } else {
    gx.empty([1], { device: 'cuda' }).dispose();
    gx.cuda.synchronize();
    let t0 = process.hrtime.bigint();
    new gx.RawKernel(p.first, p.kernel).compile();
    out.firstMs = ms(t0);
    t0 = process.hrtime.bigint();
    new gx.RawKernel(p.second, p.kernel).compile();
    out.secondMs = ms(t0);
  }
  out.entries = rtc.cacheStats(rtc.kernelCacheDir(p.cacheDir)).entries;
} catch (e) {
  out.error = e instanceof Error ? e.message.split('\\n')[0] : String(e);
}
console.log(JSON.stringify(out));
`;

export interface DiskFigures {
  firstMs: number[];
  secondMs: number[];
  wallMs: number[]; // each child process, start to exit, measured here
}

export type DiskMode = 'compile' | 'compile-loaded' | 'kernel';

export function benchDisk(root: string, mode: DiskMode, sources: readonly string[]): DiskFigures | undefined {
  progress(`disk-cache hit (${mode}): ${DISK_PROCS} new node processes`);
  const entries0 = cacheStats(kernelCacheDir(root)).entries;
  const out: DiskFigures = { firstMs: [], secondMs: [], wallMs: [] };
  for (let i = 0; i < DISK_PROCS; i++) {
    const payload = {
      mode,
      lib: LIB_DIR,
      compiler: COMPILER_JS,
      cacheDir: root,
      program: PROGRAM,
      kernel: KERNEL,
      arch: ARCH,
      first: sources[i % sources.length],
      second: sources[(i + 1) % sources.length],
    };
    const t0 = nowNs();
    const r = spawnSync(process.execPath, ['-e', CHILD, JSON.stringify(payload)], {
      encoding: 'utf8',
      env: { ...process.env, GPUEXT_CACHE_DIR: root },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
      maxBuffer: 4 * MiB,
      cwd: REPO,
    });
    const wall = msOf(elapsedNs(t0));
    const o = lastJsonLine(r.stdout ?? '');
    const err = strField(o, 'error');
    const first = numField(o, 'firstMs');
    const second = numField(o, 'secondMs');
    if (r.error !== undefined || o === undefined || err !== undefined || first === undefined || second === undefined) {
      problems.push(`disk-cache hit (${mode}), process ${i}: ${err ?? childFailure(r, 'node -e <child>')}`);
      return undefined;
    }
    if (mode !== 'kernel') {
      for (const k of ['firstCached', 'secondCached'] as const) {
        const c = strField(o, k);
        if (c !== 'disk') warnings.push(`disk-cache hit (${mode}), process ${i}: ${k} = ${c ?? '?'}, expected disk`);
      }
    }
    const entries = numField(o, 'entries');
    if (entries !== undefined && entries !== entries0) {
      warnings.push(`disk-cache hit (${mode}), process ${i}: the cache went from ${entries0} to ${entries} entries (a miss compiled and wrote one)`);
    }
    out.firstMs.push(first);
    out.secondMs.push(second);
    out.wallMs.push(wall);
  }
  return out;
}
