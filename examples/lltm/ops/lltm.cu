// LLTM's elementwise ops on CUDA (extension-cpp's lltm_cuda_forward_kernel and
// lltm_cuda_backward_kernel: one thread per (batch, state) element), and the
// registration of both ops with their CPU implementations (lltm.cpp).
#include "lltm.h"

#include <gpuext/dispatch.h>

namespace lltm {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGridY = 65535;

// Rows (the batch) along the grid's y, columns (the state) along x, both
// grid-stride: any B and S fit one launch, with no division per element.
dim3 grid_for(int64_t batch, int64_t state) {
  return dim3(gx::blocks(state, kThreads), static_cast<unsigned>(batch < kMaxGridY ? batch : kMaxGridY));
}

template <typename T>
__global__ void forward_kernel(const T* __restrict__ gates, const T* __restrict__ old_cell, T* __restrict__ new_h,
                               T* __restrict__ new_cell, T* __restrict__ input_gate, T* __restrict__ output_gate,
                               T* __restrict__ candidate_cell, int64_t batch, int64_t state) {
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    const T* row = gates + b * 3 * state;
    for (int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; s < state;
         s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      const int64_t i = b * state + s;
      const ForwardOut<T> r = forward_element(row[s], row[state + s], row[2 * state + s], old_cell[i]);
      new_h[i] = r.new_h;
      new_cell[i] = r.new_cell;
      input_gate[i] = r.input_gate;
      output_gate[i] = r.output_gate;
      candidate_cell[i] = r.candidate_cell;
    }
  }
}

// grad_i, grad_o, grad_c may be null (no gradient for that gate output).
template <typename T>
__global__ void backward_kernel(const T* __restrict__ grad_h, const T* __restrict__ grad_cell,
                                const T* __restrict__ new_cell, const T* __restrict__ input_gate,
                                const T* __restrict__ output_gate, const T* __restrict__ candidate_cell,
                                const T* __restrict__ gate_weights, const T* __restrict__ grad_i,
                                const T* __restrict__ grad_o, const T* __restrict__ grad_c, T* __restrict__ d_gates,
                                T* __restrict__ d_old_cell, int64_t batch, int64_t state) {
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    T* d_row = d_gates + b * 3 * state;
    const T* g_row = gate_weights + b * 3 * state;
    for (int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; s < state;
         s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      const int64_t i = b * state + s;
      const BackwardOut<T> r = backward_element(
          grad_h[i], grad_cell[i], new_cell[i], input_gate[i], output_gate[i], candidate_cell[i], g_row[2 * state + s],
          grad_i != nullptr ? grad_i[i] : T(0), grad_o != nullptr ? grad_o[i] : T(0),
          grad_c != nullptr ? grad_c[i] : T(0));
      d_row[s] = r.d_gate_i;
      d_row[state + s] = r.d_gate_o;
      d_row[2 * state + s] = r.d_gate_c;
      d_old_cell[i] = r.d_old_cell;
    }
  }
}

template <typename T>
const T* data_or_null(const OptionalTensor& t) {
  return t ? t->data_ptr<T>() : nullptr;
}

Forward forward_cuda(const gx::Tensor& gates, const gx::Tensor& old_cell) {
  const Sizes sz = check_forward(gates, old_cell);
  gx::Tensor new_h = gx::empty_like(old_cell), new_cell = gx::empty_like(old_cell);
  gx::Tensor input_gate = gx::empty_like(old_cell), output_gate = gx::empty_like(old_cell);
  gx::Tensor candidate_cell = gx::empty_like(old_cell);
  if (sz.batch == 0 || sz.state == 0) return {new_h, new_cell, input_gate, output_gate, candidate_cell};
  gx::DeviceGuard guard(gates.device().index);
  cudaStream_t stream = gx::current_stream();
  GX_DISPATCH_FLOATING_TYPES(gates.dtype(), "lltm_forward_elementwise", [&] {
    forward_kernel<scalar_t><<<grid_for(sz.batch, sz.state), kThreads, 0, stream>>>(
        gates.data_ptr<scalar_t>(), old_cell.data_ptr<scalar_t>(), new_h.data_ptr<scalar_t>(),
        new_cell.data_ptr<scalar_t>(), input_gate.data_ptr<scalar_t>(), output_gate.data_ptr<scalar_t>(),
        candidate_cell.data_ptr<scalar_t>(), sz.batch, sz.state);
  });
  GX_CHECK_LAUNCH();
  return {new_h, new_cell, input_gate, output_gate, candidate_cell};
}

