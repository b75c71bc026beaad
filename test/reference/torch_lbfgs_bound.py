"""Reference figures for test/optim.test.ts's 'LBFGS bounds each line search by
the closure calls left': torch.optim.LBFGS with the strong Wolfe line search
and small max_iter / max_eval, where torch bounds the search by the
evaluations left (max_ls = max_eval - current_evals). For each function and
(max_iter, max_eval), two step(closure) calls from the same start in float64
on the CPU; per step: the closure calls so far, the loss step returned, the
loss at the parameters after it, and the parameters. Prints the table as
TypeScript.
    python test/reference/torch_lbfgs_bound.py"""
import torch

torch.set_default_dtype(torch.float64)

X = torch.tensor([[1, 2, -1], [0.5, -1, 2], [-1.5, 0.3, 1], [2, 1, 0.5]])
Y = torch.tensor([1, -2, 0.5, 3.0])


def quadratic(w):
    return 100 * ((w - 3) ** 2).sum()


def rosenbrock(w):
    return (1 - w[0]) ** 2 + 100 * (w[1] - w[0] * w[0]) ** 2


def least_squares(w):
    return (((X * w).sum(1) - Y) ** 2).mean()


def exp_sum(w):
    # A convex function whose curvature grows with w: exp(w) + exp(-2 w) summed, plus a coupling term.
    return (torch.exp(w) + torch.exp(-2 * w)).sum() + 0.5 * (w[0] - w[1]) ** 2


FUNCTIONS = [
    ('quadratic', quadratic, [0.0, 0.0, 0.0, 0.0]),
    ('rosenbrock', rosenbrock, [-1.5, 2.0]),
    ('leastSquares', least_squares, [0.5, -0.3, 0.8]),
    ('expSum', exp_sum, [1.5, -1.0]),
]
LIMITS = [(1, None), (2, None), (3, None), (1, 3), (2, 2), (4, 3), (3, 7)]


def run(f, w0, max_iter, max_eval):
    w = torch.tensor(w0, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=max_iter, max_eval=max_eval, line_search_fn='strong_wolfe')
    calls = 0

    def closure():
        nonlocal calls
        calls += 1
        opt.zero_grad()
        loss = f(w)
        loss.backward()
        return loss

    steps = []
    for _ in range(2):
        first = opt.step(closure)
        with torch.no_grad():
            after = f(w).item()
        steps.append((calls, first.item(), after, w.detach().tolist()))
    return steps


print(f'// torch {torch.__version__}, CPU, float64 (test/reference/torch_lbfgs_bound.py):')
print('// [function, maxIter, maxEval, [[closure calls so far, loss step() returned, loss after, params after], ...two steps]]')
for name, f, w0 in FUNCTIONS:
    for max_iter, max_eval in LIMITS:
        steps = run(f, w0, max_iter, max_eval)
        body = ', '.join('[' + ', '.join([str(c), repr(a), repr(b), '[' + ', '.join(repr(x) for x in w) + ']']) + ']' for c, a, b, w in steps)
        print(f"  ['{name}', {max_iter}, {'undefined' if max_eval is None else max_eval}, [{body}]],")
