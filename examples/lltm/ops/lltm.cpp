// LLTM's elementwise ops on the CPU, and the argument checks both devices
// share. lltm.cu registers these beside the CUDA implementations.
#include "lltm.h"

#include <gpuext/dispatch.h>
#include <gpuext/parallel.h>

namespace lltm {
namespace {

void check_float(const gx::Tensor& t, const char* name) {
  GX_CHECK(t.dtype() == gx::kFloat32 || t.dtype() == gx::kFloat64, name, ": expected float32 or float64, got ", t.dtype());
}

// A contiguous [rows, cols] tensor of gates' dtype and device.
void check_like(const gx::Tensor& t, const char* name, const gx::Tensor& gates, int64_t rows, int64_t cols) {
  GX_CHECK(t.dim() == 2 && t.size(0) == rows && t.size(1) == cols, name, ": expected shape [", rows, ", ", cols,
           "], got ", t.sizes());
  GX_CHECK(t.dtype() == gates.dtype(), name, ": expected ", gates.dtype(), " (the dtype of gates), got ", t.dtype());
  GX_CHECK(t.device() == gates.device(), name, ": expected a tensor on ", gates.device(), " (where gates is), got ",
           t.device());
  GX_CHECK(t.is_contiguous(), name, ": expected a contiguous tensor (call .contiguous())");
}

Sizes check_gates(const gx::Tensor& gates, const char* name, int64_t state) {
  check_float(gates, name);
  GX_CHECK(gates.dim() == 2 && gates.size(1) == 3 * state, name, ": expected shape [B, ", 3 * state,
           "] (three gates of the state size ", state, "), got ", gates.sizes());
  GX_CHECK(gates.is_contiguous(), name, ": expected a contiguous tensor (call .contiguous())");
  return {gates.size(0), state};
}

int64_t state_size(const gx::Tensor& t, const char* name) {
  GX_CHECK(t.dim() == 2, name, ": expected a 2-d tensor [B, S], got shape ", t.sizes());
  return t.size(1);
}

}  // namespace

Sizes check_forward(const gx::Tensor& gates, const gx::Tensor& old_cell) {
  const Sizes s = check_gates(gates, "gates", state_size(old_cell, "old_cell"));
  check_like(old_cell, "old_cell", gates, s.batch, s.state);
  return s;
}

Sizes check_backward(const gx::Tensor& grad_h, const gx::Tensor& grad_cell, const gx::Tensor& new_cell,
                     const gx::Tensor& input_gate, const gx::Tensor& output_gate,
                     const gx::Tensor& candidate_cell, const gx::Tensor& gate_weights,
                     const OptionalTensor& grad_input_gate, const OptionalTensor& grad_output_gate,
                     const OptionalTensor& grad_candidate_cell) {
  const Sizes s = check_gates(gate_weights, "gate_weights", state_size(new_cell, "new_cell"));
  check_like(grad_h, "grad_h", gate_weights, s.batch, s.state);
  check_like(grad_cell, "grad_cell", gate_weights, s.batch, s.state);
  check_like(new_cell, "new_cell", gate_weights, s.batch, s.state);
  check_like(input_gate, "input_gate", gate_weights, s.batch, s.state);
  check_like(output_gate, "output_gate", gate_weights, s.batch, s.state);
  check_like(candidate_cell, "candidate_cell", gate_weights, s.batch, s.state);
  if (grad_input_gate) check_like(*grad_input_gate, "grad_input_gate", gate_weights, s.batch, s.state);
  if (grad_output_gate) check_like(*grad_output_gate, "grad_output_gate", gate_weights, s.batch, s.state);
  if (grad_candidate_cell) check_like(*grad_candidate_cell, "grad_candidate_cell", gate_weights, s.batch, s.state);
  return s;
}

namespace {

template <typename T>
const T* data_or_null(const OptionalTensor& t) {
  return t ? t->data_ptr<T>() : nullptr;
}

// Rows per chunk of the thread pool: about gx::kDefaultGrain elements.
int64_t row_grain(int64_t state) { return state > 0 ? (gx::kDefaultGrain + state - 1) / state : 1; }

}  // namespace

Forward forward_cpu(const gx::Tensor& gates, const gx::Tensor& old_cell) {
  const Sizes sz = check_forward(gates, old_cell);
  const int64_t S = sz.state;
  gx::Tensor new_h = gx::empty_like(old_cell), new_cell = gx::empty_like(old_cell);
  gx::Tensor input_gate = gx::empty_like(old_cell), output_gate = gx::empty_like(old_cell);
  gx::Tensor candidate_cell = gx::empty_like(old_cell);
  GX_DISPATCH_FLOATING_TYPES(gates.dtype(), "lltm_forward_elementwise", [&] {
    const scalar_t* g = gates.data_ptr<scalar_t>();
    const scalar_t* c0 = old_cell.data_ptr<scalar_t>();
    scalar_t* h = new_h.data_ptr<scalar_t>();
    scalar_t* c = new_cell.data_ptr<scalar_t>();
    scalar_t* ig = input_gate.data_ptr<scalar_t>();
    scalar_t* og = output_gate.data_ptr<scalar_t>();
    scalar_t* cc = candidate_cell.data_ptr<scalar_t>();
    gx::parallel_for(0, sz.batch, row_grain(S), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const scalar_t* row = g + b * 3 * S;
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = b * S + s;
          const ForwardOut<scalar_t> r = forward_element(row[s], row[S + s], row[2 * S + s], c0[i]);
          h[i] = r.new_h;
          c[i] = r.new_cell;
          ig[i] = r.input_gate;
          og[i] = r.output_gate;
          cc[i] = r.candidate_cell;
        }
      }
    });
  });
  return {new_h, new_cell, input_gate, output_gate, candidate_cell};
}

