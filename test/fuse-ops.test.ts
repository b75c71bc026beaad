// gx.fuse covers every elementwise op of the op list (ops/op-list.js, through
// the generated BINARY / UNARY tables) with the eager op's arithmetic: its
// C++ functor, in the eager op's compute type (NOTE [ Fused ops are the ops'
// functors ] in lib/jit/fuse-ops.ts). For each op and every dtype gx.fuse
// computes in (tensor operands of each dtype pair, and JS numbers):
// - fuse refuses exactly what the eager op refuses, and its result dtype is
//   the eager op's;
// - every fused source compiles for sm_90 with nvcc, in NVRTC's mode (no C++
//   library: NOTE [ Functor headers under NVRTC ] in ops/common/hd_math.h);
// - the fused device functions, compiled for the host (g++, ISO C++: no FMA
//   contraction, as the ops' CPU build) and run on random and special inputs,
//   equal the eager CPU ops bit for bit;
// - on every device the fused call equals the eager op bit for bit (on the
//   CPU fuse runs the ops one by one; on CUDA it is the fused kernel).
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import * as gx from '../lib';
import { fusedKernel } from '../lib/jit/fuse';
import { FUSABLE_OPS, fuseCompileOptions } from '../lib/jit/fuse-ops';
import { reductionSource } from '../lib/rtc/reduction';
import { BINARY, UNARY } from '../lib/generated/ops';
import { cudaTest, deviceTestSerial, randomValues, type TestDevice } from './helpers';
import { hasTool, HOST_SHIM, nvccCompile, ROOT, runHostBytes, tmpDir } from './host-cuda';

type D = 'bool' | 'int32' | 'int64' | 'float32' | 'float64';
const DTYPES: D[] = ['bool', 'int32', 'int64', 'float32', 'float64'];
const C: Record<D, string> = { bool: 'bool', int32: 'int', int64: 'long long', float32: 'float', float64: 'double' };
const SIZE: Record<D, number> = { bool: 1, int32: 4, int64: 8, float32: 4, float64: 8 };
const N = 96;

/** An operand: a tensor of a dtype, or a JS number (weak). */
type Operand = D | 3 | 2.5;

interface Case {
  id: string;
  op: string;
  operands: Operand[];
  /** The eager op on CPU tensors (or numbers). */
  eager: (args: (gx.Tensor | number)[]) => gx.Tensor;
}

const gxf = gx as unknown as Record<string, (...a: unknown[]) => gx.Tensor>;

/** Every op of the op list with every operand combination. */
function cases(): Case[] {
  const out: Case[] = [];
  const idOf = (op: string, ops: Operand[]): string => `${op}_${ops.map((o) => (typeof o === 'number' ? (Number.isInteger(o) ? 'int' : 'flt') : o)).join('_')}`;
  for (const op of Object.keys(BINARY)) {
    const combos: Operand[][] = [];
    for (const a of DTYPES) for (const b of [...DTYPES, 3, 2.5] as Operand[]) combos.push([a, b]);
    for (const a of DTYPES) combos.push([3, a]);
    for (const ops of combos) out.push({ id: idOf(op, ops), op, operands: ops, eager: (args) => gxf[op](args[0], args[1]) });
  }
  for (const op of Object.keys(UNARY)) {
    for (const a of DTYPES) out.push({ id: idOf(op, [a]), op, operands: [a], eager: (args) => gxf[op](args[0]) });
    // Number parameters (NOTE [ Parameters of elementwise ops ]): the functor built from the call's numbers.
    const spec = UNARY[op as keyof typeof UNARY];
    if (spec.params.length === 0 || spec.paramStyle !== 'positional') continue;
    const params = ([2.5, 3] as const).slice(0, spec.params.length);
    for (const a of DTYPES) {
      out.push({ id: idOf(op, [a, ...params]), op, operands: [a, ...params], eager: (args) => gxf[op](...args) });
    }
  }
  for (const a of DTYPES) {
    for (const b of ['float32', 'float64'] as const) {
      for (const w of [a, 2.5] as Operand[]) {
        out.push({ id: idOf('lerp', [a, b, w]), op: 'lerp', operands: [a, b, w], eager: (args) => gxf.lerp(args[0], args[1], args[2]) });
      }
    }
  }
  for (const a of DTYPES) {
    for (const b of [...DTYPES, 2.5] as Operand[]) {
      out.push({ id: idOf('where', ['bool', a, b]), op: 'where', operands: ['bool', a, b], eager: (args) => gx.where(args[0] as gx.Tensor, args[1], args[2]) });
    }
  }
  return out;
}

