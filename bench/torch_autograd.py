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


def warm_for(fns, sync, seconds=1.0):
    """Runs the functions in turn, synchronized, for `seconds` before anything
    is timed, as bench/autograd.bench.ts warms gpuext's: the GPU leaves its
    idle clocks."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for f in fns:
            f()
            sync()


def per_op_us(fns, sync, chain=100):
    """Median microseconds per op of each function, as bench/autograd.bench.ts
    times them: a second of warm-up, then three rounds in a rotated order, the
    median over rounds."""
    warm_for(fns, sync)
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


def mlp_step(torch, dev, sync):
    """The graphed-step benchmark's MLP (4 Linear layers of 256, ReLU between, batch 64, MSE, Adam lr 1e-3) as
    bench/autograd-mlp.ts trains it: median ms per step (closed by sync) eager (Adam's default: foreach on CUDA),
    with torch.cuda.make_graphed_callables (forward and backward graphed, the optimizer eager), and the whole step
    captured in one torch.cuda.graph (Adam capturable), torch's fastest form."""
    width, depth, batch = 256, 4, 64

    def model():
        torch.manual_seed(0)
        layers = []
        for i in range(depth):
            layers.append(torch.nn.Linear(width, width))
            if i < depth - 1:
                layers.append(torch.nn.ReLU())
        return torch.nn.Sequential(*layers).to(dev)
    x = torch.randn(batch, width, device=dev)
    y = torch.randn(batch, width, device=dev)
    out = {}

    def eager_of(m, opt):
        def step():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
            opt.step()
        return step
    m = model()
    out["mlp_eager_ms"] = timed(eager_of(m, torch.optim.Adam(m.parameters(), lr=1e-3)), 20, 200, sync)["median_s"] * 1e3
    if dev != "cuda":
        return out
    m = model()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    graphed = torch.cuda.make_graphed_callables(m, (x,))
    out["mlp_graphed_callables_ms"] = timed(eager_of(graphed, opt), 20, 200, sync)["median_s"] * 1e3
    m = model()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, capturable=True)
    step = eager_of(m, opt)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss = torch.nn.functional.mse_loss(m(x), y)
        loss.backward()
        opt.step()
    out["mlp_whole_graph_ms"] = timed(g.replay, 20, 200, sync)["median_s"] * 1e3
    return out


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
    log("torch MLP training step on %s" % dev)
    out.update(mlp_step(torch, dev, sync))
    if len(sys.argv) > 1:
        log("torch L-BFGS logistic regression")
        out.update(glm(torch, sys.argv[1], dev))
    emit(out)


main()
