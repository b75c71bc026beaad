// The LLTM cell of PyTorch's "Custom C++ and CUDA Extensions" tutorial
// (examples/lltm): a training step (forward, then backward of
// sum(new_h) + sum(new_cell)) of the gpuext extension's cell, both ways it
// registers its gradient, against the tutorial's two torch versions in the
// same run (bench/torch_lltm.py): eager torch ops with autograd, and
// extension-cpp's CUDA LLTM built with torch.utils.cpp_extension.load_inline.
//
//   npm run bench:lltm      GPUEXT_BENCH_LLTM_SIZES=16,32,128:1024,1024,1024 (B,F,S cases)
//                           GPUEXT_BENCH_LLTM_DEVICE=cpu (the gpuext cells on the CPU, torch's skipped: a check run)
//
// Cells (float32 on the GPU, TF32 off on both sides):
//   gx op        lltmForward: gx.cat + gx.matmul + the op lltm_forward_elementwise with its gradient
//                registered (gx.autograd.registerAutograd); autograd differentiates the rest
//   gx Function  LLTMFunction (gx.autograd.Function, as extension-cpp's): one node, backward by
//                the op lltm_backward_elementwise and two gx.matmul
//   gx C++      LLTMCppFunction (examples/lltm-cpp): extension-cpp's lltm.cpp ported to <gpuext/ops.h>,
//                forward and backward from built-in ops called from C++ (checked; its ratio to torch's
//                extension printed, not judged)
//   gx reference the same cell from built-in ops only (for scale; not judged)
// All five operands require grad (as in the tutorial's benchmark.py), filled
// from sin(0.37 i + k) patterns that torch_lltm.py fills identically, so the
// checks (sum(new_h), sum(|d weights|) of one step) can be compared across.
// forward: the cell, its outputs disposed (the tape freed); step: forward +
// backward, every .grad cleared. Timing: 10 warmup calls, then 20 batches of
// 10 calls, each batch closed by a device synchronize inside the timed region;
// median microseconds per call (torch_lltm.py times its cells the same way).
// Target: a gpuext step <= 0.8x the faster of the two torch versions' step.
// Exit status 1: a gpuext cell disagreeing with the reference, or a failure;
// torch's failures (no torch, a failed load_inline) are WARNINGS.
import * as gx from '../lib';
import { loadLltm, lltmForward, lltmFunction, lltmReference } from '../examples/lltm/lltm';
import { LLTMCppFunction, loadLltmCpp } from '../examples/lltm-cpp/lltm-cpp';
import {
  checkLive, fmt, isRecord, liveCounts, numField, perCallNs, printHeader, printIssues, runMain, printTable, progress, ratio,
  recField,
  runPythonJson, section, strField,
} from './util';

const TARGET = 0.8;
const WARMUP = 10;
const SAMPLES = 20;
const BATCH = 10;

interface Size { B: number; F: number; S: number }

function sizes(): Size[] {
  const spec = process.env.GPUEXT_BENCH_LLTM_SIZES ?? '16,32,128:1024,1024,1024';
  return spec.split(':').map((s) => {
    const [B, F, S] = s.split(',').map(Number);
    if (![B, F, S].every((n) => Number.isSafeInteger(n) && n > 0)) throw new Error(`GPUEXT_BENCH_LLTM_SIZES: bad case '${s}' (want B,F,S)`);
    return { B, F, S };
  });
}

const label = (s: Size): string => `B=${s.B} F=${s.F} S=${s.S}`;

type Cell = (input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor, oldCell: gx.Tensor) => gx.Tensor[];
const lltmCpp: Cell = (input, weights, bias, oldH, oldCell) => LLTMCppFunction.apply(input, weights, bias, oldH, oldCell);
const CELLS: [string, Cell][] = [
  ['gx op', lltmForward], ['gx Function', lltmFunction], ['gx C++', lltmCpp], ['gx reference', lltmReference],
];
const JUDGED = ['gx op', 'gx Function'];
/** The cells checked against the reference: the judged ones and the C++ port. */
const CHECKED = [...JUDGED, 'gx C++'];
const DEVICE: 'cpu' | 'cuda' = process.env.GPUEXT_BENCH_LLTM_DEVICE === 'cpu' ? 'cpu' : 'cuda';

interface Figures { forwardUs: number; stepUs: number; sumH: number; sumAbsDw: number }

/** sin(0.37 i + k) * scale, float32, requiring grad (torch_lltm.py's pattern()). */
function pattern(shape: number[], k: number, scale: number): gx.Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = Math.sin(i * 0.37 + k) * scale;
  return gx.tensor(v, { device: DEVICE, shape }).requiresGrad_();
}

