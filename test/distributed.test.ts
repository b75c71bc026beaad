// gx.distributed without a GPU: the placement read from each launcher's
// environment; process groups of several ranks (in one process, and as
// processes started by `gpuext run`) running every collective on CPU
// tensors against host-computed results; and the failures that must be
// errors, not hangs: a rank that never arrives, ranks that call different
// collectives or shapes, a disposed tensor, a rank that throws, Ctrl-C.
import test from 'ava';
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { freePort } from '../lib/cli/run';
import { createProcessGroup, type ProcessGroup } from '../lib/distributed/group';

const LIB = path.resolve(__dirname, '../lib');
const CLI = path.resolve(__dirname, '../lib/cli/main.js');


/** worldSize ranks in this process, joined through one store. */
async function groups(worldSize: number, timeoutMs = 10_000): Promise<ProcessGroup[]> {
  const port = await freePort();
  return Promise.all(Array.from({ length: worldSize }, (_, rank) =>
    createProcessGroup({ rank, worldSize, masterAddr: '127.0.0.1', masterPort: port, timeoutMs }, 'test')));
}

test('the placement is read from torchrun, Slurm and Open MPI variables; what is missing is named', (t) => {
  const { placementFromEnv } = gx.distributed;
  t.like(placementFromEnv({ RANK: '1', WORLD_SIZE: '4', LOCAL_RANK: '1', MASTER_ADDR: 'h', MASTER_PORT: '29500' }, 'f'),
    { rank: 1, worldSize: 4, localRank: 1, masterAddr: 'h', masterPort: 29500, source: 'torchrun' });
  t.like(placementFromEnv({ SLURM_PROCID: '3', SLURM_NTASKS: '8', SLURM_LOCALID: '3', MASTER_ADDR: 'n1', MASTER_PORT: '1234' }, 'f'),
    { rank: 3, worldSize: 8, localRank: 3, source: 'slurm' });
  t.like(placementFromEnv({ OMPI_COMM_WORLD_RANK: '0', OMPI_COMM_WORLD_SIZE: '2', MASTER_ADDR: 'a', MASTER_PORT: '5' }, 'f'),
    { rank: 0, worldSize: 2, localRank: 0, source: 'openmpi' });
  t.throws(() => placementFromEnv({}, 'f'), { message: /no RANK and WORLD_SIZE in the environment.*gpuext run --nproc-per-node/s });
  t.throws(() => placementFromEnv({ RANK: '4', WORLD_SIZE: '4', MASTER_ADDR: 'h', MASTER_PORT: '1' }, 'f'), { message: /RANK=4 is not below WORLD_SIZE=4/ });
  t.throws(() => placementFromEnv({ RANK: '0', WORLD_SIZE: '2', MASTER_PORT: '1' }, 'f'), { message: /MASTER_ADDR is not set/ });
  t.throws(() => placementFromEnv({ RANK: 'x', WORLD_SIZE: '2', MASTER_ADDR: 'h', MASTER_PORT: '1' }, 'f'), { message: /RANK must be an integer >= 0, got "x"/ });
});

const DTYPES = ['float32', 'float64', 'int32', 'int64'] as const;

