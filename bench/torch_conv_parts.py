#!/usr/bin/env python3
"""PyTorch side of bench/conv-parts.bench.ts: the memory-bound ops of the conv
step one by one, float32, timed the way the gpuext bench times them (warmup
calls, then batches of calls each closed by a synchronize inside the timed
region; the median milliseconds per call).
  bias add                     y (B, 64, 112, 112) + bias.view(1, 64, 1, 1)
  bias grad sum (0,2,3)        y.sum((0, 2, 3))
  batch sum (0) of (N,64,147)  per.sum(0)
  unfold 7x7/2 pad 3           F.unfold(x (B, 3, 224, 224), 7, stride=2, padding=3)
  fold 7x7/2 pad 3             F.fold(cols (B, 147, 12544), (224, 224), 7, stride=2, padding=3)
Inputs are the gpuext bench's sin(0.37 i + k) * scale patterns; each part's
check is the float64 sum of its output.

Progress goes to stderr; stdout's last line is one JSON object:
  {"torch": "...", "device": "...", "parts": {"<name>": {"ms": ..., "check": ...}, ...}}
or {"error": "..."} (exit 0) when torch (or CUDA, for --device cuda) is missing.

Run alone:
  python3 bench/torch_conv_parts.py [--device cuda|cpu] [--batch 64] [--quick]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, pattern_and_timer, torch_for  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    dev = a.device
    torch = torch_for(dev)
    if torch is None:
        return
    import torch.nn.functional as F
    cuda = dev.startswith("cuda")
    pattern, per_call_ms = pattern_and_timer(torch, dev, a.quick, iters=50)

    n = a.batch
    y = pattern([n, 64, 112, 112], 1, 1.0)
    bias = pattern([64], 2, 0.1)
    per = pattern([n, 64, 147], 3, 1.0)
    x = pattern([n, 3, 224, 224], 4, 1.0)
    cols = pattern([n, 147, 12544], 5, 1.0)
    cases = [
        ("bias add (N,64,112,112)+(1,64,1,1)", lambda: y + bias.view(1, 64, 1, 1)),
        ("bias grad sum (0,2,3)", lambda: y.sum((0, 2, 3))),
        ("batch sum (0) of (N,64,147)", lambda: per.sum(0)),
        ("unfold 7x7/2 pad 3", lambda: F.unfold(x, 7, stride=2, padding=3)),
        ("fold 7x7/2 pad 3", lambda: F.fold(cols, (224, 224), 7, stride=2, padding=3)),
    ]
    parts = {}
    with torch.no_grad():
        for name, fn in cases:
            log("torch: %s" % name)
            check = float(fn().double().sum())
            parts[name] = {"ms": per_call_ms(fn), "check": check}
    name = torch.cuda.get_device_name() if cuda else "cpu"
    emit({"torch": torch.__version__, "device": name, "parts": parts})


if __name__ == "__main__":
    main()
