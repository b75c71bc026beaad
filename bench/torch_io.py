"""The Python side of `npm run bench:io`: safetensors.torch.save_file and
load_file(device=...) of TENSORS float32 tensors of N elements, median of 3
after a warm-up, in a fresh temporary directory. One JSON line on stdout."""
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit  # noqa: E402


def median_ms(f, reps=3):
    f()
    s = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        s.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(s)


def main():
    n, count, device = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    try:
        import torch
        from safetensors.torch import load_file, save_file
    except Exception as e:  # noqa: BLE001
        emit({"error": "torch or safetensors not importable: %s" % e})
        return
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    tensors = {"t%d" % i: torch.randn(n, device=device) for i in range(count)}
    d = tempfile.mkdtemp(prefix="torch-io-")
    path = os.path.join(d, "bench.safetensors")
    try:
        def save():
            sync()
            save_file(tensors, path)

        def load():
            out = load_file(path, device=device)
            sync()
            del out
        emit({"save_ms": median_ms(save), "load_ms": median_ms(load)})
    finally:
        shutil.rmtree(d, ignore_errors=True)


main()