function operands({ B, F, S }: Size): gx.Tensor[] {
  const stdv = 1 / Math.sqrt(S);
  return [pattern([B, F], 3, 1), pattern([3 * S, F + S], 1, stdv), pattern([3 * S], 2, stdv), pattern([B, S], 4, 0.5), pattern([B, S], 5, 1)];
}

function runCell(cell: Cell, xs: gx.Tensor[]): Figures {
  const clear = (): void => { for (const t of xs) t.grad = null; };
  const call = (): gx.Tensor[] => cell(xs[0], xs[1], xs[2], xs[3], xs[4]);
  const checks = gx.tidy(() => {
    const [h, c] = call();
    gx.add(gx.sum(h), gx.sum(c)).backward();
    const sumH = Number(gx.sum(h.astype('float64')).item());
    const sumAbsDw = Number(gx.sum(gx.abs((xs[1].grad as gx.Tensor).astype('float64'))).item());
    clear();
    return { sumH, sumAbsDw };
  });
  const sync = DEVICE === 'cuda' ? (): void => gx.cuda.synchronize() : undefined;
  const forwardUs = perCallNs(() => gx.tidy(() => { call(); }), SAMPLES * BATCH, BATCH, { warmup: WARMUP, sync }) / 1e3;
  const stepUs = perCallNs(() => gx.tidy(() => {
    const [h, c] = call();
    gx.add(gx.sum(h), gx.sum(c)).backward();
    clear();
  }), SAMPLES * BATCH, BATCH, { warmup: WARMUP, sync }) / 1e3;
  return { forwardUs, stepUs, ...checks };
}

const relDiff = (a: number, b: number): number => Math.abs(a - b) / Math.max(1e-30, Math.abs(b));

