// Data-parallel training with an all-reduce, one process per GPU:
//   npx gpuext run --nproc-per-node 2 dist/examples/allreduce-train.js
// Each rank holds a shard of the article's regression data y = 0.5 x + 1 +
// noise, computes the gradient of the mean squared error on its shard,
// averages the gradients over the ranks (allReduce 'avg') and takes the same
// step, so every rank keeps the same weights. Rank r computes on
// cuda:(LOCAL_RANK mod GPUs), or the CPU without a GPU; the gradients travel
// by NCCL when every rank has a GPU of its own, else (ranks sharing a GPU,
// which NCCL refuses) through the host. Prints one JSON line per rank.
import * as gx from '../lib';

async function main(): Promise<void> {
  await gx.distributed.initProcessGroup();
  const rank = gx.distributed.rank();
  const size = gx.distributed.worldSize();
  const gpus = gx.cuda.isAvailable() ? gx.cuda.deviceCount() : 0;
  const device = gpus > 0 ? `cuda:${Number(process.env.LOCAL_RANK ?? 0) % gpus}` : 'cpu';
  // NCCL wants one GPU per rank; CPU tensors and ranks sharing a GPU exchange through the store.
  const ownGpu = gpus === 0 || gpus >= Number(process.env.LOCAL_WORLD_SIZE ?? size);
  const n = 40_000 / size;
  gx.manualSeed(100 + rank);
  const x = gx.rand([n], { device, dtype: 'float64' }).mul(10);
  const y = x.mul(0.5).add(1).add(gx.randn([n], { device, dtype: 'float64' }).mul(0.1));
  const w = gx.zeros([2], { device, dtype: 'float64' });  // slope, intercept
  for (let step = 0; step < 500; step++) {
    const grad = gx.tidy(() => {
      const [a, b] = [w.narrow(0, 0, 1), w.narrow(0, 1, 1)];
      const err = x.mul(a).add(b).sub(y);
      return gx.stack([err.mul(x).mean().mul(2), err.mean().mul(2)]);
    });
    if (ownGpu) {
      await gx.distributed.allReduce(grad, 'avg');
    } else {
      using host = grad.cpu();
      await gx.distributed.allReduce(host, 'avg');
      grad.copy_(host);
    }
    w.sub_(grad.mul(step < 100 ? 0.02 : 0.01));
    grad.dispose();
  }
  const [slope, intercept] = Array.from(w.toArraySync() as Float64Array);
  console.log(JSON.stringify({ rank, size, device, transport: gpus === 0 ? 'store' : ownGpu ? 'nccl' : 'store (shared GPU)', slope, intercept }));
  await gx.distributed.destroyProcessGroup();
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
