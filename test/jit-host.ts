// The generated CUDA of jit kernels compiled for the host with g++ (the CUDA
// qualifiers defined away), run, and its outputs read back: the C reference
// the simulator is compared with bit for bit (test/jit-semantics.test.ts).
// Each kernel runs one block of `threads` threads, in turns, on 1-d
// contiguous tensors and numbers.
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';

/** g++, or why it cannot be used. */
export const GXX: { ok: boolean; why: string } = (() => {
  const r = spawnSync('g++', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? { ok: true, why: '' } : { ok: false, why: 'g++ is not installed: the host C++ reference of the generated CUDA cannot be built' };
})();

const PRELUDE = `#include <math.h>
#include <stdio.h>
#include <string.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __syncthreads()
#define __threadfence()
struct gx_dim3 { unsigned x, y, z; };
static gx_dim3 threadIdx, blockIdx, blockDim, gridDim;
`;

const C_ELEMENT: Partial<Record<gx.DType, string>> = { bool: 'bool', int32: 'int', int64: 'long long', float32: 'float', float64: 'double' };

/** A kernel to run on the host: its jit kernel, arguments (CPU tensors and numbers) and threads. */
export interface HostCase {
  kernel: gx.jit.JitKernel;
  args: (gx.Tensor | number)[];
  threads: number;
}

const bytesOf = (t: gx.Tensor): Uint8Array => {
  const v = t.toArraySync() as ArrayBufferView;
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
};

/** One case's block of main(): its arrays, the threads' calls, its outputs printed as bytes. */
function caseCode(c: HostCase, k: number): string {
  const src = c.kernel.source(...c.args);
  const m = /extern "C" __global__ void (\w+)\(([^)]*)\)/.exec(src);
  if (m === null) throw new Error('no kernel signature in the generated source');
  const tensors = c.args.map((a, i) => (a instanceof gx.Tensor ? i : -1)).filter((i) => i >= 0);
  const params = m[2].split(',').map((p) => p.trim()).filter((p) => p !== '');
  const lines: string[] = [`  { // case ${k}`];
  for (const i of tensors) {
    const t = c.args[i] as gx.Tensor;
    const ct = C_ELEMENT[t.dtype];
    if (ct === undefined) throw new Error(`host reference: ${t.dtype} is not supported`);
    const raw = Array.from(bytesOf(t)).join(',');
    lines.push(`    static const unsigned char r${i}[] = {${raw}};`, `    static ${ct} t${i}[${t.numel}];`, `    memcpy(t${i}, r${i}, sizeof t${i});`);
  }
  // Parameters by position: p_ pointers, n_ extents, v_ numbers, in the order the kernel's arguments have them.
  let next = 0;
  const argOrder = params.map((p) => {
    const name = p.split(/\s+/).pop() ?? '';
    if (name.startsWith('p_')) {
      while (!(c.args[next] instanceof gx.Tensor)) next++;
      return `t${next++}`;
    }
    if (name.startsWith('n_')) return `${(c.args[next - 1] as gx.Tensor).numel}LL`;
    while (c.args[next] instanceof gx.Tensor) next++;
    const v = c.args[next++] as number;
    return Number.isInteger(v) ? `${v}LL` : `${v}`;
  });
  lines.push(`    blockDim = {${c.threads}u, 1u, 1u}; gridDim = {1u, 1u, 1u}; blockIdx = {0u, 0u, 0u};`,
    `    for (unsigned t = 0; t < ${c.threads}u; t++) { threadIdx = {t, 0u, 0u}; ${m[1]}(${argOrder.join(', ')}); }`);
  for (const i of tensors) lines.push(`    { const unsigned char* b = (const unsigned char*)t${i}; for (size_t j = 0; j < sizeof t${i}; j++) printf("%02x", b[j]); printf("\\n"); }`);
  lines.push('  }');
  return `${src.replace(/^#include.*$/gm, '')}\n/*__MAIN__${k}*/\n${lines.join('\n')}`;
}

/** Runs `cases` compiled by g++; for each, the tensors' values afterwards (in argument order). */
export function runOnHost(cases: readonly HostCase[]): ArrayBufferView[][] {
  const parts = cases.map((c, k) => caseCode(c, k).split(`/*__MAIN__${k}*/`));
  const source = `${PRELUDE}${parts.map((p) => p[0]).join('\n')}\nint main() {\n${parts.map((p) => p[1]).join('\n')}\n  return 0;\n}\n`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-host-'));
  try {
    const file = path.join(dir, 'k.cpp');
    fs.writeFileSync(file, source);
    const exe = path.join(dir, 'k');
    // -fwrapv: signed arithmetic wraps, as the language says (and the GPU does); no contraction into FMA.
    execFileSync('g++', ['-std=c++17', '-O1', '-fwrapv', '-ffp-contract=off', '-w', '-o', exe, file], { stdio: 'pipe' });
    const out = execFileSync(exe, { encoding: 'utf8', maxBuffer: 1 << 26 }).trim().split('\n');
    let line = 0;
    return cases.map((c) => c.args.filter((a): a is gx.Tensor => a instanceof gx.Tensor).map((t) => {
      const hex = out[line++] ?? '';
      const bytes = Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
      const View = { bool: Uint8Array, int32: Int32Array, int64: BigInt64Array, float32: Float32Array, float64: Float64Array }[t.dtype as 'bool'];
      return new View(bytes.buffer, 0, t.numel);
    }));
  } catch (e) {
    const err = e as { stderr?: Buffer | string; message: string };
    throw new Error(`the host build of the generated source failed: ${String(err.stderr ?? err.message).slice(0, 3000)}\n--- source ---\n${source.slice(0, 4000)}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether two element values are the same: bit for bit, but any NaN is any NaN. */
export function sameElement(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'number' && typeof b === 'number' && a !== a) return b !== b;
  return Object.is(a, b);
}
