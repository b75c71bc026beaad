#!/usr/bin/env python3
"""NumPy side of bench/cpu.bench.ts: the same CPU work on the same inputs,
timed the same way (each call alone with time.perf_counter_ns, --warmup untimed
calls, the median of --repeat; a result is dropped after its timed region).

  add, exp, sum of --numel float32 (result allocated, and into out=)
  ones((1000, 1000, 20), float32)
  matmul of two --mm-sizes square float32 matrices (result allocated)

Inputs follow bench/util.ts's patternA / patternB (exact in float32), so both
sides compute on the same values. Progress goes to stderr; stdout's last line
is one JSON object:
  {"numpy": "2.4.0", "threads_env": {...}, "ops": {"add": {"median_ms": ...}, ...}}
or {"error": "..."} (exit 0) when numpy is missing.

Run alone:
  python3 bench/numpy_cpu.py [--numel 10000000] [--warmup 3] [--repeat 15] [--mm-sizes 512,1024]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log  # noqa: E402


def timed(fn, warmup, repeat):
    clock = time.perf_counter_ns
    samples = []
    for i in range(warmup + repeat):
        t0 = clock()
        r = fn()
        ns = clock() - t0
        del r
        if i >= warmup:
            samples.append(ns)
    return {"median_ms": statistics.median(samples) / 1e6, "repeat": repeat, "warmup": warmup}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--numel", type=int, default=10 ** 7)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--mm-sizes", default="512,1024")
    args = p.parse_args()
    try:
        import numpy as np
    except Exception as e:  # noqa: BLE001 - any import failure means "no numpy here"
        emit({"error": "numpy not importable: %s: %s" % (type(e).__name__, e)})
        return

    n = args.numel
    i = np.arange(n, dtype=np.int64)
    a = ((i % 1021) * 0.5).astype(np.float32)
    b = ((i % 13) - 6.25).astype(np.float32)
    e = (((i % 1021) - 510) / 64).astype(np.float32)  # exp input in [-8, 8)
    out = np.empty(n, np.float32)
    out0 = np.empty((), np.float32)
    ops = {}

    def run(name, fn):
        log("numpy: %s" % name)
        ops[name] = timed(fn, args.warmup, args.repeat)

    run("add", lambda: np.add(a, b))
    run("add_out", lambda: np.add(a, b, out=out))
    run("exp", lambda: np.exp(e))
    run("exp_out", lambda: np.exp(e, out=out))
    run("sum", lambda: np.sum(a))
    run("sum_out", lambda: np.sum(a, out=out0))
    run("ones", lambda: np.ones((1000, 1000, 20), np.float32))
    for s in [int(x) for x in args.mm_sizes.split(",") if x]:
        m = (np.arange(s * s, dtype=np.int64) % 17 - 8).astype(np.float32).reshape(s, s) / 8
        run("matmul%d" % s, lambda m=m: np.matmul(m, m))

    env = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    blas = "?"
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {}).get("name", "?")
    except Exception:  # noqa: BLE001 - older numpy: no dict mode
        pass
    emit({"numpy": np.__version__, "blas": blas, "threads_env": env, "ops": ops})


if __name__ == "__main__":
    main()
