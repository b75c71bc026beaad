// CUDA multi-tensor optimizer steps (foreach.h), launched as torch's
// multi_tensor_apply does.
//
// NOTE [ Multi-tensor apply ]
// A launch takes the lists by value in its parameter buffer (4 KiB): up to
// kListTensors tensors' pointers, one per list ("depth"), and a table mapping
// each of up to kListBlocks blocks to (tensor, chunk of kChunk elements).
// The host walks the tensors chunk by chunk, filling the table, and launches
// whenever the tensors or the blocks run out, carrying a tensor that was cut
// into the next launch. A step over a model's parameters is then a few
// launches, not one chain of elementwise kernels per parameter; and the
// parameter buffer is copied into a captured graph, so replays need nothing
// from the host.
#include "../common/cuda_loops.cuh"
#include "foreach.h"

namespace gx::ops {
namespace {

constexpr int kListTensors = 36;
constexpr int kListBlocks = 320;
constexpr int kChunk = 16384;
constexpr int kStepThreads = 512;

template <int Depth> struct TensorListMeta {
  void* ptr[Depth][kListTensors];
  int64_t numel[kListTensors];
  double* step[kListTensors];  // capturable Adam: the parameter's step count, else null
  unsigned char block_tensor[kListBlocks];
  int block_chunk[kListBlocks];
};

// Calls launch(meta, blocks) for each launch covering every chunk of the `count` tensors of `lists`.
template <int Depth, typename Launch>
void multi_tensor_apply(const std::vector<const std::vector<Tensor>*>& lists, size_t count,
                        const std::vector<Tensor>* steps, Launch&& launch) {
  TensorListMeta<Depth> meta{};
  int tensors = 0, blocks = 0;
  for (size_t t = 0; t < count; ++t) {
    const int64_t n = (*lists[0])[t].numel();
    if (n == 0) continue;
    for (int d = 0; d < Depth; ++d) meta.ptr[d][tensors] = lists[d]->empty() ? nullptr : (*lists[d])[t].data_ptr();
    meta.numel[tensors] = n;
    meta.step[tensors] = steps != nullptr && !steps->empty() ? static_cast<double*>((*steps)[t].data_ptr()) : nullptr;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      meta.block_tensor[blocks] = static_cast<unsigned char>(tensors);
      meta.block_chunk[blocks] = static_cast<int>(c);
      ++blocks;
      const bool last_chunk = c == chunks - 1;
      const bool full = blocks == kListBlocks || (last_chunk && tensors + 1 == kListTensors);
      if (!full) continue;
      launch(meta, blocks);
      blocks = 0;
      if (last_chunk) {
        tensors = -1;  // this tensor is done: the next one starts the list
      } else {
        // The rest of this tensor goes on in the next launch, as its first entry.
        for (int d = 0; d < Depth; ++d) meta.ptr[d][0] = meta.ptr[d][tensors];
        meta.numel[0] = meta.numel[tensors];
        meta.step[0] = meta.step[tensors];
        tensors = 0;
      }
    }
    ++tensors;
  }
  if (blocks > 0) launch(meta, blocks);
}

template <typename T, typename C>
__global__ void __launch_bounds__(kStepThreads) sgd_kernel(const __grid_constant__ TensorListMeta<3> meta, SgdScalars<C> s) {
  const int t = meta.block_tensor[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(meta.block_chunk[blockIdx.x]) * kChunk;
  const int64_t end = begin + kChunk < meta.numel[t] ? begin + kChunk : meta.numel[t];
  T* p = static_cast<T*>(meta.ptr[0][t]);
  const T* g = static_cast<const T*>(meta.ptr[1][t]);
  T* b = static_cast<T*>(meta.ptr[2][t]);
  for (int64_t i = begin + threadIdx.x; i < end; i += kStepThreads) sgd_element<T, C>(s, p, g, b, i);
}

// Capturable Adam reads the step count before the update (step + 1 is this step's) and counts it up after
// every block of the tensor has read it: in a second kernel (adam_count_kernel).
template <typename T, typename C>
__global__ void __launch_bounds__(kStepThreads) adam_kernel(const __grid_constant__ TensorListMeta<5> meta, AdamScalars<C> s,
                                                            double lr, double beta1, double beta2, C neg_step_size,
                                                            C bias_correction2_sqrt) {
  const int t = meta.block_tensor[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(meta.block_chunk[blockIdx.x]) * kChunk;
  const int64_t end = begin + kChunk < meta.numel[t] ? begin + kChunk : meta.numel[t];
  C nss = neg_step_size, bc2 = bias_correction2_sqrt;
  if (meta.step[t] != nullptr) {
    const AdamStepScalars k = adam_step_scalars(lr, beta1, beta2, *meta.step[t] + 1);
    nss = static_cast<C>(k.neg_step_size);
    bc2 = static_cast<C>(k.bias_correction2_sqrt);
  }
  T* p = static_cast<T*>(meta.ptr[0][t]);
  const T* g = static_cast<const T*>(meta.ptr[1][t]);
  T* m = static_cast<T*>(meta.ptr[2][t]);
  T* v = static_cast<T*>(meta.ptr[3][t]);
  T* vmax = static_cast<T*>(meta.ptr[4][t]);
  for (int64_t i = begin + threadIdx.x; i < end; i += kStepThreads) adam_element<T, C>(s, nss, bc2, p, g, m, v, vmax, i);
}

struct StepList {
  double* step[kListTensors];
  int count;
};

__global__ void adam_count_kernel(StepList l) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < l.count) *l.step[i] += 1;
}

template <typename F> void with_float_storage(ScalarType dtype, F&& f) {
  with_storage_type(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BFloat16>)
      f(tag);
  });
}

}  // namespace