async function main(): Promise<void> {
  const cuda = gx.cuda.isAvailable();
  printHeader('LLTM (the C++/CUDA extension tutorial\'s cell): gpuext vs torch, float32 training steps', cuda);
  const warnings: string[] = [];
  const problems: string[] = [];
  if (!cuda && DEVICE === 'cuda') {
    console.log(`\nCUDA not available: ${gx.cuda.unavailableReason()}; skipped (GPUEXT_BENCH_LLTM_DEVICE=cpu runs the gpuext cells on the CPU)`);
    return;
  }
  console.log(`  device: ${DEVICE}; float32 matmul precision: ${gx.getFloat32MatmulPrecision()} (TF32 ${gx.getFloat32MatmulPrecision() === 'high' ? 'on' : 'off'})`);
  progress('gpuext: building examples/lltm (gx.load)');
  const t0 = Date.now();
  await loadLltm();  // arch: GPUEXT_CUDA_ARCH, else the GPU here
  console.log(`  examples/lltm loaded in ${fmt((Date.now() - t0) / 1000, 1)} s (gx.load; cached after the first build)`);
  progress('gpuext: building examples/lltm-cpp (gx.load)');
  const t1 = Date.now();
  await loadLltmCpp();
  console.log(`  examples/lltm-cpp loaded in ${fmt((Date.now() - t1) / 1000, 1)} s`);
  const cases = sizes();
  const live0 = liveCounts(cuda);
  const ours = new Map<string, Map<string, Figures>>();
  for (const size of cases) {
    const xs = operands(size);
    const row = new Map<string, Figures>();
    try {
      for (const [name, cell] of CELLS) {
        progress(`gpuext: ${name} ${label(size)}`);
        row.set(name, runCell(cell, xs));
      }
    } finally {
      for (const t of xs) t.dispose();
    }
    const ref = row.get('gx reference') as Figures;
    for (const name of CHECKED) {
      const f = row.get(name) as Figures;
      for (const [what, a, b] of [['sum(new_h)', f.sumH, ref.sumH], ['sum(|d weights|)', f.sumAbsDw, ref.sumAbsDw]] as const) {
        if (!(relDiff(a, b) <= 1e-4)) problems.push(`${label(size)} ${name}: ${what} ${a} vs the reference's ${b}`);
      }
    }
    ours.set(label(size), row);
  }
  checkLive(live0, cuda, warnings);

  if (DEVICE === 'cuda') progress('torch: python3 bench/torch_lltm.py (load_inline of extension-cpp\'s LLTM first: a minute or two)');
  const py = DEVICE === 'cpu' ? { ok: false as const, error: 'not run: bench/torch_lltm.py measures CUDA (GPUEXT_BENCH_LLTM_DEVICE=cpu)' } : runPythonJson('bench/torch_lltm.py', ['--sizes', cases.map((s) => `${s.B},${s.F},${s.S}`).join(':'), '--warmup',
    String(WARMUP), '--samples', String(SAMPLES), '--batch', String(BATCH)], 1_200_000);
  const theirs = new Map<string, Map<string, Figures | string>>();
  if (!py.ok) {
    warnings.push(`torch side: ${py.error}`);
  } else {
    console.log(`  torch ${strField(py.o, 'torch') ?? '?'} on ${strField(py.o, 'device') ?? '?'}, TF32 ${py.o.tf32 === true ? 'on' : 'off'}`);
    const b = recField(py.o, 'build');
    if (strField(b, 'status') === 'ok') console.log(`  extension-cpp's LLTM built by load_inline in ${fmt(numField(b, 'seconds'), 1)} s`);
    else warnings.push(`torch extension-cpp LLTM: ${strField(b, 'status') ?? '?'}: ${strField(b, 'error') ?? ''}`);
    for (const c of Array.isArray(py.o.cases) ? py.o.cases : []) {
      if (!isRecord(c)) continue;
      const key = label({ B: numField(c, 'batch') ?? 0, F: numField(c, 'features') ?? 0, S: numField(c, 'state') ?? 0 });
      const row = new Map<string, Figures | string>();
      for (const name of ['eager', 'ext']) {
        const e = recField(c, name);
        const forwardUs = numField(e, 'forward_us'), stepUs = numField(e, 'step_us');
        row.set(`torch ${name}`, forwardUs !== undefined && stepUs !== undefined
          ? { forwardUs, stepUs, sumH: numField(e, 'sum_h') ?? NaN, sumAbsDw: numField(e, 'sum_abs_dw') ?? NaN }
          : strField(e, 'error') ?? 'no figure');
      }
      theirs.set(key, row);
    }
  }

  const summary: string[] = [];
  for (const size of cases) {
    const key = label(size);
    const row = ours.get(key) as Map<string, Figures>;
    const t = theirs.get(key);
    const fig = (name: string): Figures | undefined => { const v = t?.get(name); return typeof v === 'object' ? v : undefined; };
    const eager = fig('torch eager'), ext = fig('torch ext');
    for (const [name, f] of [['torch eager', eager], ['torch ext', ext]] as const) {
      const v = t?.get(name);
      if (typeof v === 'string') warnings.push(`${key} ${name}: ${v}`);
      const ref = row.get('gx reference') as Figures;
      if (f !== undefined && !(relDiff(f.sumH, ref.sumH) <= 1e-3 && relDiff(f.sumAbsDw, ref.sumAbsDw) <= 1e-3)) {
        warnings.push(`${key} ${name}: checks sum(new_h) ${f.sumH}, sum(|d weights|) ${f.sumAbsDw} vs gpuext's ${ref.sumH}, ${ref.sumAbsDw}`);
      }
    }
    const faster = [eager?.stepUs, ext?.stepUs].filter((x): x is number => x !== undefined);
    const best = faster.length > 0 ? Math.min(...faster) : undefined;
    section(`${key}, float32: microseconds per call (median of ${SAMPLES} batches of ${BATCH}, synchronized)`);
    const rows = [...row.entries(), ...(t ? [...t.entries()] : [])].map(([name, f]) => (typeof f === 'string'
      ? [name, 'n/a', 'n/a', '', '', f.slice(0, 60)]
      : [name, fmt(f.forwardUs), fmt(f.stepUs), best === undefined ? 'n/a' : ratio(f.stepUs, best), f.sumH.toPrecision(7), f.sumAbsDw.toPrecision(7)]));
    printTable(['cell', 'forward us', 'step us', 'step / faster torch', 'sum(new_h)', 'sum(|d weights|)'], rows);
    for (const name of JUDGED) {
      const s = (row.get(name) as Figures).stepUs;
      const r = best === undefined ? undefined : s / best;
      const verdict = r === undefined ? 'not judged (no torch figure)' : r <= TARGET ? 'met' : 'MISSED';
      summary.push(`${key} ${name} step: ${fmt(s)} us vs torch eager ${fmt(eager?.stepUs)} / ext ${fmt(ext?.stepUs)} us = ` +
        `${r === undefined ? 'n/a' : `${r.toFixed(2)}x`} the faster (target <= ${TARGET}x: ${verdict})`);
    }
    const cpp = (row.get('gx C++') as Figures).stepUs;
    summary.push(`${key} gx C++ (lltm-cpp) step: ${fmt(cpp)} us vs torch's extension ${fmt(ext?.stepUs)} us = ` +
      `${ext === undefined ? 'n/a' : `${(cpp / ext.stepUs).toFixed(2)}x`} (not judged)`);
  }
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  printIssues(warnings, problems);
}

runMain(main);
