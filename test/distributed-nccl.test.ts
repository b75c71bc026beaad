// gx.distributed's NCCL transport on the GPUs present: a one-rank group
// (what one GPU allows: NCCL refuses two ranks on one device) runs every
// collective and dtype through libnccl on the device's stream, against
// host-computed results, outputs poisoned first; awaiting the Work waits for
// the GPU without blocking the event loop; tensors on another device or on
// the CPU and GPU at once are errors. A device group (ncclCommInitAll) over
// every GPU present runs each collective against host-computed results; with
// two GPUs, two processes started by `gpuext run --nproc-per-node 2` do the
// same over NCCL, one GPU each; the watchdog aborts a collective that does
// not finish within the timeout with an error instead of a hang.

import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { freePort } from '../lib/cli/run';
import { createProcessGroup } from '../lib/distributed/group';
import { cudaTest, occupyStream } from './helpers';


const values = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint>, Number);

cudaTest('NCCL: every collective and dtype on a one-rank group matches the host', async (t) => {
  const g = await createProcessGroup({ rank: 0, worldSize: 1, masterPort: await freePort(), timeoutMs: 30_000 }, 'test');
  try {
    for (const dtype of ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'int32', 'int64', 'uint8'] as const) {
      const src = [1, 2, 3, 4, 5, 6];
      for (const op of ['sum', 'prod', 'min', 'max', ...(dtype.startsWith('float') || dtype === 'bfloat16' ? ['avg'] : [])] as gx.distributed.ReduceOp[]) {
        const x = gx.tensor(src, { dtype, device: 'cuda' });
        await g.allReduce(x, op);
        t.deepEqual(values(x), src, `allReduce ${op} ${dtype}`);
      }
      const b = gx.tensor(src, { dtype, device: 'cuda' });
      await g.broadcast(b, 0);
      t.deepEqual(values(b), src, `broadcast ${dtype}`);
      const r = gx.tensor(src, { dtype, device: 'cuda' });
      await g.reduce(r, 0, 'max');
      t.deepEqual(values(r), src, `reduce ${dtype}`);
      const out = gx.full([6], 9, { dtype, device: 'cuda' });
      await g.allGather(out, gx.tensor(src, { dtype, device: 'cuda' }));
      t.deepEqual(values(out), src, `allGather ${dtype}`);
      const rs = gx.full([6], 9, { dtype, device: 'cuda' });
      await g.reduceScatter(rs, gx.tensor(src, { dtype, device: 'cuda' }), 'sum');
      t.deepEqual(values(rs), src, `reduceScatter ${dtype}`);
    }
    const big = gx.ones([1 << 22], { device: 'cuda' });
    const w = g.allReduce(big);
    t.true(w instanceof gx.distributed.Work);
    await w;
    t.true(w.isCompleted());
    t.is(gx.sum(big).item(), 1 << 22);
    // A loop that awaits only its last collective: each is queued at the call, and the earlier ones count as done once it is.
    const queued = Array.from({ length: 50 }, () => g.allReduce(big, 'max'));
    await queued[queued.length - 1];
    t.true(queued.every((q) => q.isCompleted()), 'every earlier collective completed with the last');
    await Promise.all(queued);
    t.is(gx.sum(big).item(), 1 << 22);
    t.regex(gx.distributed.ncclVersion(), /^2\.\d+\.\d+$/);
    t.throws(() => g.allGather(gx.zeros([2], { device: 'cuda' }), gx.zeros([2])), { message: /the tensors are on cuda:0 and cpu; put them on one device/ });
  } finally {
    await g.destroy();
  }
});

