#!/usr/bin/env python3
"""PyTorch side of bench/lltm.bench.ts: the LLTM cell of the "Custom C++ and
CUDA Extensions" tutorial, timed the way the gpuext bench times its cells.

Two torch versions of the cell, float32 on CUDA, TF32 off (torch's default):
  eager  the tutorial's python LLTM (torch.cat, F.linear, chunk, sigmoid, elu,
         tanh), differentiated by autograd;
  ext    extension-cpp's CUDA LLTM (lltm_cuda_kernel.cu and lltm_cuda.cpp of
         the tutorial, launched on the current stream) built here with
         torch.utils.cpp_extension.load_inline, through its LLTMFunction.
         One change: d_bias is summed without keepdim, for a bias of [3S] (the
         tutorial's is [1, 3S]), as the gpuext cell's.

For each --sizes entry B,F,S: the five operands (input [B, F], weights [3S, F+S],
bias [3S], old_h and old_cell [B, S]) all require grad, as in the tutorial's
benchmark.py, filled from the same patterns as the gpuext bench
(sin(0.37 i + k), scaled), so both sides compute the same numbers:
  forward  new_h, new_cell = cell(...), the graph dropped;
  step     forward, (new_h.sum() + new_cell.sum()).backward(), every .grad set
           to None (so no step accumulates into an earlier one);
each --warmup untimed calls, then --samples batches of --batch calls, each
batch closed by torch.cuda.synchronize() inside the timed region; median
microseconds per call. The checks are sum(new_h) and sum(|d weights|) of one step.

Progress goes to stderr; stdout's last line is one JSON object:
  {"torch": "2.11.0", "device": "NVIDIA H100 ...", "tf32": false,
   "build": {"status": "ok", "seconds": 41.2, "header": "ATen/cuda/CUDAContext.h"} | {"status": "failed", "error": "..."},
   "cases": [{"batch": 16, "features": 32, "state": 128,
              "eager": {"forward_us": ..., "step_us": ..., "sum_h": ..., "sum_abs_dw": ...} | {"error": "..."},
              "ext": ...}],
   "errors": [...]}
or {"error": "..."} (exit 0) when torch or CUDA is missing.

Run alone:
  python3 bench/torch_lltm.py [--sizes 16,32,128:1024,1024,1024] [--warmup 10] [--samples 20] [--batch 10]
"""
import argparse
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import emit, log, torch_cuda  # noqa: E402

EXT_NAME = "gpuext_bench_lltm_cuda"

# extension-cpp's cuda/lltm_cuda_kernel.cu (the tutorial's), with the launches
# on the current stream and d_bias without keepdim.
CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <@STREAM_HEADER@>

#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

namespace {
template <typename scalar_t>
__device__ __forceinline__ scalar_t sigmoid(scalar_t z) {
  return 1.0 / (1.0 + exp(-z));
}

template <typename scalar_t>
__device__ __forceinline__ scalar_t d_sigmoid(scalar_t z) {
  const auto s = sigmoid(z);
  return (1.0 - s) * s;
}

template <typename scalar_t>
__device__ __forceinline__ scalar_t d_tanh(scalar_t z) {
  const auto t = tanh(z);
  return 1 - (t * t);
}

template <typename scalar_t>
__device__ __forceinline__ scalar_t elu(scalar_t z, scalar_t alpha = 1.0) {
  return fmax((scalar_t) 0.0, z) + fmin((scalar_t) 0.0, alpha * (exp(z) - 1.0));
}

template <typename scalar_t>
__device__ __forceinline__ scalar_t d_elu(scalar_t z, scalar_t alpha = 1.0) {
  const auto e = exp(z);
  const auto d_relu = z < 0.0 ? 0.0 : 1.0;
  return d_relu + (((alpha * (e - 1.0)) < 0.0) ? (alpha * e) : 0.0);
}

template <typename scalar_t>
__global__ void lltm_cuda_forward_kernel(
    const torch::PackedTensorAccessor32<scalar_t,3,torch::RestrictPtrTraits> gates,
    const torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> old_cell,
    torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> new_h,
    torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> new_cell,
    torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> input_gate,
    torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> output_gate,
    torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> candidate_cell) {
  //batch index
  const int n = blockIdx.y;
  // column index
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < gates.size(2)){
    input_gate[n][c] = sigmoid(gates[n][0][c]);
    output_gate[n][c] = sigmoid(gates[n][1][c]);
    candidate_cell[n][c] = elu(gates[n][2][c]);
    new_cell[n][c] =
        old_cell[n][c] + candidate_cell[n][c] * input_gate[n][c];
    new_h[n][c] = tanh(new_cell[n][c]) * output_gate[n][c];
  }
}

