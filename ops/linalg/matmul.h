// matmul's entry points. lib/ops/linalg.ts has broadcast the batch dims and
// flattened them: self is [bs, m, k], other [bo, k, n], out [b, m, n], each
// contiguous, where bs and bo are b or 1 (1: the one matrix is used for every
// batch, a stride of 0). float32 (TF32 tensor cores when allow_tf32), float64,
// float16 and bfloat16 (accumulating in float).
#pragma once
#include <gpuext/extension.h>

namespace gx::ops {

void matmul_cpu(const Tensor& self, const Tensor& other, bool allow_tf32, const Tensor& out);
void matmul_cuda(const Tensor& self, const Tensor& other, bool allow_tf32, const Tensor& out);

namespace linalg {

struct MatmulShape {
  int64_t batch, m, k, n;
  int64_t stride_self, stride_other;  // elements between batches (0: broadcast)
};

inline MatmulShape check_matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  GX_CHECK(a.dim() == 3 && b.dim() == 3 && out.dim() == 3, "matmul: expected 3-d operands (batch, rows, cols), got ",
           a.sizes(), ", ", b.sizes(), " and out ", out.sizes());
  GX_CHECK(a.dtype() == b.dtype() && a.dtype() == out.dtype(), "matmul: dtypes differ: ", a.dtype(), ", ", b.dtype(),
           " and out ", out.dtype());
  GX_CHECK(a.is_contiguous() && b.is_contiguous() && out.is_contiguous(), "matmul: operands must be contiguous");
  const int64_t batch = out.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  GX_CHECK(b.size(1) == k, "matmul: inner dimensions differ: ", a.sizes(), " @ ", b.sizes());
  GX_CHECK(out.size(1) == m && out.size(2) == n, "matmul: out is ", out.sizes(), ", expected [", batch, ", ", m, ", ", n, "]");
  GX_CHECK((a.size(0) == batch || a.size(0) == 1) && (b.size(0) == batch || b.size(0) == 1),
           "matmul: batch sizes ", a.size(0), " and ", b.size(0), " do not match out's ", batch);
  return MatmulShape{batch, m, k, n, a.size(0) == 1 ? 0 : m * k, b.size(0) == 1 ? 0 : k * n};
}

}  // namespace linalg
}  // namespace gx::ops
