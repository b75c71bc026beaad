// CPU bincount and histc (histogram.h): one pass over the elements.
#include "../common/dispatch.h"
#include "histogram.h"

namespace gx::ops {
namespace {

template <typename T, typename Bin, typename Weight> void accumulate(int64_t n, const Bin& bin, const Weight& weight, T* out) {
  for (int64_t l = 0; l < n; ++l) {
    const int64_t b = bin(l);
    if (b >= 0) out[b] += weight(l);
  }
}

void check_input(const Tensor& self, const Tensor& out) {
  GX_CHECK(self.dim() == 1 && self.is_contiguous(), "self must be 1-d and contiguous, got shape ", self.sizes());
  GX_CHECK(out.dim() == 1 && out.is_contiguous(), "out must be 1-d and contiguous, got shape ", out.sizes());
}

}  // namespace

void bincount_cpu(const Tensor& self, const std::optional<Tensor>& weights, const Tensor& out) {
  check_input(self, out);
  const int64_t n = self.numel();
  const BincountBin bin{static_cast<const char*>(self.data_ptr()), self.dtype(), itemsize(self.dtype())};
  if (!weights.has_value()) {
    GX_CHECK(out.dtype() == kInt64, "counts are int64, got out of ", out.dtype());
    accumulate(n, bin, UnitWeight<int64_t>{}, static_cast<int64_t*>(out.data_ptr()));
    return;
  }
  const Tensor& w = *weights;
  GX_CHECK(w.dtype() == out.dtype() && w.numel() == n && w.is_contiguous(), "weights must be contiguous, of self's length and out's dtype");
  if (out.dtype() == kFloat32) accumulate(n, bin, ArrayWeight<float>{static_cast<const float*>(w.data_ptr())}, static_cast<float*>(out.data_ptr()));
  else if (out.dtype() == kFloat64) accumulate(n, bin, ArrayWeight<double>{static_cast<const double*>(w.data_ptr())}, static_cast<double*>(out.data_ptr()));
  else GX_CHECK(false, "weighted counts are float32 or float64, got ", out.dtype());
}

void histc_cpu(const Tensor& self, double min, double max, const Tensor& out) {
  check_input(self, out);
  GX_CHECK(out.dtype() == kInt64, "counts are int64, got out of ", out.dtype());
  GX_CHECK(max > min, "max (", max, ") must be larger than min (", min, ")");
  const ScalarType dtype = self.dtype();
  const auto run = [&](auto c) {
    using C = decltype(c);
    const HistcBin<C> bin{static_cast<const char*>(self.data_ptr()), dtype, itemsize(dtype), static_cast<C>(min), static_cast<C>(max), out.numel()};
    accumulate(self.numel(), bin, UnitWeight<int64_t>{}, static_cast<int64_t*>(out.data_ptr()));
  };
  if (computes_as<float>(dtype)) run(0.0f);  // the bins in the dtype's compute type
  else run(0.0);
}

}  // namespace gx::ops
