// What the CPU linear algebra runs on, and the switches tests use to run each
// of its kernels (registered as backends, set_cpu_blas_enabled and
// set_gemm_kernel in ops/op-list.js; lib/ops/backends.ts calls them).
#include <string>

#include "../ops.h"
#include "blas.h"
#include "gemm_cpu.h"

namespace gx::ops {

// "gemm=...\nlapack=...\nkernel=..." (lib/ops/backends.ts parses it).
std::string backends_cpu() {
  return "gemm=" + blas::gemm_description() + "\nlapack=" + blas::lapack_description() +
         "\nkernel=" + gemm::kernel_name();
}

bool set_cpu_blas_enabled_cpu(bool on) {
  const bool was = blas::enabled();
  blas::set_enabled(on);
  return was;
}

// Picks the built-in GEMM's micro-kernel by name (tests); returns the one in use.
std::string set_gemm_kernel_cpu(std::string name) {
  GX_CHECK(name.empty() || gemm::set_kernel(name.c_str()), "set_gemm_kernel: '", name.c_str(),
           "' is not a micro-kernel this CPU can run; expected avx512f, avx2+fma or generic (up to what the CPU has)");
  return gemm::kernel_name();
}

}  // namespace gx::ops
