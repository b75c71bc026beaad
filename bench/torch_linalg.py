#!/usr/bin/env python3
"""PyTorch side of bench/linalg.bench.ts: torch.matmul on the same shapes and dtypes, timed the same way.

Prints progress to stderr and one JSON object on the last line of stdout:
  {"torch": "2.11.0", "device": "...", "matmul": [{"dtype": "bfloat16", "n": 8192, "tf32": false, "median_ms": ...}, ...]}
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
from bench_common import emit, log  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        emit({"error": "torch not importable: %s" % e})
        return
    if not torch.cuda.is_available():
        emit({"error": "torch: no CUDA"})
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
    emit(out)


if __name__ == "__main__":
    main()
