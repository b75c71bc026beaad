// CPU random fills: the same draws as the CUDA ones (philox.h).
#include "random.h"

namespace gx::ops {

void random_fill_cpu(const Tensor& out, int64_t seed, int64_t offset, int64_t kind, double a, double b, int64_t lo,
                     int64_t hi) {
  const random::Fill f = random::check_fill(out, seed, offset, kind, a, b, lo, hi);
  const int64_t n = out.numel();
  with_storage_type(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = static_cast<T*>(out.data_ptr());
      for (int64_t j = 0; j < n; ++j) p[j] = random::draw<T>(f, j);
    }
  });
}

}  // namespace gx::ops
