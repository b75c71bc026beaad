#!/usr/bin/env python3
"""PyTorch side of bench/indexing.bench.ts, timed the way the gpuext bench
times its calls (a device synchronize before and after each call inside the
timed region, --warmup untimed calls, the median of --repeat):

  scatterAdd  torch.scatter_add(x, 0, index, src): --scatter-n float32 values
              (random int64 indices) into --scatter-bins bins
  gather      torch.gather(x, 1, index) on a --gather-rows x --gather-cols
              float32 tensor with an int64 index of the same shape
  histc       torch.histc(x, bins=--histc-bins, min=0, max=1) of --histc-n
              float32 values in [0, 1)
  maskIndex   x[mask]: --mask-n float32 values, a bool mask of about half true

Progress goes to stderr; stdout's last line is one JSON object:
  {"torch": "2.11.0", "device": "NVIDIA H100 ...",
   "cases": {"scatterAdd": {"median_s": ...} | {"error": "..."}, "gather": ..., "histc": ..., "maskIndex": ...}}
or {"error": "..."} (exit 0) when torch or CUDA is missing.

Run alone:
  python3 bench/torch_indexing.py [--warmup 5] [--repeat 50] [--scatter-n 16777216] [--scatter-bins 65536]
      [--gather-rows 4096] [--gather-cols 8192] [--histc-n 16777216] [--histc-bins 256] [--mask-n 16777216]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, timed, torch_cuda  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--scatter-n", type=int, default=2 ** 24)
    p.add_argument("--scatter-bins", type=int, default=2 ** 16)
    p.add_argument("--gather-rows", type=int, default=4096)
    p.add_argument("--gather-cols", type=int, default=8192)
    p.add_argument("--histc-n", type=int, default=2 ** 24)
    p.add_argument("--histc-bins", type=int, default=256)
    p.add_argument("--mask-n", type=int, default=2 ** 24)
    args = p.parse_args()
    torch = torch_cuda()
    if torch is None:
        return
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "cases": {}}
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    g = torch.Generator(device=dev)
    g.manual_seed(0)

    def scatter_case():
        x = torch.zeros(args.scatter_bins, dtype=torch.float32, device=dev)
        index = torch.randint(0, args.scatter_bins, (args.scatter_n,), dtype=torch.int64, device=dev, generator=g)
        src = torch.rand(args.scatter_n, dtype=torch.float32, device=dev, generator=g) - 0.5
        return lambda: torch.scatter_add(x, 0, index, src)

    def gather_case():
        x = torch.rand(args.gather_rows, args.gather_cols, dtype=torch.float32, device=dev, generator=g)
        index = torch.randint(0, args.gather_cols, (args.gather_rows, args.gather_cols), dtype=torch.int64, device=dev, generator=g)
        return lambda: torch.gather(x, 1, index)

    def histc_case():
        x = torch.rand(args.histc_n, dtype=torch.float32, device=dev, generator=g)
        return lambda: torch.histc(x, bins=args.histc_bins, min=0, max=1)

    def mask_case():
        x = torch.rand(args.mask_n, dtype=torch.float32, device=dev, generator=g)
        mask = torch.rand(args.mask_n, device=dev, generator=g) < 0.5
        return lambda: x[mask]

    for name, make in [("scatterAdd", scatter_case), ("gather", gather_case), ("histc", histc_case), ("maskIndex", mask_case)]:
        log("torch: %s" % name)
        try:
            out["cases"][name] = timed(make(), args.warmup, args.repeat, sync)
        except Exception as e:  # noqa: BLE001 - report, keep the other figures
            out["cases"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
        torch.cuda.empty_cache()
    emit(out)


if __name__ == "__main__":
    main()
