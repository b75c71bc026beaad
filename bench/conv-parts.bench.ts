// The memory-bound ops of the conv step (bench/conv.bench.ts) one by one,
// against torch in the same run (bench/torch_conv_parts.py), float32:
//   bias add     y (64, 64, 112, 112) + bias viewed (1, 64, 1, 1)
//                (NOTE [ The strided elementwise kernel ])
//   bias grad    sum of gy (64, 64, 112, 112) over (0, 2, 3)
//                (NOTE [ Reducing outer and inner dims ])
//   batch sum    sum over dim 0 of (64, 64, 147): the weight gradient's
//                reduction over the batch (NOTE [ Reducing outer dims ])
//   unfold       (64, 3, 224, 224), 7x7, stride 2, padding 3 -> (64, 147, 12544)
//                (NOTE [ unfold at the memory limit ]); torch: F.unfold
//   fold         its adjoint, back to (64, 3, 224, 224); torch: F.fold
// GB/s = the bytes each must move (inputs read once, output written once) /
// the median time. Timing: warmup calls, then batches of calls each closed by
// a synchronize inside the timed region (torch_conv_parts.py the same).
// Checks: the float64 sum of each output, on both sides, must agree (relative
// 1e-4: the inputs are the same sin() patterns).
//
//   npm run bench:conv-parts
//   GPUEXT_BENCH_CONV_PARTS_DEVICE=cpu   both sides on the CPU at 1/16 of the batch (a smoke run)
// Exit status 1: gpuext disagreeing with torch's checks, or a failure; a missing torch is a WARNING.
import * as gx from '../lib';
import {
  checkLive, fmt, liveCounts, numField, perCallNs, printHeader, printIssues, runMain, printTable, progress, recField,
  runPythonJson, section, strField,
} from './util';

const F = gx.nn.functional;
const TARGET = 1.0;  // torch's time or better

interface Part { name: string; bytes: number; run: () => gx.Tensor; /** The terms a reduction adds (NOTE [ Checking float32 sums ]). */ summed?: gx.Tensor }
interface Result { ms: number; gbps: number; check: number; slack: number }

/** sin(0.37 i + k) * scale as float32 (torch_conv_parts.py's pattern()). */
function pattern(shape: number[], k: number, scale: number, device: string): gx.Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = Math.sin(i * 0.37 + k) * scale;
  return gx.tensor(v, { device, shape });
}

function parts(device: string, n: number): { list: Part[]; inputs: gx.Tensor[] } {
  const y = pattern([n, 64, 112, 112], 1, 1, device);
  const bias = pattern([64], 2, 0.1, device).reshape([1, 64, 1, 1]);
  const per = pattern([n, 64, 147], 3, 1, device);
  const x = pattern([n, 3, 224, 224], 4, 1, device);
  const cols = pattern([n, 147, 12544], 5, 1, device);
  const geo = { stride: 2, padding: 3 };
  const list: Part[] = [
    { name: 'bias add (N,64,112,112)+(1,64,1,1)', bytes: 2 * 4 * y.numel, run: () => gx.add(y, bias) },
    { name: 'bias grad sum (0,2,3)', bytes: 4 * y.numel, run: () => gx.sum(y, [0, 2, 3]), summed: y },
    { name: 'batch sum (0) of (N,64,147)', bytes: 4 * per.numel, run: () => gx.sum(per, 0), summed: per },
    { name: 'unfold 7x7/2 pad 3', bytes: 4 * (x.numel + cols.numel), run: () => F.unfold(x, 7, geo) },
    { name: 'fold 7x7/2 pad 3', bytes: 4 * (x.numel + cols.numel), run: () => F.fold(cols, [224, 224], 7, geo) },
  ];
  return { list, inputs: [y, bias, per, x, cols] };
}

function measure(device: string, n: number, quick: boolean): Map<string, Result> {
  const sync = (): void => { if (device !== 'cpu') gx.cuda.synchronize(); };
  const out = new Map<string, Result>();
  progress(`gpuext: inputs on ${device}`);
  const { list, inputs } = parts(device, n);
  try {
    for (const p of list) {
      progress(`gpuext: ${p.name}`);
      const check = gx.tidy(() => Number(gx.sum(p.run().astype('float64')).item()));
      // NOTE [ Checking float32 sums ]: a float32 sum of many terms may differ from another order's by about
      // eps * sum |terms|, however small the (cancelled) result; the check allows that much beside 1e-4.
      const summed = p.summed;
      const slack = summed === undefined ? 0 : 2 ** -24 * gx.tidy(() => Number(gx.sum(gx.abs(summed.astype('float64'))).item()));
      const ns = perCallNs(() => p.run().dispose(), quick ? 3 : 50, quick ? 1 : 5, { warmup: quick ? 1 : 5, sync });
      out.set(p.name, { ms: ns / 1e6, gbps: p.bytes / ns, check, slack });
    }
  } finally {
    for (const t of inputs) t.dispose();
  }
  return out;
}

function main(): void {
  const device = process.env.GPUEXT_BENCH_CONV_PARTS_DEVICE === 'cpu' ? 'cpu' : 'cuda';
  const cuda = gx.cuda.isAvailable();
  const live0 = liveCounts(cuda);
  printHeader('gpuext conv-step parts (elementwise broadcast, reductions, unfold, fold)', cuda);
  const warnings: string[] = [], problems: string[] = [];
  if (device === 'cuda' && !cuda) {
    console.log(`  skipped: CUDA not available: ${gx.cuda.unavailableReason()}`);
    return;
  }
  const quick = device === 'cpu';
  const n = quick ? 4 : 64;
  const ours = measure(device, n, quick);
  progress('torch: running bench/torch_conv_parts.py');
  const py = runPythonJson('bench/torch_conv_parts.py', ['--device', device, '--batch', String(n), ...(quick ? ['--quick'] : [])], 600_000);
  if (!py.ok) warnings.push(`torch: ${py.error}`);
  else console.log(`  torch ${strField(py.o, 'torch') ?? '?'} on ${strField(py.o, 'device') ?? '?'}`);
  section(`${device}, float32, batch ${n} (median ms per call; GB/s of the bytes each must move)`);
  const summary: string[] = [];
  const rows = [...ours].map(([name, r]) => {
    const e = py.ok ? recField(recField(py.o, 'parts'), name) : undefined;
    const tms = numField(e, 'ms'), tcheck = numField(e, 'check');
    if (tcheck !== undefined && !(Math.abs(r.check - tcheck) <= Math.max(1e-4 * Math.max(1, Math.abs(tcheck)), r.slack))) {
      problems.push(`${name}: sum of the output ${r.check} but torch's ${tcheck}`);
    }
    const ratio = tms !== undefined ? r.ms / tms : undefined;
    const verdict = ratio === undefined ? 'n/a' : ratio <= TARGET ? 'met' : 'MISSED';
    summary.push(`${name}: ${fmt(r.ms, 3)} ms (${fmt(r.gbps, 0)} GB/s) vs torch ${fmt(tms, 3)} ms = ${ratio === undefined ? 'n/a' : `${ratio.toFixed(2)}x`} (target <= ${TARGET}x: ${verdict})`);
    return [name, fmt(r.ms, 3), fmt(r.gbps, 0), fmt(tms, 3), ratio === undefined ? 'n/a' : ratio.toFixed(2), verdict];
  });
  printTable(['part', 'gpuext ms', 'gpuext GB/s', 'torch ms', 'gpuext / torch', ''], rows);
  checkLive(live0, cuda, warnings);
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  printIssues(warnings, problems);
}

runMain(main);
