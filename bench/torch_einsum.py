#!/usr/bin/env python3
"""PyTorch side of bench/einsum.bench.ts: torch.einsum, torch.matmul and the norms on the same shapes, timed the same way.

Prints progress to stderr and one JSON object on the last line of stdout:
  {"torch": "2.11.0", "device": "...", "times": {"matmul": ms, "bij,bjk->bik": ms, ..., "vector_norm 2": ms, "matrix_norm fro": ms}}
or {"error": "..."} (exit 0) when torch or CUDA is missing.
Inputs: torch.rand / torch.randn float32, created once; every call allocates its result, as gpuext's do. No TF32.
Timing: after 1 s of float32 batched matmuls to bring the clocks up, CUDA events around each call, 10 warmup,
median of --repeat (the einsum and matmul cases, and the norms, in two interleaved rounds, the better median kept, as the gpuext side).
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, torch_cuda  # noqa: E402


def timed(torch, fn, repeat):
    times = []
    for i in range(10 + repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        r = fn()
        e.record()
        e.synchronize()
        if i >= 10:
            times.append(s.elapsed_time(e))
        del r
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--b", type=int, default=64)
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--norm-log2", type=int, default=26)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    torch = torch_cuda()
    if torch is None:
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "times": {}}
    t = out["times"]
    b, n = args.b, args.n
    a = torch.rand(b, n, n, device="cuda")
    c = torch.rand(b, n, n, device="cuda")
    log("warming the GPU up (1 s of float32 batched matmuls)")
    t0 = time.time()
    while time.time() - t0 < 1.0:
        (a @ c)
        torch.cuda.synchronize()
    log("torch matmul and einsum bij,bjk->bik [%d, %d, %d]" % (b, n, n))
    mm, es = [], []
    for _ in range(2):
        mm.append(timed(torch, lambda: torch.matmul(a, c), args.repeat))
        es.append(timed(torch, lambda: torch.einsum("bij,bjk->bik", a, c), args.repeat))
    t["matmul"] = min(mm)
    t["bij,bjk->bik"] = min(es)
    t["bij,bkj->bik"] = timed(torch, lambda: torch.einsum("bij,bkj->bik", a, c), args.repeat)
    c1 = torch.rand(4096, 64, device="cuda")
    c2 = torch.rand(64, 4096, device="cuda")
    c3 = torch.rand(4096, 4096, device="cuda")
    t["ij,jk,kl->il"] = timed(torch, lambda: torch.einsum("ij,jk,kl->il", c1, c2, c3), args.repeat)
    del a, c, c1, c2, c3
    v = torch.randn(2 ** args.norm_log2, device="cuda")
    m = torch.randn(b, 1024, 1024, device="cuda")
    cases = [("vector_norm %s" % ("Infinity" if o == float("inf") else o), (lambda o=o: torch.linalg.vector_norm(v, o))) for o in (2, 1, float("inf"))]
    cases.append(("matrix_norm fro", lambda: torch.linalg.matrix_norm(m)))
    for r in range(2):
        for key, fn in cases:
            log("torch linalg.%s (round %d)" % (key, r + 1))
            ms = timed(torch, fn, args.repeat)
            t[key] = ms if r == 0 else min(t[key], ms)
    emit(out)


if __name__ == "__main__":
    main()
