"""CuPy side of bench/rtc.bench.ts: run-time kernels (RawKernel,
ElementwiseKernel, ReductionKernel) measured the way the gpuext side is.

1. cold compile: `cp.RawKernel(src, name).compile()` of a small add kernel,
   each source unique (a comment with the run's token and a counter) and each
   run with a fresh CUPY_CACHE_DIR (set in os.environ before the call; CuPy
   reads it at compile time); one untimed warmup compile first (loads NVRTC,
   creates the context), then --cold timed ones, median. The call includes
   loading the module (CuPy's compile() does both).
2. disk-cache hit: --disk-procs new python processes (this script with
   --disk-hit-child), each setting CUPY_CACHE_DIR before importing cupy,
   creating the context (cp.empty), then timing `cp.RawKernel(src,
   name).compile()` of a source the cold runs left on disk: the first such
   call in the process, and a second one (another cached source, its
   directory set in os.environ) in the now warm process. A hit is checked by
   the cache directory's file count (a miss writes a file).
3. call latency, 1 element, float32: RawKernel launch (output preallocated),
   ElementwiseKernel call (allocates its output), ReductionKernel sum; --calls
   calls after --warmup, in batches of --batch closed by a device
   synchronize, median us per call.
4. bandwidth on --numel float32: ElementwiseKernel add (3 * 4 * n bytes) and
   ReductionKernel sum (4 * n bytes), CUDA events around each call (output
   allocated per call), --bw-warmup then --bw-repeat calls, median.

Values are checked once (sampled); a wrong CuPy result is listed in
"check_failures". Prints progress on stderr and one JSON object as the last
stdout line, or {"error": ...} with exit 0 when cupy or a GPU is missing.

    python3 bench/cupy_rtc.py [--token T] [--cold 5] [--disk-procs 5] [--calls 20000] [--batch 1000]
                              [--warmup 2000] [--numel 268435456] [--bw-warmup 3] [--bw-repeat 20]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import cupy_device, emit, log  # noqa: E402

KERNEL_NAME = "bench_add"


def add_source(tag):
    """The same kernel text as rtc.bench.ts's, with a unique comment."""
    return (
        "// gpuext rtc bench: %s\n"
        'extern "C" __global__ void bench_add(const float* a, const float* b, float* c, int n) {\n'
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) c[i] = a[i] + b[i];\n"
        "}\n" % tag
    )


def count_files(d):
    try:
        return len(os.listdir(d))
    except OSError:
        return -1


def disk_hit_child(argv):
    """New-process part of section 2: argv = [dir1, src1, dir2, src2]."""
    d1, s1, d2, s2 = argv
    os.environ["CUPY_CACHE_DIR"] = d1
    out = {}
    try:
        import cupy as cp
        cp.empty(1, dtype=cp.float32)  # the context, outside the timing
        cp.cuda.runtime.deviceSynchronize()
        n1 = count_files(d1)
        t0 = time.perf_counter_ns()
        cp.RawKernel(s1, KERNEL_NAME).compile()
        out["first_ms"] = (time.perf_counter_ns() - t0) / 1e6
        out["first_hit"] = count_files(d1) == n1
        os.environ["CUPY_CACHE_DIR"] = d2
        n2 = count_files(d2)
        t0 = time.perf_counter_ns()
        cp.RawKernel(s2, KERNEL_NAME).compile()
        out["second_ms"] = (time.perf_counter_ns() - t0) / 1e6
        out["second_hit"] = count_files(d2) == n2
    except Exception as e:  # noqa: BLE001
        out["error"] = "%s: %s" % (type(e).__name__, e)
    emit(out)


