#!/usr/bin/env python3
"""PyTorch / CuPy side of bench/extension.bench.ts: the AddGPU op as a PyTorch
extension built by torch.utils.cpp_extension.load_inline, torch.add, and a CuPy
RawKernel of the same kernel, timed the way the gpuext bench times addGpu.

Phases, each independent (one failing leaves the others' figures intact):
  build      load_inline of the AddGPU extension into a fresh temporary
             build_directory, in a child process (so a hung or slow build can
             be killed: --build-timeout), timed around the load_inline call;
             then load_inline again here, on the built directory (no change),
             to get the module for the timings. --skip-build skips both.
  call       1-element float32 tensors, output allocated per call:
             the extension's add_gpu(a, b), torch.add(a, b), and CuPy
             `c = cp.empty_like(a); k((1,), (256,), (a, b, c, np.int64(1)))`;
             --warmup calls, then --calls calls timed in batches of --batch
             with a device synchronize at the end of each batch; median us/call.
  bandwidth  --numel float32 elements (default 2^28), output allocated per
             call, synchronize inside the timed region, median of --bw-repeat
             after --bw-warmup; GB/s = 3 * 4 * numel / seconds / 1e9.

Progress goes to stderr; stdout's last line is one JSON object:
  {"python": "3.11.7", "torch": "2.11.0" | null, "cupy": "14.2.0" | null,
   "cuda": true, "device": "NVIDIA H100 ...",
   "ninja": {"which": "/usr/bin/ninja" | null, "is_ninja_available": true | false | null},
   "build": {"status": "ok", "seconds": 41.2, "import_s": 3.1, "child_wall_s": 45.0,
             "reload_s": 0.4, "build_dir": "..."}
            | {"status": "failed" | "skipped", "error": "..."},
   "call": {"torch_ext": {"median_us": ..., "calls": ..., "batch": ...} | {"error": "..."},
            "torch_add": ..., "cupy_rawkernel": ...},
   "bandwidth": {"numel": ..., "torch_add": {"median_s": ..., "gbps": ...} | {"error": ...},
                 "torch_ext": ...},
   "errors": ["..."]}
It always exits 0 with that line, also on SIGTERM (partial figures) and when
torch, cupy or CUDA are missing (their entries then hold "error").

Run alone:
  python3 bench/torch_extension.py [--skip-build] [--calls 20000] [--numel 268435456]
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log  # noqa: E402

EXT_NAME = "gpuext_bench_add_gpu"

# The AddGPU extension as torch expects it: the kernel and a launcher on the
# current stream in cuda_sources, the declaration in cpp_sources (load_inline
# adds <torch/extension.h> there and generates the pybind11 module for
# functions=['add_gpu']). Same kernel and grid as examples/add-gpu/ops/add.cu.
CUDA_SOURCE = r"""
#include <@STREAM_HEADER@>
#include <c10/cuda/CUDAException.h>

__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    c[i] = a[i] + b[i];
  }
}

torch::Tensor add_gpu(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.sizes() == b.sizes(), "add_gpu: shapes differ: ", a.sizes(), " vs ", b.sizes());
  TORCH_CHECK(a.is_cuda() && b.is_cuda(), "add_gpu: expected CUDA tensors");
  TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
              "add_gpu: expected float32 tensors");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "add_gpu: expected contiguous tensors");
  torch::Tensor c = torch::empty_like(a);
  const int64_t n = a.numel();
  if (n == 0) return c;
  int64_t blocks = (n + 255) / 256;
  if (blocks > 65536 * 8) blocks = 65536 * 8;
  add_kernel<<<static_cast<unsigned>(blocks), 256, 0, @STREAM_FN@()>>>(
      a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}
