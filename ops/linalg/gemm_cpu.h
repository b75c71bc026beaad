// The built-in CPU GEMM, used by matmul when no system BLAS is loaded
// (blas.h): C[m, n] = A[m, k] B[k, n] for float and double, with A and B
// read through any element strides (A(i, p) = a[i * rsa + p * csa]), so
// transposed and sliced views need no copy; C is row-major with leading
// dimension ldc. Packed, cache-blocked, multithreaded over gx::parallel_for.
#pragma once
#include <cstdint>

namespace gx::ops::gemm {

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb,
          int64_t csb, T* c, int64_t ldc);

extern template void gemm<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t,
                                 int64_t, float*, int64_t);
extern template void gemm<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*, int64_t,
                                  int64_t, double*, int64_t);

// The micro-kernel in use ("avx512f", "avx2+fma" or "generic"), for gx.backends().
const char* kernel_name();

// Uses the named micro-kernel from now on (tests); false when the name is
// unknown or the CPU cannot run it. A gemm already running keeps its kernel.
bool set_kernel(const char* name);

}  // namespace gx::ops::gemm
