// Several GPUs (`npm run bench:dist`; meant for a machine with two or more,
// and it runs on one): side by side in one call,
//   - all-reduce of 1 MiB, 64 MiB and 1 GiB float32 over one rank per GPU
//     (gpuext run + NCCL) against torch.distributed (bench/torch_dist.py):
//     bus bandwidth, nccl-tests' 2(n-1)/n x bytes / time (targets: >= 0.97x
//     torch at 64 MiB and 1 GiB, 1 MiB latency no worse);
//   - mapBlocks of Dask's add_broadcast kernel on 65536 x 8192 float32 in
//     8192 x 8192 blocks over every GPU against the same blocks on one
//     (target >= 1.9x with two GPUs), as the example's function and as a
//     launch plan, with the host's time per block (target <= 5 us), and as
//     a plan with y replicated on every GPU (no copy of y per call);
//   - the chunked (tall-skinny) SVD of 200000 x 1000 float32 in row blocks
//     over every GPU against gpuext's and torch's one-GPU SVD (target >= 1.5x
//     faster, the same reconstruction error).
// With one GPU the ratios measure the code path, not scaling (the bus
// bandwidth of one rank is 0 by the formula; the algorithm bandwidth is shown).
import { spawnSync } from 'child_process';
import * as path from 'path';

import * as gx from '../lib';
import { addBroadcastPlan, dispatchAddBroadcast } from '../examples/distributed';
import { detectToolchain } from '../lib/toolkit/toolchain';
import { cudaFloor, fmt, median, numField, REPO, rotatedMedians, runPythonJson, section } from './util';

interface AllReduceRow {
  mib: number;
  ms: number;
  busGBs: number;
  algGBs: number;
  enqueueUs?: number;
}

const SIZES = '1,64,1024';

function syncAll(n: number): void {
  for (let i = 0; i < n; i++) gx.cuda.synchronize(`cuda:${i}`);
}