template <typename scalar_t>
__global__ void lltm_cuda_backward_kernel(
    torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> d_old_cell,
    torch::PackedTensorAccessor32<scalar_t,3,torch::RestrictPtrTraits> d_gates,
    const torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> grad_h,
    const torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> grad_cell,
    const torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> new_cell,
    const torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> input_gate,
    const torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> output_gate,
    const torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> candidate_cell,
    const torch::PackedTensorAccessor32<scalar_t,3,torch::RestrictPtrTraits> gate_weights) {
  //batch index
  const int n = blockIdx.y;
  // column index
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < d_gates.size(2)){
    const auto d_output_gate = tanh(new_cell[n][c]) * grad_h[n][c];
    const auto d_tanh_new_cell = output_gate[n][c] * grad_h[n][c];
    const auto d_new_cell =
        d_tanh(new_cell[n][c]) * d_tanh_new_cell + grad_cell[n][c];


    d_old_cell[n][c] = d_new_cell;
    const auto d_candidate_cell = input_gate[n][c] * d_new_cell;
    const auto d_input_gate = candidate_cell[n][c] * d_new_cell;

    d_gates[n][0][c] =
        d_input_gate * d_sigmoid(gate_weights[n][0][c]);
    d_gates[n][1][c] =
        d_output_gate * d_sigmoid(gate_weights[n][1][c]);
    d_gates[n][2][c] =
        d_candidate_cell * d_elu(gate_weights[n][2][c]);
  }
}
} // namespace

std::vector<torch::Tensor> lltm_cuda_forward(
    torch::Tensor input,
    torch::Tensor weights,
    torch::Tensor bias,
    torch::Tensor old_h,
    torch::Tensor old_cell) {
  auto X = torch::cat({old_h, input}, /*dim=*/1);
  auto gate_weights = torch::addmm(bias, X, weights.transpose(0, 1));

  const auto batch_size = old_cell.size(0);
  const auto state_size = old_cell.size(1);

  auto gates = gate_weights.reshape({batch_size, 3, state_size});
  auto new_h = torch::zeros_like(old_cell);
  auto new_cell = torch::zeros_like(old_cell);
  auto input_gate = torch::zeros_like(old_cell);
  auto output_gate = torch::zeros_like(old_cell);
  auto candidate_cell = torch::zeros_like(old_cell);

  const int threads = 1024;
  const dim3 blocks((state_size + threads - 1) / threads, batch_size);

  AT_DISPATCH_FLOATING_TYPES(gates.scalar_type(), "lltm_forward_cuda", ([&] {
    lltm_cuda_forward_kernel<scalar_t><<<blocks, threads, 0, @STREAM_FN@()>>>(
        gates.packed_accessor32<scalar_t,3,torch::RestrictPtrTraits>(),
        old_cell.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        new_h.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        new_cell.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        input_gate.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        output_gate.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        candidate_cell.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>());
  }));

  return {new_h, new_cell, input_gate, output_gate, candidate_cell, X, gates};
}

std::vector<torch::Tensor> lltm_cuda_backward(
    torch::Tensor grad_h,
    torch::Tensor grad_cell,
    torch::Tensor new_cell,
    torch::Tensor input_gate,
    torch::Tensor output_gate,
    torch::Tensor candidate_cell,
    torch::Tensor X,
    torch::Tensor gates,
    torch::Tensor weights) {
  auto d_old_cell = torch::zeros_like(new_cell);
  auto d_gates = torch::zeros_like(gates);

  const auto batch_size = new_cell.size(0);
  const auto state_size = new_cell.size(1);

  const int threads = 1024;
  const dim3 blocks((state_size + threads - 1) / threads, batch_size);

  AT_DISPATCH_FLOATING_TYPES(X.scalar_type(), "lltm_backward_cuda", ([&] {
    lltm_cuda_backward_kernel<scalar_t><<<blocks, threads, 0, @STREAM_FN@()>>>(
        d_old_cell.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        d_gates.packed_accessor32<scalar_t,3,torch::RestrictPtrTraits>(),
        grad_h.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        grad_cell.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        new_cell.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        input_gate.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        output_gate.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        candidate_cell.packed_accessor32<scalar_t,2,torch::RestrictPtrTraits>(),
        gates.packed_accessor32<scalar_t,3,torch::RestrictPtrTraits>());
  }));

  auto d_gate_weights = d_gates.flatten(1, 2);
  auto d_weights = d_gate_weights.t().mm(X);
  auto d_bias = d_gate_weights.sum(/*dim=*/0);

  auto d_X = d_gate_weights.mm(weights);
  auto d_old_h = d_X.slice(/*dim=*/1, 0, state_size);
  auto d_input = d_X.slice(/*dim=*/1, state_size);

  return {d_old_h, d_input, d_weights, d_bias, d_old_cell, d_gates};
}

