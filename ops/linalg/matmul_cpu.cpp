// CPU matmul: float32 and float64 through the system BLAS when one is loaded
// (blas.h), else the built-in packed GEMM (gemm_cpu.h); float16 and bfloat16
// are widened to float32, multiplied as float32 (accumulating in float, the
// promise the plain loop this replaces made) and rounded once on store.
//
// NOTE [ Strided matmul operands on the CPU ]
// self and other come with any strides (matmul.h). The built-in GEMM reads
// through strides as it packs. BLAS takes a matrix whose last or second-last
// stride is 1 as it is, through its transpose flag and leading dimension (a
// transposed or sliced view costs nothing); any other layout, or a size or
// stride beyond BLAS's 32-bit integers, is copied to a contiguous buffer
// first. Batches run one GEMM each, in parallel over the batches when each
// product is small (below OpenBLAS's own threading threshold, so its threads
// are not entered from several of ours at once).
#include <algorithm>
#include <climits>
#include <vector>

#include <gpuext/parallel.h>

#include "../common/dispatch.h"
#include "blas.h"
#include "gemm_cpu.h"
#include "matmul.h"

namespace gx::ops {
namespace {

// One operand of a GEMM: element (i, j) of batch p at p[p * batch + i * rs + j * cs].
template <typename T>
struct Operand {
  const T* p;
  int64_t batch, rs, cs;
};

// How BLAS can read a rows x cols matrix with strides (rs, cs) without a copy.
struct BlasLayout {
  bool ok = false, trans = false;
  int64_t ld = 0;
};

BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // Row-major: (i, j) at i * ld + j; a single row or column leaves the other stride free.
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    return {true, false, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  }
  // Transposed: (i, j) at j * ld + i.
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    return {true, true, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  }
  return {};
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// A contiguous row-major copy of a rows x cols strided matrix.
template <typename T, typename S>
void copy_matrix(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, T* dst) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = to<T>(src[i * rs + j * cs]);
  }
}

// c[m x n] (row-major, ld n) = a[m x k] b[k x n] for one batch, T = float or double.
template <typename T>
void gemm_one(int64_t m, int64_t n, int64_t k, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb,
              int64_t csb, T* c) {
  if (k == 0) {  // an empty sum
    std::fill(c, c + m * n, T(0));
    return;
  }
  if (blas::enabled() && fits_int(m) && fits_int(n) && fits_int(k)) {
    BlasLayout la = blas_layout(m, k, rsa, csa), lb = blas_layout(k, n, rsb, csb);
    std::vector<T> ca, cb;  // contiguous copies, when BLAS cannot read an operand as it is
    if (!la.ok || !fits_int(la.ld)) {
      ca.resize(static_cast<size_t>(m * k));
      copy_matrix(a, m, k, rsa, csa, ca.data());
      a = ca.data();
      la = {true, false, std::max<int64_t>(1, k)};
    }
    if (!lb.ok || !fits_int(lb.ld)) {
      cb.resize(static_cast<size_t>(k * n));
      copy_matrix(b, k, n, rsb, csb, cb.data());
      b = cb.data();
      lb = {true, false, std::max<int64_t>(1, n)};
    }
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    const int lda = static_cast<int>(la.ld), ldb = static_cast<int>(lb.ld), ldc = std::max(1, ni);
    bool done;
    if constexpr (std::is_same_v<T, float>) {
      done = blas::sgemm(la.trans, lb.trans, mi, ni, ki, a, lda, b, ldb, c, ldc);
    } else {
      done = blas::dgemm(la.trans, lb.trans, mi, ni, ki, a, lda, b, ldb, c, ldc);
    }
    if (done) return;
    // No BLAS after all: the copies (if any) are contiguous, and the built-in kernel reads them the same way.
    if (!ca.empty()) { rsa = k; csa = 1; }
    if (!cb.empty()) { rsb = n; csb = 1; }
    gemm::gemm<T>(m, n, k, a, rsa, csa, b, rsb, csb, c, n);
    return;
  }
  gemm::gemm<T>(m, n, k, a, rsa, csa, b, rsb, csb, c, n);
}