function timeMs(n: number, f: () => void, reps: number): number {
  f();
  syncAll(n);
  const s: number[] = [];
  for (let i = 0; i < reps; i++) {
    syncAll(n);
    const t0 = process.hrtime.bigint();
    f();
    syncAll(n);
    s.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(s);
}

function main(): void {
  if (!gx.cuda.isAvailable()) {
    console.log('dist: skipped (no CUDA device)');
    return;
  }
  const n = gx.cuda.deviceCount();
  const devices = Array.from({ length: n }, (_, i) => `cuda:${i}`);

  // All-reduce, gpuext: one rank per GPU under the launcher.
  const r = spawnSync(process.execPath, [path.join(REPO, 'dist/lib/cli/main.js'), 'run', '--nproc-per-node', String(n),
    path.join(REPO, 'dist/bench/dist-allreduce.rank.js'), SIZES], { encoding: 'utf8', timeout: 600_000 });
  const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  const ours = r.status === 0 ? (JSON.parse(line) as { allReduce: AllReduceRow[] }).allReduce : undefined;
  if (ours === undefined) console.error(`gpuext all-reduce failed: ${r.stderr}`);

  // mapBlocks of the add_broadcast kernel: every GPU against one, as the
  // example's function (a checked kernel.launch per block) and as a launch
  // plan (NOTE [ Block launch plans ]); and the host's time per block, from
  // the calls to their return (the kernels still running).
  const rows = 65536, cols = 8192, chunk: [number, number] = [8192, 8192];
  // The four cases (every GPU or one, function or plan) measured in rotation,
  // one call at a time: on the lent machines single calls of 1.2 ms took up
  // to 2.7 ms now and then, and a host's noisy spell would otherwise fall on
  // whichever case ran then.
  const map = gx.tidy(() => {
    const x = gx.rand([rows, cols], { device: 'cuda:0' });
    const y = gx.rand([cols], { device: 'cuda:0' });
    // The fifth case keeps a copy of y on every GPU (NOTE [ Replicated blocks ]): no copy per call.
    const cases = ([[devices, 'function', false], [['cuda:0'], 'function', false], [devices, 'plan', false], [['cuda:0'], 'plan', false],
      [devices, 'plan', true]] as const).map(([devs, form, replicate]) => {
      const dx = gx.chunked(x, { chunks: chunk, devices: [...devs] });
      const dy = gx.chunked(y, { chunks: [chunk[1]], devices: [...devs], replicate });
      const dz = gx.chunked(gx.empty([rows, cols], { device: 'cuda:0' }), { chunks: chunk, devices: [...devs] });
      const call = form === 'plan' ? () => { gx.mapBlocks(addBroadcastPlan, dx, dy, dz, { dtype: 'float32' }); }
        : () => { gx.mapBlocks(dispatchAddBroadcast, dx, dy, dz, { dtype: 'float32' }); };
      // Warmed up as a program calling mapBlocks in a loop is: V8 optimizes a
      // function after some dozens of calls, and the first ones (unoptimized)
      // cost several times the host time (NOTE [ Block tables ]).
      for (let i = 0; i < 50; i++) call();
      syncAll(n);
      return { call, blocks: dx.blocks.length, later: [] as number[], dispose: () => { dx.dispose(); dy.dispose(); dz.dispose(); } };
    });
    x.dispose();
    // Each timed call follows a call of the same case: a GPU that sat idle
    // runs its next work slower (on the x2 H200 host a two-GPU call took
    // 1.24-1.26 ms after another, 1.28-1.32 ms after a one-GPU call had left
    // cuda:1 idle for 2.4 ms, 1.39 ms after 20 ms idle), and the rotation
    // would otherwise leave only the second GPU idle before the cases that use
    // it, as a program looping over mapBlocks does not.
    const wall = (c: (typeof cases)[number]): number => {
      syncAll(n);
      c.call();
      syncAll(n);
      const t0 = process.hrtime.bigint();
      c.call();
      syncAll(n);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    // The host's time per block as a loop dispatching blocks pays it: four
    // calls back to back (the GPUs still busy with the earlier ones), so the
    // driver's dearer first launch on an idle GPU (about 8 us against 4 for
    // the next ones, in C++, on the H200) is not counted as every block's.
    // The three calls after the first are also kept alone: on the lent hosts
    // the first call after a synchronize cost two to five times the next
    // ones, and a loop dispatching blocks keeps the GPUs busy.
    const host = (c: (typeof cases)[number]): number => {
      syncAll(n);
      const t0 = process.hrtime.bigint();
      c.call();
      const t1 = process.hrtime.bigint();
      for (let i = 1; i < 4; i++) c.call();
      const t2 = process.hrtime.bigint();
      syncAll(n);
      c.later.push(Number(t2 - t1) / 3e3 / c.blocks);
      return Number(t2 - t0) / 4e6;
    };
    const ms = rotatedMedians(cases, wall, 41);
    const hostUs = rotatedMedians(cases, host, 21).map((h, i) => (h * 1000) / cases[i].blocks);
    const laterUs = cases.map((c) => median(c.later));
    cases.forEach((c) => c.dispose());
    return cases.map((_, i) => ({ ms: ms[i], hostUs: hostUs[i], laterUs: laterUs[i] }));
  });
  const [mapAll, mapOne, planAll, planOne, planReplicated] = map;
  // The same blocks dispatched from C++ (bench/block_dispatch_floor.cu): the floor of mapBlocks' design (a graph per
  // GPU, the copies of y outside them), and of one graph over every GPU with the copies in it.
  const floor = cudaFloor(detectToolchain().nvcc, path.join(REPO, 'build'), 'block_dispatch_floor');

  // The chunked SVD against one SVD.
  const [m, k] = [200_000, 1000];
  const blocks = Math.max(2, n) * 2;
  const svd = gx.tidy(() => {
    gx.manualSeed(5);
    const a = gx.randn([m, k], { device: 'cuda:0' });
    const err = (u: gx.Tensor, s: gx.Tensor, vh: gx.Tensor): number =>
      gx.tidy(() => (gx.max(gx.abs(gx.sub(gx.matmul(u.mul(s.reshape(1, -1)), vh), a))).item() as number) / (gx.max(gx.abs(a)).item() as number));
    using ca = gx.chunked(a, { chunks: [m / blocks, k], devices });
    const chunkedMs = timeMs(n, () => { const d = ca.svd(); d.U.dispose(); d.S.dispose(); d.Vh.dispose(); }, 3);
    const bySvdMs = timeMs(n, () => { const d = ca.svd({ factor: 'svd' }); d.U.dispose(); d.S.dispose(); d.Vh.dispose(); }, 3);
    const oneMs = timeMs(n, () => { const d = gx.linalg.svd(a, { fullMatrices: false }); d.U.dispose(); d.S.dispose(); d.Vh.dispose(); }, 3);
    const c = ca.svd();
    const chunkedErr = err(c.U.compute('cuda:0'), c.S, c.Vh);
    c.U.dispose();
    const o = gx.linalg.svd(a, { fullMatrices: false });
    // The parts of the chunked SVD on cuda:0, one block of rows (which per-block factorisation pays).
    const block = a.narrow(0, 0, m / blocks).contiguous();
    const stacked = gx.randn([blocks * k, k], { device: 'cuda:0' });
    const square = gx.randn([k, k], { device: 'cuda:0' });
    const free = (r: object): void => (Object.values(r) as gx.Tensor[]).forEach((t) => t.dispose());
    const parts = {
      qrBlock: timeMs(1, () => free(gx.linalg.qr(block)), 3),
      svdBlock: timeMs(1, () => free(gx.linalg.svd(block, { fullMatrices: false })), 3),
      svdStacked: timeMs(1, () => free(gx.linalg.svd(stacked, { fullMatrices: false })), 3),
      svdSquare: timeMs(1, () => free(gx.linalg.svd(square, { fullMatrices: false })), 3),
      qrStacked: timeMs(1, () => free(gx.linalg.qr(stacked)), 3),
      matmulBlock: timeMs(1, () => gx.matmul(block, square).dispose(), 3),
    };
    return { chunkedMs, bySvdMs, oneMs, chunkedErr, oneErr: err(o.U, o.S, o.Vh), parts, perDevice: blocks / n };
  });

  const py = runPythonJson(path.join(REPO, 'bench', 'torch_dist.py'), ['--gpus', String(n), '--sizes', SIZES, '--svd', `${m},${k}`], 900_000);
  const torch = py.ok ? (py.o.allReduce as AllReduceRow[]) : undefined;
  const torchSvd = py.ok ? (py.o.svd_ms as number) : undefined;

  section('summary');
  console.log(`  GPUs: ${n} (${gx.cuda.getDeviceProperties('cuda:0').name})${n === 1 ? '; with one GPU the ratios below measure the code path, not scaling' : ''}`);
  for (const row of ours ?? []) {
    const t = torch?.find((x) => x.mib === row.mib);
    const ratio = t === undefined ? undefined : n > 1 ? row.busGBs / t.busGBs : t.ms / row.ms;
    const target = row.mib === 1 ? (t === undefined ? '' : ` (target: latency no worse: ${row.ms <= t.ms * 1.02 ? 'met' : 'MISSED'})`)
      : ` (target >= 0.97: ${ratio !== undefined && ratio >= 0.97 ? 'met' : 'MISSED'})`;
    console.log(`  all-reduce ${row.mib} MiB float32: ${fmt(row.ms, 3)} ms, bus ${fmt(row.busGBs)} GB/s, alg ${fmt(row.algGBs)} GB/s vs torch ` +
      `${t === undefined ? `- (${py.ok ? 'no row' : py.error})` : `${fmt(t.ms, 3)} ms, bus ${fmt(t.busGBs)} GB/s = ${fmt(ratio, 3)}x`}${target}`);
  }
  if (ours === undefined) console.log('  all-reduce: FAILED (see stderr)');
  const scaling = (all: { ms: number }, one: { ms: number }): string =>
    `${n} GPU(s) ${fmt(all.ms, 3)} ms vs one ${fmt(one.ms, 3)} ms = ${fmt(one.ms / all.ms, 3)}x (target >= 1.9 with two GPUs: ${one.ms / all.ms >= 1.9 ? 'met' : 'MISSED'})`;
  console.log(`  mapBlocks add_broadcast ${rows}x${cols} float32 in ${chunk.join('x')} blocks: ${scaling(mapAll, mapOne)}; as a launch plan ${scaling(planAll, planOne)}`);
  console.log(`  mapBlocks host time per block on ${n} GPU(s): function ${fmt(mapAll.hostUs, 3)} us, launch plan ${fmt(planAll.hostUs, 3)} us; ` +
    `on one: ${fmt(mapOne.hostUs, 3)} / ${fmt(planOne.hostUs, 3)} us (target <= 5: ${Math.min(mapAll.hostUs, planAll.hostUs) <= 5 ? 'met' : 'MISSED'}); ` +
    `the three calls after the first: ${fmt(mapAll.laterUs, 3)} / ${fmt(planAll.laterUs, 3)} us, on one ${fmt(mapOne.laterUs, 3)} / ${fmt(planOne.laterUs, 3)} us`);
  console.log(`  mapBlocks with y replicated on every GPU (gx.chunked replicate, no copy per call), launch plan: ${fmt(planReplicated.hostUs, 3)} us per block ` +
    `(target <= 5: ${planReplicated.hostUs <= 5 ? 'met' : 'MISSED'}), the three calls after the first ${fmt(planReplicated.laterUs, 3)} us; ` +
    `${n} GPU(s) ${fmt(planReplicated.ms, 3)} ms vs one ${fmt(planOne.ms, 3)} ms = ${fmt(planOne.ms / planReplicated.ms, 3)}x`);
  const perBlock = (key: string): string => {
    const v = numField(floor.o, key), b = numField(floor.o, 'blocks');
    return v === undefined || b === undefined ? '-' : fmt(v / b, 3);
  };
  console.log(`  mapBlocks host floor per block (C++, the same blocks and calls, bench/block_dispatch_floor.cu): ${floor.o === undefined ? floor.note : 
    `launched directly ${perBlock('directUs')} us, a graph per GPU with the copies outside (mapBlocks' design) ${perBlock('deviceGraphsUs')} us, ` +
    `one graph over every GPU with the copies in it ${perBlock('oneGraphUs')} us, a graph per GPU with y already on each ${perBlock('replicatedUs')} us`}`);
  console.log(`  SVD ${m}x${k} float32: chunked over ${n} GPU(s) in ${blocks} row blocks ${fmt(svd.chunkedMs)} ms (error ${svd.chunkedErr.toExponential(1)}) vs one GPU ${fmt(svd.oneMs)} ms (error ${svd.oneErr.toExponential(1)}) = ${fmt(svd.oneMs / svd.chunkedMs, 3)}x, ` +
    `torch ${torchSvd === undefined ? '-' : `${fmt(torchSvd)} ms = ${fmt(torchSvd / svd.chunkedMs, 3)}x`} (target >= 1.5: ${svd.oneMs / svd.chunkedMs >= 1.5 ? 'met' : 'MISSED'})`);
  const p = svd.parts;
  const steps = (factor: number): number => svd.perDevice * (factor + p.matmulBlock) + p.svdStacked;
  console.log(`  SVD parts on cuda:0 (block ${m / blocks}x${k}): qr ${fmt(p.qrBlock)} ms, svd ${fmt(p.svdBlock)} ms, matmul by ${k}x${k} ${fmt(p.matmulBlock)} ms; ` +
    `svd of the stacked ${blocks * k}x${k} ${fmt(p.svdStacked)} ms (or its qr ${fmt(p.qrStacked)} ms + svd of ${k}x${k} ${fmt(p.svdSquare)} ms); ` +
    `${svd.perDevice} blocks a GPU: by QR ~${fmt(steps(p.qrBlock))} ms, by block SVDs ~${fmt(steps(p.svdBlock))} ms ` +
    `(measured: ${fmt(svd.chunkedMs)} and ${fmt(svd.bySvdMs)} ms, { factor: 'svd' } ${fmt(svd.oneMs / svd.bySvdMs, 3)}x one GPU)`);
  const nccl = r.status === 0 ? (JSON.parse(line) as { nccl?: { version: string; path: string } }).nccl : undefined;
  console.log(`  NCCL: gpuext ${nccl ? `${nccl.version} (${nccl.path})` : '-'}, torch ${py.ok ? String(py.o.nccl) : '-'}; ` +
    `host per all-reduce enqueue ${(ours ?? []).map((row) => `${row.mib} MiB ${fmt(row.enqueueUs)} us`).join(', ')}`);
}

main();
