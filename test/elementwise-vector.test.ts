// The tiled, vectorized elementwise kernel (NOTE [ Vectorized elementwise
// kernels ] in lib/rtc/elementwise-codegen.ts) that gx.elementwiseKernel,
// gx.vectorize and gx.fuse launch: its source compiles for sm_90 (nvcc, no
// GPU), and compiled for the host and run over its grid it matches a plain
// loop of the same body for sizes that are not a multiple of the vector
// width or of the tile, for operands at odd offsets (the element path), for
// a grid smaller than the tiles (the grid-stride loop), never writing past
// n. On CUDA: the same against CPU references, views at offset 1 included.
import test from 'ava';

import * as gx from '../lib';
import { elementwiseParams, elementwiseSource, geometryOf, isTiled, vectorWidth, type Layout } from '../lib/rtc/elementwise-codegen';
import { parseParams } from '../lib/rtc/params';
import { parseKernelSignature, parseParamType } from '../lib/rtc/signature';
import { cudaTest, randomValues, rng } from './helpers';
import { hasTool, HOST_SHIM, nvccCompile, nvccPtx, runHost, tmpDir } from './host-cuda';
import { FUSE_PREAMBLE, fuseCompileOptions } from '../lib/jit/fuse-ops';

interface Case {
  name: string;
  ins: string;
  outs: string;
  body: string;
  layouts: Layout[];
  /** Per output: passed by the caller (the body may read it). */
  passed: boolean[];
}

const CASES: Case[] = [
  { name: 'fma_f32', ins: 'float32 x, float32 y, float32 s', outs: 'float32 z', body: 'z = x * y + s', layouts: ['c', 'c', 'v', 'c'], passed: [false] },
  { name: 'gt_f64', ins: 'float64 x', outs: 'bool z', body: 'z = x > 0.25', layouts: ['c', 'c'], passed: [false] },
  { name: 'acc_u8', ins: 'uint8 x', outs: 'uint8 z', body: 'z = z + x', layouts: ['c', 'c'], passed: [true] },
  { name: 'idx_i32', ins: 'int32 x', outs: 'int64 z', body: 'z = x + i * 3', layouts: ['c', 'c'], passed: [false] },
  // continue leaves the element (z keeps its value), as in a grid-stride loop.
  { name: 'skip_f32', ins: 'float32 x', outs: 'float32 z', body: 'if (x < 0) continue; z = x * 2', layouts: ['c', 'c'], passed: [true] },
  { name: 'raw_f32', ins: 'float32 x, raw float32 w', outs: 'float32 z', body: 'z = x + w[i % w_size]', layouts: ['c', 'r', 'c'], passed: [false] },
];

const C_TYPE: Record<string, string> = { float32: 'float', float64: 'double', uint8: 'unsigned char', int32: 'int', int64: 'long long', bool: 'bool' };

function sourceOf(c: Case, preamble = ''): { src: string; types: gx.DType[] } {
  const fn = `test ${c.name}`;
  const ins = parseParams(c.ins, fn, 'inParams');
  const all = [...ins, ...parseParams(c.outs, fn, 'outParams')];
  const types = all.map((p) => p.type as gx.DType);
  const src = elementwiseSource({ name: c.name, preamble, body: c.body, nIn: ins.length, all, types, bound: new Map(), ndim: 1, layouts: c.layouts, outputPassed: c.passed });
  return { src, types };
}

