// Launchers for the core's own CUDA kernels (csrc/cuda/*.cu). Every launcher
// takes the stream, checks the launch and throws gx::core::Error on failure.
// Pointers are already offset to element [0, ...].
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/dtype.h"
#include "base/layout.h"
#include "cuda/runtime.h"

namespace gx::core::cuda {

// dst[dst_layout(i)] = src[src_layout(i)] for i < numel, byte-wise per element.
void launch_strided_copy(void* dst, const Layout& dst_layout, const void* src,
                         const Layout& src_layout, size_t itemsize, int64_t numel,
                         Stream stream);
// Every element of dst (strided) gets the bit pattern `bits` (low itemsize bytes).
void launch_fill(void* dst, const Layout& layout, size_t itemsize, uint64_t bits,
                 int64_t numel, Stream stream);
// Contiguous dst[i] = cast<dtype>(start + i * step): arange.
void launch_affine(void* dst, DType dtype, int64_t n, double start, double step,
                   Stream stream);
// Contiguous int64 dst[i] = start + i * step counted in int64 (wrapping never
// happens: the caller checked the last value): arange past 2^53, where
// float64's start + i * step is no longer exact.
void launch_affine_int64(int64_t* dst, int64_t n, int64_t start, int64_t step, Stream stream);
// Contiguous dst[i]: n points from start to end inclusive, the second half
// computed from the end so both endpoints are exact (as torch.linspace).
void launch_linspace(void* dst, DType dtype, int64_t n, double start, double end,
                     Stream stream);

}  // namespace gx::core::cuda