Backward backward_cpu(const gx::Tensor& grad_h, const gx::Tensor& grad_cell, const gx::Tensor& new_cell,
                      const gx::Tensor& input_gate, const gx::Tensor& output_gate, const gx::Tensor& candidate_cell,
                      const gx::Tensor& gate_weights, const OptionalTensor& grad_input_gate,
                      const OptionalTensor& grad_output_gate, const OptionalTensor& grad_candidate_cell) {
  const Sizes sz = check_backward(grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, gate_weights,
                                  grad_input_gate, grad_output_gate, grad_candidate_cell);
  const int64_t S = sz.state;
  gx::Tensor d_gates = gx::empty_like(gate_weights);
  gx::Tensor d_old_cell = gx::empty_like(new_cell);
  GX_DISPATCH_FLOATING_TYPES(gate_weights.dtype(), "lltm_backward_elementwise", [&] {
    const scalar_t* gh = grad_h.data_ptr<scalar_t>();
    const scalar_t* gc = grad_cell.data_ptr<scalar_t>();
    const scalar_t* nc = new_cell.data_ptr<scalar_t>();
    const scalar_t* ig = input_gate.data_ptr<scalar_t>();
    const scalar_t* og = output_gate.data_ptr<scalar_t>();
    const scalar_t* cc = candidate_cell.data_ptr<scalar_t>();
    const scalar_t* gw = gate_weights.data_ptr<scalar_t>();
    const scalar_t* g_ig = data_or_null<scalar_t>(grad_input_gate);
    const scalar_t* g_og = data_or_null<scalar_t>(grad_output_gate);
    const scalar_t* g_cc = data_or_null<scalar_t>(grad_candidate_cell);
    scalar_t* dg = d_gates.data_ptr<scalar_t>();
    scalar_t* dc = d_old_cell.data_ptr<scalar_t>();
    gx::parallel_for(0, sz.batch, row_grain(S), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = b * S + s;
          const BackwardOut<scalar_t> r = backward_element(
              gh[i], gc[i], nc[i], ig[i], og[i], cc[i], gw[b * 3 * S + 2 * S + s], g_ig ? g_ig[i] : scalar_t(0),
              g_og ? g_og[i] : scalar_t(0), g_cc ? g_cc[i] : scalar_t(0));
          dg[b * 3 * S + s] = r.d_gate_i;
          dg[b * 3 * S + S + s] = r.d_gate_o;
          dg[b * 3 * S + 2 * S + s] = r.d_gate_c;
          dc[i] = r.d_old_cell;
        }
      }
    });
  });
  return {d_gates, d_old_cell};
}

}  // namespace lltm