/** A host program running case `c` for sizes × offset patterns × grids; prints `n off blocks bad overrun` lines. */
function harness(c: Case, src: string, types: gx.DType[]): string {
  const fn = `test ${c.name}`;
  const all = [...parseParams(c.ins, fn, 'inParams'), ...parseParams(c.outs, fn, 'outParams')];
  const nIn = all.length - c.passed.length;
  const geo = geometryOf(c.layouts, types);
  const decl: string[] = [];
  const args: string[] = [];
  const refLocals: string[] = [];
  all.forEach((p, k) => {
    const t = C_TYPE[types[k]];
    if (c.layouts[k] === 'v') {
      args.push('1.75');
      refLocals.push(`const ${t} ${p.name} = (${t})1.75;`);
      return;
    }
    const len = c.layouts[k] === 'r' ? '37' : 'n';
    decl.push(`${t}* ${p.name}_buf = (${t}*)aligned_alloc(64, ((${len} + 64) * sizeof(${t}) + 63) / 64 * 64);`,
      `unsigned char* ${p.name}_bytes = (unsigned char*)${p.name}_buf;`,
      `for (size_t b = 0; b < (${len} + 64) * sizeof(${t}); ++b) ${p.name}_bytes[b] = (unsigned char)(gx_rand() >> 5);`,
      // Floats: small random values (no NaN bit patterns); bool: 0 or 1.
      types[k].startsWith('float') ? `for (long long e = 0; e < ${len} + 64; ++e) ${p.name}_buf[e] = (${t})((double)(gx_rand() % 20001) / 1000.0 - 10.0);` : '',
      types[k] === 'bool' ? `for (long long e = 0; e < ${len} + 64; ++e) ${p.name}_bytes[e] &= 1;` : '',
      `${t}* ${p.name}_ptr = ${p.name}_buf + ((mask >> ${k}) & 1);`);
    if (c.layouts[k] === 'r') {
      args.push(`${p.name}_ptr`, '37');
      refLocals.push(`const ${t}* ${p.name} = ${p.name}_ptr; const long long ${p.name}_size = 37;`);
      return;
    }
    args.push(`${p.name}_ptr`);
    if (k >= nIn) {
      decl.push(`std::vector<unsigned char> ${p.name}_ref(${p.name}_bytes, ${p.name}_bytes + (n + 64) * sizeof(${t}));`,
        `${t}* ${p.name}_refp = (${t}*)${p.name}_ref.data() + ((mask >> ${k}) & 1);`);
      refLocals.push(`${t}& ${p.name} = ${p.name}_refp[i];`);
    } else {
      refLocals.push(`const ${t} ${p.name} = ${p.name}_ptr[i];`);
    }
  });
  const outs = all.map((p, k) => ({ p, k })).filter((o) => o.k >= nIn);
  const compare = outs.map(({ p, k }) => `bad += memcmp(${p.name}_ptr, ${p.name}_refp, n * sizeof(${C_TYPE[types[k]]})) != 0;
      over += memcmp(${p.name}_ptr + n, ${p.name}_refp + n, 32 * sizeof(${C_TYPE[types[k]]})) != 0;`).join('\n      ');
  const frees = all.filter((_, k) => c.layouts[k] !== 'v').map((p) => `free(${p.name}_buf);`).join(' ');
  return `${HOST_SHIM}
static unsigned long long gx_state = 88172645463325252ULL;
static unsigned gx_rand() { gx_state ^= gx_state << 13; gx_state ^= gx_state >> 7; gx_state ^= gx_state << 17; return (unsigned)gx_state; }
${src}
int main() {
  const long long sizes[] = {1, 3, ${geo.perBlock - 1}, ${geo.perBlock}, ${geo.perBlock + 1}, ${3 * geo.perBlock + 5}, 10007};
  for (long long n : sizes) {
    for (int mask = 0; mask < ${1 << all.length}; mask += (mask == 0 ? 1 : mask)) {
      for (int grid = 0; grid < 2; ++grid) {
      ${decl.filter((d) => d !== '').join('\n      ')}
      for (long long i = 0; i < n; ++i) { ${refLocals.join(' ')} ${c.body}; }
      const unsigned full = (unsigned)((n + ${geo.perBlock - 1}) / ${geo.perBlock});
      const unsigned blocks = grid == 0 ? full : (full < 2 ? full : 2);
      gx_launch(blocks, 256, [&] { ${c.name}(${args.join(', ')}, n); });
      int bad = 0, over = 0;
      ${compare}
      printf("%lld %d %u %d %d\\n", n, mask, blocks, bad, over);
      ${frees}
      }
    }
  }
  return 0;
}
`;
}

const GPP = hasTool('g++');
const NVCC = hasTool('nvcc');

test('tiled kernels: the layouts that take them and their vector widths', (t) => {
  t.true(isTiled(['c', 'v', 'c']));
  t.true(isTiled(['c', 'r', 'c']));
  t.false(isTiled(['c', 's', 'c']), 'a strided operand takes the strided kernel');
  t.false(isTiled(['r', 'r']), 'raw operands only: nothing to tile by');
  t.false(isTiled(['c', 'c'], 'if (x < 0) return; z = x'), 'a return would skip a vector\'s stores');
  t.true(isTiled(['c', 'c'], 'if (x < 0) continue; z = x'));
  t.is(vectorWidth(['c', 'c'], ['float32', 'float32']), 4);
  t.is(vectorWidth(['c', 'c'], ['float64', 'bool']), 2, 'the widest operand moves 16 bytes');
  t.is(vectorWidth(['c', 'c'], ['uint8', 'bool']), 16);
  t.is(vectorWidth(['c', 'v', 'c'], ['float16', 'float64', 'float16']), 8, 'a number operand is no vector');
  t.deepEqual(geometryOf(['c', 'c'], ['float32', 'float32']), { perBlock: 256 * 4 * 2, maxBlocks: 2 ** 31 - 1 });
});

