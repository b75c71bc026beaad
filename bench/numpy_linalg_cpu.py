"""NumPy twin of bench/matmul_cpu.bench.ts: the same CPU matmuls and SVDs,
medians after warm-up, as one JSON line on stdout.

    python3 bench/numpy_linalg_cpu.py '<json: {"matmul": [[n, dtype], ...], "svd": [[m, n, dtype], ...], "repeat": r}>'
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402


def median_ms(fn, repeat, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t0) / 1e6)
    times.sort()
    return times[len(times) // 2]


def main():
    try:
        import numpy as np
    except Exception as e:  # noqa: BLE001 - any import failure means "no numpy here"
        bench_common.emit({"error": "numpy not importable: %s" % e})
        return
    spec = json.loads(sys.argv[1])
    rng = np.random.default_rng(0)
    out = {"numpy": np.__version__, "matmul": {}, "svd": {}}
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        out["blas"] = "%s %s" % (blas.get("name", "?"), blas.get("version", ""))
    except Exception:  # noqa: BLE001 - older NumPy: no dict mode
        out["blas"] = "?"
    for n, dtype in spec["matmul"]:
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        bench_common.log("numpy matmul %d %s" % (n, dtype))
        out["matmul"]["%d %s" % (n, dtype)] = median_ms(lambda: a @ b, spec["repeat"], 3)
    for m, n, dtype in spec["svd"]:
        a = rng.standard_normal((m, n)).astype(dtype)
        bench_common.log("numpy svd %dx%d %s" % (m, n, dtype))
        out["svd"]["%dx%d %s" % (m, n, dtype)] = median_ms(lambda: np.linalg.svd(a, full_matrices=False), 5, 1)
    bench_common.emit(out)


main()