"""

CPP_SOURCE = "torch::Tensor add_gpu(torch::Tensor a, torch::Tensor b);"

# How the launcher gets the current stream. The first is what extensions
# usually write; its header pulls in cuSPARSE/cuBLAS/cuSOLVER headers, so
# when the CUDA toolkit lacks those the build is retried once with the second
# (same kernel and launch, fewer headers) and the result says so.
VARIANTS = (
    ("ATen/cuda/CUDAContext.h", "at::cuda::getCurrentCUDAStream"),
    ("c10/cuda/CUDAStream.h", "c10::cuda::getCurrentCUDAStream"),
)
MISSING_LIBRARY_HEADER = re.compile(r"(cusparse|cublas|cublasLt|cusolver\w*|cudss)\.h: No such file")


def cuda_source(variant):
    header, fn = VARIANTS[variant]
    return CUDA_SOURCE.replace("@STREAM_HEADER@", header).replace("@STREAM_FN@", fn)

# The same kernel for CuPy (NVRTC has no <cstdint>: long long for int64_t).
CUPY_SOURCE = r"""
extern "C" __global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    c[i] = a[i] + b[i];
  }
}
"""

# Everything measured so far; emitted on normal exit, on errors and on SIGTERM.
RESULT = {"errors": []}


class Terminated(Exception):
    pass


def on_sigterm(signum, frame):
    raise Terminated("terminated by signal %d (the caller's timeout?); figures so far follow" % signum)


def describe(e):
    text = "%s: %s" % (type(e).__name__, e)
    return text if len(text) <= 4000 else text[:1500] + " ... " + text[-2500:]


def key_error_line(text):
    """The compiler's first error line in a build log (`file:line:col: error: ...`), else the first line."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    for l in lines:
        if re.search(r"\berror\b", l, re.IGNORECASE) and not l.startswith(("FAILED:", "RuntimeError: Error building")):
            return l[:400]
    return lines[0][:400] if lines else ""


def load_inline_kwargs(build_dir, variant):
    return dict(
        name=EXT_NAME,
        cpp_sources=[CPP_SOURCE],
        cuda_sources=[cuda_source(variant)],
        functions=["add_gpu"],
        extra_cuda_cflags=["-O3"],
        build_directory=build_dir,
        verbose=False,
    )


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--skip-build", action="store_true", help="do not build the torch extension (no torch_ext figures)")
    p.add_argument("--build-timeout", type=float, default=300.0, help="seconds the load_inline child may take (default 300)")
    p.add_argument("--keep-build-dir", action="store_true", help="leave the temporary build_directory in place")
    p.add_argument("--calls", type=int, default=20000, help="timed calls per op, 1-element tensors (default 20000)")
    p.add_argument("--warmup", type=int, default=2000, help="untimed calls before them (default 2000)")
    p.add_argument("--batch", type=int, default=1000, help="calls per timed batch; median over batches (default 1000)")
    p.add_argument("--numel", type=int, default=1 << 28, help="float32 elements for the bandwidth test (default 2^28)")
    p.add_argument("--bw-warmup", type=int, default=3, help="untimed calls before the bandwidth runs (default 3)")
    p.add_argument("--bw-repeat", type=int, default=20, help="timed bandwidth runs (default 20)")
    p.add_argument("--build-only", metavar="DIR", help=argparse.SUPPRESS)  # the child's mode
    p.add_argument("--variant", type=int, default=0, help=argparse.SUPPRESS)  # the child's source variant
    return p.parse_args()


# ---------------------------------------------------------------- child: the timed build

