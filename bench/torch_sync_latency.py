"""The Python side of bench/sync-latency.ts: torch's cost of the same host
reads of device scalars, one call closed by a synchronize, median of 400
after 50 warm-ups. One JSON line on stdout."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, timed, torch_cuda  # noqa: E402


def main():
    torch = torch_cuda()
    if torch is None:
        emit({"error": "no torch with CUDA"})
        return
    sync = torch.cuda.synchronize
    one = torch.randn(1, device="cuda")
    b = torch.randn(101, 1, device="cuda")
    big = torch.randn(1_000_000, 1, device="cuda")

    def us(f):
        return timed(f, 50, 400, sync)["median_s"] * 1e6
    emit({
        "synchronize": us(lambda: None),
        "item of a 1-element tensor": us(lambda: one.item()),
        "sum of 101 (launch)": us(lambda: b.sum()),
        "sum of 101 + item": us(lambda: b.sum().item()),
        "sum(mul) of 101 + item": us(lambda: (b * b).sum().item()),
        "max(abs) of 101 + item": us(lambda: b.abs().max().item()),
        "sum of 10^6 + item": us(lambda: big.sum().item()),
        "mul 101 (launch)": us(lambda: b * b),
    })


main()
