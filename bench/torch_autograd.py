"""The Python side of `npm run bench:autograd`: torch's tape overhead (a chain
of 100 one-element multiplications, forward + backward, and forward only
under no_grad) on the GPU, medians per op. One JSON line on stdout."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log  # noqa: E402


def per_op_us(f, sync, reps=200, chain=100):
    for _ in range(50):
        f()
    sync()
    s = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        sync()
        s.append((time.perf_counter() - t0) * 1e6 / chain)
    s.sort()
    return s[len(s) // 2]


def main():
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        emit({"error": "torch not importable: %s" % e})
        return
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    x = torch.tensor([1.0001], device=dev, requires_grad=True)
    c = torch.tensor([0.9999], device=dev)

    def step():
        y = x
        for _ in range(100):
            y = y * c
        y.backward()
        x.grad = None

    def fwd():
        with torch.no_grad():
            y = x
            for _ in range(100):
                y = y * c

    log("torch tape chain on %s" % dev)
    emit({"device": dev, "tape_us": per_op_us(step, sync), "forward_us": per_op_us(fwd, sync)})


main()
