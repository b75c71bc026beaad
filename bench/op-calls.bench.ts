// The per-call overhead of the built-in ops: one-element (and 0-d) tensors,
// so the time is the JS face (argument checks, dtypes, the result), the
// generated call and the binding, not the kernel. Run it on two builds to see
// whether a change to lib/ops or the binding made calls slower; it uses only
// the public gx API, so the same file runs on an older checkout.
//
//   npm run bench:op-calls    (tsc, then node dist/bench/op-calls.bench.js)
//
// Timing: batches of 1000 calls closed by a synchronize (CUDA), median over
// 30 batches, after 3000 warmup calls. The CPU section always runs; the CUDA
// one where a GPU is. GPUEXT_AB_BEFORE=<an older checkout, built> loads it
// beside this build and times each call in alternating batches of the two
// (scripts/compare-builds.sh sets it), the fairest before/after there is.
import * as path from 'path';

import * as gx from '../lib';
import { fmt, perCallNs, printTable, section } from './util';

const CALLS = 30_000;
const BATCH = 1_000;
const WARMUP = 3_000;

type Gx = typeof gx;

/** The calls timed, each on its own inputs made with `g` (this build's gpuext, or an older one's). */
function cases(g: Gx, device: 'cpu' | 'cuda'): { rows: [string, () => void][]; dispose: () => void } {
  const a = g.tensor(new Float32Array([1]), { device });
  const b = g.tensor(new Float32Array([2]), { device });
  const c = g.empty([1], { device });
  const cond = g.tensor([true], { device });
  const row = g.ones([1, 8], { device });
  const rowOut = g.empty([1, 8], { device });
  const s = g.empty([], { device });
  const rows: [string, () => void][] = [
    ['gx.add(a, b, { out })', () => { g.add(a, b, { out: c }); }],
    ['gx.add(a, 1, { out })', () => { g.add(a, 1, { out: c }); }],
    ['gx.add(a, b) + dispose', () => { g.add(a, b).dispose(); }],
    ['a.mul_(1)', () => { a.mul_(1); }],
    ['gx.exp(a, { out })', () => { g.exp(a, { out: c }); }],
    ['gx.where(cond, a, b, { out })', () => { g.where(cond, a, b, { out: c }); }],
    ['gx.clamp(a, 0, 2, { out })', () => { g.clamp(a, 0, 2, { out: c }); }],
    ['gx.sum(a, { out })', () => { g.sum(a, { out: s }); }],
    ['gx.max(a, { axis: 0, out })', () => { g.max(a, { axis: 0, out: s }); }],
    ['gx.softmax(row, -1, { out })', () => { g.softmax(row, -1, { out: rowOut }); }],
    ['gx.cumsum(row, 1, { out })', () => { g.cumsum(row, 1, { out: rowOut }); }],
  ];
  return { rows, dispose: () => { for (const t of [a, b, c, cond, row, rowOut, s]) t.dispose(); } };
}

function run(device: 'cpu' | 'cuda'): string[][] {
  const sync = device === 'cuda' ? (): void => gx.cuda.synchronize() : undefined;
  const us = (f: () => void): number => perCallNs(f, CALLS, BATCH, { warmup: WARMUP, sync }) / 1e3;
  const { rows, dispose } = cases(gx, device);
  const out = rows.map(([name, f]) => [name, fmt(us(f), 2)]);
  dispose();
  return out;
}

/**
 * Before/after in one process (GPUEXT_AB_BEFORE=<older checkout, built>):
 * both builds loaded side by side, each row timed in alternating batches, so
 * the machine's drift (other tenants, clocks) falls on both alike.
 */
function runAB(before: Gx, device: 'cpu' | 'cuda'): string[][] {
  const syncs = device === 'cuda' ? [(): void => before.cuda.synchronize(), (): void => gx.cuda.synchronize()] : [undefined, undefined];
  const sides = [cases(before, device), cases(gx, device)];
  const out = sides[0].rows.map(([name], r) => {
    const samples: number[][] = [[], []];
    for (let round = 0; round < 15; round++) {
      for (let side = 0; side < 2; side++) {
        samples[side].push(perCallNs(sides[side].rows[r][1], 2 * BATCH, BATCH, { warmup: round === 0 ? WARMUP : 100, sync: syncs[side] }));
      }
    }
    const med = (xs: number[]): number => xs.sort((x, y) => x - y)[xs.length >> 1] / 1e3;
    const [b, a] = [med(samples[0]), med(samples[1])];
    return [name, fmt(b, 2), fmt(a, 2), fmt(a / b, 3)];
  });
  for (const s of sides) s.dispose();
  return out;
}

function main(): void {
  const beforeDir = process.env.GPUEXT_AB_BEFORE;
  const devices: ('cpu' | 'cuda')[] = gx.cuda.isAvailable() ? ['cpu', 'cuda'] : ['cpu'];
  if (beforeDir) {
    // The older build's library, with its own core addon and ops.
    const before = require(path.resolve(beforeDir, 'dist/lib')) as Gx;
    section(`built-in op calls, one element: µs per call, ${beforeDir} (before) and this build (after), alternating in one process`);
    for (const d of devices) printTable(['call', `${d} before`, `${d} after`, 'after/before'], runAB(before, d));
    return;
  }
  section('built-in op calls, one element: µs per call (median of batches)');
  for (const d of devices) printTable(['call', `${d} µs`], run(d));
  if (!gx.cuda.isAvailable()) console.log(`cuda: skipped (${gx.cuda.unavailableReason()})`);
}

main();