(NVCC ? test : test.skip)('tiled and strided kernel sources compile for sm_90 with nvcc (float16 and bfloat16 too)', (t) => {
  const dir = tmpDir('ew-nvcc');
  const extra: Case[] = [
    { name: 'half_axpy', ins: 'float16 x, float16 y, float32 a', outs: 'float16 z', body: 'z = __float2half(a * __half2float(x) + __half2float(y))', layouts: ['c', 'c', 'v', 'c'], passed: [false] },
    { name: 'bf16_copy', ins: 'bfloat16 x', outs: 'float32 z', body: 'z = __bfloat162float(x)', layouts: ['c', 'c'], passed: [false] },
    { name: 'strided_add', ins: 'float32 x, float32 y', outs: 'float32 z', body: 'z = x + y', layouts: ['s', 'c', 'c'], passed: [false] },
  ];
  const srcs = [...CASES, ...extra].map((c) => sourceOf(c).src);
  for (const [i, s] of srcs.entries()) {
    const r = nvccCompile(s, dir);
    t.true(r.ok, `${[...CASES, ...extra][i].name}:\n${r.log}\n${s}`);
  }
  t.regex(srcs[0], /gx_ew_vec<float, 4>/, 'float32 operands move 4-element vectors');
  t.notRegex(srcs[srcs.length - 1], /gx_ew_vec/, 'a strided operand: no vectors');
});

(NVCC ? test : test.skip)('the tiled kernel moves 16-byte vectors (PTX ld/st .v4.f32, .v2.f64); a fused x * y + z has no FMA', (t) => {
  const dir = tmpDir('ew-ptx');
  const ptx = nvccPtx(sourceOf(CASES[0]).src, dir);
  t.regex(ptx, /ld\.global(\.nc)?\.v4\.f32/, 'float32 loads');
  t.regex(ptx, /st\.global\.v4\.f32/, 'float32 stores');
  const f64 = nvccPtx(sourceOf({ ...CASES[0], name: 'fma_f64', ins: 'float64 x, float64 y, float64 s', outs: 'float64 z' }).src, dir);
  t.regex(f64, /ld\.global(\.nc)?\.v2\.f64/, 'float64 loads');
  // The fused kernel gx.fuse builds for add(mul(x, y), z): the product is stored by the eager mul before the add.
  const fused = gx.fuse(function ev_fma(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) { return gx.add(gx.mul(x, y), z); });
  const a = gx.zeros([4]);
  const src = sourceOf({ name: 'ev_fma_k', ins: 'float32 a0, float32 a1, float32 a2', outs: 'float32 out', body: 'out = gx_fused_ev_fma(a0, a1, a2)', layouts: ['c', 'c', 'c', 'c'], passed: [false] }, fused.source(a, a, a)).src;
  t.true(src.includes(FUSE_PREAMBLE));
  const fptx = nvccPtx(src, dir, fuseCompileOptions());
  t.regex(fptx, /ld\.global(\.nc)?\.v4\.f32/);
  t.notRegex(fptx, /\bfma\./, 'no FMA across the two ops');
  t.regex(fptx, /mul\.f32/);
});

for (const c of CASES) {
  (GPP ? test : test.skip)(`tiled kernel on the host, every size, offset and grid: ${c.name}`, (t) => {
    const { src, types } = sourceOf(c);
    const out = runHost(harness(c, src, types), tmpDir('ew-host'));
    const rows = out.trim().split('\n').map((l) => l.split(' ').map(Number));
    t.true(rows.length >= 7 * 2 * 2, `${rows.length} runs`);
    const failed = rows.filter((r) => r[3] !== 0 || r[4] !== 0).map((r) => `n=${r[0]} offsets=${r[1].toString(2)} blocks=${r[2]} wrong=${r[3]} overrun=${r[4]}`);
    t.deepEqual(failed, [], src);
  });
}