test('every collective and dtype on 3 ranks matches host-computed results', async (t) => {
  const gs = await groups(3);
  const n = 5;
  const base = (r: number, i: number): number => (r + 1) * (i + 2) - 7;
  for (const dtype of DTYPES) {
    for (const op of ['sum', 'prod', 'min', 'max', ...(dtype.startsWith('float') ? ['avg'] : [])] as gx.distributed.ReduceOp[]) {
      const ts = gs.map((g) => gx.tensor(Array.from({ length: n }, (_, i) => base(g.rank, i)), { dtype }));
      await Promise.all(gs.map((g, r) => g.allReduce(ts[r], op)));
      const want = Array.from({ length: n }, (_, i) => {
        const v = [0, 1, 2].map((r) => base(r, i));
        return op === 'sum' ? v[0] + v[1] + v[2] : op === 'prod' ? v[0] * v[1] * v[2] : op === 'min' ? Math.min(...v)
          : op === 'max' ? Math.max(...v) : (v[0] + v[1] + v[2]) / 3;
      });
      for (const x of ts) t.deepEqual(Array.from(x.toArraySync() as ArrayLike<number | bigint>, Number).map((v) => +v.toFixed(5)), want.map((v) => +v.toFixed(5)), `allReduce ${op} ${dtype}`);
    }
    const b = gs.map((g) => gx.full([2, 2], g.rank === 2 ? 9 : -1, { dtype }));
    await Promise.all(gs.map((g, r) => g.broadcast(b[r], 2)));
    for (const x of b) t.deepEqual(Array.from(x.toArraySync() as ArrayLike<number | bigint>, Number), [9, 9, 9, 9], `broadcast ${dtype}`);
    const red = gs.map((g) => gx.full([3], g.rank + 1, { dtype }));
    await Promise.all(gs.map((g, r) => g.reduce(red[r], 1, 'sum')));
    t.deepEqual(red.map((x) => Number((x.toArraySync() as ArrayLike<number | bigint>)[0])), [1, 6, 3], `reduce into rank 1 only, ${dtype}`);
    const outs = gs.map(() => gx.zeros([6], { dtype }));
    await Promise.all(gs.map((g, r) => g.allGather(outs[r], gx.full([2], 10 * r, { dtype }))));
    for (const x of outs) t.deepEqual(Array.from(x.toArraySync() as ArrayLike<number | bigint>, Number), [0, 0, 10, 10, 20, 20], `allGather ${dtype}`);
    const rs = gs.map(() => gx.zeros([2], { dtype }));
    await Promise.all(gs.map((g, r) => g.reduceScatter(rs[r], gx.arange(6, { dtype }).add(r))));
    t.deepEqual(rs.map((x) => Array.from(x.toArraySync() as ArrayLike<number | bigint>, Number)), [[3, 6], [9, 12], [15, 18]], `reduceScatter ${dtype}`);
  }
  const halves = gs.map((g) => gx.tensor([g.rank + 0.5, -1], { dtype: 'float16' }));
  await Promise.all(gs.map((g, r) => g.allReduce(halves[r])));
  for (const x of halves) t.deepEqual(Array.from(x.toArraySync() as Float32Array), [4.5, -3], 'allReduce float16');
  const got = gx.zeros([3]);
  await Promise.all([gs[0].send(gx.tensor([1, 2, 3]), 2), gs[2].recv(got, 0), gs[1].barrier(), gs[0].barrier(), gs[2].barrier()]);
  t.deepEqual(Array.from(got.toArraySync()), [1, 2, 3], 'send / recv');
  await Promise.all(gs.map((g) => g.destroy()));
});

// The store multiplied int32s in float64 and let the array wrap the rounded product: (2^31 - 1)^2 gave 0, not 1.
test('integer products wrap as gx.mul wraps them (as NCCL does): int32, int8 and int64 prod on 3 ranks', async (t) => {
  const gs = await groups(3);
  const values = {
    int32: [2147483647, 46341, -2147483648, 123456789, 65537, -3],
    int8: [127, -128, 100, 13, -7, 3],
    int64: [3037000499, 2147483647, -4294967296, 65537, 2 ** 40 + 1, -3],
  };
  for (const dtype of ['int32', 'int8', 'int64'] as const) {
    // Each rank's values a little nearer 0, in range.
    const ts = gs.map((g) => gx.tensor(values[dtype].map((v) => v - Math.sign(v) * g.rank), { dtype }));
    const want = gx.tidy(() => gx.mul(gx.mul(ts[0], ts[1]), ts[2]).toNested({ bigint: true }));
    await Promise.all(gs.map((g, r) => g.allReduce(ts[r], 'prod')));
    for (const x of ts) t.deepEqual(x.toNested({ bigint: true }), want, `allReduce prod ${dtype}`);
    for (const x of ts) x.dispose();
  }
  const outs = gs.map(() => gx.zeros([2], { dtype: 'int32' }));
  await Promise.all(gs.map((g, r) => g.reduceScatter(outs[r], gx.full([6], 2147483647 - r, { dtype: 'int32' }), 'prod')));
  // (2^31 - 1)(2^31 - 2)(2^31 - 3) mod 2^32, as int32: 2^31 - 6.
  t.deepEqual(outs.map((x) => x.toNested()), [[2147483642, 2147483642], [2147483642, 2147483642], [2147483642, 2147483642]], 'reduceScatter prod int32');
  await Promise.all(gs.map((g) => g.destroy()));
});

