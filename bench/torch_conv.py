#!/usr/bin/env python3
"""PyTorch side of bench/conv.bench.ts: Conv2d forward + backward and an
MNIST-shaped training step, timed the way the gpuext bench times them.

float32, TF32 off (torch.backends.cudnn.allow_tf32 and cuda.matmul.allow_tf32
False), cuDNN benchmark mode on (its fastest algorithm after the warmup).
Cells, filled from the same sin(0.37 i + k) patterns as the gpuext bench:
  conv step        y = F.conv2d(x, w, b, stride, padding); y.backward(gy); grads set to None
  conv step dx     the same with x requiring grad
  classifier step  Conv2d(1, CH, 3) + ReLU + MaxPool2d(2) + Flatten + Linear(CH*13*13, 10),
                   cross_entropy, backward, AdamW(lr 1e-3) step
Each: warmup calls, then batches of calls each closed by a synchronize inside
the timed region; median milliseconds per call. Checks: sum(y), sum(|dW|),
sum(|dx|), the classifier's first loss.

Progress goes to stderr; stdout's last line is one JSON object:
  {"torch": "...", "device": "...", "cudnn": "...", "tf32": false,
   "cells": {"conv step": {"ms": ..., "checks": {...}}, ...}}
or {"error": "..."} (exit 0) when torch (or CUDA, for --device cuda) is missing.

Run alone:
  python3 bench/torch_conv.py [--device cuda|cpu] [--conv 64,3,224,64,7,2,3] [--cls 64,32] [--quick]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, pattern_and_timer, torch_for  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--conv", default="64,3,224,64,7,2,3")
    ap.add_argument("--cls", default="64,32")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    dev = a.device
    torch = torch_for(dev)
    if torch is None:
        return
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    cuda = dev.startswith("cuda")
    pattern, per_call_ms = pattern_and_timer(torch, dev, a.quick, iters=30)

    cells = {}
    n, c, h, oc, k, s, p = [int(v) for v in a.conv.split(",")]
    x = pattern([n, c, h, h], 1, 1.0)
    w = pattern([oc, c, k, k], 2, 1 / math.sqrt(c * k * k)).requires_grad_(True)
    b = pattern([oc], 3, 0.1).requires_grad_(True)
    for with_dx in (False, True):
        log("torch: conv step%s" % (" dx" if with_dx else ""))
        x.requires_grad_(with_dx)
        with torch.no_grad():
            gy = pattern(list(F.conv2d(x, w, b, stride=s, padding=p).shape), 4, 1.0)
        y = F.conv2d(x, w, b, stride=s, padding=p)
        y.backward(gy)
        checks = {"sum_y": float(y.detach().double().sum()), "sum_abs_dw": float(w.grad.double().abs().sum())}
        if with_dx:
            checks["sum_abs_dx"] = float(x.grad.double().abs().sum())
        del y

        def step():
            F.conv2d(x, w, b, stride=s, padding=p).backward(gy)
            w.grad = None
            b.grad = None
            x.grad = None

        step()
        cells["conv step dx" if with_dx else "conv step"] = {"ms": per_call_ms(step), "checks": checks}

    bsz, ch = [int(v) for v in a.cls.split(",")]
    log("torch: classifier step")
    model = torch.nn.Sequential(torch.nn.Conv2d(1, ch, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                torch.nn.Linear(ch * 13 * 13, 10)).to(dev)
    with torch.no_grad():
        for i, q in enumerate(model.parameters()):
            q.copy_(pattern(list(q.shape), 5 + i, 0.1))
    xb = pattern([bsz, 1, 28, 28], 9, 1.0)
    labels = torch.tensor([(i * 7) % 10 for i in range(bsz)], device=dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def cls_step():
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), labels)
        loss.backward()
        opt.step()
        return loss

    first = float(cls_step().detach())
    cells["classifier step"] = {"ms": per_call_ms(cls_step), "checks": {"first_loss": first}}
    name = torch.cuda.get_device_name() if cuda else "cpu"
    cudnn = str(torch.backends.cudnn.version()) if cuda else None
    emit({"torch": torch.__version__, "device": name, "cudnn": cudnn, "tf32": False, "cells": cells})


if __name__ == "__main__":
    main()
