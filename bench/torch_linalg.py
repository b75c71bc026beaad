#!/usr/bin/env python3
"""PyTorch side of bench/linalg.bench.ts: torch.matmul on the same shapes and dtypes, timed the same way.

Prints progress to stderr and one JSON object on the last line of stdout:
  {"torch": "2.11.0", "device": "...", "matmul": [{"dtype": "bfloat16", "n": 8192, "tf32": false, "median_ms": ...}, ...],
   "svd": {"m": 10000, "n": 1000, "median_ms": ...}}
torch.linalg.svd(a, full_matrices=False) on a float32 torch.rand matrix, 2 warmup, median of --svd-repeat.
or {"error": "..."} (exit 0) when torch or CUDA is missing.
Inputs: torch.rand in [0, 1), created once per case; C = A @ B allocates its result, as gx.matmul does.
Timing: after 1 s of bf16 matmuls to bring the clocks up, CUDA events around each call, 10 warmup, median of --repeat.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, torch_cuda  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--svd-m", type=int, default=10000)
    p.add_argument("--svd-n", type=int, default=1000)
    p.add_argument("--svd-repeat", type=int, default=5)
    args = p.parse_args()
    torch = torch_cuda()
    if torch is None:
        return
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "matmul": []}
    n = args.n
    log("warming the GPU up (1 s of bf16 matmuls)")
    w = torch.rand(n, n, device="cuda", dtype=torch.bfloat16)
    t0 = time.time()
    while time.time() - t0 < 1.0:
        (w @ w)
        torch.cuda.synchronize()
    del w
    out["cublas"] = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcublas" in l})
    for dtype, tf32 in (("bfloat16", False), ("float16", False), ("float32", True), ("float32", False)):
        log("torch matmul %s%s %d^3" % (dtype, " tf32" if tf32 else "", n))
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.rand(n, n, device="cuda", dtype=getattr(torch, dtype))
        b = torch.rand(n, n, device="cuda", dtype=getattr(torch, dtype))
        times = []
        for i in range(10 + args.repeat):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            c = a @ b
            e.record()
            e.synchronize()
            if i >= 10:
                times.append(s.elapsed_time(e))
            del c
        out["matmul"].append({"dtype": dtype, "n": n, "tf32": tf32, "median_ms": statistics.median(times)})
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = False
    m, k = args.svd_m, args.svd_n
    log("torch linalg.svd %dx%d float32, full_matrices=False" % (m, k))
    a = torch.rand(m, k, device="cuda", dtype=torch.float32)
    times = []
    for i in range(2 + args.svd_repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        u, sv, vh = torch.linalg.svd(a, full_matrices=False)
        e.record()
        e.synchronize()
        if i >= 2:
            times.append(s.elapsed_time(e))
        if i == 1:
            rebuilt = (u * sv) @ vh
            err = ((rebuilt - a).abs().max() / a.abs().max()).item()
            del rebuilt
        del u, sv, vh
    out["svd"] = {"m": m, "n": k, "median_ms": statistics.median(times), "rel_err": err}
    emit(out)


if __name__ == "__main__":
    main()
