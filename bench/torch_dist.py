"""The torch side of `npm run bench:dist`, in the same call: float32
torch.distributed.all_reduce (NCCL) over N processes, one GPU each, timed as
bench/dist-allreduce.rank.ts times gpuext (5 warmup, then the iterations back
to back between two synchronizations); and torch.linalg.svd of the chunked
SVD's matrix on one GPU. One JSON line on stdout."""
import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log  # noqa: E402


def worker(rank, n, port, sizes, q):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=n)
    out = []
    for mib in sizes:
        nbytes = mib * 2 ** 20
        x = torch.ones(nbytes // 4, device="cuda")
        iters = 200 if mib <= 1 else 40 if mib <= 64 else 10
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3 / iters
        out.append({"mib": mib, "ms": ms, "busGBs": (2 * (n - 1) / n) * nbytes / (ms * 1e6), "algGBs": nbytes / (ms * 1e6)})
    if rank == 0:
        q.put(out)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--sizes", default="1,64,1024")
    ap.add_argument("--svd", default="200000,1000")
    a = ap.parse_args()
    try:
        import torch
        import torch.multiprocessing as mp
    except Exception as e:  # noqa: BLE001
        emit({"error": "torch not importable: %s" % e})
        return
    sizes = [int(s) for s in a.sizes.split(",")]
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    procs = [ctx.Process(target=worker, args=(r, a.gpus, port, sizes, q)) for r in range(a.gpus)]
    for p in procs:
        p.start()
    res = q.get()
    for p in procs:
        p.join()
    log("torch all_reduce: done")
    m, k = (int(v) for v in a.svd.split(","))
    x = torch.randn(m, k, device="cuda")
    torch.linalg.svd(x, full_matrices=False)
    torch.cuda.synchronize()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        torch.linalg.svd(x, full_matrices=False)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
    emit({"torch": torch.__version__, "nccl": nccl, "allReduce": res, "svd_ms": sorted(times)[1]})


if __name__ == "__main__":
    main()
