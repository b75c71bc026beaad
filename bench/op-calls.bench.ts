// The per-call overhead of the built-in ops: one-element (and 0-d) tensors, views of a 4x6 one, a 6x6 convolution,
// so the time is the JS face (argument checks, dtypes, the result), the
// generated call and the binding, not the kernel. Run it on two builds to see
// whether a change to lib/ops or the binding made calls slower; it uses only
// the public gx API, so the same file runs on an older checkout.
//
//   npm run bench:op-calls    (tsc, then node dist/bench/op-calls.bench.js)
//
// Timing: batches of 1000 calls closed by a synchronize (CUDA), median over
// 30 batches, after 30000 warmup calls (on a busy 2-core machine V8's
// optimized code for the path came after 20000-50000 calls; before, a row
// read up to 1.5x its steady figure). The CPU section always runs; the CUDA one where a
// GPU is. The first row is the headline figure (targets in DESIGN.md).
// Both sections run ROUNDS times in turn, and each row's figure is its best
// round: on a lent H200 host the first section of a process read up to 2x
// the same host-only calls measured later (one N-API call 0.17 then 0.09 us),
// so one pass compared the process's phase more than the calls.
import * as gx from '../lib';
import { fmt, perCallNs, printTable, section } from './util';

const CALLS = 30_000;
const BATCH = 1_000;
const WARMUP = 30_000;
const ROUNDS = 3;

/** Each row's µs per call, in order. */
function run(device: 'cpu' | 'cuda'): [string, number][] {
  const sync = device === 'cuda' ? (): void => gx.cuda.synchronize() : undefined;
  const us = (f: () => void): number => perCallNs(f, CALLS, BATCH, { warmup: WARMUP, sync }) / 1e3;
  const a = gx.tensor(new Float32Array([1]), { device });
  const b = gx.tensor(new Float32Array([2]), { device });
  const c = gx.empty([1], { device });
  const cond = gx.tensor([true], { device });
  const row = gx.ones([1, 8], { device });
  const rowOut = gx.empty([1, 8], { device });
  const s = gx.empty([], { device });
  const m = gx.ones([4, 6], { device });
  const img = gx.ones([1, 1, 6, 6], { device });
  const filt = gx.ones([2, 1, 3, 3], { device });
  const rows: [string, () => void][] = [
    ['gx.mul(a, 2) + dispose', () => { gx.mul(a, 2).dispose(); }],
    ['gx.mul(a, 2, { out })', () => { gx.mul(a, 2, { out: c }); }],
    ['gx.add(a, b, { out })', () => { gx.add(a, b, { out: c }); }],
    ['gx.add(a, 1, { out })', () => { gx.add(a, 1, { out: c }); }],
    ['gx.add(a, b) + dispose', () => { gx.add(a, b).dispose(); }],
    ['a.mul_(1)', () => { a.mul_(1); }],
    ['gx.exp(a, { out })', () => { gx.exp(a, { out: c }); }],
    ['gx.where(cond, a, b, { out })', () => { gx.where(cond, a, b, { out: c }); }],
    ['gx.clamp(a, 0, 2, { out })', () => { gx.clamp(a, 0, 2, { out: c }); }],
    ['gx.sum(a, { out })', () => { gx.sum(a, { out: s }); }],
    ['gx.amax(a, { axis: 0, out })', () => { gx.amax(a, { axis: 0, out: s }); }],
    ['gx.softmax(row, -1, { out })', () => { gx.softmax(row, -1, { out: rowOut }); }],
    ['gx.cumsum(row, 1, { out })', () => { gx.cumsum(row, 1, { out: rowOut }); }],
    // Views (NOTE [ Staged views ] in csrc/binding/staging.h): a small tensor, the layout all the call carries.
    ['m.view(6, 4) + dispose', () => { m.view(6, 4).dispose(); }],
    ['m.reshape(24) + dispose', () => { m.reshape(24).dispose(); }],
    ['m.transpose(0, 1) + dispose', () => { m.transpose(0, 1).dispose(); }],
    ['m.narrow(1, 1, 3) + dispose', () => { m.narrow(1, 1, 3).dispose(); }],
    // A convolution too small for its kernels to count: its host path (unfold, matmul, views).
    ['F.conv2d(1x1x6x6, 2x1x3x3) + dispose', () => { gx.nn.functional.conv2d(img, filt).dispose(); }],
  ];
  const out = rows.map(([name, f]): [string, number] => [name, us(f)]);
  for (const t of [a, b, c, cond, row, rowOut, s, m, img, filt]) t.dispose();
  return out;
}

/** A table of the rounds' figures, the best of them first. */
function table(rounds: [string, number][][], device: string): void {
  const body = rounds[0].map(([name], i) => {
    const each = rounds.map((r) => r[i][1]);
    return [name, fmt(Math.min(...each), 2), each.map((x) => fmt(x, 2)).join(' ')];
  });
  printTable(['call', `${device} µs`, 'rounds'], body);
}

function main(): void {
  section(`built-in op calls, one element: µs per call (median of batches; the best of ${ROUNDS} rounds, sections in turn)`);
  const cuda = gx.cuda.isAvailable();
  const cpuRounds: [string, number][][] = [], cudaRounds: [string, number][][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    cpuRounds.push(run('cpu'));
    if (cuda) cudaRounds.push(run('cuda'));
  }
  table(cpuRounds, 'cpu');
  if (cuda) table(cudaRounds, 'cuda');
  else console.log(`cuda: skipped (${gx.cuda.unavailableReason()})`);
}

main();
