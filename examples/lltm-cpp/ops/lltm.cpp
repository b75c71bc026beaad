// LLTM's forward and backward as pytorch/extension-cpp's C++ author wrote them
// (extension_cpp/csrc/lltm.cpp, before that repository moved to muladd), ported
// to gpuext: torch::Tensor -> gx::Tensor, torch::Scalar -> gx::Scalar, torch::
// functions -> gx::ops:: (<gpuext/ops.h>: the built-in ops through the C ABI),
// TORCH_LIBRARY -> GX_LIBRARY. The methods that are ops in torch become
// gx::ops calls (z.exp() -> gx::ops::exp(z), a.mm(b) -> gx::ops::mm(a, b),
// x.sum(0, true) -> gx::ops::sum(x, 0, true), z.tanh().pow(2) ->
// gx::ops::pow(gx::ops::tanh(z), 2)); views, chunk, slice, type_as and the
// operators keep torch's spelling. Every op dispatches on its tensors' device,
// so the same functions serve the CPU and CUDA.
#include <gpuext/extension.h>
#include <gpuext/ops.h>

#include <tuple>

// s'(z) = (1 - s(z)) * s(z)
gx::Tensor d_sigmoid(gx::Tensor z) {
  auto s = gx::ops::sigmoid(z);
  return (1 - s) * s;
}

// tanh'(z) = 1 - tanh^2(z)
gx::Tensor d_tanh(gx::Tensor z) {
  return 1 - gx::ops::pow(gx::ops::tanh(z), 2);
}

// elu'(z) = relu'(z) + { alpha * exp(z) if (alpha * (exp(z) - 1)) < 0, else 0}
gx::Tensor d_elu(gx::Tensor z, gx::Scalar alpha = 1.0) {
  auto e = gx::ops::exp(z);
  auto mask = (alpha * (e - 1)) < 0;
  return (z > 0).type_as(z) + mask.type_as(z) * (alpha * e);
}

std::tuple<gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor> lltm_forward(
    gx::Tensor input,
    gx::Tensor weights,
    gx::Tensor bias,
    gx::Tensor old_h,
    gx::Tensor old_cell) {
  auto X = gx::ops::cat({old_h, input}, /*dim=*/1);

  auto gate_weights = gx::ops::addmm(bias, X, weights.transpose(0, 1));
  auto gates = gate_weights.chunk(3, /*dim=*/1);

  auto input_gate = gx::ops::sigmoid(gates[0]);
  auto output_gate = gx::ops::sigmoid(gates[1]);
  auto candidate_cell = gx::ops::elu(gates[2], /*alpha=*/1.0);

  auto new_cell = old_cell + candidate_cell * input_gate;
  auto new_h = gx::ops::tanh(new_cell) * output_gate;

  return {new_h,
          new_cell,
          input_gate,
          output_gate,
          candidate_cell,
          X,
          gate_weights};
}

std::tuple<gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor> lltm_backward(
    gx::Tensor grad_h,
    gx::Tensor grad_cell,
    gx::Tensor new_cell,
    gx::Tensor input_gate,
    gx::Tensor output_gate,
    gx::Tensor candidate_cell,
    gx::Tensor X,
    gx::Tensor gate_weights,
    gx::Tensor weights) {
  auto d_output_gate = gx::ops::tanh(new_cell) * grad_h;
  auto d_tanh_new_cell = output_gate * grad_h;
  auto d_new_cell = d_tanh(new_cell) * d_tanh_new_cell + grad_cell;

  auto d_old_cell = d_new_cell;
  auto d_candidate_cell = input_gate * d_new_cell;
  auto d_input_gate = candidate_cell * d_new_cell;

  auto gates = gate_weights.chunk(3, /*dim=*/1);
  d_input_gate *= d_sigmoid(gates[0]);
  d_output_gate *= d_sigmoid(gates[1]);
  d_candidate_cell *= d_elu(gates[2]);

  auto d_gates =
      gx::ops::cat({d_input_gate, d_output_gate, d_candidate_cell}, /*dim=*/1);

  auto d_weights = gx::ops::mm(d_gates.t(), X);
  auto d_bias = gx::ops::sum(d_gates, /*dim=*/0, /*keepdim=*/true);

  auto d_X = gx::ops::mm(d_gates, weights);
  const auto state_size = grad_h.size(1);
  auto d_old_h = d_X.slice(/*dim=*/1, 0, state_size);
  auto d_input = d_X.slice(/*dim=*/1, state_size);

  return {d_old_h, d_input, d_weights, d_bias, d_old_cell};
}

// Defines the operators, with the CPU and CUDA implementations (one function each).
GX_LIBRARY(lltm_cpp, m) {
  m.def("lltm_forward(Tensor input, Tensor weights, Tensor bias, Tensor old_h, Tensor old_cell) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
        "LLTM's forward: new_h, new_cell, input_gate, output_gate, candidate_cell, X, gate_weights.")
      .impl(gx::kCPU, lltm_forward)
      .impl(gx::kCUDA, lltm_forward);
  m.def("lltm_backward(Tensor grad_h, Tensor grad_cell, Tensor new_cell, Tensor input_gate, Tensor output_gate, Tensor candidate_cell, Tensor X, Tensor gate_weights, Tensor weights) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
        "LLTM's backward: d_old_h, d_input, d_weights, d_bias, d_old_cell.")
      .impl(gx::kCPU, lltm_backward)
      .impl(gx::kCUDA, lltm_backward);
}