Backward backward_cuda(const gx::Tensor& grad_h, const gx::Tensor& grad_cell, const gx::Tensor& new_cell,
                       const gx::Tensor& input_gate, const gx::Tensor& output_gate, const gx::Tensor& candidate_cell,
                       const gx::Tensor& gate_weights, const OptionalTensor& grad_input_gate,
                       const OptionalTensor& grad_output_gate, const OptionalTensor& grad_candidate_cell) {
  const Sizes sz = check_backward(grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, gate_weights,
                                  grad_input_gate, grad_output_gate, grad_candidate_cell);
  gx::Tensor d_gates = gx::empty_like(gate_weights);
  gx::Tensor d_old_cell = gx::empty_like(new_cell);
  if (sz.batch == 0 || sz.state == 0) return {d_gates, d_old_cell};
  gx::DeviceGuard guard(gate_weights.device().index);
  cudaStream_t stream = gx::current_stream();
  GX_DISPATCH_FLOATING_TYPES(gate_weights.dtype(), "lltm_backward_elementwise", [&] {
    backward_kernel<scalar_t><<<grid_for(sz.batch, sz.state), kThreads, 0, stream>>>(
        grad_h.data_ptr<scalar_t>(), grad_cell.data_ptr<scalar_t>(), new_cell.data_ptr<scalar_t>(),
        input_gate.data_ptr<scalar_t>(), output_gate.data_ptr<scalar_t>(), candidate_cell.data_ptr<scalar_t>(),
        gate_weights.data_ptr<scalar_t>(), data_or_null<scalar_t>(grad_input_gate),
        data_or_null<scalar_t>(grad_output_gate), data_or_null<scalar_t>(grad_candidate_cell),
        d_gates.data_ptr<scalar_t>(), d_old_cell.data_ptr<scalar_t>(), sz.batch, sz.state);
  });
  GX_CHECK_LAUNCH();
  return {d_gates, d_old_cell};
}

}  // namespace
}  // namespace lltm

GX_LIBRARY(lltm, m) {
  m.def("lltm_forward_elementwise(Tensor gates, Tensor old_cell) -> (Tensor new_h, Tensor new_cell, "
        "Tensor input_gate, Tensor output_gate, Tensor candidate_cell)",
        "LLTM's forward after the matmul: gates [B, 3S] (three chunks of S: input, output, candidate; "
        "[old_h, input] @ W^T + b) and old_cell [B, S] give new_h, new_cell and the three activated gates, "
        "each [B, S]. float32 or float64, contiguous.")
      .impl(gx::kCUDA, lltm::forward_cuda)
      .impl(gx::kCPU, lltm::forward_cpu);
  m.def("lltm_backward_elementwise(Tensor grad_h, Tensor grad_cell, Tensor new_cell, Tensor input_gate, "
        "Tensor output_gate, Tensor candidate_cell, Tensor gate_weights, Tensor? grad_input_gate=None, "
        "Tensor? grad_output_gate=None, Tensor? grad_candidate_cell=None) -> (Tensor d_gates, Tensor d_old_cell)",
        "LLTM's backward before the matmuls: from the gradients of new_h and new_cell (and of the gates the "
        "forward returns, when given), the gradient of the gates [B, 3S] and of old_cell [B, S].")
      .impl(gx::kCUDA, lltm::backward_cuda)
      .impl(gx::kCPU, lltm::backward_cpu);
}