// lltm_cuda.cpp's checks and entry points (the pybind11 module comes from load_inline).
#define CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

std::vector<torch::Tensor> lltm_forward(torch::Tensor input, torch::Tensor weights, torch::Tensor bias,
                                        torch::Tensor old_h, torch::Tensor old_cell) {
  CHECK_INPUT(input);
  CHECK_INPUT(weights);
  CHECK_INPUT(bias);
  CHECK_INPUT(old_h);
  CHECK_INPUT(old_cell);
  return lltm_cuda_forward(input, weights, bias, old_h, old_cell);
}

std::vector<torch::Tensor> lltm_backward(torch::Tensor grad_h, torch::Tensor grad_cell, torch::Tensor new_cell,
                                         torch::Tensor input_gate, torch::Tensor output_gate,
                                         torch::Tensor candidate_cell, torch::Tensor X, torch::Tensor gate_weights,
                                         torch::Tensor weights) {
  CHECK_INPUT(grad_h);
  CHECK_INPUT(grad_cell);
  CHECK_INPUT(input_gate);
  CHECK_INPUT(output_gate);
  CHECK_INPUT(candidate_cell);
  CHECK_INPUT(X);
  CHECK_INPUT(gate_weights);
  CHECK_INPUT(weights);
  return lltm_cuda_backward(grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X, gate_weights,
                            weights);
}
"""

CPP_SOURCE = """
std::vector<torch::Tensor> lltm_forward(torch::Tensor input, torch::Tensor weights, torch::Tensor bias,
                                        torch::Tensor old_h, torch::Tensor old_cell);
std::vector<torch::Tensor> lltm_backward(torch::Tensor grad_h, torch::Tensor grad_cell, torch::Tensor new_cell,
                                         torch::Tensor input_gate, torch::Tensor output_gate,
                                         torch::Tensor candidate_cell, torch::Tensor X, torch::Tensor gate_weights,
                                         torch::Tensor weights);