test('mistakes are errors naming them, not hangs: an absent rank, disagreeing ranks, a disposed tensor, bad arguments', async (t) => {
  const port = await freePort();
  const e = await t.throwsAsync(createProcessGroup({ rank: 0, worldSize: 2, masterPort: port, timeoutMs: 300 }, 'gx.distributed.initProcessGroup'));
  t.regex(e?.message ?? '', /rank 1 of 2 did not arrive within 0\.3 s/);

  const gs = await groups(2, 1000);
  const [a, b] = [gx.zeros([4]), gx.zeros([5])];
  const r = await Promise.allSettled([gs[0].allReduce(a), gs[1].allReduce(b)]);
  t.true(r.every((x) => x.status === 'rejected' && /ranks disagree: rank \d called allReduce\(float32 \[[45]\], 'sum'\) but rank \d called allReduce\(float32 \[[45]\], 'sum'\)/.test(String(x.reason))));
  const r2 = await Promise.allSettled([gs[0].allReduce(gx.zeros([2])), gs[1].broadcast(gx.zeros([2]), 0)]);
  t.true(r2.some((x) => x.status === 'rejected' && /called allReduce.*but rank 1 called broadcast|called broadcast.*but rank 0 called allReduce/.test(String(x.reason))));
  const lonely = await t.throwsAsync(gs[0].barrier().wait());
  t.regex(lonely?.message ?? '', /rank 1 did not join within 1 s/);
  const gone = gx.zeros([2]);
  gone.dispose();
  t.throws(() => gs[0].allReduce(gone), { message: /gx\.distributed\.allReduce: this tensor was disposed/ });
  t.throws(() => gs[0].allReduce(gx.zeros([2]), 'mean' as gx.distributed.ReduceOp), { message: /op must be one of sum, prod, min, max, avg/ });
  t.throws(() => gs[0].allReduce(gx.zeros([2], { dtype: 'int32' }), 'avg'), { message: /'avg' needs a floating tensor/ });
  t.throws(() => gs[0].broadcast(gx.zeros([2]), 5), { message: /src must be a rank from 0 to 1, got 5/ });
  t.throws(() => gs[0].allGather(gx.zeros([3]), gx.zeros([2])), { message: /the stacked tensor must be float32 \[4\], got float32 \[3\]/ });
  t.throws(() => gx.distributed.rank(), { message: /no process group; call await gx\.distributed\.initProcessGroup\(\) first/ });
  gs.forEach((g) => g.destroy().catch(() => undefined));
});

/** A script file each rank runs (it requires the built library by absolute path). */
function script(body: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-dist-'));
  const file = path.join(dir, 'rank.js');
  fs.writeFileSync(file, `const gx = require(${JSON.stringify(LIB)});\n(async () => {\n${body}\n})().catch((e) => { console.error(e.message); process.exit(3); });\n`);
  return file;
}

