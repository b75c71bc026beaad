// One rank of bench:dist's all-reduce measurement (started by `gpuext run`
// from bench/dist.bench.ts): float32 all-reduces of each size on
// cuda:LOCAL_RANK, 5 warmup, then `iters` enqueued back to back between two
// device synchronizations (as nccl-tests times them). Rank 0 prints one JSON
// line: per size, milliseconds per all-reduce and the bus bandwidth,
// 2(n-1)/n x bytes / time (nccl-tests' formula).
import * as gx from '../lib';

async function main(): Promise<void> {
  await gx.distributed.initProcessGroup();
  const n = gx.distributed.worldSize();
  const device = `cuda:${Number(process.env.LOCAL_RANK ?? 0) % gx.cuda.deviceCount()}`;
  const sizes = (process.argv[2] ?? '1,64,1024').split(',').map(Number);
  const out: { mib: number; ms: number; busGBs: number; algGBs: number }[] = [];
  for (const mib of sizes) {
    const bytes = mib * 2 ** 20;
    const x = gx.ones([bytes / 4], { device });
    const iters = mib <= 1 ? 200 : mib <= 64 ? 40 : 10;
    for (let i = 0; i < 5; i++) await gx.distributed.allReduce(x);
    gx.cuda.synchronize(device);
    await gx.distributed.barrier();
    const t0 = process.hrtime.bigint();
    let last: gx.distributed.Work | undefined;
    for (let i = 0; i < iters; i++) last = gx.distributed.allReduce(x);
    await last;
    gx.cuda.synchronize(device);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / iters;
    out.push({ mib, ms, busGBs: (2 * (n - 1) / n) * bytes / (ms * 1e6), algGBs: bytes / (ms * 1e6) });
    x.dispose();
  }
  if (gx.distributed.rank() === 0) console.log(JSON.stringify({ worldSize: n, allReduce: out }));
  await gx.distributed.destroyProcessGroup();
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
