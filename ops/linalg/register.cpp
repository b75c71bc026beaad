// Registration of matmul and the SVD (matmul.h, svd.h; lib/ops/linalg.ts calls them), and of the CPU BLAS
// switches (blas.h; lib/ops/backends.ts).
#include <string>

#include "blas.h"
#include "gemm_cpu.h"
#include "matmul.h"
#include "svd.h"

namespace {

// "gemm=...\nlapack=...\nkernel=..." (lib/ops/backends.ts parses it).
std::string cpu_linalg_backends() {
  return "gemm=" + gx::ops::blas::gemm_description() + "\nlapack=" + gx::ops::blas::lapack_description() +
         "\nkernel=" + gx::ops::gemm::kernel_name();
}

bool cpu_blas_enable(bool on) {
  const bool was = gx::ops::blas::enabled();
  gx::ops::blas::set_enabled(on);
  return was;
}

// Picks the built-in GEMM's micro-kernel by name (tests); returns the one in use.
std::string cpu_gemm_kernel(std::string name) {
  GX_CHECK(name.empty() || gx::ops::gemm::set_kernel(name.c_str()), "cpu_gemm_kernel: '", name.c_str(),
           "' is not a micro-kernel this CPU can run; expected avx512f, avx2+fma or generic (up to what the CPU has)");
  return gx::ops::gemm::kernel_name();
}

}  // namespace

#if defined(GX_OPS_NO_CUDA)
#define GX_MATMUL_IMPLS .impl(gx::kCPU, gx::ops::matmul_cpu)
#define GX_SVD_IMPLS .impl(gx::kCPU, gx::ops::svd_colmajor_cpu)
#else
#define GX_SVD_IMPLS .impl(gx::kCPU, gx::ops::svd_colmajor_cpu).impl(gx::kCUDA, gx::ops::svd_colmajor_cuda)
#define GX_MATMUL_IMPLS .impl(gx::kCPU, gx::ops::matmul_cpu).impl(gx::kCUDA, gx::ops::matmul_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
  m.def("matmul(Tensor self, Tensor other, bool allow_tf32, Tensor out) -> ()",
        "out[b] = self[b or 0] @ other[b or 0] for [batch, m, k] and [batch, k, n], contiguous on CUDA (cuBLAS; "
        "allow_tf32 lets float32 use TF32 tensor cores), any strides on the CPU (a system BLAS, else a built-in "
        "kernel).")
      GX_MATMUL_IMPLS;
  m.def("svd_colmajor(Tensor a, bool full, Tensor s, Tensor u, Tensor v) -> ()",
        "SVD of the column-major m x n matrix a ([n, m], m >= n; overwritten): s [n], u [m or n, m], v [n, n], "
        "column-major (cuSOLVER gesvdj on CUDA; LAPACK gesdd on the CPU when loaded, else one-sided Jacobi).")
      GX_SVD_IMPLS;
  m.def("cpu_linalg_backends() -> str",
        "What the CPU matmul and SVD use: lines gemm=<BLAS library or built-in kernel>, lapack=..., kernel=<the "
        "built-in kernel's instruction set>.")
      .impl(gx::kCPU, cpu_linalg_backends);
  m.def("cpu_blas_enable(bool on) -> bool",
        "Lets the CPU matmul and SVD use the loaded BLAS / LAPACK (true, the default) or not; returns the previous "
        "setting (for tests of the built-in kernels).")
      .impl(gx::kCPU, cpu_blas_enable);
  m.def("cpu_gemm_kernel(str name) -> str",
        "Makes the built-in CPU GEMM use the named micro-kernel (avx512f, avx2+fma, generic; '' keeps it) and "
        "returns the one in use (for tests of each kernel).")
      .impl(gx::kCPU, cpu_gemm_kernel);
}