/** The fused function of a case: the op applied to its parameters, named after the case. */
function fusedOf(c: Case): gx.FusedFunction<(...a: (gx.Tensor | number)[]) => gx.Tensor> {
  const params = c.operands.map((_, i) => `a${i}`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const fn = new Function('gx', `return function ${c.id}(${params.join(', ')}) { return gx.${c.op}(${params.join(', ')}); };`)(gx) as (...a: (gx.Tensor | number)[]) => gx.Tensor;
  return gx.fuse(fn, { name: c.id });
}

/** Random values plus the special ones each dtype has (NaN, infinities, signed zeros, extremes, remainder's zero divisors). */
function inputValues(d: D, seed: number): number[] | bigint[] {
  const r = randomValues(d, N, seed);
  if (d === 'int64') {
    const v = Array.from(r as BigInt64Array);
    v.splice(0, 6, -(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 1n, 7n);
    return v;
  }
  const v = Array.from(r as ArrayLike<number>);
  if (d === 'float32' || d === 'float64') v.splice(0, 12, NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, 20.5, -3.5, 1e-40, 2.5);
  if (d === 'int32') v.splice(0, 6, -(2 ** 31), 2 ** 31 - 1, 0, -1, 1, 7);
  return v;
}

function tensorOf(d: D, values: number[] | bigint[], device: TestDevice): gx.Tensor {
  if (d === 'int64') return gx.tensor(BigInt64Array.from(values as bigint[]), { device });
  const arr = d === 'float32' ? Float32Array.from(values as number[]) : d === 'float64' ? Float64Array.from(values as number[])
    : d === 'int32' ? Int32Array.from(values as number[]) : Uint8Array.from(values as number[]);
  return gx.tensor(arr, { device, dtype: d });
}

function bytesOf(t: gx.Tensor): Buffer {
  const a = t.toArraySync() as ArrayLike<number> & { buffer: ArrayBufferLike; byteOffset: number; byteLength: number };
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

const INPUTS = new Map<string, number[] | bigint[]>();
/** The values of operand `k` of dtype `d` (the same in every case, so the host program declares each once). */
function inputs(d: D, k: number): number[] | bigint[] {
  const key = `${d}${k}`;
  let v = INPUTS.get(key);
  if (v === undefined) INPUTS.set(key, (v = inputValues(d, 17 + k * 101 + DTYPES.indexOf(d))));
  return v;
}

function argsOf(c: Case, device: TestDevice): (gx.Tensor | number)[] {
  return c.operands.map((o, k) => (typeof o === 'number' ? o : tensorOf(o, inputs(o, k), device)));
}

/** A C literal of a value of dtype d. */
function cLiteral(d: D, v: number | bigint): string {
  if (typeof v === 'bigint') return v === -(2n ** 63n) ? '(-9223372036854775807LL - 1)' : `${v}LL`;
  if (Number.isNaN(v)) return `(${C[d]})__builtin_nan("")`;
  if (!Number.isFinite(v)) return `(${v > 0 ? '' : '-'}(${C[d]})__builtin_inf())`;
  if (Object.is(v, -0)) return `(${C[d]})-0.0`;
  return `(${C[d]})${v}${d === 'int32' && v === -(2 ** 31) ? 'LL' : ''}`;
}

interface Eager { c: Case; refused: boolean; dtype?: D; cpu?: Buffer; source?: string }

let memo: Eager[] | undefined;
/** Every case: whether the eager op refuses it, else its result on the CPU and the fused source. */
function eagerAll(): Eager[] {
  if (memo) return memo;
  memo = cases().map((c): Eager => {
    let r: gx.Tensor;
    try {
      r = c.eager(argsOf(c, 'cpu'));
    } catch {
      return { c, refused: true };
    }
    return { c, refused: false, dtype: r.dtype as D, cpu: bytesOf(r), source: undefined };
  });
  for (const e of memo) {
    try {
      e.source = fusedOf(e.c).source(...argsOf(e.c, 'cpu'));
    } catch {
      e.source = undefined;
    }
  }
  return memo;
}

test('the fusable ops are the op list\'s elementwise ops (and where, lerp)', (t) => {
  t.deepEqual([...FUSABLE_OPS].sort(), [...Object.keys(BINARY), ...Object.keys(UNARY), 'where', 'lerp'].sort());
  t.true(FUSABLE_OPS.includes('remainder'));
});

test('fuse refuses exactly what the eager op refuses; its result dtype is the eager op\'s', (t) => {
  const all = eagerAll();
  t.true(all.length > 600, `${all.length} cases`);
  for (const e of all) {
    if (e.refused) {
      t.is(e.source, undefined, `${e.c.id}: the eager op refuses it but fuse does not`);
      continue;
    }
    t.not(e.source, undefined, `${e.c.id}: not fused`);
    const m = new RegExp(`__device__ __forceinline__ ([\\w ]+) gx_fused_${e.c.id}\\(`).exec(e.source ?? '');
    t.is(m?.[1], C[e.dtype as D], `${e.c.id}: result type`);
    t.regex(e.source ?? '', /gx::ops::\w+Op\{[^}]*\}/, `${e.c.id}: calls the op's functor`);
  }
  t.true(all.filter((e) => !e.refused).length > 500);
});

/** One translation unit: the common preamble once, then every case's device function. */
function unit(all: Eager[], t: ExecutionContext): { text: string; fused: Eager[] } {
  const fused = all.filter((e) => !e.refused && e.source !== undefined);
  let preamble: string | undefined;
  const fns: string[] = [];
  for (const e of fused) {
    const s = e.source as string;
    const at = s.indexOf(`__device__ __forceinline__ ${C[e.dtype as D]} gx_fused_${e.c.id}(`);
    const pre = s.slice(0, at);
    preamble ??= pre;
    if (pre !== preamble) t.fail(`${e.c.id}: another preamble`);
    fns.push(s.slice(at));
  }
  return { text: `${preamble ?? ''}${fns.join('\n')}`, fused };
}

(hasTool('nvcc') ? test : test.skip)('every fused source compiles for sm_90 with nvcc, as NVRTC compiles it (no C++ library)', (t) => {
  const { text, fused } = unit(eagerAll(), t);
  const calls = fused.map((e, i) => {
    const args = e.c.operands.map((o, k) => (typeof o === 'number' ? String(o) : `(${C[o]})p[${k}]`));
    return `  o[${i}] = (double)gx_fused_${e.c.id}(${args.join(', ')});`;
  });
  const src = `${text}\nextern "C" __global__ void probe(const double* p, double* o) {\n${calls.join('\n')}\n}\n`;
  const r = nvccCompile(src, tmpDir('fuse-nvcc'), ['-DGX_OPS_NO_STDLIB', `-I${ROOT}`]);
  t.true(r.ok, r.log.slice(0, 4000));
});

(hasTool('g++') ? test : test.skip)('the fused device functions compiled for the host equal the eager CPU ops bit for bit', (t) => {
  const { text, fused } = unit(eagerAll(), t);
  const decls = new Set<string>();
  const body: string[] = [];
  for (const e of fused) {
    const args = e.c.operands.map((o, k) => {
      if (typeof o === 'number') return String(o);
      decls.add(`static const ${C[o]} in_${o}_${k}[${N}] = {${(inputs(o, k) as (number | bigint)[]).map((v) => cLiteral(o, v)).join(', ')}};`);
      return `in_${o}_${k}[e]`;
    });
    body.push(`  { ${C[e.dtype as D]} r[${N}]; for (int e = 0; e < ${N}; ++e) r[e] = gx_fused_${e.c.id}(${args.join(', ')}); fwrite(r, sizeof r, 1, stdout); }`);
  }
  const src = `${HOST_SHIM}${text}\n${[...decls].join('\n')}\nint main() {\n${body.join('\n')}\n  return 0;\n}\n`;
  const dir = tmpDir('fuse-host');
  fs.writeFileSync(path.join(dir, 'cases.txt'), fused.map((e) => e.c.id).join('\n'));
  const out = runHostBytes(src, dir, [], [`-I${ROOT}`]);
  let at = 0;
  const wrong: string[] = [];
  for (const e of fused) {
    const n = N * SIZE[e.dtype as D];
    const got = out.subarray(at, at + n);
    at += n;
    if (!got.equals(e.cpu as Buffer)) wrong.push(e.c.id);
  }
  t.is(at, out.length, 'one result per case');
  t.deepEqual(wrong, [], 'fused results that differ from the eager op');
});

// One test per op (on CUDA each case compiles a kernel: ~40 per op).
for (const op of FUSABLE_OPS) deviceTestSerial(`the fused call equals the eager op bit for bit: ${op}, every dtype`, (t, device) => {
  for (const e of eagerAll()) {
    if (e.refused || e.c.op !== op) continue;
    const args = argsOf(e.c, device);
    const want = bytesOf(e.c.eager(args));
    const got = bytesOf(fusedOf(e.c)(...args));
    if (!got.equals(want)) t.fail(`${e.c.id} on ${device}`);
    for (const a of args) if (a instanceof gx.Tensor) a.dispose();
  }
  t.pass();
});

test('ops that are not elementwise are named where fuse gives up on them; the call runs them unfused', (t) => {
  const a = gx.rand([3, 3]), b = gx.rand([3, 3]);
  const mm = gx.fuse(function mm(x: gx.Tensor, y: gx.Tensor) { return gx.add(gx.matmul(x, y), 1); });
  t.throws(() => mm.source(a, b), { message: /runs unfused: .*gx\.matmul/ });
  t.deepEqual(bytesOf(mm(a, b)), bytesOf(gx.add(gx.matmul(a, b), 1)));
  const srt = gx.fuse(function srt(x: gx.Tensor) { return gx.neg(gx.sort(x).values); });
  t.throws(() => srt.source(a), { message: /runs unfused: .*gx\.sort/ });
  const inner = gx.fuse(function inner(x: gx.Tensor) { return gx.add(gx.sum(x), 1); });
  t.throws(() => inner.source(a), { message: /runs unfused: .*gx\.sum/ }, 'a reduction that is not the last op');
});

deviceTestSerial('a 0-d tensor of another dtype than the others runs unfused, promoting as the eager op', (t, device) => {
  const x = tensorOf('float32', inputs('float32', 0), device);
  const s = gx.tensor(new Float64Array([0.1]), { device, shape: [] });
  const i = gx.tensor(new BigInt64Array([5n]), { device, shape: [] });
  const f = gx.fuse(function zd(u: gx.Tensor, v: gx.Tensor) { return gx.add(gx.mul(u, 3), v); });
  for (const v of [s, i]) {
    const want = gx.add(gx.mul(x, 3), v);
    const got = f(x, v);
    t.is(got.dtype, 'float32');
    t.deepEqual(bytesOf(got), bytesOf(want), `0-d ${v.dtype}`);
    t.throws(() => f.source(x, v), { message: /0-d tensor/ });
  }
  // Same dtypes: 0-d-ness changes nothing, the call fuses.
  const s32 = gx.tensor(new Float32Array([0.1]), { device, shape: [] });
  t.notThrows(() => f.source(x, s32));
  t.deepEqual(bytesOf(f(x, s32)), bytesOf(gx.add(gx.mul(x, 3), s32)));
});

cudaTest('NODE_DEBUG=gpuext names the op fuse cannot fuse, once', (t) => {
  const script = `const gx = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const f = gx.fuse(function mm(x, y) { return gx.add(gx.matmul(x, y), 1); });
const a = gx.rand([4, 4], { device: 'cuda' });
for (let k = 0; k < 3; k++) f(a, a).toArraySync();`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, NODE_DEBUG: 'gpuext' }, timeout: 120_000 });
  t.is(r.status, 0, r.stderr);
  const notes = r.stderr.split('\n').filter((l) => /runs unfused/.test(l));
  t.is(notes.length, 1, r.stderr);
  t.regex(notes[0] ?? '', /gx\.fuse\(mm\) runs unfused: .*gx\.matmul/);
});