// Runs f(p) for every batch, in parallel over batches when each product is small.
template <typename F>
void for_batches(const linalg::MatmulShape& s, const F& f) {
  const int64_t work = s.m * s.n * std::max<int64_t>(s.k, 1);
  constexpr int64_t kSmall = int64_t{1} << 18;
  if (s.batch > 1 && work <= kSmall) {
    gx::parallel_for(0, s.batch, std::max<int64_t>(1, kSmall / std::max<int64_t>(work, 1)), [&](int64_t b0, int64_t b1) {
      for (int64_t p = b0; p < b1; ++p) f(p);
    });
  } else {
    for (int64_t p = 0; p < s.batch; ++p) f(p);
  }
}

// The last two strides of a 2-d or 3-d operand.
void matrix_strides(const Tensor& t, int64_t& rs, int64_t& cs) {
  const int64_t d = t.dim();
  rs = t.strides()[static_cast<size_t>(d - 2)];
  cs = t.strides()[static_cast<size_t>(d - 1)];
}

}  // namespace

void matmul_cpu(const Tensor& self, const Tensor& other, bool /*allow_tf32: no tensor cores here*/, bool trans_self,
                bool trans_other, const Tensor& out) {
  const linalg::MatmulShape s = linalg::check_matmul(self, other, out, trans_self, trans_other, /*strided=*/true);
  const ScalarType t = out.dtype();
  GX_CHECK(is_floating(t),
           "matmul: dtype ", t, " is not supported; expected float32, float64, float16 or bfloat16");
  if (s.batch == 0 || s.m == 0 || s.n == 0) return;
  int64_t rsa = 0, csa = 0, rsb = 0, csb = 0;
  matrix_strides(self, rsa, csa);
  matrix_strides(other, rsb, csb);
  if (trans_self) std::swap(rsa, csa);  // the transpose's row stride is the column stride of what is held
  if (trans_other) std::swap(rsb, csb);
  with_storage_type(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* a = static_cast<const T*>(self.data_ptr());
      const T* b = static_cast<const T*>(other.data_ptr());
      T* c = static_cast<T*>(out.data_ptr());
      for_batches(s, [&](int64_t p) {
        gemm_one<T>(s.m, s.n, s.k, a + p * s.stride_self, rsa, csa, b + p * s.stride_other, rsb, csb,
                    c + p * s.m * s.n);
      });
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      const T* a = static_cast<const T*>(self.data_ptr());
      const T* b = static_cast<const T*>(other.data_ptr());
      T* c = static_cast<T*>(out.data_ptr());
      // A broadcast operand (batch stride 0) is widened once for every batch.
      std::vector<float> wa, wb;
      if (s.stride_self == 0) {
        wa.resize(static_cast<size_t>(s.m * s.k));
        copy_matrix(a, s.m, s.k, rsa, csa, wa.data());
      }
      if (s.stride_other == 0) {
        wb.resize(static_cast<size_t>(s.k * s.n));
        copy_matrix(b, s.k, s.n, rsb, csb, wb.data());
      }
      for_batches(s, [&](int64_t p) {
        std::vector<float> fa, fb, fc(static_cast<size_t>(s.m * s.n));
        const float* pa = wa.data();
        const float* pb = wb.data();
        if (s.stride_self != 0) {
          fa.resize(static_cast<size_t>(s.m * s.k));
          copy_matrix(a + p * s.stride_self, s.m, s.k, rsa, csa, fa.data());
          pa = fa.data();
        }
        if (s.stride_other != 0) {
          fb.resize(static_cast<size_t>(s.k * s.n));
          copy_matrix(b + p * s.stride_other, s.k, s.n, rsb, csb, fb.data());
          pb = fb.data();
        }
        gemm_one<float>(s.m, s.n, s.k, pa, s.k, 1, pb, s.n, 1, fc.data());
        T* cp = c + p * s.m * s.n;
        for (int64_t i = 0; i < s.m * s.n; ++i) cp[i] = to<T>(fc[static_cast<size_t>(i)]);
      });
    }
  });
}

}  // namespace gx::ops
