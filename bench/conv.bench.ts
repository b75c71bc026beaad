// Conv2d on gpuext against torch (cuDNN on CUDA) in the same run
// (bench/torch_conv.py), float32, TF32 off on both sides. On CUDA gpuext's
// convolutions run through cuDNN (NOTE [ cuDNN convolutions ] in
// lib/ops/conv/cudnn.ts); the conv steps run a second time with it switched
// off, '(unfold)': the unfold + batched matmul fallback (NOTE [ Convolution as
// unfold and matmul ] in lib/nn/conv.ts), side by side with the same torch
// figure (reported, not judged):
//   conv step        y = conv2d(x, w, b); y.backward(gy): weight and bias
//                    gradients (x an image that needs none, as a network's
//                    first layer): batch 64, 3x224x224 -> 64 channels, 7x7,
//                    stride 2, padding 3 (ResNet's stem)
//   conv step dx     the same with x requiring grad too (adds fold)
//   classifier step  an MNIST-shaped training step: Conv2d(1, 32, 3) + ReLU +
//                    MaxPool2d(2) + Flatten + Linear(32*13*13, 10),
//                    crossEntropy, backward, AdamW step; batch 64
// Both sides fill the same sin() patterns, so the checks (sum(y), sum(|dW|),
// the classifier's first loss) agree across. Timing: warmup calls, then
// batches of calls each closed by a synchronize inside the timed region;
// median milliseconds per call (torch_conv.py times the same way).
// Targets: the conv step <= 1.1x torch's time; the classifier step <= torch
// eager's.
//
//   npm run bench:conv
//   GPUEXT_BENCH_CONV=N,C,H,OC,K,S,P   the convolution (default 64,3,224,64,7,2,3)
//   GPUEXT_BENCH_CONV_CLS=B,CH         the classifier's batch and channels (default 64,32)
//   GPUEXT_BENCH_CONV_DEVICE=cpu       run both sides on the CPU (small sizes: a smoke run)
// Exit status 1: gpuext disagreeing with torch's checks, or a failure; a missing torch is a WARNING.
import * as gx from '../lib';
import { cudnnVersion, setCudnnEnabled } from '../lib/ops/conv/cudnn';
import {
  checkLive, fmt, liveCounts, numField, perCallNs, printHeader, printIssues, runMain, printTable, progress, ratio, recField,
  runPythonJson, section, strField,
} from './util';

const CONV_TARGET = 1.1;
const CLS_TARGET = 1.0;

function ints(env: string, dflt: string, n: number): number[] {
  const v = (process.env[env] ?? dflt).split(',').map(Number);
  if (v.length !== n || !v.every((x) => Number.isSafeInteger(x) && x >= 0)) throw new Error(`${env}: want ${n} integers, got '${process.env[env]}'`);
  return v;
}

/** sin(0.37 i + k) * scale, float32 (torch_conv.py's pattern()). */
function pattern(shape: number[], k: number, scale: number, device: string): gx.Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = Math.sin(i * 0.37 + k) * scale;
  return gx.tensor(v, { device, shape });
}

interface Cell { ms: number; checks: Record<string, number> }

function timing(device: string, quick: boolean): { warmup: number; iters: number; batch: number; sync: () => void } {
  return { warmup: quick ? 1 : 5, iters: quick ? 3 : 30, batch: quick ? 1 : 5, sync: () => { if (device !== 'cpu') gx.cuda.synchronize(); } };
}

