"""CuPy side of bench/streams.bench.ts's graph section: CUDA graph replay cost
per kernel, and eager launches of the same kernel for scale.

A graph of --kernels launches of a 1-element add RawKernel
(c[0] = a[0] + b[0], 1 block of 32 threads) is captured on a non-blocking
stream (stream.begin_capture() / end_capture()) and launched --replays times
per sample; --samples samples, median. Per sample: GPU time by events around
the replays / (replays * kernels), and host time per graph.launch(). The eager
figure launches the same kernels one by one (--eager-rounds rounds of
--kernels launches per sample).

Prints progress on stderr and one JSON object as the last stdout line, or
{"error": ...} with exit 0 when cupy or a GPU is missing.

    python3 bench/cupy_graph.py [--kernels 100] [--replays 200] [--samples 20] [--eager-rounds 20]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import cupy_device, emit, log  # noqa: E402

ADD_SRC = r'''
extern "C" __global__ void add1(const float* a, const float* b, float* c, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
'''


PLACEMENT_FLOATS = 16 << 20


def placements(count):
    """bench/streams.bench.ts's placementOffsets(): the same offsets (floats) of a, b, c."""
    seed, out = 12345, []

    def nxt():
        nonlocal seed
        seed = (seed * 48271) % 2147483647  # MINSTD, as the JS side (exact in doubles)
        return (seed % (PLACEMENT_FLOATS // 64)) * 64

    for _ in range(count):
        out.append([nxt(), nxt(), nxt()])
    return out


def replay_us_per_kernel(cp, kernel, args, s, K, R, S):
    """Median GPU us per kernel of a graph of K launches replayed R times per sample."""
    with s:
        kernel((1,), (32,), args)
        s.synchronize()
        s.begin_capture()
        for _ in range(K):
            kernel((1,), (32,), args)
        g = s.end_capture()
    g.launch(stream=s)
    s.synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(S):
        start.record(s)
        for _ in range(R):
            g.launch(stream=s)
        end.record(s)
        end.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, end) * 1e3 / (R * K))
    return statistics.median(ts)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kernels", type=int, default=100)
    p.add_argument("--replays", type=int, default=200)
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--eager-rounds", type=int, default=20)
    p.add_argument("--placements", type=int, default=0)
    args = p.parse_args()

    found = cupy_device()
    if found is None:
        return
    cp, np, device = found

    K, R, S = args.kernels, args.replays, args.samples
    kernel = cp.RawKernel(ADD_SRC, "add1")
    a = cp.full(1, 1.0, dtype=cp.float32)
    b = cp.full(1, 2.0, dtype=cp.float32)
    c = cp.full(1, float("nan"), dtype=cp.float32)
    n = np.int64(1)
    s = cp.cuda.Stream(non_blocking=True)

    def launch():
        kernel((1,), (32,), (a, b, c, n))

    with s:
        launch()  # compiles and loads the kernel outside the capture
        s.synchronize()
        c.fill(float("nan"))
        s.synchronize()
        s.begin_capture()
        for _ in range(K):
            launch()
        g = s.end_capture()
    s.synchronize()
    log(f"cupy {cp.__version__}: captured {K} kernels")

    g.launch(stream=s)
    s.synchronize()
    value = float(c.get()[0])
    if value != 3.0:
        emit({"error": f"cupy graph: c = {value} after replay, expected 3"})
        return

    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(10):
        g.launch(stream=s)
    s.synchronize()
    gpu_us, cpu_us, wall_us = [], [], []
    for _ in range(S):
        start.record(s)
        t0 = time.perf_counter()
        for _ in range(R):
            g.launch(stream=s)
        t1 = time.perf_counter()
        end.record(s)
        end.synchronize()
        t2 = time.perf_counter()
        gpu_us.append(cp.cuda.get_elapsed_time(start, end) * 1e3 / (R * K))
        cpu_us.append((t1 - t0) * 1e6 / R)
        wall_us.append((t2 - t0) * 1e6 / (R * K))

    E = args.eager_rounds
    eager_gpu_us, eager_cpu_us = [], []
    with s:
        for _ in range(K):
            launch()
        s.synchronize()
        for _ in range(S):
            start.record(s)
            t0 = time.perf_counter()
            for _ in range(E * K):
                launch()
            t1 = time.perf_counter()
            end.record(s)
            end.synchronize()
            eager_gpu_us.append(cp.cuda.get_elapsed_time(start, end) * 1e3 / (E * K))
            eager_cpu_us.append((t1 - t0) * 1e6 / (E * K))
    log("cupy: graph and eager timing done")

    # NOTE [ Graph replay over placements ] in bench/streams.bench.ts.
    placed = []
    if args.placements > 0:
        buf = cp.zeros(PLACEMENT_FLOATS, dtype=cp.float32)
        for oa, ob, oc in placements(args.placements):
            pa, pb, pc = buf[oa:oa + 1], buf[ob:ob + 1], buf[oc:oc + 1]
            placed.append(replay_us_per_kernel(cp, kernel, (pa, pb, pc, n), s, K, R, S))
        log(f"cupy: {len(placed)} placements done")

    emit({
        "cupy": cp.__version__,
        "device": device,
        "kernels": K,
        "replays": R,
        "samples": S,
        "graph_gpu_us_per_kernel": statistics.median(gpu_us),
        "graph_cpu_us_per_replay": statistics.median(cpu_us),
        "graph_wall_us_per_kernel": statistics.median(wall_us),
        "eager_gpu_us_per_kernel": statistics.median(eager_gpu_us),
        "eager_cpu_us_per_launch": statistics.median(eager_cpu_us),
        "placements_gpu_us_per_kernel": placed,
    })


if __name__ == "__main__":
    main()
