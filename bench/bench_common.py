"""Helpers shared by the Python sides of the benchmarks (bench/torch_*.py, bench/cupy_*.py).

Both scripts run as `python3 bench/<script>.py`; each puts its own directory on
sys.path before `import bench_common`.
"""
import json
import statistics
import sys
import time


def log(msg):
    """One progress line on stderr (stdout carries the JSON result)."""
    print(msg, file=sys.stderr, flush=True)


def emit(obj):
    """One JSON object as a line on stdout, flushed."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def cupy_device():
    """(cupy, numpy, device name) when CuPy imports and sees a GPU; else emits
    {"error": ...} (the bench's JSON line) and returns None."""
    try:
        import cupy as cp
        import numpy as np
    except Exception as e:  # noqa: BLE001 - any import failure means "no cupy here"
        emit({"error": "cupy not importable: %s: %s" % (type(e).__name__, e)})
        return None
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            emit({"error": "cupy: no GPU"})
            return None
        name = cp.cuda.runtime.getDeviceProperties(0)["name"]
        return cp, np, name.decode() if isinstance(name, bytes) else str(name)
    except Exception as e:  # noqa: BLE001
        emit({"error": "cupy: no usable GPU: %s: %s" % (type(e).__name__, e)})
        return None


def torch_cuda():
    """torch when it imports and sees a GPU; else emits {"error": ...} (the bench's JSON line) and returns None."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        emit({"error": "torch not importable: %s: %s" % (type(e).__name__, e)})
        return None
    if not torch.cuda.is_available():
        emit({"error": "torch %s: CUDA is not available" % torch.__version__, "torch": torch.__version__})
        return None
    return torch


def timed(fn, warmup, repeat, sync, nbytes=None):
    """Median seconds of fn() over `repeat` runs after `warmup`, each closed by
    sync() (and the bandwidth when nbytes is given); the result is dropped
    inside the timed region, as a caller's would be."""
    clock = time.perf_counter_ns
    samples = []
    for i in range(warmup + repeat):
        sync()
        t0 = clock()
        r = fn()
        sync()
        ns = clock() - t0
        del r
        if i >= warmup:
            samples.append(ns)
    s = statistics.median(samples) / 1e9
    out = {"median_s": s, "repeat": repeat, "warmup": warmup}
    if nbytes is not None:
        out["gbps"] = nbytes / s / 1e9
    return out


def torch_for(device):
    """torch when it imports and `device` ('cpu', 'cuda', 'cuda:N') is usable;
    else emits {"error": ...} (the bench's JSON line) and returns None."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        emit({"error": "torch not importable: %s: %s" % (type(e).__name__, e)})
        return None
    if device.startswith("cuda") and not torch.cuda.is_available():
        emit({"error": "torch %s: CUDA is not available" % torch.__version__, "torch": torch.__version__})
        return None
    return torch


def sin_pattern(torch, shape, k, scale, dev):
    """sin(0.37 i + k) * scale over the flat index i, as float32 on `dev`: the
    inputs the TypeScript side fills the same way (bench/conv*.bench.ts's pattern())."""
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n, dtype=torch.float64)
    return (torch.sin(i * 0.37 + k) * scale).to(torch.float32).reshape(shape).to(dev)


def per_call_ms(fn, sync, warmup, iters, batch):
    """Median ms per call of `fn`: `warmup` calls, then iters // batch samples
    of `batch` calls each closed by sync() inside the timed region."""
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(max(1, iters // batch)):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        sync()
        samples.append((time.perf_counter_ns() - t0) / batch / 1e6)
    return statistics.median(samples)


def pattern_and_timer(torch, dev, quick, iters):
    """The conv benches' two helpers on `dev`: pattern(shape, k, scale) (sin_pattern's
    fill) and timer(fn) (per_call_ms after 5 warm-up calls, `iters` calls in batches of
    5, closed by a CUDA synchronize on a GPU); --quick: 1 warm-up, 3 calls one by one."""
    sync = torch.cuda.synchronize if dev.startswith("cuda") else (lambda: None)
    warmup, n, batch = (1, 3, 1) if quick else (5, iters, 5)
    return (lambda shape, k, scale: sin_pattern(torch, shape, k, scale, dev),
            lambda fn: per_call_ms(fn, sync, warmup, n, batch))
