// gx.fuse on every dtype the elementwise ops take, float16, bfloat16, int8,
// int16 and uint8 among them: a fused chain rounds (or wraps) each op's
// result to its dtype where the eager op stores it, so the fused function
// equals the eager chain bit for bit (NOTE [ Fused ops round where the eager
// ops store ] in lib/jit/fuse-ops.ts; LANGUAGE.md "gx.fuse"). For a few op
// chains over random and special inputs of each dtype (and mixed pairs):
// - fuse refuses exactly what the eager chain refuses, with its result dtype;
// - the fused device functions, compiled for the host with g++ (gx::Half and
//   gx::BFloat16 standing for __half and __nv_bfloat16, the conversions the
//   eager CPU ops make), equal the eager CPU chain bit for bit (any NaN is any
//   NaN), but for a floating pow: libm's powf, which the eager CPU op runs
//   in a vectorized clone (NOTE [ CPU loop clones ]) and the host build as
//   the scalar function, within an ulp of each other (2049.5 ** 2 in float32:
//   4200450.5 eager, 4200450 scalar). On CUDA both are the same powf.
// - the fused sources compile for sm_90 with nvcc (NVRTC's mode);
// - on every device the fused call equals the eager chain bit for bit (on
//   CUDA it is the fused kernel; on the CPU fuse runs the ops one by one).
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { fuseCompileOptions } from '../lib/jit/fuse-ops';
import { elementwiseSource } from '../lib/rtc/elementwise-codegen';
import { parseParams } from '../lib/rtc/params';
import { deviceTestSerial, randomValues, type TestDevice } from './helpers';
import { hasTool, HOST_SHIM, nvccCompile, ROOT, runHostBytes, tmpDir } from './host-cuda';

type D = gx.DType;
const N = 64;
/** The C type a fused function holds a value of each dtype in (its compute dtype's). */
const HELD: Record<D, string> = {
  float16: 'float', bfloat16: 'float', float32: 'float', float64: 'double',
  int8: 'int', int16: 'int', uint8: 'int', int32: 'int', int64: 'long long', bool: 'bool',
};
const FLOATS = new Set<D>(['float16', 'bfloat16', 'float32', 'float64']);

type Fn = (...a: gx.Tensor[]) => gx.Tensor;
/** Op chains, each a real function so that fused and eager run the same code. */
const CHAINS: Record<string, Fn> = {
  fma: function fma(x, y, z) { return gx.add(gx.mul(x, y), z); },
  mix: function mix(x, y) { return gx.sub(gx.mul(x, 3), gx.div(y, gx.add(x, 1.5))); },
  unary: function unary(x, y) { return gx.sigmoid(gx.add(gx.neg(x), gx.relu(y))); },
  pick: function pick(x, y) { return gx.where(gx.gt(x, y), gx.remainder(x, 5), gx.mul(y, y)); },
  logic: function logic(x, y) { return gx.logicalAnd(gx.mul(x, 0.001), gx.sub(y, x)); },
  powmax: function powmax(x, y) { return gx.maximum(gx.pow(x, 2), gx.minimum(gx.abs(y), x)); },
};
/** Chains whose floating results go through libm's pow (the host reference's scalar powf is within an ulp of the eager CPU's vector one). */
const LIBM = new Set(['powmax']);
/** An ulp of a floating result of dtype d near w (its relative precision). */
const ULP: Partial<Record<D, number>> = { float16: 2 ** -10, bfloat16: 2 ** -7, float32: 2 ** -23, float64: 2 ** -52 };
const ALL: D[] = ['float16', 'bfloat16', 'int8', 'int16', 'uint8', 'bool', 'int32', 'int64', 'float32', 'float64'];
/** Mixed operands: conversions to the common dtype that round (int16 -> float16) or widen. */
const PAIRS: [D, D][] = [['int16', 'float16'], ['float32', 'float16'], ['bfloat16', 'float16'], ['uint8', 'int8'], ['int8', 'float16'],
  ['int32', 'bfloat16'], ['float64', 'float16'], ['uint8', 'bool'], ['int16', 'int8'], ['float16', 'int64'], ['bfloat16', 'int16']];

interface Case { id: string; chain: string; dtypes: D[] }