def per_call_us(fn, calls, batch, warmup, sync):
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(max(1, calls // batch)):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        sync()
        samples.append((time.perf_counter_ns() - t0) / batch / 1e3)
    return statistics.median(samples)


def event_ms(cp, fn, warmup, repeat):
    """Median ms between CUDA events recorded around fn() on the current stream."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(warmup):
        fn()
    cp.cuda.runtime.deviceSynchronize()
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--disk-hit-child":
        disk_hit_child(sys.argv[2:])
        return
    p = argparse.ArgumentParser()
    p.add_argument("--token", default="%d-%d" % (os.getpid(), time.time_ns()))
    p.add_argument("--cold", type=int, default=5)
    p.add_argument("--disk-procs", type=int, default=5)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=2000)
    p.add_argument("--numel", type=int, default=1 << 28)
    p.add_argument("--bw-warmup", type=int, default=3)
    p.add_argument("--bw-repeat", type=int, default=20)
    args = p.parse_args()

    found = cupy_device()
    if found is None:
        return
    cp, np, device = found
    cp.empty(1, dtype=cp.float32)  # create the context before anything is timed
    cp.cuda.runtime.deviceSynchronize()

    result = {"cupy": cp.__version__, "device": device}
    try:
        v = cp.cuda.nvrtc.getVersion()
        result["nvrtc"] = "%d.%d" % (v[0], v[1])
    except Exception:  # noqa: BLE001
        pass
    failures = []
    result["check_failures"] = failures
    token = "cupy %s" % args.token
    roots = []

    # 1. cold compile
    cold_dirs, cold_srcs = [], []
    try:
        log("cupy: cold compiles")
        warm_dir = tempfile.mkdtemp(prefix="cupy-rtc-bench-")
        roots.append(warm_dir)
        os.environ["CUPY_CACHE_DIR"] = warm_dir
        t0 = time.perf_counter_ns()
        cp.RawKernel(add_source("%s warmup" % token), KERNEL_NAME).compile()
        first_ms = (time.perf_counter_ns() - t0) / 1e6
        ms, misses = [], 0
        for i in range(args.cold):
            d = tempfile.mkdtemp(prefix="cupy-rtc-bench-")
            roots.append(d)
            src = add_source("%s cold %d" % (token, i))
            os.environ["CUPY_CACHE_DIR"] = d
            n0 = count_files(d)
            t0 = time.perf_counter_ns()
            cp.RawKernel(src, KERNEL_NAME).compile()
            ms.append((time.perf_counter_ns() - t0) / 1e6)
            if count_files(d) == n0:
                misses += 1  # nothing written: not the cold path we meant to time
            cold_dirs.append(d)
            cold_srcs.append(src)
        result["cold"] = {"ms": ms, "median_ms": statistics.median(ms), "first_ms": first_ms,
                          "unwritten": misses}
    except Exception as e:  # noqa: BLE001
        result["cold"] = {"error": "%s: %s" % (type(e).__name__, e)}

    # 2. disk-cache hit, new processes
    try:
        if not cold_dirs:
            raise RuntimeError("no cold-compiled sources to hit")
        log("cupy: disk-cache hits in %d new processes" % args.disk_procs)
        first, second, misses, errors = [], [], 0, []
        k = len(cold_dirs)
        for i in range(args.disk_procs):
            j = (i + 1) % k
            r = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--disk-hit-child",
                 cold_dirs[i % k], cold_srcs[i % k], cold_dirs[j], cold_srcs[j]],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
            lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
            try:
                o = json.loads(lines[-1]) if lines else {"error": "no output (exit %d): %s" % (r.returncode, r.stderr.strip()[-300:])}
            except ValueError:
                o = {"error": "unreadable output: %s" % lines[-1][-300:]}
            if "error" in o:
                errors.append(o["error"])
                continue
            first.append(o["first_ms"])
            second.append(o["second_ms"])
            misses += (0 if o["first_hit"] else 1) + (0 if o["second_hit"] else 1)
        if not first:
            raise RuntimeError("; ".join(errors) or "no child result")
        result["disk"] = {"first_ms": first, "median_first_ms": statistics.median(first),
                          "second_ms": second, "median_second_ms": statistics.median(second),
                          "misses": misses, "errors": errors}
    except Exception as e:  # noqa: BLE001
        result["disk"] = {"error": "%s: %s" % (type(e).__name__, e)}
    finally:
        for d in roots:
            shutil.rmtree(d, ignore_errors=True)

    # 3. call latency
    sync = cp.cuda.runtime.deviceSynchronize
    call = {}
    result["call"] = call
    a = cp.full(1, 1.0, dtype=cp.float32)
    b = cp.full(1, 2.0, dtype=cp.float32)
    c = cp.full(1, float("nan"), dtype=cp.float32)
    n1 = np.int32(1)  # the kernel declares int n (a Python int would go as long long)
    try:
        raw = cp.RawKernel(add_source("%s latency" % token), KERNEL_NAME)
        raw((1,), (32,), (a, b, c, n1))
        if float(c.get()[0]) != 3.0:
            failures.append("RawKernel add: c = %r, expected 3" % float(c.get()[0]))
        log("cupy: RawKernel launch latency")
        call["raw_us"] = per_call_us(lambda: raw((1,), (32,), (a, b, c, n1)),
                                     args.calls, args.batch, args.warmup, sync)
    except Exception as e:  # noqa: BLE001
        call["raw_error"] = "%s: %s" % (type(e).__name__, e)
    add = None
    try:
        add = cp.ElementwiseKernel("T x, T y", "T z", "z = x + y", "bench_ew_add")
        z = add(a, b)
        if float(z.get()[0]) != 3.0:
            failures.append("ElementwiseKernel add: z = %r, expected 3" % float(z.get()[0]))
        log("cupy: ElementwiseKernel call latency")
        call["ew_us"] = per_call_us(lambda: add(a, b), args.calls, args.batch, args.warmup, sync)
    except Exception as e:  # noqa: BLE001
        call["ew_error"] = "%s: %s" % (type(e).__name__, e)
    red = None
    try:
        red = cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "bench_sum")
        x1 = cp.full(1, 3.0, dtype=cp.float32)
        s = red(x1)
        if float(s.get()) != 3.0:
            failures.append("ReductionKernel sum of [3]: %r, expected 3" % float(s.get()))
        log("cupy: ReductionKernel call latency")
        call["red_us"] = per_call_us(lambda: red(x1), args.calls, args.batch, args.warmup, sync)
    except Exception as e:  # noqa: BLE001
        call["red_error"] = "%s: %s" % (type(e).__name__, e)
    del a, b, c

    # 4. bandwidth
    bw = {"numel": args.numel}
    result["bw"] = bw
    n = args.numel
    if add is not None:
        try:
            log("cupy: ElementwiseKernel bandwidth on %d float32" % n)
            i32 = cp.arange(n, dtype=cp.int32)
            a = (i32 % 1021).astype(cp.float32) * cp.float32(0.5)
            b = (i32 % 13).astype(cp.float32) - cp.float32(6.25)
            del i32
            z = add(a, b)
            idx = np.concatenate([np.array([0, 1, 2, 1020, 1021, n >> 1, n - 2, n - 1], dtype=np.int64),
                                  np.arange(4093, n, 4093, dtype=np.int64)])
            idx = idx[(idx >= 0) & (idx < n)]
            got = cp.asnumpy(z[cp.asarray(idx)])
            want = ((idx % 1021).astype(np.float32) * np.float32(0.5)) + ((idx % 13).astype(np.float32) - np.float32(6.25))
            bad = int(np.count_nonzero(got != want))
            if bad:
                failures.append("ElementwiseKernel add on %d: %d of %d sampled elements wrong" % (n, bad, len(idx)))
            del z
            ms = event_ms(cp, lambda: add(a, b), args.bw_warmup, args.bw_repeat)
            bw["ew_ms"] = ms
            bw["ew_gbps"] = 3 * 4 * n / (ms * 1e6)
            del a, b
        except Exception as e:  # noqa: BLE001
            bw["ew_error"] = "%s: %s" % (type(e).__name__, e)
    if red is not None:
        try:
            log("cupy: ReductionKernel bandwidth on %d float32" % n)
            x = cp.full(n, 0.25, dtype=cp.float32)
            s = float(red(x).get())
            want = 0.25 * n
            if abs(s - want) > 1e-5 * want:
                failures.append("ReductionKernel sum of %d x 0.25: %r, expected %r" % (n, s, want))
            ms = event_ms(cp, lambda: red(x), args.bw_warmup, args.bw_repeat)
            bw["red_ms"] = ms
            bw["red_gbps"] = 4 * n / (ms * 1e6)
            del x
        except Exception as e:  # noqa: BLE001
            bw["red_error"] = "%s: %s" % (type(e).__name__, e)
    cp.get_default_memory_pool().free_all_blocks()
    log("cupy: done")
    emit(result)


if __name__ == "__main__":
    main()
