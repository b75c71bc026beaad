// CPU random fills: the same draws as the CUDA ones (philox.h).
#include "random.h"

namespace gx::ops {

namespace {

void fill_cpu(const Tensor& out, const random::Fill& f) {
  const int64_t n = out.numel();
  with_storage_type(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = static_cast<T*>(out.data_ptr());
      for (int64_t j = 0; j < n; ++j) p[j] = random::draw<T>(f, j);
    }
  });
}

}  // namespace

GX_RANDOM_DEFINE_ENTRY_POINTS(cpu)

}  // namespace gx::ops
