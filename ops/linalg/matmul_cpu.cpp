// CPU matmul: the reference the CUDA one is tested against. i-k-j loop order
// (rows of `other` stream through the cache), accumulating in the compute type
// (float for float16/bfloat16).
#include <algorithm>
#include <vector>

#include "../common/dispatch.h"
#include "matmul.h"

namespace gx::ops {

void matmul_cpu(const Tensor& self, const Tensor& other, bool /*allow_tf32: no tensor cores here*/, const Tensor& out) {
  const linalg::MatmulShape s = linalg::check_matmul(self, other, out);
  const ScalarType t = out.dtype();
  GX_CHECK(t == kFloat32 || t == kFloat64 || t == kFloat16 || t == kBFloat16,
           "matmul: dtype ", t, " is not supported; expected float32, float64, float16 or bfloat16");
  with_storage_type(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BFloat16>) {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* a = static_cast<const T*>(self.data_ptr());
      const T* b = static_cast<const T*>(other.data_ptr());
      T* c = static_cast<T*>(out.data_ptr());
      std::vector<C> row(static_cast<size_t>(s.n));
      for (int64_t p = 0; p < s.batch; ++p) {
        const T* ap = a + p * s.stride_self;
        const T* bp = b + p * s.stride_other;
        T* cp = c + p * s.m * s.n;
        for (int64_t i = 0; i < s.m; ++i) {
          std::fill(row.begin(), row.end(), C(0));
          for (int64_t kk = 0; kk < s.k; ++kk) {
            const C aik = to<C>(ap[i * s.k + kk]);
            const T* brow = bp + kk * s.n;
            for (int64_t j = 0; j < s.n; ++j) row[static_cast<size_t>(j)] += aik * to<C>(brow[j]);
          }
          for (int64_t j = 0; j < s.n; ++j) cp[i * s.n + j] = to<T>(row[static_cast<size_t>(j)]);
        }
      }
    }
  });
}

}  // namespace gx::ops
