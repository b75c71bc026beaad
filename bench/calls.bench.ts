// Where the time of a one-element kernel call goes: each layer of the
// ElementwiseKernel and RawKernel call paths timed alone on the current
// stream, beside the launch floor of this machine: an empty kernel launched
// from C++ in this process (native.launchFloor), timed in turn with the
// one-element op the target compares with it, and bench/launch_floor.cu's
// figure from a process of its own.
// A breakdown for whoever works on call latency; bench/rtc.bench.ts has the
// figures judged against the targets.
//
//   npm run bench:calls    (tsc, then node dist/bench/calls.bench.js)
//
// The layers of a one-element built-in op call (gx.mul(a, 2)) come first, on
// the CPU and, with a GPU, on CUDA (NOTE [ Recycled handles ] in
// csrc/binding/tensor_handle.h: the result allocated by the op call into a
// disposed tensor's handle).
//
// Timing as in rtc.bench.ts: batches of 1000 calls closed by a synchronize,
// median over 20 batches, after 2000 warmup calls (30000 for the op's
// layers). Without a GPU the kernel part prints a skip line.
import * as path from 'path';

import * as gx from '../lib';
import { allocate } from '../lib/ops/creation/creation';
import { parseDevice } from '../lib/core/device';
import { dtypeCode } from '../lib/core/dtype';
import { opsLibrary } from '../lib/extension/runtime';
import { flushDeferred, pooledHandle, recycle, spentResult, stageResult } from '../lib/core/handle-pool';
import { native } from '../lib/core/native';
import { detectToolchain } from '../lib/toolkit/toolchain';
import { STAGED_ARGS, STAGED_EMPTY, STAGED_OP_ARGS, stagingArea } from '../lib/core/staging';
import { pairedWithFloor } from './paired-floor';
import { REPO, fmt, launchFloor, median, perCallNs, printTable, section } from './util';

const CALLS = 20_000;
const BATCH = 1_000;
const WARMUP = 2_000;
// The op layers' JS needs more calls before V8 has optimized it (bench/op-calls.bench.ts).
const OP_WARMUP = 30_000;

