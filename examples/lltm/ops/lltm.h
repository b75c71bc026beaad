// LLTM (the recurrent cell of PyTorch's "Custom C++ and CUDA Extensions"
// tutorial, pytorch/extension-cpp): the parts shared by the CPU
// implementation (lltm.cpp) and the CUDA one (lltm.cu), which registers both.
//
// The matrix products of the cell run in TypeScript (gx.matmul, gx.cat;
// ../lltm.ts); these ops are the fused elementwise parts around them:
//   forward:  gates [B, 3S] (= [old_h, input] @ W^T + b), old_cell [B, S] ->
//             new_h, new_cell, input_gate, output_gate, candidate_cell [B, S]
//   backward: the gradients of new_h and new_cell (and, optionally, of the three
//             gates the forward returns) -> d_gates [B, 3S], d_old_cell [B, S]
// Row b of gates holds the three chunks [input | output | candidate] of S each.
#pragma once
#include <math.h>

#include <optional>
#include <tuple>

#include <gpuext/extension.h>

#if defined(__CUDACC__)
#define LLTM_HD __host__ __device__ __forceinline__
#else
#define LLTM_HD inline
#endif

namespace lltm {

using Forward = std::tuple<gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor, gx::Tensor>;
using Backward = std::tuple<gx::Tensor, gx::Tensor>;
using OptionalTensor = std::optional<gx::Tensor>;

// --- the math of one (b, s) element, for the host and the device ------------
// Overloads rather than std:: calls, so the same text compiles in device code.
LLTM_HD float exp_(float x) { return expf(x); }
LLTM_HD double exp_(double x) { return exp(x); }
LLTM_HD float expm1_(float x) { return expm1f(x); }
LLTM_HD double expm1_(double x) { return expm1(x); }
LLTM_HD float tanh_(float x) { return tanhf(x); }
LLTM_HD double tanh_(double x) { return tanh(x); }

template <typename T> LLTM_HD T sigmoid(T z) { return T(1) / (T(1) + exp_(-z)); }
// elu with alpha = 1: z for z > 0, exp(z) - 1 otherwise.
template <typename T> LLTM_HD T elu(T z) { return z > T(0) ? z : expm1_(z); }
// Its derivative: 1 for z > 0, exp(z) otherwise (both 1 at z = 0). extension-cpp
// writes it as d_relu(z) + (alpha (e^z - 1) < 0 ? alpha e^z : 0), which gives 0
// instead of e^z where e^z rounds to 1 for a tiny negative z.
template <typename T> LLTM_HD T d_elu(T z) { return z > T(0) ? T(1) : exp_(z); }

template <typename T> struct ForwardOut {
  T new_h, new_cell, input_gate, output_gate, candidate_cell;
};

// g_i, g_o, g_c: the element's three gate pre-activations.
template <typename T>
LLTM_HD ForwardOut<T> forward_element(T g_i, T g_o, T g_c, T old_cell) {
  ForwardOut<T> r;
  r.input_gate = sigmoid(g_i);
  r.output_gate = sigmoid(g_o);
  r.candidate_cell = elu(g_c);
  r.new_cell = old_cell + r.candidate_cell * r.input_gate;
  r.new_h = tanh_(r.new_cell) * r.output_gate;
  return r;
}

template <typename T> struct BackwardOut {
  T d_gate_i, d_gate_o, d_gate_c, d_old_cell;
};

// extension-cpp's lltm_cuda_backward_kernel, element by element. The
// sigmoids' derivatives come from the saved gates (s (1 - s), the value
// extension-cpp recomputes from gate_weights); elu's from the pre-activation
// g_c. grad_i, grad_o, grad_c: the gradients of the gates the forward returns
// (0 when only new_h and new_cell are used).
template <typename T>
LLTM_HD BackwardOut<T> backward_element(T grad_h, T grad_cell, T new_cell, T input_gate, T output_gate,
                                        T candidate_cell, T g_c, T grad_i, T grad_o, T grad_c) {
  const T tanh_new_cell = tanh_(new_cell);
  const T d_output_gate = tanh_new_cell * grad_h + grad_o;
  const T d_tanh_new_cell = output_gate * grad_h;
  const T d_new_cell = (T(1) - tanh_new_cell * tanh_new_cell) * d_tanh_new_cell + grad_cell;
  const T d_candidate_cell = input_gate * d_new_cell + grad_c;
  const T d_input_gate = candidate_cell * d_new_cell + grad_i;
  BackwardOut<T> r;
  r.d_old_cell = d_new_cell;
  r.d_gate_i = d_input_gate * (input_gate * (T(1) - input_gate));
  r.d_gate_o = d_output_gate * (output_gate * (T(1) - output_gate));
  r.d_gate_c = d_candidate_cell * d_elu(g_c);
  return r;
}

// --- argument checks (lltm.cpp), shared by both devices ----------------------
// Each returns the batch size B and state size S, or throws a GX_CHECK error
// naming the argument at fault (the core puts the op's name in front).
struct Sizes {
  int64_t batch, state;
};
Sizes check_forward(const gx::Tensor& gates, const gx::Tensor& old_cell);
Sizes check_backward(const gx::Tensor& grad_h, const gx::Tensor& grad_cell, const gx::Tensor& new_cell,
                     const gx::Tensor& input_gate, const gx::Tensor& output_gate,
                     const gx::Tensor& candidate_cell, const gx::Tensor& gate_weights,
                     const OptionalTensor& grad_input_gate, const OptionalTensor& grad_output_gate,
                     const OptionalTensor& grad_candidate_cell);

// --- the CPU implementations (lltm.cpp) ---------------------------------------
Forward forward_cpu(const gx::Tensor& gates, const gx::Tensor& old_cell);
Backward backward_cpu(const gx::Tensor& grad_h, const gx::Tensor& grad_cell, const gx::Tensor& new_cell,
                      const gx::Tensor& input_gate, const gx::Tensor& output_gate, const gx::Tensor& candidate_cell,
                      const gx::Tensor& gate_weights, const OptionalTensor& grad_input_gate,
                      const OptionalTensor& grad_output_gate, const OptionalTensor& grad_candidate_cell);

}  // namespace lltm
