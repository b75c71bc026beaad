#!/usr/bin/env python3
"""PyTorch side of bench/ops.bench.ts: torch.add, torch.mul (output allocated
per call) and torch.sum on --numel float32 elements (default 2^28), and
torch.softmax(x, -1) on a --softmax-rows x --softmax-cols float32 matrix
(default 4096 x 4096), timed the way the gpuext bench times gx.add, gx.mul,
gx.sum and gx.softmax: a device synchronize before and after each call inside
the timed region, --warmup untimed calls, the median of --repeat (softmax:
--softmax-repeat, default 100, for a steady median of a short call). GB/s =
bytes moved / seconds / 1e9, with add and mul moving 3 * 4 * numel bytes, sum
4 * numel and softmax 2 * 4 * rows * cols (one read, one write).

Progress goes to stderr; stdout's last line is one JSON object:
  {"torch": "2.11.0", "device": "NVIDIA H100 ...", "numel": 268435456,
   "ops": {"add": {"median_s": ..., "gbps": ...} | {"error": "..."}, "mul": ..., "sum": ..., "softmax": ...}}
or {"error": "..."} (exit 0) when torch or CUDA is missing.

Run alone:
  python3 bench/torch_ops.py [--numel 268435456] [--warmup 3] [--repeat 20]
                             [--softmax-rows 4096] [--softmax-cols 4096] [--softmax-repeat 100]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, timed, torch_cuda  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--numel", type=int, default=2 ** 28)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--softmax-rows", type=int, default=4096)
    p.add_argument("--softmax-cols", type=int, default=4096)
    p.add_argument("--softmax-repeat", type=int, default=100)
    args = p.parse_args()
    torch = torch_cuda()
    if torch is None:
        return
    n = args.numel
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "numel": n, "ops": {}}
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    a = torch.rand(n, dtype=torch.float32, device=dev)
    b = torch.rand(n, dtype=torch.float32, device=dev)
    cases = [
        ("add", lambda: torch.add(a, b), 3 * 4 * n),
        ("mul", lambda: torch.mul(a, b), 3 * 4 * n),
        ("sum", lambda: torch.sum(a), 4 * n),
    ]
    rows, cols = args.softmax_rows, args.softmax_cols
    s = torch.rand(rows, cols, dtype=torch.float32, device=dev) * 16 - 8
    cases.append(("softmax", lambda: torch.softmax(s, -1), 2 * 4 * rows * cols))
    for name, fn, nbytes in cases:
        log("torch: %s on %d float32" % (name, rows * cols if name == "softmax" else n))
        try:
            repeat = args.softmax_repeat if name == "softmax" else args.repeat
            out["ops"][name] = timed(fn, args.warmup, repeat, sync, nbytes)
        except Exception as e:  # noqa: BLE001 - report, keep the other figures
            out["ops"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
    emit(out)


if __name__ == "__main__":
    main()
