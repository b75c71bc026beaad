// One rank of bench:dist's all-reduce measurement (started by `gpuext run`
// from bench/dist.bench.ts): float32 all-reduces of each size on
// cuda:LOCAL_RANK, 5 warmup, then `iters` enqueued back to back between two
// device synchronizations (as nccl-tests times them). The ranks line up
// before the clock starts as torch's dist.barrier() does with NCCL: a
// one-element all-reduce and a synchronization, not a round trip through the
// store. Rank 0 prints one JSON line: per size, milliseconds per all-reduce,
// the bus bandwidth, 2(n-1)/n x bytes / time (nccl-tests' formula), and the
// host's microseconds to enqueue one; and the NCCL it loaded.
import * as gx from '../lib';

async function main(): Promise<void> {
  await gx.distributed.initProcessGroup();
  const n = gx.distributed.worldSize();
  const device = `cuda:${Number(process.env.LOCAL_RANK ?? 0) % gx.cuda.deviceCount()}`;
  const sizes = (process.argv[2] ?? '1,64,1024').split(',').map(Number);
  const out: { mib: number; ms: number; busGBs: number; algGBs: number; enqueueUs: number }[] = [];
  const flag = gx.ones([1], { device });
  const lineUp = async (): Promise<void> => {
    await gx.distributed.allReduce(flag);
    gx.cuda.synchronize(device);
  };
  for (const mib of sizes) {
    const bytes = mib * 2 ** 20;
    const x = gx.ones([bytes / 4], { device });
    const iters = mib <= 1 ? 200 : mib <= 64 ? 40 : 10;
    for (let i = 0; i < 5; i++) await gx.distributed.allReduce(x);
    gx.cuda.synchronize(device);
    await lineUp();
    const t0 = process.hrtime.bigint();
    let last: gx.distributed.Work | undefined;
    for (let i = 0; i < iters; i++) last = gx.distributed.allReduce(x);
    const enqueueUs = Number(process.hrtime.bigint() - t0) / 1e3 / iters;
    await last;
    gx.cuda.synchronize(device);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / iters;
    out.push({ mib, ms, busGBs: (2 * (n - 1) / n) * bytes / (ms * 1e6), algGBs: bytes / (ms * 1e6), enqueueUs });
    x.dispose();
  }
  flag.dispose();
  const nccl = { version: gx.distributed.ncclVersion(device), path: process.env.GPUEXT_NCCL_PATH ?? 'libnccl.so.2 (system)' };
  if (gx.distributed.rank() === 0) console.log(JSON.stringify({ worldSize: n, allReduce: out, nccl }));
  await gx.distributed.destroyProcessGroup();
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