cudaTest('elementwiseKernel on CUDA: contiguous, odd sizes, views at offset 1, outputs read by the body', (t) => {
  const axpy = gx.elementwiseKernel('float32 x, float32 y, float32 a', 'float32 z', 'z = a * x + y', { name: 'ev_axpy' });
  const acc = gx.elementwiseKernel('T x', 'T z', 'z = z + x', { name: 'ev_acc' });
  for (const n of [1, 3, 2047, 2048, 2049, 6149, 100_003]) {
    const xv = randomValues('float32', n + 1, n) as Float32Array;
    const yv = randomValues('float32', n + 1, n + 7) as Float32Array;
    using xb = gx.tensor(xv, { device: 'cuda' });
    using yb = gx.tensor(yv, { device: 'cuda' });
    for (const [xo, yo] of [[0, 0], [1, 0], [0, 1], [1, 1]]) {
      using x = xb.slice(0, xo, xo + n);
      using y = yb.slice(0, yo, yo + n);
      using z = axpy(x, y, 0.5) as gx.Tensor;
      const want = Float32Array.from({ length: n }, (_, i) => Math.fround(Math.fround(0.5 * xv[i + xo]) + yv[i + yo]));
      const got = z.toArraySync() as Float32Array;
      // a * x + y may be one FMA on the GPU: within an ulp of the two-rounding reference.
      let worst = 0;
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1e-30, Math.abs(want[i])));
      t.true(worst <= 2 ** -22, `axpy n=${n} offsets ${xo},${yo}: ${worst}`);
    }
    for (const dtype of ['uint8', 'float64', 'int32'] as const) {
      const av = randomValues(dtype, n + 1, 3 * n);
      const bv = randomValues(dtype, n + 1, 5 * n);
      using a = gx.tensor(av as never, { device: 'cuda', dtype });
      using b = gx.tensor(bv as never, { device: 'cuda', dtype });
      using bs = b.slice(0, 1, n + 1);
      using as = a.slice(0, 0, n);
      acc(as, bs);
      using ref = gx.add(gx.tensor(av as never, { dtype }).slice(0, 0, n), gx.tensor(bv as never, { dtype }).slice(0, 1, n + 1));
      t.deepEqual(Array.from(bs.toArraySync() as ArrayLike<number>), Array.from(ref.toArraySync() as ArrayLike<number>), `acc ${dtype} n=${n}`);
    }
  }
});

cudaTest('gx.vectorize and gx.fuse on CUDA: odd sizes and views at offset 1 give the same values as aligned calls', (t) => {
  const mul = gx.vectorize(['float32(float32, float32)'], (x: number, y: number) => x * y);
  const fused = gx.fuse(function ev_fused(x: gx.Tensor, y: gx.Tensor) { return gx.add(gx.sin(x), gx.mul(y, 2)); });
  for (const n of [1, 5, 2047, 2048, 2049, 100_003]) {
    const xv = randomValues('float32', n + 1, 11 * n) as Float32Array;
    const yv = randomValues('float32', n + 1, 13 * n) as Float32Array;
    using xb = gx.tensor(xv, { device: 'cuda' });
    using yb = gx.tensor(yv, { device: 'cuda' });
    for (const [xo, yo] of [[0, 0], [1, 0], [0, 1], [1, 1]]) {
      using x = xb.slice(0, xo, xo + n);
      using y = yb.slice(0, yo, yo + n);
      using p = mul(x, y) as gx.Tensor;
      const want = Float32Array.from({ length: n }, (_, i) => Math.fround(xv[i + xo] * yv[i + yo]));
      t.deepEqual(Array.from(p.toArraySync() as Float32Array), Array.from(want), `vectorize n=${n} offsets ${xo},${yo}`);
      using f = fused(x, y);
      using e = gx.add(gx.sin(x), gx.mul(y, 2));
      t.deepEqual(Array.from(f.toArraySync() as Float32Array), Array.from(e.toArraySync() as Float32Array), `fuse n=${n} offsets ${xo},${yo}`);
    }
  }
});

test('the parameter list RawKernel is given reads as the signature of the source, for every dtype and layout', (t) => {
  const next = rng(91);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  for (let n = 0; n < 60; n++) {
    const nIn = 1 + Math.floor(next() * 3);
    const nOut = 1 + Math.floor(next() * 2);
    const names = Array.from({ length: nIn + nOut }, (_, k) => (k < nIn ? `in${k}` : `out${k - nIn}`));
    const raw = (k: number): boolean => k < nIn && next() < 0.2;
    const all = parseParams(names.map((nm, k) => `${raw(k) ? 'raw ' : ''}${pick(gx.DTYPES)} ${nm}`).join(', '), 'test', 'params');
    const layouts = all.map((p, k): Layout => (p.raw ? 'r' : k < nIn ? pick(['c', 's', 'v'] as const) : pick(['c', 's'] as const)));
    const g = { name: `k${n}`, preamble: '', body: `${names[nIn]} = ${names[0]}`, nIn, all, types: all.map((p) => p.type as gx.DType),
      bound: new Map(), ndim: 1 + Math.floor(next() * 3), layouts, outputPassed: Array.from({ length: nOut }, () => next() < 0.5) };
    // What the launcher is given is what the source declares, read either way; `base` is the declaration's unqualified C type.
    const given = elementwiseParams(g);
    const declared = parseKernelSignature(elementwiseSource(g), g.name);
    t.deepEqual(given.map(({ base: _, ...p }) => p), declared, JSON.stringify({ layouts, types: g.types }));
    t.deepEqual(given.map((p) => parseParamType(`${p.type} ${p.name}`, 'x')), declared);
    t.deepEqual(given.map((p) => p.type.replace(/^const /, '').replace(/\* __restrict__$/, '')), given.map((p) => p.base));
  }
});
