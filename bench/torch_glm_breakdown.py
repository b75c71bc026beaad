"""The Python side of bench/glm-breakdown.ts: torch's times for the same
parts of the L-BFGS logistic regression, and its fit with the evaluation
count. One JSON line on stdout."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, timed, torch_cuda  # noqa: E402


def ms(f, sync):
    return timed(f, 3, 20, sync)["median_s"] * 1e3


def main():
    torch = torch_cuda()
    if torch is None:
        emit({"error": "no torch with CUDA"})
        return
    import numpy as np
    data = np.load(sys.argv[1])
    z = torch.from_numpy(data["z"]).cuda()
    y = torch.from_numpy(data["y"]).cuda()
    sync = torch.cuda.synchronize
    beta = (torch.ones(z.shape[1], 1, device="cuda") * 0.01).requires_grad_()
    g = torch.ones_like(y)

    def loss(eta):
        return (torch.nn.functional.softplus(eta) - y * eta).mean()

    def lb():
        l = loss(z @ beta)
        l.backward()
        beta.grad = None

    def lbi():
        l = loss(z @ beta)
        l.backward()
        l.item()
        beta.grad = None

    def no_grad_loss():
        with torch.no_grad():
            loss(z @ beta)
    out = {}
    with torch.no_grad():
        out["z @ beta"] = ms(lambda: z @ beta, sync)
        out["z.T @ g"] = ms(lambda: z.T @ g, sync)
        out["dot of 101 (sum(mul)) + item"] = ms(lambda: (beta * beta).sum().item(), sync)
    out["loss on eta (noGrad)"] = ms(no_grad_loss, sync)
    out["loss + backward"] = ms(lb, sync)
    out["loss + backward + item"] = ms(lbi, sync)
    runs = []
    for _ in range(4):
        b = torch.zeros(z.shape[1], 1, device="cuda", requires_grad=True)
        opt = torch.optim.LBFGS([b], lr=1, max_iter=100, history_size=10, tolerance_grad=1e-7,
                                tolerance_change=1e-12, line_search_fn="strong_wolfe")
        evals = [0]

        def closure():
            evals[0] += 1
            opt.zero_grad()
            l = loss(z @ b)
            l.backward()
            return l
        sync()
        t0 = time.perf_counter()
        opt.step(closure)
        sync()
        runs.append(((time.perf_counter() - t0) * 1e3, opt.state[opt._params[0]]["n_iter"], evals[0]))
    runs = sorted(runs[1:])
    out["fit_ms"], out["fit_iterations"], out["fit_evals"] = runs[1]
    emit(out)


main()