test('gpuext run: 3 ranks with the environment set, an all-reduce among them, exit 0', (t) => {
  const file = script(`
    await gx.distributed.initProcessGroup();
    const x = gx.tensor([gx.distributed.rank() + 1]);
    await gx.distributed.allReduce(x);
    console.log(JSON.stringify({ rank: gx.distributed.rank(), size: gx.distributed.worldSize(), local: process.env.LOCAL_RANK, sum: x.item() }));
    await gx.distributed.destroyProcessGroup();`);
  const r = spawnSync(process.execPath, [CLI, 'run', '--nproc-per-node', '3', file], { encoding: 'utf8', timeout: 60_000 });
  t.is(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { rank: number; size: number; local: string; sum: number }).sort((a, b) => a.rank - b.rank);
  t.deepEqual(lines, [0, 1, 2].map((rank) => ({ rank, size: 3, local: String(rank), sum: 6 })));
});

test('gpuext run: a rank that throws stops the others; the launcher exits with its status and quotes it', (t) => {
  const file = script(`
    await gx.distributed.initProcessGroup({ timeoutMs: 60000 });
    if (gx.distributed.rank() === 1) throw new Error('rank one broke on purpose');
    await gx.distributed.barrier();  // never completes: rank 1 is gone
    console.log('unreachable');`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [CLI, 'run', '--nproc-per-node', '3', '--grace-ms', '2000', file], { encoding: 'utf8', timeout: 60_000 });
  t.is(r.status, 3);
  t.regex(r.stderr, /gpuext run: rank 1 exited with status 3; stopping the others\n--- the end of rank 1's stderr:\nrank one broke on purpose/);
  t.false(r.stdout.includes('unreachable'));
  t.true(Date.now() - t0 < 20_000, 'the others were stopped, not waited for');
});

test('gpuext run: SIGINT is forwarded; every rank is gone when the launcher exits', async (t) => {
  const pids = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gx-dist-pids-')), 'pids');
  const file = script(`require('fs').appendFileSync(${JSON.stringify(pids)}, process.pid + '\\n'); setInterval(() => {}, 1000);`);
  const child = spawn(process.execPath, [CLI, 'run', '--nproc-per-node', '2', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
  for (let i = 0; i < 200 && (!fs.existsSync(pids) || fs.readFileSync(pids, 'utf8').trim().split('\n').length < 2); i++) await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGINT');
  // 'close', not 'exit': the exit can come before the last of its stderr has been read.
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  t.is(code, 130);
  t.regex(err, /gpuext run: SIGINT: stopping every rank/);
  for (const pid of fs.readFileSync(pids, 'utf8').trim().split('\n').map(Number)) {
    t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `rank process ${pid} is gone`);
  }
});

test('gpuext run: usage errors', (t) => {
  const r = spawnSync(process.execPath, [CLI, 'run', '--nproc-per-node', '0', 'x.js'], { encoding: 'utf8' });
  t.is(r.status, 2);
  t.regex(r.stderr, /--nproc-per-node must be an integer >= 1, got 0/);
  const r2 = spawnSync(process.execPath, [CLI, 'run', '--nproc-per-node', '2'], { encoding: 'utf8' });
  t.regex(r2.stderr, /name the script to run/);
});

test('a one-rank group: collectives on the CPU, a barrier and destroy (its parts have no readers)', async (t) => {
  const g = await createProcessGroup({ rank: 0, worldSize: 1, masterPort: await freePort(), timeoutMs: 10_000 }, 'test');
  try {
    const x = gx.tensor([1.5, -2, 3], { dtype: 'float64' });
    await g.allReduce(x, 'sum');
    t.deepEqual(Array.from(x.toArraySync() as Float64Array), [1.5, -2, 3]);
    const out = gx.zeros([3], { dtype: 'float64' });
    await g.allGather(out, x);
    t.deepEqual(Array.from(out.toArraySync() as Float64Array), [1.5, -2, 3]);
    await g.barrier();
    x.dispose();
    out.dispose();
  } finally {
    await g.destroy();
  }
});