(hasTool('nvcc') ? test : test.skip)('fused reductions compile for sm_90 with nvcc (sum, prod, max, min; float32 and int32)', (t) => {
  const dir = tmpDir('fuse-red');
  const fns = [
    gx.fuse(function fsum(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) { return gx.sum(gx.add(gx.mul(x, y), z)); }),
    gx.fuse(function fprod(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) { return gx.prod(gx.remainder(x, y).add(z), 0); }),
    gx.fuse(function fmax(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) { return gx.max(gx.where(gx.gt(x, y), x, z)); }),
    gx.fuse(function fmin(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) { return gx.sqrt(x).add(y).sub(z).min(); }),
  ];
  for (const d of ['float32', 'int32'] as const) {
    const a = gx.zeros([4, 3], { dtype: d });
    for (const f of fns) {
      const k = fusedKernel(f, a, a, a);
      t.truthy(k, `${f.name} ${d}: fused`);
      for (const geo of [{ nKept: 0, nRed: 1, layout: 'A', idx32: true }, { nKept: 1, nRed: 1, layout: 'B', idx32: false }] as const) {
        const src = reductionSource(k as gx.ReductionKernel, [d, d, d], geo);
        const r = nvccCompile(src, dir, ['-DGX_OPS_NO_STDLIB', ...fuseCompileOptions()]);
        t.true(r.ok, `${f.name} ${d} ${JSON.stringify(geo)}:\n${r.log.slice(0, 3000)}`);
      }
    }
  }
});
