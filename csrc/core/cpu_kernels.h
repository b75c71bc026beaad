// The core's CPU kernels, twins of csrc/cuda/kernels.h.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/dtype.h"
#include "base/layout.h"

namespace gx::core::cpu {

void strided_copy(void* dst, const Layout& dst_layout, const void* src, const Layout& src_layout,
                  size_t itemsize, int64_t numel);
void fill(void* dst, const Layout& layout, size_t itemsize, uint64_t bits, int64_t numel);
void affine(void* dst, DType dtype, int64_t n, double start, double step);
void affine_int64(int64_t* dst, int64_t n, int64_t start, int64_t step);
void linspace(void* dst, DType dtype, int64_t n, double start, double end);

}  // namespace gx::core::cpu