def build_only(build_dir, variant):
    """Child process: import torch, then time load_inline alone. Prints one JSON line."""
    out = {}
    try:
        t0 = time.perf_counter()
        from torch.utils import cpp_extension
        out["import_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        cpp_extension.load_inline(**load_inline_kwargs(build_dir, variant))
        out["seconds"] = time.perf_counter() - t1
    except BaseException as e:  # also SystemExit from a build tool, KeyboardInterrupt
        out["error"] = describe(e)
        out["missing_library_header"] = bool(MISSING_LIBRARY_HEADER.search(str(e)))  # on the untruncated text
        out["error_line"] = key_error_line("%s: %s" % (type(e).__name__, e))
    emit(out)
    return 0


def ninja_status():
    st = {"which": shutil.which("ninja"), "is_ninja_available": None}
    try:
        from torch.utils.cpp_extension import is_ninja_available
        st["is_ninja_available"] = bool(is_ninja_available())
    except Exception as e:
        st["error"] = describe(e)
    return st


def run_build_child(build_dir, variant, timeout, cuda):
    """Runs `--build-only` in its own session; kills the whole group on timeout. Returns a dict."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if not cuda and "TORCH_CUDA_ARCH_LIST" not in env:
        env["TORCH_CUDA_ARCH_LIST"] = "9.0"  # no GPU to ask for its arch
    argv = [sys.executable, os.path.abspath(__file__), "--build-only", build_dir, "--variant", str(variant)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True, universal_newlines=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException as e:  # TimeoutExpired, or our own SIGTERM
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # nvcc/ninja too, not only python
        except OSError:
            pass
        proc.communicate()
        if isinstance(e, subprocess.TimeoutExpired):
            return {"status": "failed", "error": "load_inline did not finish within %.0f s (killed)" % timeout,
                    "child_wall_s": time.perf_counter() - t0}
        raise
    wall = time.perf_counter() - t0
    lines = [l for l in stdout.splitlines() if l.strip()]
    try:
        o = json.loads(lines[-1]) if lines else None
    except ValueError:
        o = None
    if not isinstance(o, dict):
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "failed", "child_wall_s": wall,
                "error": "build child exited %s without a result: %s" % (proc.returncode, tail[-500:])}
    if "error" in o:
        return {"status": "failed", "child_wall_s": wall, "error": o["error"], "import_s": o.get("import_s"),
                "error_line": o.get("error_line") or key_error_line(o["error"]),
                "missing_library_header": bool(o.get("missing_library_header"))}
    return {"status": "ok", "seconds": o["seconds"], "import_s": o.get("import_s"), "child_wall_s": wall}


# ---------------------------------------------------------------- timing helpers

def time_batches(run_batch, warmup, calls, batch, sync):
    """Median microseconds per call; run_batch(n) makes n calls; sync() ends each timed batch."""
    clock = time.perf_counter_ns
    run_batch(warmup)
    sync()
    samples = []
    for _ in range(max(1, calls // batch)):
        t0 = clock()
        run_batch(batch)
        sync()
        samples.append((clock() - t0) / batch / 1e3)
    return statistics.median(samples)


def call_entry(us, args):
    return {"median_us": us, "calls": max(1, args.calls // args.batch) * args.batch, "batch": args.batch,
            "warmup": args.warmup}


def torch_batch(fn, a, b):
    def run(n):
        for _ in range(n):
            c = fn(a, b)
            del c
    return run


def cupy_batch(kernel, empty_like, a, b, n1):
    def run(n):
        grid, block, k, empty = (1,), (256,), kernel, empty_like
        for _ in range(n):
            c = empty(a)
            k(grid, block, (a, b, c, n1))
            del c
    return run


def bandwidth(fn, a, b, warmup, repeat, sync):
    clock = time.perf_counter_ns
    samples = []
    for i in range(warmup + repeat):
        sync()
        t0 = clock()
        c = fn(a, b)
        sync()
        ns = clock() - t0
        del c
        if i >= warmup:
            samples.append(ns)
    s = statistics.median(samples) / 1e9
    return {"median_s": s, "gbps": 3 * 4 * a.numel() / s / 1e9, "repeat": repeat, "warmup": warmup}


# ---------------------------------------------------------------- phases

def phase_build(args, torch, cuda):
    if args.skip_build:
        return {"status": "skipped", "error": "--skip-build", "error_line": "--skip-build"}, None
    if torch is None:
        why = RESULT.get("torch_error", "torch is not importable")
        return {"status": "failed", "error": why, "error_line": why}, None
    RESULT["ninja"] = ninja_status()
    dirs = []
    RESULT["build"] = {"status": "running", "build_dirs": dirs}
    try:
        first_error = None
        for variant, (header, _) in enumerate(VARIANTS):
            build_dir = tempfile.mkdtemp(prefix="gpuext-bench-torch-ext-")
            dirs.append(build_dir)
            log("torch: load_inline of the AddGPU extension (#include <%s>) in %s, in a child process "
                "(typically 25-60 s)" % (header, build_dir))
            b = run_build_child(build_dir, variant, args.build_timeout, cuda)
            b["build_dir"] = build_dir
            b["variant"] = header
            if first_error is not None:
                b["first_error"], b["first_error_line"] = first_error
            if b["status"] == "ok":
                break
            b.setdefault("error_line", key_error_line(b["error"]))
            log("torch: load_inline failed: %s" % b["error_line"])
            if variant + 1 < len(VARIANTS) and b.get("missing_library_header"):
                first_error = ("with #include <%s>: %s" % (header, b["error"]), b["error_line"])
                log("torch: a CUDA library header is missing; retrying with #include <%s>" % VARIANTS[variant + 1][0])
                continue
            n = RESULT["ninja"]
            if not n.get("which") or n.get("is_ninja_available") is False:
                b["error_line"] = "%s [ninja: which=%s, is_ninja_available=%s]" % (
                    b["error_line"], n.get("which"), n.get("is_ninja_available"))
            return b, None
        log("torch: load_inline took %.1f s" % b["seconds"])
        if not cuda:
            return b, None
        # The same call on the built directory: ninja finds nothing to do; this gives us the module.
        try:
            from torch.utils import cpp_extension
            t0 = time.perf_counter()
            mod = cpp_extension.load_inline(**load_inline_kwargs(b["build_dir"], variant))
            b["reload_s"] = time.perf_counter() - t0
        except Exception as e:
            b["reload_error"] = describe(e)
            log("torch: loading the built extension failed: %s" % key_error_line(b["reload_error"]))
            return b, None
        return b, mod
    finally:
        for d in dirs:
            if args.keep_build_dir:
                log("torch: build_directory kept: %s" % d)
            else:
                shutil.rmtree(d, ignore_errors=True)


def no_ext_reason():
    b = RESULT.get("build") or {}
    return b.get("reload_error") or b.get("error_line") or b.get("error") or "not built"


def phase_call(args, torch, cp, np, ext):
    calls = {}
    RESULT["call"] = calls
    if torch is not None and RESULT.get("cuda"):
        dev = torch.device("cuda")
        sync = torch.cuda.synchronize
        a = torch.tensor([1.5], dtype=torch.float32, device=dev)
        b = torch.tensor([2.25], dtype=torch.float32, device=dev)
        if ext is not None:
            try:
                got = ext.add_gpu(a, b).item()
                if got != 3.75:
                    raise RuntimeError("add_gpu([1.5], [2.25]) = %r, expected 3.75" % got)
                log("torch: call latency of the extension's add_gpu")
                calls["torch_ext"] = call_entry(time_batches(torch_batch(ext.add_gpu, a, b), args.warmup, args.calls,
                                                             args.batch, sync), args)
            except Exception as e:
                calls["torch_ext"] = {"error": describe(e)}
        else:
            calls["torch_ext"] = {"error": "no extension (%s)" % no_ext_reason()}
        try:
            log("torch: call latency of torch.add")
            calls["torch_add"] = call_entry(time_batches(torch_batch(torch.add, a, b), args.warmup, args.calls,
                                                         args.batch, sync), args)
        except Exception as e:
            calls["torch_add"] = {"error": describe(e)}
        del a, b
    else:
        why = RESULT.get("torch_error") or "CUDA is not available to torch"
        calls["torch_ext"] = {"error": why}
        calls["torch_add"] = {"error": why}

    if cp is None:
        calls["cupy_rawkernel"] = {"error": RESULT.get("cupy_error", "cupy is not importable")}
        return
    try:
        kernel = cp.RawKernel(CUPY_SOURCE, "add_kernel")
        a = cp.asarray(np.array([1.5], dtype=np.float32))
        b = cp.asarray(np.array([2.25], dtype=np.float32))
        n1 = np.int64(1)
        c = cp.empty_like(a)
        kernel((1,), (256,), (a, b, c, n1))  # compiles (NVRTC, disk cache) outside the timing
        got = float(c.get()[0])
        if got != 3.75:
            raise RuntimeError("RawKernel add_kernel([1.5], [2.25]) = %r, expected 3.75" % got)
        log("cupy: call latency of RawKernel")
        dev = cp.cuda.Device()
        calls["cupy_rawkernel"] = call_entry(time_batches(cupy_batch(kernel, cp.empty_like, a, b, n1), args.warmup,
                                                          args.calls, args.batch, dev.synchronize), args)
    except Exception as e:
        calls["cupy_rawkernel"] = {"error": describe(e)}


def phase_bandwidth(args, torch, ext):
    bw = {"numel": args.numel}
    RESULT["bandwidth"] = bw
    if torch is None or not RESULT.get("cuda"):
        why = RESULT.get("torch_error") or "CUDA is not available to torch"
        bw["torch_add"] = {"error": why}
        bw["torch_ext"] = {"error": why}
        return
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    a = b = None
    try:
        log("torch: bandwidth of torch.add on %d float32" % args.numel)
        a = torch.rand(args.numel, dtype=torch.float32, device=dev)
        b = torch.rand(args.numel, dtype=torch.float32, device=dev)
        try:
            bw["torch_add"] = bandwidth(torch.add, a, b, args.bw_warmup, args.bw_repeat, sync)
        except Exception as e:
            bw["torch_add"] = {"error": describe(e)}
        if ext is None:
            bw["torch_ext"] = {"error": "no extension (%s)" % no_ext_reason()}
        else:
            try:
                log("torch: bandwidth of the extension's add_gpu")
                c1 = ext.add_gpu(a, b)
                c2 = torch.add(a, b)
                same = bool(torch.equal(c1, c2))
                del c1, c2
                if not same:
                    raise RuntimeError("add_gpu(a, b) differs from torch.add(a, b) on %d elements" % args.numel)
                bw["torch_ext"] = bandwidth(ext.add_gpu, a, b, args.bw_warmup, args.bw_repeat, sync)
            except Exception as e:
                bw["torch_ext"] = {"error": describe(e)}
    except Exception as e:
        bw.setdefault("torch_add", {"error": describe(e)})
        bw.setdefault("torch_ext", {"error": describe(e)})
    finally:
        del a, b
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- main

def run(args):
    RESULT["python"] = sys.version.split()[0]
    RESULT["config"] = {"calls": args.calls, "warmup": args.warmup, "batch": args.batch, "numel": args.numel,
                        "bw_warmup": args.bw_warmup, "bw_repeat": args.bw_repeat, "skip_build": args.skip_build}
    torch = cp = np = None
    try:
        import torch  # noqa: F811
        RESULT["torch"] = torch.__version__
    except Exception as e:
        RESULT["torch"] = None
        RESULT["torch_error"] = "cannot import torch: %s" % describe(e)
    try:
        import numpy as np  # noqa: F811
        import cupy as cp  # noqa: F811
        RESULT["cupy"] = cp.__version__
    except Exception as e:
        cp = None
        RESULT["cupy"] = None
        RESULT["cupy_error"] = "cannot import cupy: %s" % describe(e)

    cuda = False
    if torch is not None:
        try:
            cuda = bool(torch.cuda.is_available())
            if cuda:
                RESULT["device"] = torch.cuda.get_device_name(0)
                torch.ones(1, device="cuda").cpu()  # context creation out of the way
        except Exception as e:
            cuda = False
            RESULT["errors"].append("torch CUDA: %s" % describe(e))
    elif cp is not None:
        try:
            cuda = cp.cuda.runtime.getDeviceCount() > 0
        except Exception as e:
            RESULT["errors"].append("cupy CUDA: %s" % describe(e))
    RESULT["cuda"] = cuda

    # The build first: it is CPU work, and the GPU figures below need its module.
    try:
        build, ext = phase_build(args, torch, cuda)
    except Terminated:
        raise
    except Exception as e:
        build, ext = {"status": "failed", "error": describe(e), "error_line": key_error_line(describe(e))}, None
    RESULT["build"] = build

    if not cuda:
        RESULT["errors"].append("CUDA not available to torch/cupy: call and bandwidth figures skipped")
    for name, phase in (("call", lambda: phase_call(args, torch, cp, np, ext)),
                        ("bandwidth", lambda: phase_bandwidth(args, torch, ext))):
        try:
            phase()
        except Terminated:
            raise
        except Exception as e:
            RESULT["errors"].append("%s: %s" % (name, describe(e)))


def main():
    args = parse_args()
    if args.build_only:
        return build_only(args.build_only, args.variant)
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        run(args)
    except BaseException as e:  # Terminated, KeyboardInterrupt, anything unforeseen: report what we have
        RESULT["errors"].append(describe(e))
    emit(RESULT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