/** The layers of a one-element gx.mul(a, 2) on `device`, µs per call; `mul`: the whole call's figure; on cuda, `paired`. */
function opLayers(device: 'cpu' | 'cuda'): { rows: string[][]; mul: number; paired?: { call: number; floor: number; also: number[] } } {
  const sync = device === 'cuda' ? (): void => gx.cuda.synchronize() : undefined;
  const us = (f: () => void): number => perCallNs(f, CALLS, BATCH, { warmup: OP_WARMUP, sync }) / 1e3;
  const dev = parseDevice(device, 'bench');
  const a = gx.tensor(new Float32Array([1]), { device });
  const b = gx.tensor(new Float32Array([0.9999]), { device });
  const c = gx.empty([1], { device });
  const f32 = dtypeCode('float32');
  const mul = opsLibrary('bench').opId('mul_scalar');
  const ha = a.handle('calls'), hc = c.handle('calls');
  const spare = gx.empty([1], { device });
  const hs = spare.handle('calls');
  spare.dispose();
  flushDeferred();  // NOTE [ Deferred disposal ]: disposed now, its emptied handle pooled
  // dispose() pooled the handle: take it back, so the rows below have it to themselves and the recycle at the end pools it once.
  if (pooledHandle() !== hs) throw new Error('calls: the disposed spare handle was not the last one pooled');
  // The op's C++ alone (dispatch, the implementation, its launch), its arguments converted once: no N-API crossing.
  const cxxUs = (): number => {
    stageMulScalar(2, f32);
    return median(Array.from(native.timeOpCall(mul, 4, BATCH, ha, hc)));
  };
  const rows: [string, () => void][] = [
    ['native.isDisposed (one N-API call)', () => native.isDisposed(ha)],
    ['native.emptyStaged + native.dispose', () => {
      stagingArea().set([1, f32, dev.typeCode, dev.index, 1], STAGED_EMPTY);
      native.dispose(native.emptyStaged());
    }],
    ['allocate (Tensor) + dispose', () => allocate([1], 'float32', dev).dispose()],
    ['native.callOp(mul_scalar) into out (scalars as JS values)', () => native.callOp(mul, ha, 2, 0, false, f32, hc)],
    // NOTE [ Staged op calls ]: the scalars in the staging area as lib/generated/ops.ts writes them, the tensors as values.
    ['native.callOpStaged(mul_scalar) into out (scalars staged)', () => {
      stageMulScalar(2, f32);
      native.callOpStaged(mul, ha, hc);
    }],
    ['native.callOpStaged(mul_scalar) allocating into a pooled handle + dispose', () => {
      stageResult([1], f32, dev);
      stageMulScalar(2, f32);
      native.callOpStaged(mul, ha, hs);
      spentResult();
      native.dispose(hs);
    }],
    ['gx.mul(a, b, { out }) (two tensors)', () => gx.mul(a, b, { out: c })],
    ['gx.mul(a, b) + dispose (two tensors)', () => gx.mul(a, b).dispose()],
    ['gx.mul(a, 2, { out })', () => gx.mul(a, 2, { out: c })],
    ['gx.mul(a, 2) + dispose', () => gx.mul(a, 2).dispose()],
  ];
  cxxUs();  // warms the path, as the rows' warmup does
  const figures = [['native.timeOpCall(mul_scalar) into out: the op\'s C++ alone, no N-API', cxxUs()] as const,
    ...rows.map(([n, f]) => [n, us(f)] as const)];
  // bench:autograd's forward: a chain of 100 dependent gx.mul(y, b) in a gx.tidy, per op (its 100 results disposed by the tidy).
  const chain = (): void => gx.tidy(() => {
    let y = a;
    for (let i = 0; i < 100; i++) y = gx.mul(y, b);
  });
  const perOp = (f: () => void): number => perCallNs(f, 300, 10, { warmup: 300, sync }) / 1e3 / 100;
  const chained: [string, number][] = [
    ['gx.mul(y, b), 100 chained in a gx.tidy, per op', perOp(chain)],
    ['the same under gx.noGrad, per op', perOp(() => gx.noGrad(chain))],
  ];
  const paired = sync === undefined ? undefined : pairedWithFloor(() => gx.mul(a, 2).dispose(), [a, b, c], sync, BATCH, [cxxUs]);
  recycle(hs);
  a.dispose();
  b.dispose();
  c.dispose();
  return { rows: [...figures, ...chained].map(([n, v]) => [n, fmt(v, 2)]), mul: figures[figures.length - 1][1], paired };
}

/** mul_scalar(self, other, other_int, reverse, dtype, out)'s scalars in their slots (three per argument, value then tag). */
function stageMulScalar(other: number, dtype: number): void {
  const st = stagingArea();
  const A = STAGED_OP_ARGS;
  st[A + 3] = other;
  st[A + 4] = 1;
  st[A + 6] = 0;
  st[A + 7] = 1;
  st[A + 9] = 0;
  st[A + 10] = 1;
  st[A + 12] = dtype;
  st[A + 13] = 1;
}

