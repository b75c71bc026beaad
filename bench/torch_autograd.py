"""The Python side of `npm run bench:autograd`: torch's tape overhead (a chain
of 100 one-element multiplications, forward + backward, forward only under
no_grad, and the forward recorded with its graph dropped) on the GPU, medians
per op. One JSON line on stdout."""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, timed  # noqa: E402


def per_op_us(fns, sync, chain=100):
    """Median microseconds per op of each function, as bench/autograd.bench.ts
    times them: three rounds in a rotated order, the median over rounds."""
    rounds = [[] for _ in fns]
    for r in range(3):
        for j in range(len(fns)):
            k = (j + r) % len(fns)
            rounds[k].append(timed(fns[k], 25, 100, sync)["median_s"] * 1e6 / chain)
    return [statistics.median(v) for v in rounds]


def glm(torch, path, dev):
    """L-BFGS on the logistic loss of the data gpuext wrote (an .npz of z and y), as examples/glm.ts fits it."""
    import numpy as np
    data = np.load(path)
    z = torch.from_numpy(data["z"]).to(dev)
    y = torch.from_numpy(data["y"]).to(dev)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

    def fit():
        beta = torch.zeros(z.shape[1], 1, dtype=z.dtype, device=dev, requires_grad=True)
        opt = torch.optim.LBFGS([beta], lr=1, max_iter=100, history_size=10, tolerance_grad=1e-7,
                                tolerance_change=1e-12, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            eta = z @ beta
            loss = (torch.nn.functional.softplus(eta) - y * eta).mean()
            loss.backward()
            return loss
        sync()
        t0 = time.perf_counter()
        opt.step(closure)
        sync()
        ms = (time.perf_counter() - t0) * 1e3
        with torch.no_grad():
            eta = z @ beta
            loss = (torch.nn.functional.softplus(eta) - y * eta).mean().item()
        return ms, loss, opt.state[opt._params[0]]["n_iter"]
    fit()  # warm-up
    runs = [fit() for _ in range(3)]
    runs.sort()
    ms, loss, iters = runs[1]
    return {"glm_ms": ms, "glm_loss": loss, "glm_iterations": iters}


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

    def chain():
        y = x
        for _ in range(100):
            y = y * c

    def fwd():
        with torch.no_grad():
            chain()

    log("torch tape chain on %s" % dev)
    tape, forward, recorded = per_op_us([step, fwd, chain], sync)
    out = {"device": dev, "tape_us": tape, "forward_us": forward, "recorded_us": recorded}
    if len(sys.argv) > 1:
        log("torch L-BFGS logistic regression")
        out.update(glm(torch, sys.argv[1], dev))
    emit(out)


main()
