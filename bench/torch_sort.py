#!/usr/bin/env python3
"""PyTorch side of bench/sort.bench.ts: the same ordering ops on the same
sizes, timed the way the gpuext bench times them (a device synchronize before
and after each call inside the timed region, --warmup untimed calls, the
median of --repeat), on uniform random inputs (torch.rand):
  sort_1d       torch.sort of --sort-numel float32 (values and int64 indices)
  sort_rows     torch.sort(x, -1) of --rows x --cols float32
  topk          torch.topk(x, --k) of --topk-rows x --topk-cols float32
  unique        torch.unique(x, return_counts=True) of --unique-numel int32 in [0, --unique-range)
  searchsorted  torch.searchsorted of --search-numel float32 in a sorted --search-seq float32

Progress goes to stderr; stdout's last line is one JSON object:
  {"torch": "2.11.0", "device": "NVIDIA H100 ...",
   "ops": {"sort_1d": {"median_s": ..., "repeat": ..., "warmup": ...} | {"error": "..."}, ...}}
or {"error": "..."} (exit 0) when torch or CUDA is missing.

Run alone:
  python3 bench/torch_sort.py [--sort-numel 67108864] [--rows 4096] [--cols 8192]
                              [--topk-rows 4096] [--topk-cols 65536] [--k 10] [--warmup 3] [--repeat 15]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, timed, torch_cuda  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sort-numel", type=int, default=2 ** 26)
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=8192)
    p.add_argument("--topk-rows", type=int, default=4096)
    p.add_argument("--topk-cols", type=int, default=65536)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--unique-numel", type=int, default=2 ** 24)
    p.add_argument("--unique-range", type=int, default=2 ** 20)
    p.add_argument("--search-seq", type=int, default=2 ** 20)
    p.add_argument("--search-numel", type=int, default=2 ** 24)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args()
    torch = torch_cuda()
    if torch is None:
        return
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "ops": {}}
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize

    def sort_1d():
        x = torch.rand(args.sort_numel, dtype=torch.float32, device=dev)
        return lambda: torch.sort(x)

    def sort_rows():
        x = torch.rand(args.rows, args.cols, dtype=torch.float32, device=dev)
        return lambda: torch.sort(x, -1)

    def topk():
        x = torch.rand(args.topk_rows, args.topk_cols, dtype=torch.float32, device=dev)
        return lambda: torch.topk(x, args.k)

    def unique():
        x = torch.randint(0, args.unique_range, (args.unique_numel,), dtype=torch.int32, device=dev)
        return lambda: torch.unique(x, return_counts=True)

    def searchsorted():
        seq = torch.sort(torch.rand(args.search_seq, dtype=torch.float32, device=dev)).values
        v = torch.rand(args.search_numel, dtype=torch.float32, device=dev)
        return lambda: torch.searchsorted(seq, v)

    for name, make in [("sort_1d", sort_1d), ("sort_rows", sort_rows), ("topk", topk), ("unique", unique),
                       ("searchsorted", searchsorted)]:
        log("torch: %s" % name)
        try:
            out["ops"][name] = timed(make(), args.warmup, args.repeat, sync)
        except Exception as e:  # noqa: BLE001 - report, keep the other figures
            out["ops"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
        torch.cuda.empty_cache()
    emit(out)


if __name__ == "__main__":
    main()
