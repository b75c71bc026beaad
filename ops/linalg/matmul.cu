// CUDA matmul through cuBLAS (cublasGemmStridedBatchedEx). Row-major C = A B
// is column-major C^T = B^T A^T, so cuBLAS gets (other, self) with m and n
// swapped. A row-major buffer read column-major is its transpose: other's
// [k, n] buffer is B^T as cuBLAS wants it (no transpose, ld n) and self's
// [m, k] is A^T (ld k); when the tensor holds the operand's transpose instead
// (trans_other: [n, k]; trans_self: [k, m]) cuBLAS transposes it (ld k; ld m).
#include <climits>

#include <gpuext/cuda.h>

#include "cublas.h"
#include "matmul.h"

namespace gx::ops {

void matmul_cuda(const Tensor& self, const Tensor& other, bool allow_tf32, bool trans_self, bool trans_other,
                 const Tensor& out) {
  constexpr const char* kWhat = "matmul";
  const linalg::MatmulShape s = linalg::check_matmul(self, other, out, trans_self, trans_other);
  if (s.batch == 0 || s.m == 0 || s.n == 0) return;
  GX_CHECK(s.m <= INT_MAX && s.n <= INT_MAX && s.k <= INT_MAX && s.batch <= INT_MAX,
           "matmul: dimensions beyond 2^31 - 1 are not supported by cuBLAS: ", self.sizes(), " @ ", other.sizes());
  int type = 0, compute = 0;
  switch (out.dtype()) {
    case kFloat32: type = cublas::kR32F; compute = allow_tf32 ? cublas::kCompute32FFastTF32 : cublas::kCompute32F; break;
    case kFloat64: type = cublas::kR64F; compute = cublas::kCompute64F; break;
    case kFloat16: type = cublas::kR16F; compute = cublas::kCompute32F; break;
    case kBFloat16: type = cublas::kR16BF; compute = cublas::kCompute32F; break;
    default:
      GX_CHECK(false, "matmul: dtype ", out.dtype(), " is not supported on CUDA; expected float32, float64, float16 or bfloat16");
  }
  if (s.k == 0) {  // an empty sum: zeros (cuBLAS would leave C alone with k = 0)
    zero_(out);
    return;
  }
  const int device = out.device().index;
  DeviceGuard guard(device);  // cuBLAS works on the current device: the tensors'
  cudaStream_t stream = current_stream(device);
  cublas::Handle h = cublas::handle(kWhat, device, stream);
  const cublas::Api& api = cublas::api(kWhat);
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const bool dbl = compute == cublas::kCompute64F;
  const void* alpha = dbl ? static_cast<const void*>(&alpha_d) : static_cast<const void*>(&alpha_f);
  const void* beta = dbl ? static_cast<const void*>(&beta_d) : static_cast<const void*>(&beta_f);
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int op_other = trans_other ? cublas::kOpT : cublas::kOpN, op_self = trans_self ? cublas::kOpT : cublas::kOpN;
  const int ld_other = trans_other ? k : n, ld_self = trans_self ? m : k;
  if (s.batch == 1) {  // plain GEMM: cuBLAS's heuristics for it are the ones torch gets
    cublas::check(api.GemmEx(h, op_other, op_self, n, m, k, alpha, other.data_ptr(), type, ld_other, self.data_ptr(),
                             type, ld_self, beta, out.data_ptr(), type, n, compute, cublas::kGemmDefault),
                  kWhat, "cublasGemmEx");
    GX_CHECK_LAUNCH();
    return;
  }
  cublas::check(api.GemmStridedBatchedEx(h, op_other, op_self, n, m, k, alpha, other.data_ptr(), type, ld_other,
                                         s.stride_other, self.data_ptr(), type, ld_self, s.stride_self, beta,
                                         out.data_ptr(), type, n, s.m * s.n, static_cast<int>(s.batch), compute,
                                         cublas::kGemmDefault),
                kWhat, "cublasGemmStridedBatchedEx");
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