void foreach_sgd_cuda(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                      const std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
                      double weight_decay, bool nesterov, bool maximize, bool first) {
  const ForeachLists l = check_foreach("foreach_sgd", {{&params, "params"}, {&grads, "grads"}, {&momentum_buffers, "momentum_buffers"}},
                                       {true, true, momentum != 0});
  GX_CHECK(momentum == 0 || !momentum_buffers.empty(), "foreach_sgd: momentum_buffers is empty with momentum ", momentum);
  DeviceGuard guard(l.device.index);
  cudaStream_t stream = current_stream(l.device.index);
  with_float_storage(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = OptCompute<T>;
    const SgdScalars<C> s{static_cast<C>(weight_decay), static_cast<C>(momentum), static_cast<C>(1 - dampening),
                          static_cast<C>(-lr), weight_decay != 0, momentum != 0, nesterov, maximize, first};
    multi_tensor_apply<3>(l.lists, l.count, nullptr, [&](const TensorListMeta<3>& meta, int blocks) {
      sgd_kernel<T, C><<<blocks, kStepThreads, 0, stream>>>(meta, s);
      GX_CHECK_LAUNCH();
    });
  });
}

void foreach_adam_cuda(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                       const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps, double lr,
                       double beta1, double beta2, double eps, double weight_decay, double neg_step_size,
                       double bias_correction2_sqrt, bool amsgrad, bool maximize, bool decoupled) {
  const ForeachLists l = check_foreach("foreach_adam", {{&params, "params"}, {&grads, "grads"}, {&exp_avgs, "exp_avgs"},
                                       {&exp_avg_sqs, "exp_avg_sqs"}, {&max_exp_avg_sqs, "max_exp_avg_sqs"}},
                                       {true, true, true, true, amsgrad});
  GX_CHECK(!amsgrad || !max_exp_avg_sqs.empty(), "foreach_adam: max_exp_avg_sqs is empty with amsgrad");
  check_steps("foreach_adam", steps, l);
  DeviceGuard guard(l.device.index);
  cudaStream_t stream = current_stream(l.device.index);
  const AdamHost h{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled};
  with_float_storage(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = OptCompute<T>;
    const AdamScalars<C> s = adam_scalars<C>(h);
    multi_tensor_apply<5>(l.lists, l.count, &steps, [&](const TensorListMeta<5>& meta, int blocks) {
      adam_kernel<T, C><<<blocks, kStepThreads, 0, stream>>>(meta, s, lr, beta1, beta2, static_cast<C>(neg_step_size),
                                                             static_cast<C>(bias_correction2_sqrt));
      GX_CHECK_LAUNCH();
    });
  });
  // Every update of this call has read its step count: now count them up.
  for (size_t i = 0; i < steps.size(); i += kListTensors) {
    StepList sl{};
    sl.count = static_cast<int>(steps.size() - i < kListTensors ? steps.size() - i : kListTensors);
    for (int k = 0; k < sl.count; ++k) sl.step[k] = static_cast<double*>(steps[i + k].data_ptr());
    adam_count_kernel<<<1, kListTensors, 0, stream>>>(sl);
    GX_CHECK_LAUNCH();
  }
}

}  // namespace gx::ops
