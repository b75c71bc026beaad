// CPU cross_entropy_loss and its backward (cross_entropy.h): rows over the
// thread pool, each row by cross_entropy.h's one-thread replay of the CUDA
// warp's order and the reduction in its block's (NOTE [ One order for the
// cross entropy's sums ]). Also the checks both devices share.
#include <vector>

#include <gpuext/parallel.h>

#include "cross_entropy.h"

namespace gx::ops {

XentArgs xent_args(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t ignore_index,
                   double label_smoothing, bool log_probs) {
  GX_CHECK(self.dim() == 3 && self.is_contiguous(), "self must be a contiguous [N, C, D], got ", self.sizes());
  GX_CHECK(is_floating(self.dtype()), "self must be floating, got ", self.dtype());
  GX_CHECK(target.dtype() == kInt64 || target.dtype() == kInt32, "target must be int64 or int32, got ", target.dtype());
  GX_CHECK(target.is_contiguous() && target.numel() == self.size(0) * self.size(2), "target must be a contiguous [N D] (",
           self.size(0) * self.size(2), " elements), got ", target.sizes());
  GX_CHECK(target.device() == self.device(), "target on ", target.device(), ", self on ", self.device());
  XentArgs a;
  a.x = static_cast<const char*>(self.data_ptr());
  a.x_dtype = self.dtype();
  a.x_item = itemsize(self.dtype());
  a.target = static_cast<const char*>(target.data_ptr());
  a.t_dtype = target.dtype();
  a.t_item = itemsize(target.dtype());
  a.rows = target.numel();
  a.classes = self.size(1);
  a.inner = self.size(2) > 0 ? self.size(2) : 1;
  a.ignore = ignore_index;
  a.smoothing = label_smoothing;
  a.log_probs = log_probs;
  if (weight.has_value()) {
    const Tensor& w = *weight;
    GX_CHECK(w.dim() == 1 && w.size(0) == a.classes && w.is_contiguous() && is_floating(w.dtype()),
             "weight must be a contiguous floating [", a.classes, "], got ", w.dtype(), " ", w.sizes());
    GX_CHECK(w.device() == self.device(), "weight on ", w.device(), ", self on ", self.device());
    a.weight = static_cast<const char*>(w.data_ptr());
    a.w_dtype = w.dtype();
    a.w_item = itemsize(w.dtype());
  }
  return a;
}

XentBuf xent_buf(const std::optional<Tensor>& t) {
  if (!t.has_value()) return {};
  return XentBuf{static_cast<char*>(t->data_ptr()), t->dtype(), itemsize(t->dtype())};
}

XentGradArgs xent_grad_args(const XentArgs& a, const Tensor& grad, const Tensor& self, const std::optional<Tensor>& lse,
                            const std::optional<Tensor>& total_weight, int64_t reduction, const Tensor& grad_input) {
  GX_CHECK(grad_input.sizes() == self.sizes() && grad_input.is_contiguous(), "grad_input must be a contiguous ", self.sizes());
  GX_CHECK(grad.is_contiguous() && grad.numel() == (reduction == kXentNone ? a.rows : 1), "grad must be a contiguous [",
           reduction == kXentNone ? a.rows : 1, "], got ", grad.sizes());
  GX_CHECK(a.log_probs || lse.has_value(), "lse is required for the cross entropy's backward");
  GX_CHECK(reduction != kXentMean || total_weight.has_value(), "total_weight is required for the mean's backward");
  XentGradArgs b;
  b.grad = static_cast<const char*>(grad.data_ptr());
  b.g_dtype = grad.dtype();
  b.g_item = itemsize(grad.dtype());
  b.reduction = reduction;
  b.lse = xent_buf(lse);
  b.grad_input = xent_buf(grad_input);
  return b;
}

namespace {

// The first target out of range, or ignore_index.
int64_t first_bad(const XentArgs& a) {
  for (int64_t m = 0; m < a.rows; ++m) {
    const int64_t t = xent_target(a, m);
    if (t != a.ignore && !xent_in_range(a, t)) return t;
  }
  return a.ignore;
}

template <typename C>
void forward(const XentArgs& a, int64_t reduction, const Tensor& out, const std::optional<Tensor>& lse,
             const std::optional<Tensor>& total_weight) {
  std::vector<XentTerms<C>> terms(static_cast<size_t>(a.rows));
  std::vector<C> lses(static_cast<size_t>(a.rows));
  parallel_for(0, a.rows, 64, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) terms[static_cast<size_t>(m)] = xent_row<C>(a, m, lses[static_cast<size_t>(m)]);
  });
  if (lse.has_value()) {
    char* p = static_cast<char*>(lse->data_ptr());
    for (int64_t m = 0; m < a.rows; ++m) store_as(p + m * itemsize(lse->dtype()), lse->dtype(), lses[static_cast<size_t>(m)]);
  }
  char* o = static_cast<char*>(out.data_ptr());
  if (reduction == kXentNone) {
    for (int64_t m = 0; m < a.rows; ++m) store_as(o + m * itemsize(out.dtype()), out.dtype(), xent_combine(a, terms[static_cast<size_t>(m)]));
    return;
  }
  C ns[kXentReduce] = {}, ss[kXentReduce] = {}, ws[kXentReduce] = {};
  for (int i = 0; i < kXentReduce; ++i)
    for (int64_t m = i; m < a.rows; m += kXentReduce) {
      ns[i] += terms[static_cast<size_t>(m)].nll;
      ss[i] += terms[static_cast<size_t>(m)].smooth;
      const int64_t t = xent_target(a, m);
      if (xent_counts(a, t)) ws[i] += xent_w<C>(a, t);
    }
  XentTerms<C> sums;
  sums.nll = xent_tree(ns);
  sums.smooth = xent_tree(ss);
  const C denom = xent_tree(ws);
  if (total_weight.has_value()) store_as(static_cast<char*>(total_weight->data_ptr()), total_weight->dtype(), denom);
  store_as(o, out.dtype(), xent_reduce(a, reduction, sums, denom));
}