function cases(): Case[] {
  const out: Case[] = [];
  for (const [chain, fn] of Object.entries(CHAINS)) {
    const combos = [...ALL.map((d) => [d, d] as [D, D]), ...PAIRS];
    for (const [a, b] of combos) {
      const dtypes = fn.length === 3 ? [a, b, a] : [a, b];
      out.push({ id: `${chain}_${dtypes.join('_')}`, chain, dtypes });
    }
  }
  return out;
}

/** Random values of `d` with the special ones spliced in (NaN, infinities, -0, float16's overflow and subnormals; integer extremes). */
function values(d: D, seed: number): ArrayLike<number> | BigInt64Array {
  const r = randomValues(d, N, seed);
  if (d === 'int64') {
    const v = BigInt64Array.from(r as BigInt64Array);
    v.set([-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 3n, 300n]);
    return v;
  }
  const v = Array.from(r as ArrayLike<number>);
  const special: Partial<Record<D, number[]>> = {
    float16: [NaN, Infinity, -Infinity, -0, 65504, 300, 1e-5, 0.1, 2049, -3.5],
    bfloat16: [NaN, Infinity, -0, 3e38, 300, 1e-40, 0.1, 257, -3.5],
    float32: [NaN, -Infinity, -0, 3e38, 300, 1e-40, 0.1, 2049.5, 1e-5],
    float64: [NaN, Infinity, -0, 1e300, 300, 5e-324, 0.1, 1e-5],
    int8: [127, -128, 0, -1, 100, 5], int16: [32767, -32768, 0, 2049, 300, -5], uint8: [255, 0, 200, 128, 5],
    int32: [2 ** 31 - 1, -(2 ** 31), 0, 2049, 300, 16777217],
  };
  v.splice(0, special[d]?.length ?? 0, ...(special[d] ?? []));
  return v;
}

function tensorOf(d: D, k: number, device: TestDevice): gx.Tensor {
  const v = values(d, 31 + 7 * k + ALL.indexOf(d));
  if (d === 'int64') return gx.tensor(v as BigInt64Array, { device });
  return gx.tensor(Float64Array.from(v as ArrayLike<number>), { device, dtype: d });
}

/** A tensor's elements as numbers or bigints (float16 and bfloat16 decoded, exactly). */
const elements = (t: gx.Tensor): (number | bigint)[] => Array.from(t.toArraySync() as ArrayLike<number | bigint>);
const same = (a: number | bigint, b: number | bigint): boolean => (typeof a === 'number' && a !== a ? b !== b : Object.is(a, b));

interface Eager { c: Case; refused: boolean; dtype?: D; values?: (number | bigint)[]; source?: string; fused?: Fn }

let memo: Eager[] | undefined;
function eagerAll(): Eager[] {
  if (memo) return memo;
  memo = cases().map((c): Eager => {
    const args = c.dtypes.map((d, k) => tensorOf(d, k, 'cpu'));
    const fused = gx.fuse(CHAINS[c.chain], { name: c.id });
    let source: string | undefined;
    try {
      source = fused.source(...args);
    } catch {
      source = undefined;
    }
    try {
      const r = CHAINS[c.chain](...args);
      return { c, refused: false, dtype: r.dtype, values: elements(r), source, fused };
    } catch {
      return { c, refused: true, source };
    }
  });
  return memo;
}

test('every dtype fuses: fuse refuses exactly what the eager chain refuses; the kernel\'s output dtype is the eager result\'s', (t) => {
  const all = eagerAll();
  for (const e of all) {
    if (e.refused) {
      t.is(e.source, undefined, `${e.c.id}: the eager chain refuses it but fuse does not`);
      continue;
    }
    t.not(e.source, undefined, `${e.c.id}: not fused`);
    const m = new RegExp(`__device__ __forceinline__ ([\\w ]+) gx_fused_${e.c.id}\\(`).exec(e.source ?? '');
    t.is(m?.[1], HELD[e.dtype as D], `${e.c.id}: held type`);
  }
  for (const d of ['float16', 'bfloat16', 'int8', 'int16', 'uint8'] as D[]) {
    t.true(all.some((e) => !e.refused && e.c.dtypes.every((x) => x === d) && e.dtype === d), `a chain of ${d} stays ${d}`);
  }
  t.true(all.filter((e) => !e.refused).length > 60);
});

test('a fused float16 chain rounds at each op: the source converts each op\'s result through __half', (t) => {
  const x = tensorOf('float16', 0, 'cpu');
  const src = gx.fuse(CHAINS.fma, { name: 'fma_round' }).source(x, x, x);
  t.is(src.match(/\(__half\)/g)?.length, 2, src);  // the product and the sum
  const b = tensorOf('int8', 0, 'cpu');
  t.is(gx.fuse(CHAINS.fma, { name: 'fma_wrap' }).source(b, b, b).match(/\(signed char\)/g)?.length, 2);
});