function convCells(device: string, [n, c, h, oc, k, s, p]: number[], quick: boolean): Map<string, Cell> {
  const cells = new Map<string, Cell>();
  const F = gx.nn.functional;
  const x = pattern([n, c, h, h], 1, 1, device);
  const w = pattern([oc, c, k, k], 2, 1 / Math.sqrt(c * k * k), device).requiresGrad_();
  const b = pattern([oc], 3, 0.1, device).requiresGrad_();
  const t = timing(device, quick);
  try {
    for (const withDx of [false, true]) {
      x.requiresGrad_(withDx);
      const gy = gx.noGrad(() => { using y = F.conv2d(x, w, b, { stride: s, padding: p }); return pattern([...y.shape], 4, 1, device); });
      const step = (): void => gx.tidy(() => {
        F.conv2d(x, w, b, { stride: s, padding: p }).backward(gy);
        w.grad = null; b.grad = null; x.grad = null;
      });
      const checks = gx.tidy(() => {
        const y = F.conv2d(x, w, b, { stride: s, padding: p });
        y.backward(gy);
        const r: Record<string, number> = {
          sum_y: Number(gx.sum(y.astype('float64')).item()),
          sum_abs_dw: Number(gx.sum(gx.abs((w.grad as gx.Tensor).astype('float64'))).item()),
        };
        if (withDx) r.sum_abs_dx = Number(gx.sum(gx.abs((x.grad as gx.Tensor).astype('float64'))).item());
        w.grad = null; b.grad = null; x.grad = null;
        return r;
      });
      const ms = perCallNs(step, t.iters, t.batch, t) / 1e6;
      cells.set(withDx ? 'conv step dx' : 'conv step', { ms, checks });
      gy.dispose();
    }
  } finally {
    x.dispose(); w.dispose(); b.dispose();
  }
  return cells;
}

function classifierCell(device: string, [batch, ch]: number[], quick: boolean): Cell {
  const model = new gx.nn.Sequential(
    new gx.nn.Conv2d(1, ch, 3), new gx.nn.ReLU(), new gx.nn.MaxPool2d(2), new gx.nn.Flatten(), new gx.nn.Linear(ch * 13 * 13, 10),
  ).to(device);
  model.parameters().forEach((q, i) => gx.noGrad(() => { using v = pattern([...q.shape], 5 + i, 0.1, device); q.copy_(v); }));
  const x = pattern([batch, 1, 28, 28], 9, 1, device);
  const labels = gx.tensor(Array.from({ length: batch }, (_, i) => (i * 7) % 10), { dtype: 'int64', device });
  const opt = new gx.optim.AdamW(model.parameters(), { lr: 1e-3 });
  const step = (): number => {
    opt.zeroGrad();
    const loss = gx.tidy(() => {
      const l = gx.nn.functional.crossEntropy(model.call(x), labels);
      l.backward();
      return l.detach();
    });
    opt.step();
    const v = Number(loss.item());
    loss.dispose();
    return v;
  };
  try {
    const first = step();
    const t = timing(device, quick);
    const ms = perCallNs(() => { opt.zeroGrad(); gx.tidy(() => { gx.nn.functional.crossEntropy(model.call(x), labels).backward(); }); opt.step(); }, t.iters, t.batch, t) / 1e6;
    return { ms, checks: { first_loss: first } };
  } finally {
    opt.dispose(); model.dispose(); x.dispose(); labels.dispose();
  }
}

/** The torch cell a gpuext cell is compared with: the fallback's rows share the cuDNN rows' figure. */
const FALLBACK = ' (unfold)';
const torchName = (name: string): string => (name.endsWith(FALLBACK) ? name.slice(0, -FALLBACK.length) : name);

/** The conv steps with cuDNN switched off, named '<cell> (unfold)'. */
function fallbackCells(device: string, conv: number[], quick: boolean): Map<string, Cell> {
  const was = setCudnnEnabled(false);
  try {
    return new Map([...convCells(device, conv, quick)].map(([name, cell]) => [name + FALLBACK, cell]));
  } finally {
    setCudnnEnabled(was);
  }
}

const relDiff = (a: number, b: number): number => Math.abs(a - b) / Math.max(1e-30, Math.abs(b));

