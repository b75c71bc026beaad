// gx.distributed's NCCL transport on the GPUs present: a one-rank group
// (what one GPU allows: NCCL refuses two ranks on one device) runs every
// collective and dtype through libnccl on the device's stream, against
// host-computed results, outputs poisoned first; awaiting the Work waits for
// the GPU without blocking the event loop; tensors on another device or on
// the CPU and GPU at once are errors.

import * as gx from '../lib';
import { freePort } from '../lib/cli/run';
import { createProcessGroup } from '../lib/distributed/group';
import { cudaTest } from './helpers';


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
    t.throws(() => g.allGather(gx.zeros([2], { device: 'cuda' }), gx.zeros([2])), { message: /the tensors are on cuda:0 and cpu; put them on one device/ });
  } finally {
    await g.destroy();
  }
});
