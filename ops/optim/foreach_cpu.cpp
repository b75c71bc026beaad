// CPU multi-tensor optimizer steps (foreach.h): each parameter's elements
// split over the thread pool.
#include <gpuext/parallel.h>

#include "foreach.h"

namespace gx::ops {
namespace {

template <typename T> T* ptr(const std::vector<Tensor>& list, size_t i) {
  return list.empty() ? nullptr : static_cast<T*>(list[i].data_ptr());
}

}  // namespace

void foreach_sgd_cpu(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
                     double weight_decay, bool nesterov, bool maximize, bool first) {
  const ForeachLists l = check_foreach("foreach_sgd", {{&params, "params"}, {&grads, "grads"}, {&momentum_buffers, "momentum_buffers"}},
                                       {true, true, momentum != 0});
  GX_CHECK(momentum == 0 || !momentum_buffers.empty(), "foreach_sgd: momentum_buffers is empty with momentum ", momentum);
  with_storage_type(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      using C = OptCompute<T>;
      const SgdScalars<C> s{static_cast<C>(weight_decay), static_cast<C>(momentum), static_cast<C>(1 - dampening),
                            static_cast<C>(-lr), weight_decay != 0, momentum != 0, nesterov, maximize, first};
      for (size_t t = 0; t < l.count; ++t) {
        T* p = ptr<T>(params, t);
        const T* g = ptr<T>(grads, t);
        T* b = momentum != 0 ? ptr<T>(momentum_buffers, t) : nullptr;
        parallel_for(0, params[t].numel(), kDefaultGrain, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) sgd_element<T, C>(s, p, g, b, i);
        });
      }
    }
  });
}

void foreach_adam_cpu(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                      const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                      const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps, double lr,
                      double beta1, double beta2, double eps, double weight_decay, double neg_step_size,
                      double bias_correction2_sqrt,
                      bool amsgrad, bool maximize, bool decoupled) {
  const ForeachLists l = check_foreach("foreach_adam", {{&params, "params"}, {&grads, "grads"}, {&exp_avgs, "exp_avgs"},
                                       {&exp_avg_sqs, "exp_avg_sqs"}, {&max_exp_avg_sqs, "max_exp_avg_sqs"}},
                                       {true, true, true, true, amsgrad});
  GX_CHECK(!amsgrad || !max_exp_avg_sqs.empty(), "foreach_adam: max_exp_avg_sqs is empty with amsgrad");
  check_steps("foreach_adam", steps, l);
  const AdamHost h{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled};
  with_storage_type(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      using C = OptCompute<T>;
      const AdamScalars<C> s = adam_scalars<C>(h);
      for (size_t t = 0; t < l.count; ++t) {
        // A capturable step reads the parameter's step count from its tensor and counts it up.
        double* step_t = steps.empty() ? nullptr : static_cast<double*>(steps[t].data_ptr());
        AdamStepScalars k{neg_step_size, bias_correction2_sqrt};
        if (step_t != nullptr) k = adam_step_scalars(lr, beta1, beta2, *step_t += 1);
        const C nss = static_cast<C>(k.neg_step_size), bc2 = static_cast<C>(k.bias_correction2_sqrt);
        T* p = ptr<T>(params, t);
        const T* g = ptr<T>(grads, t);
        T* m = ptr<T>(exp_avgs, t);
        T* v = ptr<T>(exp_avg_sqs, t);
        T* vmax = amsgrad ? ptr<T>(max_exp_avg_sqs, t) : nullptr;
        parallel_for(0, params[t].numel(), kDefaultGrain, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) adam_element<T, C>(s, nss, bc2, p, g, m, v, vmax, i);
        });
      }
    }
  });
}

}  // namespace gx::ops