"""

# How the launches get the current stream: ATen/cuda/CUDAContext.h first; its
# cuSPARSE/cuBLAS headers may be missing from the toolkit, then c10's stream
# header (as bench/torch_extension.py does).
VARIANTS = (
    ("ATen/cuda/CUDAContext.h", "at::cuda::getCurrentCUDAStream"),
    ("c10/cuda/CUDAStream.h", "c10::cuda::getCurrentCUDAStream"),
)
MISSING_LIBRARY_HEADER = re.compile(r"(cusparse|cublas|cublasLt|cusolver\w*|cudss)\.h: No such file")


def describe(e):
    text = "%s: %s" % (type(e).__name__, e)
    return text if len(text) <= 2000 else text[:800] + " ... " + text[-1200:]


def first_error_line(text):
    for line in str(text).splitlines():
        if re.search(r"\berror\b", line, re.IGNORECASE) and not line.startswith(("FAILED:", "RuntimeError: Error building")):
            return line.strip()[:400]
    return str(text).strip().splitlines()[0][:400] if str(text).strip() else ""


def build_extension(result):
    from torch.utils import cpp_extension
    build_dir = tempfile.mkdtemp(prefix="gpuext-bench-lltm-")
    try:
        for i, (header, fn) in enumerate(VARIANTS):
            source = CUDA_SOURCE.replace("@STREAM_HEADER@", header).replace("@STREAM_FN@", fn)
            log("torch: load_inline of extension-cpp's LLTM (#include <%s>) in %s" % (header, build_dir))
            t0 = time.time()
            try:
                mod = cpp_extension.load_inline(name=EXT_NAME + ("_%d" % i if i else ""), cpp_sources=[CPP_SOURCE],
                                                cuda_sources=[source], functions=["lltm_forward", "lltm_backward"],
                                                extra_cuda_cflags=["-O3"], build_directory=build_dir, verbose=False)
                result["build"] = {"status": "ok", "seconds": time.time() - t0, "header": header}
                return mod
            except Exception as e:  # noqa: BLE001 - a failed build leaves the eager figures
                text = describe(e)
                if i + 1 < len(VARIANTS) and MISSING_LIBRARY_HEADER.search(text):
                    log("torch: %s; retrying with <%s>" % (first_error_line(text), VARIANTS[i + 1][0]))
                    continue
                result["build"] = {"status": "failed", "error": first_error_line(text) or text}
                return None
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)
    return None


def make_cells(torch, ext):
    import torch.nn.functional as F

    def eager(input, weights, bias, old_h, old_cell):
        X = torch.cat([old_h, input], dim=1)
        gate_weights = F.linear(X, weights, bias)
        gates = gate_weights.chunk(3, dim=1)
        input_gate = torch.sigmoid(gates[0])
        output_gate = torch.sigmoid(gates[1])
        candidate_cell = F.elu(gates[2])
        new_cell = old_cell + candidate_cell * input_gate
        new_h = torch.tanh(new_cell) * output_gate
        return new_h, new_cell

    cells = {"eager": eager}
    if ext is not None:
        class LLTMFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input, weights, bias, old_h, old_cell):
                outputs = ext.lltm_forward(input, weights, bias, old_h, old_cell)
                new_h, new_cell = outputs[:2]
                variables = outputs[1:] + [weights]
                ctx.save_for_backward(*variables)
                return new_h, new_cell

            @staticmethod
            def backward(ctx, grad_h, grad_cell):
                outputs = ext.lltm_backward(grad_h.contiguous(), grad_cell.contiguous(), *ctx.saved_tensors)
                d_old_h, d_input, d_weights, d_bias, d_old_cell, d_gates = outputs
                return d_input, d_weights, d_bias, d_old_h, d_old_cell

        cells["ext"] = LLTMFunction.apply
    return cells


def pattern(torch, shape, k, scale):
    """sin(0.37 i + k) * scale over the elements in order, computed in float64 then rounded to float32 (as the gpuext bench)."""
    n = math.prod(shape)
    v = torch.sin(torch.arange(n, dtype=torch.float64) * 0.37 + k) * scale
    return v.to(torch.float32).reshape(shape).cuda().requires_grad_()


def time_calls(torch, fn, warmup, samples, batch):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        torch.cuda.synchronize()
        per_call.append((time.perf_counter_ns() - t0) / batch / 1e3)
    return statistics.median(per_call)


def run_case(torch, cell, B, F, S, args):
    stdv = 1.0 / math.sqrt(S)
    operands = [pattern(torch, [B, F], 3, 1.0), pattern(torch, [3 * S, F + S], 1, stdv), pattern(torch, [3 * S], 2, stdv),
                pattern(torch, [B, S], 4, 0.5), pattern(torch, [B, S], 5, 1.0)]

    def clear():
        for t in operands:
            t.grad = None

    def forward():
        new_h, new_cell = cell(*operands)
        del new_h, new_cell

    def step():
        new_h, new_cell = cell(*operands)
        (new_h.sum() + new_cell.sum()).backward()
        clear()

    new_h, new_cell = cell(*operands)
    (new_h.sum() + new_cell.sum()).backward()
    out = {"sum_h": float(new_h.detach().double().sum()), "sum_abs_dw": float(operands[1].grad.double().abs().sum())}
    del new_h, new_cell
    clear()
    out["forward_us"] = time_calls(torch, forward, args.warmup, args.samples, args.batch)
    out["step_us"] = time_calls(torch, step, args.warmup, args.samples, args.batch)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="16,32,128:1024,1024,1024", help="B,F,S cases separated by ':'")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--batch", type=int, default=10)
    p.add_argument("--skip-build", action="store_true", help="no load_inline (no ext figures)")
    args = p.parse_args()
    torch = torch_cuda()
    if torch is None:
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    result = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "tf32": False, "cases": [], "errors": []}
    ext = None
    if args.skip_build:
        result["build"] = {"status": "skipped", "error": "--skip-build"}
    else:
        ext = build_extension(result)
    cells = make_cells(torch, ext)
    for spec in args.sizes.split(":"):
        B, F, S = (int(x) for x in spec.split(","))
        case = {"batch": B, "features": F, "state": S}
        for name in ("eager", "ext"):
            if name not in cells:
                case[name] = {"error": "not built: %s" % result["build"].get("error", "?")}
                continue
            log("torch: %s LLTM B=%d F=%d S=%d" % (name, B, F, S))
            try:
                case[name] = run_case(torch, cells[name], B, F, S, args)
            except Exception as e:  # noqa: BLE001 - report, keep the other figures
                case[name] = {"error": describe(e)}
                result["errors"].append("%s B=%d F=%d S=%d: %s" % (name, B, F, S, describe(e)))
        result["cases"].append(case)
    emit(result)


if __name__ == "__main__":
    main()
