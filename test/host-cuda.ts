// Generated CUDA compiled for the host: the kernels of lib/rtc and gx.fuse run
// on the CPU with the CUDA qualifiers defined away and the grid walked one
// thread at a time (no kernel here uses shared memory or barriers), so their
// index math, vector paths and arithmetic are checked without a GPU. Also
// nvcc -c for sm_90 of a whole source (no GPU needed).
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

export const ROOT = path.resolve(__dirname, '../..');

/** What a host compile of CUDA code needs: the qualifiers, the built-in index variables, a launcher. */
export const HOST_SHIM = `#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using std::floor; using std::fmin; using std::fmax;
struct gx_dim3 { unsigned x = 0, y = 0, z = 0; };
static gx_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __restrict__ __restrict
#define asm(...)
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
inline long long __double_as_longlong(double d) { long long i; memcpy(&i, &d, 8); return i; }
template <typename F> void gx_launch(unsigned blocks, unsigned threads, F f) {
  gridDim.x = blocks; blockDim.x = threads; gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;
  for (unsigned b = 0; b < blocks; ++b) {
    blockIdx.x = b;
    for (unsigned t = 0; t < threads; ++t) { threadIdx.x = t; f(); }
  }
}
`;

export function hasTool(tool: string): boolean {
  return spawnSync(tool, ['--version'], { encoding: 'utf8' }).status === 0;
}

export function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gpuext-${prefix}-`));
}

/** g++ -std=c++17 -O2 (no FMA contraction under ISO C++, as the ops' CPU build) of `source`, run; its stdout. */
export function runHost(source: string, dir: string, args: string[] = [], flags: string[] = []): string {
  return runHostBytes(source, dir, args, flags).toString('utf8');
}

/** runHost's stdout as bytes. */
export function runHostBytes(source: string, dir: string, args: string[] = [], flags: string[] = []): Buffer {
  const file = path.join(dir, 'host.cpp');
  const exe = path.join(dir, 'host');
  fs.writeFileSync(file, source);
  const c = spawnSync('g++', ['-std=c++17', '-O2', '-Wno-unknown-pragmas', ...flags, '-o', exe, file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (c.status !== 0) throw new Error(`g++ failed:\n${c.stderr.slice(0, 4000)}`);
  const r = spawnSync(exe, args, { maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new Error(`host run failed (${r.status ?? r.signal}): ${r.stderr.toString('utf8').slice(0, 2000)}`);
  return r.stdout;
}

/** nvcc -c for sm_90 of `source`; the compiler's output on failure. */
export function nvccCompile(source: string, dir: string, flags: string[] = []): { ok: boolean; log: string } {
  const file = path.join(dir, 'k.cu');
  fs.writeFileSync(file, source);
  const r = spawnSync('nvcc', ['-arch=sm_90', '-c', ...flags, '-o', path.join(dir, 'k.o'), file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return { ok: r.status === 0, log: `${r.stdout}${r.stderr}` };
}

/** nvcc -ptx for sm_90 of `source`: the PTX text (throws with the compiler's output on failure). */
export function nvccPtx(source: string, dir: string, flags: string[] = []): string {
  const file = path.join(dir, 'k.cu');
  fs.writeFileSync(file, source);
  const out = path.join(dir, 'k.ptx');
  const r = spawnSync('nvcc', ['-arch=sm_90', '-ptx', ...flags, '-o', out, file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`nvcc -ptx failed:\n${r.stdout}${r.stderr}`);
  return fs.readFileSync(out, 'utf8');
}
