// einsum and norms benchmark: gx.einsum('bij,bjk->bik') on float32
// [64, 512, 512] x [64, 512, 512] against gx.matmul of the same operands (the
// contraction is one batched matmul: target the same time) and against
// torch.einsum; einsum with a transposed operand ('bij,bkj->bik') and a chain
// ('ij,jk,kl->il') for context; gx.linalg.vectorNorm of 2^26 float32 (ord 2,
// 1, inf) and gx.linalg.matrixNorm 'fro' of [64, 1024, 1024] float32 against
// torch.linalg.vector_norm / matrix_norm, side by side in one call
// (bench/torch_einsum.py). Results are checked: einsum against matmul (the
// same bits), the norms against float64 ones. Pairs compared with each other
// (matmul and einsum; the four norms) run in two interleaved rounds, the
// better median of each kept, on both sides.
//
//   npm run bench:einsum
//
// Timing: after 1 s of float32 batched matmuls (clocks up), gx.benchmark
// (CUDA events on the current stream around each call, the result allocated
// per call as torch's is), 10 warmup, median of 20; float32 matmuls in full
// float32 on both sides (no TF32).
import * as gx from '../lib';
import { fmt, numField, printHeader, printIssues, printTable, progress, ratio, recField, runPythonJson, section } from './util';

const B = 64, N = 512;
const NORM_LOG2 = Number(process.env.GPUEXT_BENCH_NORM_LOG2 ?? 26);
const REPEAT = 20;
/** einsum against gx.matmul of the same operands: at most this ratio of times. */
const TARGET_EINSUM = 1.05;
/** The norms against torch's: at most this ratio of times. */
const TARGET_NORM = 1.1;

interface Row {
  name: string;
  ms: number | undefined;
  torchKey: string;
}

