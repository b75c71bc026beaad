// CPU cross_entropy_loss and its backward (cross_entropy.h): rows over the
// thread pool, each row's sums in the CUDA warp's order and the reduction in
// its block's (NOTE [ One order for the cross entropy's sums ]). Also the
// checks both devices share.
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

namespace {

// A row's sum over its classes: lane partials, then the butterfly.
template <typename C, typename Lane> C row_sum(const Lane& lane) {
  C v[kXentLanes];
  for (int j = 0; j < kXentLanes; ++j) v[j] = lane(j);
  return xent_butterfly(v, [](C p, C q) { return p + q; });
}

template <typename C> C row_lse(const XentArgs& a, int64_t base) {
  C v[kXentLanes];
  for (int j = 0; j < kXentLanes; ++j) v[j] = xent_lane_max<C>(a, base, j);
  const C mx = xent_butterfly(v, [](C p, C q) { return q > p ? q : p; });
  return xent_lse(mx, row_sum<C>([&](int j) { return xent_lane_sum_exp<C>(a, base, j, mx); }));
}

// Row m's loss (0 when ignored) and logsumexp.
template <typename C> C row_loss(const XentArgs& a, int64_t m, C& lse) {
  const int64_t base = xent_base(a, m);
  lse = a.log_probs ? C(0) : row_lse<C>(a, base);
  const int64_t t = xent_target(a, m);
  if (!xent_counts(a, t)) return C(0);
  const C l = lse;
  const C sum_wlp = a.smoothing == 0 ? C(0) : row_sum<C>([&](int j) { return xent_lane_sum_wlp<C>(a, base, j, l); });
  return xent_row_loss(a, xent_x<C>(a, base, t) - lse, xent_w<C>(a, t), sum_wlp);
}

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
  std::vector<C> loss(static_cast<size_t>(a.rows));
  std::vector<C> lses(static_cast<size_t>(a.rows));
  parallel_for(0, a.rows, 64, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) loss[static_cast<size_t>(m)] = row_loss<C>(a, m, lses[static_cast<size_t>(m)]);
  });
  if (lse.has_value()) {
    char* p = static_cast<char*>(lse->data_ptr());
    for (int64_t m = 0; m < a.rows; ++m) store_as(p + m * itemsize(lse->dtype()), lse->dtype(), lses[static_cast<size_t>(m)]);
  }
  char* o = static_cast<char*>(out.data_ptr());
  if (reduction == kXentNone) {
    for (int64_t m = 0; m < a.rows; ++m) store_as(o + m * itemsize(out.dtype()), out.dtype(), loss[static_cast<size_t>(m)]);
    return;
  }
  C ls[kXentReduce] = {}, ws[kXentReduce] = {};
  for (int i = 0; i < kXentReduce; ++i)
    for (int64_t m = i; m < a.rows; m += kXentReduce) {
      ls[i] += loss[static_cast<size_t>(m)];
      const int64_t t = xent_target(a, m);
      if (xent_counts(a, t)) ws[i] += xent_w<C>(a, t);
    }
  const C total = xent_tree(ls), denom = xent_tree(ws);
  if (total_weight.has_value()) store_as(static_cast<char*>(total_weight->data_ptr()), total_weight->dtype(), denom);
  store_as(o, out.dtype(), reduction == kXentMean ? total / denom : total);
}

template <typename C>
void backward(const XentArgs& a, const Tensor& grad, const std::optional<Tensor>& lse,
              const std::optional<Tensor>& total_weight, int64_t reduction, const Tensor& grad_input) {
  const char* g = static_cast<const char*>(grad.data_ptr());
  const C total = total_weight.has_value() ? load_as<C>(static_cast<const char*>(total_weight->data_ptr()), total_weight->dtype()) : C(1);
  const C sum_w = a.weight == nullptr ? static_cast<C>(a.classes) : row_sum<C>([&](int j) { return xent_lane_sum_w<C>(a, j); });
  char* gi = static_cast<char*>(grad_input.data_ptr());
  const ScalarType gi_dtype = grad_input.dtype();
  const int64_t gi_item = itemsize(grad_input.dtype());
  parallel_for(0, a.rows, 64, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) {
      const int64_t base = xent_base(a, m), t = xent_target(a, m);
      const bool counts = xent_counts(a, t);
      const C w_t = counts ? xent_w<C>(a, t) : C(0);
      const C l = a.log_probs ? C(0) : load_as<C>(static_cast<const char*>(lse->data_ptr()) + m * itemsize(lse->dtype()), lse->dtype());
      const C scale = xent_scale<C>(reduction, g, grad.dtype(), itemsize(grad.dtype()), m, total);
      const C big_a = xent_row_a(a, w_t, sum_w);
      for (int64_t c = 0; c < a.classes; ++c) {
        const C v = counts ? xent_grad<C>(a, base, c, t, w_t, l, big_a, scale) : C(0);
        store_as(gi + (base + c * a.inner) * gi_item, gi_dtype, v);
      }
    }
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
  GX_CHECK(grad_input.sizes() == self.sizes() && grad_input.is_contiguous(), "grad_input must be a contiguous ", self.sizes());
  GX_CHECK(grad.is_contiguous(), "grad must be contiguous");
  GX_CHECK(log_probs || lse.has_value(), "lse is required for the cross entropy's backward");
  GX_CHECK(reduction != kXentMean || total_weight.has_value(), "total_weight is required for the mean's backward");
  with_compute<kCFloating>(self.dtype(), [&](auto tag) {
    backward<typename decltype(tag)::type>(a, grad, lse, total_weight, reduction, grad_input);
  });
}

}  // namespace gx::ops
