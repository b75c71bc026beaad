"""The inputs the reference scripts share with the tests: values made from
sin() (test/nn-helpers.ts mirrors vals()), so no random state is shared between
torch and gpuext. Imported by torch_conv.py, torch_nn.py and torch_math.py,
each run as `python3 test/reference/<script>.py`.
"""
import math

import torch


def vals(n, a, b, scale=1.0):
    """scale * sin(a * i + b) for i in 0 .. n - 1."""
    return [scale * math.sin(a * i + b) for i in range(n)]


def shaped(shape, a, b, scale=1.0):
    """vals() as a tensor of `shape` (the default dtype)."""
    n = 1
    for s in shape:
        n *= s
    return torch.tensor(vals(n, a, b, scale)).reshape(shape)


def flat(t):
    """A tensor's values as a flat list of Python floats."""
    return [float(v) for v in t.detach().reshape(-1).tolist()]