async function main(): Promise<void> {
  const cuda = gx.cuda.isAvailable();
  const device = process.env.GPUEXT_BENCH_CONV_DEVICE ?? (cuda ? 'cuda' : 'cpu');
  const quick = device === 'cpu';
  printHeader('Conv2d (cuDNN; unfold + matmul) and an MNIST-shaped training step: gpuext vs torch, float32', cuda);
  const conv = ints('GPUEXT_BENCH_CONV', quick ? '2,3,32,8,7,2,3' : '64,3,224,64,7,2,3', 7);
  const cls = ints('GPUEXT_BENCH_CONV_CLS', quick ? '8,4' : '64,32', 2);
  gx.setFloat32MatmulPrecision('highest');  // TF32 off, as torch's default
  console.log(`  device ${device}; conv N,C,H,OC,K,S,P = ${conv.join(',')}; classifier batch,channels = ${cls.join(',')}; TF32 off`);
  const dnn = quick ? undefined : cudnnVersion(new gx.Device('cuda'));
  if (!quick) console.log(`  gpuext convolutions: ${dnn === undefined ? 'unfold + matmul (cuDNN did not load: NODE_DEBUG=gpuext:conv says why)' : `cuDNN ${dnn}`}`);
  const warnings: string[] = [];
  const problems: string[] = [];
  const live0 = liveCounts(cuda);
  progress('gpuext: conv steps');
  const ours = convCells(device, conv, quick);
  if (!quick) {
    progress('gpuext: conv steps, unfold + matmul (cuDNN switched off)');
    for (const [name, cell] of fallbackCells(device, conv, quick)) ours.set(name, cell);
  }
  progress('gpuext: classifier step');
  ours.set('classifier step', classifierCell(device, cls, quick));
  checkLive(live0, cuda, warnings);

  progress('torch: python3 bench/torch_conv.py');
  const py = runPythonJson('bench/torch_conv.py', ['--device', device, '--conv', conv.join(','), '--cls', cls.join(','), ...(quick ? ['--quick'] : [])], 1_200_000);
  const theirs = new Map<string, Cell>();
  if (!py.ok) {
    warnings.push(`torch side: ${py.error}`);
  } else {
    console.log(`  torch ${strField(py.o, 'torch') ?? '?'} on ${strField(py.o, 'device') ?? '?'}, cuDNN ${strField(py.o, 'cudnn') ?? 'n/a'}, TF32 ${py.o.tf32 === true ? 'on' : 'off'}`);
    for (const name of ours.keys()) {
      const e = recField(recField(py.o, 'cells'), torchName(name));
      const ms = numField(e, 'ms');
      if (ms === undefined) { warnings.push(`torch ${name}: ${strField(e, 'error') ?? 'no figure'}`); continue; }
      const checks: Record<string, number> = {};
      for (const key of Object.keys(ours.get(name)?.checks ?? {})) checks[key] = numField(recField(e, 'checks'), key) ?? NaN;
      theirs.set(name, { ms, checks });
    }
  }
  section(`milliseconds per call (median), ${device}`);
  const rows: string[][] = [];
  const summary: string[] = [];
  for (const [name, f] of ours) {
    const t = theirs.get(name);
    const tol = name === 'classifier step' ? 1e-4 : 1e-3;
    for (const [key, v] of Object.entries(f.checks)) {
      if (t !== undefined && !(relDiff(v, t.checks[key]) <= tol)) problems.push(`${name}: ${key} ${v} vs torch's ${t.checks[key]}`);
    }
    rows.push([name, fmt(f.ms, 3), fmt(t?.ms, 3), ratio(f.ms, t?.ms), Object.entries(f.checks).map(([k, v]) => `${k}=${v.toPrecision(6)}`).join(' ')]);
    const target = name === 'classifier step' ? CLS_TARGET : name === 'conv step' ? CONV_TARGET : undefined;
    if (name === `conv step${FALLBACK}` && t !== undefined) summary.push(`${name}: ${fmt(f.ms, 3)} ms = ${(f.ms / t.ms).toFixed(2)}x torch's (the fallback: reported, not judged)`);
    if (target !== undefined) {
      const r = t === undefined ? undefined : f.ms / t.ms;
      const verdict = r === undefined ? 'not judged (no torch figure)' : quick ? 'not judged (CPU smoke run)' : r <= target ? 'met' : 'MISSED';
      summary.push(`${name}: ${fmt(f.ms, 3)} ms vs torch ${fmt(t?.ms, 3)} ms = ${r === undefined ? 'n/a' : `${r.toFixed(2)}x`} (target <= ${target}x: ${verdict})`);
    }
  }
  printTable(['cell', 'gpuext ms', 'torch ms', 'gpuext / torch', 'checks'], rows, true);
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  printIssues(warnings, problems);
}

runMain(main);
