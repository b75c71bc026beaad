// matmul's checks (ops/op-list.js has its schema). lib/ops/linalg/matmul.ts has broadcast the batch dims and
// flattened them: self is [bs, m, k], other [bo, k, n], out [b, m, n], where
// bs and bo are b or 1 (1: the one matrix is used for every batch, a stride of
// 0); a 2-d operand is one matrix (batch 1), so plain matrix products need no
// views. out is contiguous; on CUDA self and other are too, while the CPU
// takes them with any strides (transposed and sliced views: matmul_cpu.cpp). float32 (TF32 tensor cores when allow_tf32), float64,
// float16 and bfloat16 (accumulating in float).
#pragma once
#include <utility>

#include <gpuext/extension.h>

#include "../ops.h"

namespace gx::ops {

namespace linalg {

struct MatmulShape {
  int64_t batch, m, k, n;
  int64_t stride_self, stride_other;  // elements between batches (0: broadcast)
};

// [batch, rows, cols] of a 3-d operand, or [1, rows, cols] of a 2-d one.
struct Dims3 {
  int64_t batch, rows, cols;
};
inline Dims3 dims3(const Tensor& t) {
  if (t.dim() == 2) return Dims3{1, t.size(0), t.size(1)};
  return Dims3{t.size(0), t.size(1), t.size(2)};
}

// `strided`: self and other may have any strides (the CPU); stride_self and
// stride_other are then their batch strides as the tensors have them.
// trans_a (trans_b): a (b) holds the operand's transpose, [batch, k, m] ([batch, n, k]).
inline MatmulShape check_matmul(const Tensor& a, const Tensor& b, const Tensor& out, bool trans_a, bool trans_b,
                                bool strided = false) {
  const auto ok_dim = [](const Tensor& t) { return t.dim() == 2 || t.dim() == 3; };
  GX_CHECK(ok_dim(a) && ok_dim(b) && ok_dim(out), "matmul: expected 2-d or 3-d (batch, rows, cols) operands, got ",
           a.sizes(), ", ", b.sizes(), " and out ", out.sizes());
  GX_CHECK(a.dtype() == b.dtype() && a.dtype() == out.dtype(), "matmul: dtypes differ: ", a.dtype(), ", ", b.dtype(),
           " and out ", out.dtype());
  GX_CHECK((strided || (a.is_contiguous() && b.is_contiguous())) && out.is_contiguous(),
           "matmul: operands must be contiguous");
  Dims3 da = dims3(a), db = dims3(b);
  const Dims3 dout = dims3(out);
  if (trans_a) std::swap(da.rows, da.cols);
  if (trans_b) std::swap(db.rows, db.cols);
  const int64_t batch = dout.batch, m = da.rows, k = da.cols, n = db.cols;
  GX_CHECK(db.rows == k, "matmul: inner dimensions differ: ", a.sizes(), " @ ", b.sizes());
  GX_CHECK(dout.rows == m && dout.cols == n, "matmul: out is ", out.sizes(), ", expected [", batch, ", ", m, ", ", n, "]");
  GX_CHECK((da.batch == batch || da.batch == 1) && (db.batch == batch || db.batch == 1),
           "matmul: batch sizes ", da.batch, " and ", db.batch, " do not match out's ", batch);
  if (strided) {
    return MatmulShape{batch, m, k, n, da.batch == 1 || a.dim() == 2 ? 0 : a.strides()[0],
                       db.batch == 1 || b.dim() == 2 ? 0 : b.strides()[0]};
  }
  return MatmulShape{batch, m, k, n, da.batch == 1 ? 0 : m * k, db.batch == 1 ? 0 : k * n};
}

}  // namespace linalg
}  // namespace gx::ops