/** The cases' device functions in one translation unit: the preamble once (the 16-bit float headers left to the caller). */
function unit(all: Eager[], t: ExecutionContext): { text: string; fused: Eager[] } {
  const fused = all.filter((e) => !e.refused && e.source !== undefined);
  let preamble: string | undefined;
  const fns: string[] = [];
  for (const e of fused) {
    const s = (e.source as string).replace(/^#include <cuda_(fp16|bf16)\.h>\n/gm, '');
    const at = s.indexOf(`__device__ __forceinline__ ${HELD[e.dtype as D]} gx_fused_${e.c.id}(`);
    const pre = s.slice(0, at);
    preamble ??= pre;
    if (pre !== preamble) t.fail(`${e.c.id}: another preamble`);
    fns.push(s.slice(at));
  }
  return { text: `${preamble ?? ''}${fns.join('\n')}`, fused };
}

/** A C literal of an input element, in its held type (16-bit floats' values are exact in float). */
function cLiteral(d: D, v: number | bigint): string {
  const c = HELD[d];
  if (typeof v === 'bigint') return v === -(2n ** 63n) ? '(-9223372036854775807LL - 1)' : `${v}LL`;
  if (Number.isNaN(v)) return `(${c})__builtin_nan("")`;
  if (!Number.isFinite(v)) return `(${v > 0 ? '' : '-'}(${c})__builtin_inf())`;
  if (Object.is(v, -0)) return `(${c})-0.0`;
  if (d === 'bool') return v ? 'true' : 'false';
  return FLOATS.has(d) ? `(${c})${v.toPrecision(17)}` : `${v}${d === 'int32' ? 'LL' : ''}`;
}

const HALF_SHIM = `#include <gpuext/half_types.h>
typedef gx::Half __half;
typedef gx::BFloat16 __nv_bfloat16;
`;

(hasTool('g++') ? test : test.skip)('the fused device functions compiled for the host equal the eager CPU chains bit for bit, every dtype', (t) => {
  const { text, fused } = unit(eagerAll(), t);
  const decls: string[] = [];
  const body: string[] = [];
  for (const [i, e] of fused.entries()) {
    const args = e.c.dtypes.map((d, k) => {
      const v = elements(tensorOf(d, k, 'cpu'));
      decls.push(`static const ${HELD[d]} in${i}_${k}[${N}] = {${v.map((x) => cLiteral(d, x)).join(', ')}};`);
      return `in${i}_${k}[e]`;
    });
    // Each result as 8 bytes: floats as double (exact), integers and bool as long long.
    const w = FLOATS.has(e.dtype as D) ? 'double' : 'long long';
    body.push(`  { ${w} r[${N}]; for (int e = 0; e < ${N}; ++e) r[e] = (${w})gx_fused_${e.c.id}(${args.join(', ')}); fwrite(r, sizeof r, 1, stdout); }`);
  }
  // The power of the test: float16 x * y + z with a float32 intermediate (torch.compile's way) differs from the eager chain.
  const f16 = fused.findIndex((e) => e.c.id === 'fma_float16_float16_float16');
  t.true(f16 >= 0);
  body.push(`  { double r[${N}]; for (int e = 0; e < ${N}; ++e) r[e] = (float)(__half)(in${f16}_0[e] * in${f16}_1[e] + in${f16}_2[e]); fwrite(r, sizeof r, 1, stdout); }`);
  const src = `${HOST_SHIM}${HALF_SHIM}${text}\n${decls.join('\n')}\nint main() {\n${body.join('\n')}\n  return 0;\n}\n`;
  const out = runHostBytes(src, tmpDir('fuse-dtypes'), [], [`-I${ROOT}`, `-I${ROOT}/csrc/include`]);
  t.is(out.length, (fused.length + 1) * N * 8, 'one result per case');
  const wrong: string[] = [];
  for (const [i, e] of fused.entries()) {
    const bytes = out.subarray(i * N * 8, (i + 1) * N * 8);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const got = Array.from({ length: N }, (_, k) => (FLOATS.has(e.dtype as D) ? view.getFloat64(k * 8, true) : view.getBigInt64(k * 8, true)));
    const want = (e.values as (number | bigint)[]).map((v) => (typeof v === 'boolean' ? BigInt(v) : FLOATS.has(e.dtype as D) ? v : BigInt(v)));
    const near = (g: number | bigint, w: number | bigint): boolean => LIBM.has(e.c.chain) && typeof g === 'number' && typeof w === 'number'
      && Math.abs(g - w) <= Math.abs(w) * (ULP[e.dtype as D] ?? 0);
    const bad = got.findIndex((g, k) => !same(g, want[k]) && !near(g, want[k]));
    if (bad >= 0) wrong.push(`${e.c.id}[${bad}]: fused ${String(got[bad])}, eager ${String(want[bad])}`);
  }
  t.deepEqual(wrong, [], 'fused results that differ from the eager chain');
  const last = new DataView(out.buffer, out.byteOffset + fused.length * N * 8, N * 8);
  const eager = fused[f16].values as number[];
  const unrounded = Array.from({ length: N }, (_, k) => last.getFloat64(k * 8, true)).filter((v, k) => !same(v, eager[k])).length;
  t.true(unrounded > 0, 'a float32 intermediate gives other float16 results somewhere (else this test could not tell)');
});

(hasTool('nvcc') ? test : test.skip)('the fused sources of every dtype compile for sm_90 with nvcc, as NVRTC compiles them', (t) => {
  const { text, fused } = unit(eagerAll(), t);
  const calls = fused.map((e, i) => `  o[${i}] = (double)gx_fused_${e.c.id}(${e.c.dtypes.map((d, k) => `(${HELD[d]})p[${k}]`).join(', ')});`);
  const src = `#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n${text}\nextern "C" __global__ void probe(const double* p, double* o) {\n${calls.join('\n')}\n}\n`;
  const r = nvccCompile(src, tmpDir('fuse-dtypes-nvcc'), ['-DGX_OPS_NO_STDLIB', ...fuseCompileOptions()]);
  t.true(r.ok, r.log.slice(0, 4000));
});

(hasTool('nvcc') ? test : test.skip)('whole fused kernels of 16-bit floats and small integers compile for sm_90 (their loads and stores of __half, __nv_bfloat16, char)', (t) => {
  const dir = tmpDir('fuse-dtypes-kernel');
  let n = 0;
  for (const e of eagerAll()) {
    if (e.refused || e.c.chain !== 'fma' || !e.c.dtypes.some((d) => ['float16', 'bfloat16', 'int8', 'uint8', 'int16'].includes(d))) continue;
    // The kernel gx.fuse builds (fuse-kernel.ts): the device function is the preamble; the body calls it.
    const fn = `test ${e.c.id}`;
    const ins = parseParams(e.c.dtypes.map((d, k) => `${d} a${k}`).join(', '), fn, 'inParams');
    const all = [...ins, ...parseParams(`${String(e.dtype)} out`, fn, 'outParams')];
    const types = all.map((p) => p.type as D);
    const body = `out = gx_fused_${e.c.id}(${ins.map((p) => p.name).join(', ')})`;
    const src = elementwiseSource({ name: e.c.id, preamble: e.source as string, body, nIn: ins.length, all, types, bound: new Map(), ndim: 1,
      layouts: all.map(() => 'c'), outputPassed: [false] });
    const r = nvccCompile(src, dir, ['-DGX_OPS_NO_STDLIB', ...fuseCompileOptions()]);
    t.true(r.ok, `${e.c.id}:\n${r.log.slice(0, 3000)}`);
    n++;
  }
  t.true(n >= 8, `${n} kernels`);
});

// On CUDA each case compiles a kernel: one test per chain.
for (const chain of Object.keys(CHAINS)) deviceTestSerial(`the fused call equals the eager chain bit for bit on every dtype: ${chain}`, (t, device) => {
  let n = 0;
  for (const e of eagerAll()) {
    if (e.refused || e.c.chain !== chain) continue;
    const args = e.c.dtypes.map((d, k) => tensorOf(d, k, device));
    const want = CHAINS[chain](...args);
    const got = (e.fused as Fn)(...args);
    t.is(got.dtype, want.dtype, e.c.id);
    const a = elements(got), b = elements(want);
    const bad = a.findIndex((v, k) => !same(v, b[k]));
    if (bad >= 0) t.fail(`${e.c.id} on ${device}: [${bad}] fused ${String(a[bad])}, eager ${String(b[bad])}`);
    n++;
  }
  t.true(n > 5, `${n} cases`);
});
