#!/usr/bin/env python3
"""PyTorch side of bench/core.bench.ts: the same copies and allocations, timed the same way.

Prints progress to stderr and one JSON object on the last line of stdout:
  {"torch": "2.11.0", "cuda": true, "device": "NVIDIA H100 ...",
   "copy": [{"kind": "h2d_pageable", "bytes": 1048576, "repeat": 20, "median_s": ..., "gbps": ...}, ...],
   "alloc": [{"numel": 256, "iters": 10000, "median_us": ..., "device_mallocs_delta": 0}, ...]}
When torch cannot be imported, or CUDA is not available, it prints {"error": "..."} and exits 0.

Copy kinds (dst.copy_(src); torch.cuda.synchronize() inside the timed region):
  h2d_pageable  cuda dst  <- pageable cpu src
  h2d_pinned    cuda dst  <- pin_memory() cpu src
  d2h_pageable  pageable cpu dst <- cuda src
  d2h_pinned    pin_memory() cpu dst <- cuda src
  d2h_cpu       src.cpu() (allocates a pageable result; counterpart of gpuext's toArray())
  h2d_new       src.to('cuda') (allocates the device result; counterpart of gx.tensor(data, {device}))
GB/s is bytes / median seconds / 1e9.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, torch_cuda  # noqa: E402


def int_list(text):
    return [int(float(x)) for x in text.split(",") if x.strip()]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copy-mib", type=int_list, default=[1, 16, 256],
                   help="copy sizes in MiB of float32, comma separated (default 1,16,256)")
    p.add_argument("--alloc-numel", type=int_list, default=[256, 1 << 20, 64 << 20],
                   help="float32 element counts for the allocation test (default 256,1048576,67108864)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs before each copy measurement")
    p.add_argument("--repeat", type=int, default=20, help="timed runs per copy size")
    p.add_argument("--repeat-large", type=int, default=10, help="timed runs for copies of 64 MiB and more")
    p.add_argument("--alloc-iters", type=int, default=10000, help="allocate+free iterations per size")
    p.add_argument("--alloc-batch", type=int, default=100, help="iterations per timed batch (median over batches)")
    return p.parse_args()


def main():
    args = parse_args()
    torch = torch_cuda()
    if torch is None:
        return 0

    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    clock = time.perf_counter_ns
    torch.ones(1, device=dev).cpu()  # context creation out of the way

    def timed(fn, warmup, repeat):
        """Median seconds of fn() (fn includes its own synchronize)."""
        for _ in range(warmup):
            fn()
        samples = []
        for _ in range(repeat):
            t0 = clock()
            fn()
            samples.append(clock() - t0)
        return statistics.median(samples) / 1e9

    copies = []
    for mib in args.copy_mib:
        nbytes = mib << 20
        n = nbytes // 4
        repeat = args.repeat_large if mib >= 64 else args.repeat
        log("torch: copies of %d MiB" % mib)
        host = torch.empty(n, dtype=torch.float32).fill_(1.5)  # touch the pages
        host_pinned = torch.empty(n, dtype=torch.float32).pin_memory().fill_(1.5)
        host_dst = torch.empty(n, dtype=torch.float32).fill_(0)
        host_dst_pinned = torch.empty(n, dtype=torch.float32).pin_memory().fill_(0)
        gpu = torch.empty(n, dtype=torch.float32, device=dev).fill_(2.5)
        gpu_dst = torch.empty(n, dtype=torch.float32, device=dev)
        sync()

        def h2d_pageable():
            gpu_dst.copy_(host)
            sync()

        def h2d_pinned():
            gpu_dst.copy_(host_pinned)
            sync()

        def d2h_pageable():
            host_dst.copy_(gpu)
            sync()

        def d2h_pinned():
            host_dst_pinned.copy_(gpu)
            sync()

        def d2h_cpu():
            r = gpu.cpu()
            sync()
            del r

        def h2d_new():
            r = host.to(dev)
            sync()
            del r

        for kind, fn in (("h2d_pageable", h2d_pageable), ("h2d_pinned", h2d_pinned),
                         ("d2h_pageable", d2h_pageable), ("d2h_pinned", d2h_pinned),
                         ("d2h_cpu", d2h_cpu), ("h2d_new", h2d_new)):
            s = timed(fn, args.warmup, repeat)
            copies.append({"kind": kind, "bytes": nbytes, "repeat": repeat, "median_s": s,
                           "gbps": nbytes / s / 1e9 if s > 0 else None})
        ok = bool(host_dst[0].item() == 2.5 and host_dst_pinned[-1].item() == 2.5 and gpu_dst[-1].item() == 1.5)
        if not ok:
            log("torch: WARNING copy check failed at %d MiB" % mib)
        del host, host_pinned, host_dst, host_dst_pinned, gpu, gpu_dst
        sync()

    allocs = []
    for n in args.alloc_numel:
        log("torch: allocation of %d float32" % n)
        t = torch.empty(n, dtype=torch.float32, device=dev)  # warm the cache with this size
        del t
        iters = max(args.alloc_iters, args.alloc_batch)
        batch = args.alloc_batch
        before = torch.cuda.memory_stats(dev)
        samples = []
        for _ in range(iters // batch):
            t0 = clock()
            for _ in range(batch):
                t = torch.empty(n, dtype=torch.float32, device=dev)
                del t
            samples.append((clock() - t0) / batch)
        after = torch.cuda.memory_stats(dev)
        key = "num_device_alloc"
        delta = (after.get(key, 0) - before.get(key, 0)) if key in after else None
        allocs.append({"numel": n, "iters": (iters // batch) * batch, "median_us": statistics.median(samples) / 1e3,
                       "device_mallocs_delta": delta})

    emit({"torch": torch.__version__, "cuda": True, "device": torch.cuda.get_device_name(dev),
          "copy": copies, "alloc": allocs})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException as e:  # a real failure: still one JSON line for the caller, and a non-zero status
        emit({"error": "%s: %s" % (type(e).__name__, e)})
        sys.exit(1)
