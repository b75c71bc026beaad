"""The Python side of `npm run bench:jit`: sin(x) + cos(y) / sqrt(z) and the
fused reduction sum(x * y + z) on 2^26 float32 by torch.compile and by
cupy.fuse (and cupy unfused), medians of 20 synchronized calls, plus
torch.compile's first call. One JSON line on stdout."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log  # noqa: E402

N = 2 ** 26


def median_ms(f, sync, reps=20):
    for _ in range(3):
        f()
    s = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        f()
        sync()
        s.append((time.perf_counter() - t0) * 1e3)
    s.sort()
    return s[len(s) // 2]


def main():
    out = {}
    try:
        import torch
        x, y, z = (torch.rand(N, device="cuda") + 0.1 for _ in range(3))
        sync = torch.cuda.synchronize

        def f(x, y, z):
            return torch.sin(x) + torch.cos(y) / torch.sqrt(z)
        c = torch.compile(f)
        sync()
        t0 = time.perf_counter()
        c(x, y, z)
        sync()
        out["torch_compile_first_ms"] = (time.perf_counter() - t0) * 1e3
        out["torch_compile_ms"] = median_ms(lambda: c(x, y, z), sync)
        out["torch_eager_ms"] = median_ms(lambda: f(x, y, z), sync)

        def s(x, y, z):
            return (x * y + z).sum()
        cs = torch.compile(s)
        cs(x, y, z)
        out["torch_compile_sum_ms"] = median_ms(lambda: cs(x, y, z), sync)
        log("torch: done")
    except Exception as e:  # noqa: BLE001
        out["torch_error"] = "%s: %s" % (type(e).__name__, e)
    try:
        import cupy as cp
        x, y, z = (cp.random.rand(N, dtype=cp.float32) + 0.1 for _ in range(3))
        sync = cp.cuda.runtime.deviceSynchronize

        def g(x, y, z):
            return cp.sin(x) + cp.cos(y) / cp.sqrt(z)
        fused = cp.fuse()(g)
        out["cupy_fuse_ms"] = median_ms(lambda: fused(x, y, z), sync)
        out["cupy_ms"] = median_ms(lambda: g(x, y, z), sync)

        def h(x, y, z):
            return cp.sum(x * y + z)
        fused_sum = cp.fuse()(h)
        out["cupy_fuse_sum_ms"] = median_ms(lambda: fused_sum(x, y, z), sync)
        log("cupy: done")
    except Exception as e:  # noqa: BLE001
        out["cupy_error"] = "%s: %s" % (type(e).__name__, e)
    emit(out)


main()