cudaTest('NCCL device group: one process drives every GPU present; each collective matches the host', async (t) => {
  const n = gx.cuda.deviceCount();
  const devices = Array.from({ length: n }, (_, i) => `cuda:${i}`);
  using g = gx.distributed.initDeviceGroup(devices);
  t.is(g.size, n);
  const src = [1, 2, 3, 4, 5, 6];
  const on = (dtype: gx.DType, f: (i: number) => number[]): gx.Tensor[] => devices.map((d, i) => gx.tensor(f(i), { dtype, device: d }));
  for (const dtype of ['float32', 'float64', 'float16', 'int8', 'int32', 'int64'] as const) {
    const per = (i: number): number[] => src.map((v) => v + i);
    const ops: Record<string, (a: number, b: number) => number> = { sum: (a, b) => a + b, prod: (a, b) => a * b, min: (a, b) => Math.min(a, b), max: (a, b) => Math.max(a, b) };
    for (const [op, f] of Object.entries(ops)) {
      const xs = on(dtype, per);
      await g.allReduce(xs, op as gx.distributed.ReduceOp);
      const want = src.map((_, k) => devices.map((__, i) => per(i)[k]).reduce(f));
      xs.forEach((x, i) => t.deepEqual(values(x), want, `allReduce ${op} ${dtype} on ${devices[i]}`));
    }
    const bs = on(dtype, (i) => (i === n - 1 ? per(i) : src.map(() => 0)));
    await g.broadcast(bs, n - 1);
    bs.forEach((b) => t.deepEqual(values(b), per(n - 1), `broadcast ${dtype}`));
    const outs = on(dtype, () => Array(6 * n).fill(9));
    await g.allGather(outs, on(dtype, per));
    outs.forEach((o) => t.deepEqual(values(o), devices.flatMap((_, i) => per(i)), `allGather ${dtype}`));
    if (6 % n === 0) {
      const rs = on(dtype, () => Array(6 / n).fill(9));
      await g.reduceScatter(rs, on(dtype, per), 'sum');
      const total = src.map((_, k) => devices.reduce((a, __, i) => a + per(i)[k], 0));
      rs.forEach((r, i) => t.deepEqual(values(r), total.slice(i * (6 / n), (i + 1) * (6 / n)), `reduceScatter ${dtype}`));
    }
  }
  t.throws(() => g.allReduce([gx.zeros([2]), ...on('float32', () => [0, 0]).slice(1)]), { message: /DeviceGroup.allReduce: tensors\[0\] is on cpu; it must be on cuda:0/ });
  t.throws(() => g.allReduce([]), { message: /must be an array of \d+ tensors, one per device/ });
  t.throws(() => g.broadcast(on('float32', () => [1]), n), { message: /root must be a device's position from 0 to/ });
  t.throws(() => gx.distributed.initDeviceGroup(['cuda:0', 'cuda:0']), { message: /cuda:0 is listed twice/ });
  g.destroy();
  t.throws(() => g.allReduce(on('float32', () => [1])), { message: /the device group was destroyed/ });
});

/** What each rank of the two-process NCCL test runs: every collective and dtype, checked against host-computed values. */
const RANK_SCRIPT = `
const gx = require(${JSON.stringify(path.resolve(__dirname, '../lib'))});
(async () => {
  await gx.distributed.initProcessGroup({ timeoutMs: 60000 });
  const rank = gx.distributed.rank(), size = gx.distributed.worldSize();
  const device = 'cuda:' + process.env.LOCAL_RANK;
  const ranks = Array.from({ length: size }, (_, r) => r);
  const base = (r, i) => (r + 1) * (i + 1);
  const vals = (t) => Array.from(t.toArraySync(), Number);
  const bad = [];
  let count = 0;
  const check = (what, got, want) => {
    count++;
    if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(what + ': ' + JSON.stringify(got) + ' vs ' + JSON.stringify(want));
  };
  const fold = { sum: (v) => v.reduce((a, b) => a + b), prod: (v) => v.reduce((a, b) => a * b), min: (v) => Math.min(...v),
    max: (v) => Math.max(...v), avg: (v) => v.reduce((a, b) => a + b) / v.length };
  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int32', 'int64']) {
    const floating = dtype.startsWith('float') || dtype === 'bfloat16';
    for (const op of ['sum', 'prod', 'min', 'max', ...(floating ? ['avg'] : [])]) {
      const x = gx.tensor([0, 1, 2, 3, 4, 5].map((i) => base(rank, i)), { dtype, device });
      await gx.distributed.allReduce(x, op);
      check('allReduce ' + op + ' ' + dtype, vals(x), [0, 1, 2, 3, 4, 5].map((i) => fold[op](ranks.map((r) => base(r, i)))));
    }
    const b = gx.full([4], rank === size - 1 ? 9 : 0, { dtype, device });
    await gx.distributed.broadcast(b, size - 1);
    check('broadcast ' + dtype, vals(b), [9, 9, 9, 9]);
    const red = gx.full([3], rank + 1, { dtype, device });
    await gx.distributed.reduce(red, 0, 'sum');
    check('reduce into rank 0 ' + dtype, vals(red), Array(3).fill(rank === 0 ? fold.sum(ranks.map((r) => r + 1)) : rank + 1));
    const out = gx.zeros([2 * size], { dtype, device });
    await gx.distributed.allGather(out, gx.full([2], 10 * rank, { dtype, device }));
    check('allGather ' + dtype, vals(out), ranks.flatMap((r) => [10 * r, 10 * r]));
    const rs = gx.zeros([2], { dtype, device });
    await gx.distributed.reduceScatter(rs, gx.arange(2 * size, { dtype, device }).add(rank), 'sum');
    check('reduceScatter ' + dtype, vals(rs), [2 * rank, 2 * rank + 1].map((i) => fold.sum(ranks.map((r) => i + r))));
    const p2p = gx.full([3], rank === 0 ? 7 : 0, { dtype, device });
    if (rank === 0) await gx.distributed.send(p2p, 1);
    if (rank === 1) await gx.distributed.recv(p2p, 0);
    check('send/recv ' + dtype, vals(p2p), rank <= 1 ? [7, 7, 7] : [0, 0, 0]);
  }
  console.log(JSON.stringify({ rank, device, count, bad }));
  await gx.distributed.destroyProcessGroup();
})().catch((e) => { console.error(e.message); process.exit(3); });
`;

const twoGpus = gx.cuda.isAvailable() && gx.cuda.deviceCount() >= 2 ? test.serial : test.skip;
twoGpus('NCCL across processes: gpuext run --nproc-per-node 2, one GPU each; every collective and dtype matches the host', (t) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gx-nccl-')), 'rank.js');
  fs.writeFileSync(file, RANK_SCRIPT);
  const cli = path.resolve(__dirname, '../lib/cli/main.js');
  const r = spawnSync(process.execPath, [cli, 'run', '--nproc-per-node', '2', file], { encoding: 'utf8', timeout: 180_000 });
  t.is(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { rank: number; device: string; count: number; bad: string[] }).sort((a, b) => a.rank - b.rank);
  t.deepEqual(lines.map((l) => [l.rank, l.device]), [[0, 'cuda:0'], [1, 'cuda:1']]);
  for (const l of lines) {
    t.is(l.count, 4 * 5 + 4 * 4 + 8 * 5, `rank ${l.rank}: every check ran`);
    t.deepEqual(l.bad, [], `rank ${l.rank}`);
  }
});

cudaTest('NCCL watchdog: a collective that does not finish within the timeout aborts the communicator with an error, not a hang', async (t) => {
  const g = await createProcessGroup({ rank: 0, worldSize: 1, masterPort: await freePort(), timeoutMs: 1000 }, 'test');
  try {
    const x = gx.ones([4], { device: 'cuda' });
    await g.allReduce(x);
    // The collective is queued behind 4 s of other work: with a peer gone it would never finish, and the watchdog cannot
    // tell the two apart; past the group's timeout it gives up either way.
    occupyStream(4000);
    const started = Date.now();
    const err = await t.throwsAsync(g.allReduce(x).wait());
    t.regex(err?.message ?? '', /gx.distributed.allReduce: a collective did not finish within 1 s .*the communicator on cuda:0 was aborted/);
    // The error comes once ncclCommAbort returns, which may wait for the queued work: an error, not a hang.
    t.true(Date.now() - started < 15_000, `failed after ${Date.now() - started} ms`);
    await t.throwsAsync(g.allReduce(x).wait(), { message: /communicator on cuda:0 was aborted/ });
    gx.cuda.synchronize();
    t.is(gx.sum(gx.ones([8], { device: 'cuda' })).item(), 8, 'the device still works');
  } finally {
    await g.destroy();
  }
  // Serial: a concurrent test's synchronous readback can hold the event loop past the kernel's 4 s, and the watchdog,
  // run late, then rightly finds the collective done.
}, { serial: true });
