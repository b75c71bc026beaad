// What the run-time kernel benchmark's parts share: the kernel and its
// sizes, the targets and CuPy's anchors, the run's token (every cold compile
// misses), and the warnings and problems the report prints last.
import * as path from 'path';

import { REPO } from './util';

export const CUPY_SCRIPT = path.join(REPO, 'bench', 'cupy_rtc.py');
export const LIB_DIR = path.join(REPO, 'dist', 'lib');
export const COMPILER_JS = path.join(LIB_DIR, 'rtc', 'compiler.js');

export const ARCH = process.env.GPUEXT_BENCH_ARCH ?? 'sm_90';
export const PROGRAM = 'bench_add.cu';
export const KERNEL = 'bench_add';
export const COLD_RUNS = 5;
export const DISK_PROCS = 5;
export const CALLS = 20_000;
export const CALL_BATCH = 1_000;
export const CALL_WARMUP = 2_000;
export const BIG_NUMEL = 1 << 28;
export const BW_WARMUP = 3;
export const BW_REPEAT = 20;

export const TARGET = {
  coldMs: 80,
  diskMs: 0.5,
  rawUs: 5,
  ewUs: 6,
  redUs: 10,
  bwRatio: 0.95,
} as const;
// CuPy 14.2 on the H100 (issue 4): printed as anchors, not measured here.
export const ANCHOR = { coldMs: '72-109', diskMs: '0.17', rawUs: '6.8', ewUs: '9-12', redUs: '24-26' } as const;

// Unique per run, so every cold compile misses every cache (no randomness: the pid and the start time).
export const TOKEN = `${process.pid}-${process.hrtime.bigint().toString(36)}`;

export function addSource(tag: string): string {
  return `// gpuext rtc bench: ${tag}
extern "C" __global__ void bench_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
`;
}

export const warnings: string[] = [];
export const problems: string[] = [];

export function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'n/a' : ok ? 'met' : 'MISSED';
}

export function atMost(x: number | undefined, target: number): boolean | undefined {
  return x === undefined || !Number.isFinite(x) ? undefined : x <= target;
}

export function errMsg(e: unknown): string {
  return e instanceof Error ? e.message.split('\n')[0] : String(e);
}

export function msOf(ns: number): number {
  return ns / 1e6;
}