function main(): void {
  section('a one-element built-in op call, layer by layer, cpu: µs per call (median of batches)');
  printTable(['call', 'µs'], opLayers('cpu').rows);
  if (!gx.cuda.isAvailable()) {
    console.log('calls: the CUDA part skipped (no CUDA device)');
    return;
  }
  section('the same on cuda');
  const cudaOp = opLayers('cuda');
  printTable(['call', 'µs'], cudaOp.rows);
  const sync = (): void => gx.cuda.synchronize();
  const us = (f: () => void): number => perCallNs(f, CALLS, BATCH, { warmup: WARMUP, sync }) / 1e3;
  const a = gx.tensor(new Float32Array([1]), { device: 'cuda' });
  const b = gx.tensor(new Float32Array([2]), { device: 'cuda' });
  const c = gx.empty([1], { device: 'cuda' });
  const dev = a.device;
  const f32 = dtypeCode('float32');
  const add4 = new gx.RawKernel('extern "C" __global__ void add4(const float* a, const float* b, float* c, int n) { if (threadIdx.x < n) c[0] = a[0] + b[0]; }', 'add4');
  const empty0 = new gx.RawKernel('extern "C" __global__ void empty0() {}', 'empty0');
  const ew = gx.elementwiseKernel('T x, T y', 'T z', 'z = x + y', { name: 'calls_ew_add' });
  const args4 = [a, b, c, 1];
  const grid = [1] as const;
  const block = [32] as const;
  const shape = [1];
  const rows: [string, number][] = [];
  const time = (name: string, f: () => void): void => {
    rows.push([name, us(f)]);
  };
  time('synchronize only (per call of an empty loop)', () => {});
  time('native.empty (shape as an array) + native.dispose', () => native.dispose(native.empty(shape, f32, dev.typeCode, dev.index, false)));
  const st = stagingArea();
  const stageEmpty = (): void => void st.set([1, f32, dev.typeCode, dev.index, 1], STAGED_EMPTY);
  time('native.emptyStaged (request staged) + native.dispose', () => {
    stageEmpty();
    native.dispose(native.emptyStaged());
  });
  time('allocate (Tensor) + dispose', () => allocate(shape, 'float32', dev).dispose());
  const ha = a.handle('calls');
  const f0 = empty0.function(dev);
  const f4 = add4.function(dev);
  const v4: unknown[] = [ha, b.handle('calls'), c.handle('calls'), 1];
  time('native.isDisposed (one N-API call)', () => native.isDisposed(ha));
  // The extents and the numbers as RawKernel.launch writes them; nothing else launches between calls.
  st.set([1, 1, 1, 32, 1, 1, 0], 0);
  st.set([a.address('calls'), b.address('calls'), c.address('calls'), 1], STAGED_ARGS);
  time('native.launchKernel, 0 args', () => native.launchKernel(f0, undefined));
  time('native.launchKernel, 4 args (handles in an array)', () => native.launchKernel(f4, undefined, v4));
  time('native.launchKernel, 4 args (staged numbers, tensors by address)', () => native.launchKernel(f4, undefined));
  time('RawKernel.launch, 0 args', () => empty0.launch(grid, block, []));
  time('RawKernel.launch, 4 args', () => add4.launch(grid, block, args4));
  time('ElementwiseKernel, output passed', () => ew(a, b, c));
  time('ElementwiseKernel, output allocated + dispose', () => (ew(a, b) as gx.Tensor).dispose());
  const fl = launchFloor(detectToolchain().nvcc, path.join(REPO, 'build'));
  section('one-element calls, µs per call (median of batches)');
  printTable(['call', 'µs'], [
    ...rows.map(([n, v]) => [n, fmt(v, 2)]),
    ['C++ floor: <<<>>> empty 4-arg kernel', fl.runtimeUs === undefined ? fl.note ?? 'n/a' : fmt(fl.runtimeUs, 2)],
    ['C++ floor: cuLaunchKernel empty 4-arg kernel', fl.driverUs === undefined ? fl.note ?? 'n/a' : fmt(fl.driverUs, 2)],
    ['floor in this process: the same launched from C++ by native.launchFloor', fmt(cudaOp.paired?.floor, 2)],
    ['gx.mul(a, 2) + dispose (the built-in op, result allocated)', fmt(cudaOp.mul, 2)],
  ]);
  // The targets: a one-element built-in op within 1.5 µs of the launch floor, RawKernel's 4-argument launch within
  // 1.0, the floor measured in this process, side by side with the op (pairedWithFloor).
  const p = cudaOp.paired;
  if (p !== undefined) {
    const over = p.call - p.floor;
    console.log(`gx.mul(a, 2) + dispose: ${fmt(p.call, 2)} µs against the floor in this process ${fmt(p.floor, 2)} µs, measured in turn: ` +
      `floor + ${fmt(over, 2)} µs (target <= floor + 1.5: ${over <= 1.5 ? 'met' : 'MISSED'}); ` +
      `the C++ floor of a separate process: ${fl.driverUs === undefined ? fl.note ?? 'n/a' : `${fmt(fl.driverUs, 2)} µs`}`);
    const cxx = p.also[0];
    console.log(`the op's C++ alone (native.timeOpCall, in the same turns): ${fmt(cxx, 2)} µs, floor + ${fmt(cxx - p.floor, 2)} µs; ` +
      `the N-API call, the JS and the allocation add ${fmt(p.call - cxx, 2)} µs`);
    const raw = rows.find(([n]) => n === 'RawKernel.launch, 4 args')?.[1];
    if (raw !== undefined) {
      console.log(`RawKernel.launch, 4 args: ${fmt(raw, 2)} µs, floor + ${fmt(raw - p.floor, 2)} µs (target <= floor + 1.0: ${raw - p.floor <= 1.0 ? 'met' : 'MISSED'})`);
    }
  }
  for (const t of [a, b, c]) t.dispose();
}

main();