template <typename C> void backward(const XentArgs& a, const XentGradArgs& b, const std::optional<Tensor>& total_weight) {
  const C total = total_weight.has_value() ? load_as<C>(static_cast<const char*>(total_weight->data_ptr()), total_weight->dtype()) : C(1);
  const C sum_w = xent_sum_w<C>(a);
  parallel_for(0, a.rows, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t m = lo; m < hi; ++m) xent_backward_row<C>(a, b, m, sum_w, total, 0, 1);
  });
}

}  // namespace

int64_t cross_entropy_loss_cpu(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                               int64_t ignore_index, double label_smoothing, int64_t reduction, bool log_probs,
                               const Tensor& out, const std::optional<Tensor>& lse, const std::optional<Tensor>& total_weight) {
  const XentArgs a = xent_args(self, target, weight, ignore_index, label_smoothing, log_probs);
  const int64_t bad = first_bad(a);
  if (bad != a.ignore) return bad;
  with_compute<kCFloating>(self.dtype(), [&](auto tag) { forward<typename decltype(tag)::type>(a, reduction, out, lse, total_weight); });
  return a.ignore;
}

void cross_entropy_loss_backward_cpu(const Tensor& grad, const Tensor& self, const Tensor& target,
                                     const std::optional<Tensor>& weight, const std::optional<Tensor>& lse,
                                     const std::optional<Tensor>& total_weight, int64_t ignore_index, double label_smoothing,
                                     int64_t reduction, bool log_probs, const Tensor& grad_input) {
  const XentArgs a = xent_args(self, target, weight, ignore_index, label_smoothing, log_probs);
  const XentGradArgs b = xent_grad_args(a, grad, self, lse, total_weight, reduction, grad_input);
  with_compute<kCFloating>(self.dtype(), [&](auto tag) { backward<typename decltype(tag)::type>(a, b, total_weight); });
}

}  // namespace gx::ops