function main(): number {
  const cuda = gx.cuda.isAvailable();
  printHeader(`einsum and norms: gpuext vs torch`, cuda);
  const warnings: string[] = [];
  const problems: string[] = [];
  if (!cuda) {
    console.log(`\nCUDA not available: ${gx.cuda.unavailableReason()}; skipped`);
    return 0;
  }
  gx.setFloat32MatmulPrecision('highest');
  const time = (name: string, fn: () => gx.Tensor): number | undefined =>
    gx.benchmark(() => fn().dispose(), { nWarmup: 10, nRepeat: REPEAT, name }).gpu?.median;
  gx.manualSeed(1);
  using a = gx.rand([B, N, N], { device: 'cuda' });
  using b = gx.rand([B, N, N], { device: 'cuda' });
  progress('warming the GPU up (1 s of float32 batched matmuls)');
  const t0 = Date.now();
  while (Date.now() - t0 < 1000) {
    gx.matmul(a, b).dispose();
    gx.cuda.synchronize();
  }
  // --- einsum --------------------------------------------------------------------------------
  const rows: Row[] = [];
  progress(`gx.matmul and gx.einsum('bij,bjk->bik') [${B}, ${N}, ${N}] float32`);
  // Interleaved, twice each, the better median kept: the clocks drift less between the two sides.
  const pick = (xs: (number | undefined)[]): number | undefined => xs.reduce<number | undefined>((m, x) => (x === undefined ? m : m === undefined ? x : Math.min(m, x)), undefined);
  const mm: (number | undefined)[] = [], es: (number | undefined)[] = [];
  for (let k = 0; k < 2; k++) {
    mm.push(time('matmul', () => gx.matmul(a, b)));
    es.push(time('einsum bij,bjk->bik', () => gx.einsum('bij,bjk->bik', a, b)));
  }
  const matmulMs = pick(mm), einsumMs = pick(es);
  rows.push({ name: 'matmul(a, b)', ms: matmulMs, torchKey: 'matmul' });
  rows.push({ name: "einsum('bij,bjk->bik')", ms: einsumMs, torchKey: 'bij,bjk->bik' });
  {
    using r1 = gx.einsum('bij,bjk->bik', a, b);
    using r2 = gx.matmul(a, b);
    const diff = Number(gx.tidy(() => gx.max(gx.abs(gx.sub(r1, r2)))).item());
    if (diff !== 0) problems.push(`einsum('bij,bjk->bik') differs from gx.matmul by up to ${diff} (expected the same bits)`);
  }
  progress("gx.einsum('bij,bkj->bik') (b transposed) and a chain");
  rows.push({ name: "einsum('bij,bkj->bik')", ms: time('einsum bij,bkj->bik', () => gx.einsum('bij,bkj->bik', a, b)), torchKey: 'bij,bkj->bik' });
  using c1 = gx.rand([4096, 64], { device: 'cuda' });
  using c2 = gx.rand([64, 4096], { device: 'cuda' });
  using c3 = gx.rand([4096, 4096], { device: 'cuda' });
  rows.push({ name: "einsum('ij,jk,kl->il') 4096x64, 64x4096, 4096x4096", ms: time('einsum chain', () => gx.einsum('ij,jk,kl->il', c1, c2, c3)), torchKey: 'ij,jk,kl->il' });
  // --- norms ------------------------------------------------------------------------------------
  const n = 2 ** NORM_LOG2;
  gx.manualSeed(2);
  using v = gx.randn([n], { device: 'cuda' });
  using m = gx.randn([B, 1024, 1024], { device: 'cuda' });
  // The four norms in two interleaved rounds, the better median of each kept (no case gains from going first or last).
  const normCases: [string, string, () => gx.Tensor][] = [
    ...[2, 1, Infinity].map((ord): [string, string, () => gx.Tensor] => [`vectorNorm 2^${NORM_LOG2}, ord ${ord}`, `vector_norm ${ord}`, () => gx.linalg.vectorNorm(v, ord)]),
    [`matrixNorm 'fro' [${B}, 1024, 1024]`, 'matrix_norm fro', () => gx.linalg.matrixNorm(m)],
  ];
  const normTimes = normCases.map((): (number | undefined)[] => []);
  for (let k = 0; k < 2; k++) {
    normCases.forEach(([name, , fn], i) => {
      progress(`gx.linalg.${name} float32 (round ${k + 1})`);
      normTimes[i].push(time(name, fn));
    });
  }
  const normRows: Row[] = normCases.map(([name, torchKey], i) => ({ name, ms: pick(normTimes[i]), torchKey }));
  for (const ord of [2, 1, Infinity]) {
    const got = Number(gx.tidy(() => gx.linalg.vectorNorm(v, ord)).item());
    const want = Number(gx.tidy(() => gx.linalg.vectorNorm(v.astype('float64'), ord)).item());
    if (!(Math.abs(got - want) <= 1e-4 * want)) problems.push(`vectorNorm ord ${ord}: ${got} vs float64 ${want}`);
  }
  {
    const got = gx.tidy(() => Array.from(gx.linalg.matrixNorm(m).toArraySync() as Float32Array));
    const want = gx.tidy(() => Array.from(gx.linalg.matrixNorm(m.astype('float64')).toArraySync() as Float64Array));
    const worst = Math.max(...got.map((g, i) => Math.abs(g - want[i]) / want[i]));
    if (!(worst <= 1e-4)) problems.push(`matrixNorm 'fro': relative error ${worst} against float64`);
  }
  // --- torch --------------------------------------------------------------------------------------
  progress('torch: python3 bench/torch_einsum.py');
  const py = runPythonJson('bench/torch_einsum.py', ['--b', String(B), '--n', String(N), '--norm-log2', String(NORM_LOG2), '--repeat', String(REPEAT)], 600_000);
  const theirs = py.ok ? recField(py.o, 'times') : undefined;
  if (!py.ok) warnings.push(`torch side: ${py.error}`);
  const torchMs = (key: string): number | undefined => numField(theirs, key);
  section(`einsum, float32 (no TF32), result allocated per call; median of ${REPEAT} (CUDA events)`);
  const flops = 2 * B * N ** 3;
  printTable(['', 'gpuext ms', 'torch ms', 'gpuext TFLOPS', 'torch/gpuext time'], rows.map((r) => {
    const t = torchMs(r.torchKey);
    return [r.name, fmt(r.ms, 3), fmt(t, 3), r.torchKey.startsWith('b') || r.torchKey === 'matmul' ? fmt(r.ms === undefined ? undefined : flops / (r.ms / 1e3) / 1e12, 1) : '', ratio(t, r.ms)];
  }), true);
  section(`norms, float32; median of ${REPEAT} (CUDA events)`);
  const bytes = (r: Row): number => (r.torchKey.startsWith('vector') ? 4 * n : 4 * B * 1024 * 1024);
  printTable(['', 'gpuext ms', 'torch ms', 'gpuext GB/s', 'torch/gpuext time'], normRows.map((r) => {
    const t = torchMs(r.torchKey);
    return [r.name, fmt(r.ms, 3), fmt(t, 3), fmt(r.ms === undefined ? undefined : bytes(r) / (r.ms / 1e3) / 1e9, 0), ratio(t, r.ms)];
  }), true);
  section('summary');
  const einRatio = einsumMs !== undefined && matmulMs !== undefined ? einsumMs / matmulMs : undefined;
  console.log(`  einsum('bij,bjk->bik') [${B}, ${N}, ${N}] float32: ${fmt(einsumMs, 3)} ms vs gx.matmul ${fmt(matmulMs, 3)} ms = ${fmt(einRatio, 3)}x the time ` +
    `(target <= ${TARGET_EINSUM}x: ${einRatio === undefined ? 'not judged' : einRatio <= TARGET_EINSUM ? 'met' : 'MISSED'}); torch.einsum ${fmt(torchMs('bij,bjk->bik'), 3)} ms`);
  for (const r of normRows) {
    const t = torchMs(r.torchKey);
    const q = r.ms !== undefined && t !== undefined ? r.ms / t : undefined;
    console.log(`  ${r.name}: ${fmt(r.ms, 3)} ms vs torch ${fmt(t, 3)} ms = ${fmt(q, 3)}x the time ` +
      `(target <= ${TARGET_NORM}x: ${q === undefined ? 'not judged (no torch figure)' : q <= TARGET_NORM ? 'met' : 'MISSED'})`);
  }
  printIssues(warnings, problems);
  return problems.length > 0 ? 1 : 0;
}

process.exitCode = main();
