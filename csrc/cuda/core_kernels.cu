// The core's own kernels: strided copy, fill, arange (affine) and linspace.
// Launchers are declared in kernels.h; each runs on the stream it is given and
// checks its launch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "base/linspace_points.h"
#include "gpuext/float_to_int.h"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"

namespace gx::core::cuda {
namespace {

constexpr int kThreads = 256;

// Enough blocks to cover n with a grid-stride loop, capped so huge tensors
// reuse threads instead of launching millions of blocks.
unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

// Elements are moved as unsigned words of their size: copy and fill never
// need to know the dtype.
template <size_t N> struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

template <typename W>
__global__ void strided_copy_kernel(W* dst, Layout dl, const W* src, Layout sl, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    dst[layout_offset(dl, i)] = src[layout_offset(sl, i)];
  }
}

template <typename W>
__global__ void fill_kernel(W* dst, Layout l, W value, int64_t n, bool contiguous) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    dst[contiguous ? i : layout_offset(l, i)] = value;
  }
}

// Integers by NOTE [ Floats out of an integer's range ] (gpuext/float_to_int.h), as the CPU kernels convert.
template <typename T> __device__ T from_double(double v) {
  if constexpr (std::is_integral_v<T>) return float_to_int<T>(v);
  else return static_cast<T>(v);
}
// 16-bit floats by way of float32, as the CPU kernels and torch convert (NOTE [ JS numbers to
// 16-bit floats ] in lib/core/dtype.ts): __double2half rounds once from the double, and linspace(1.0004882812509095, ...)
// as float16 gave 1.0009765625 on CUDA where the CPU gives 1 (found by the fuzz suite).
template <> __device__ __half from_double<__half>(double v) { return __float2half(static_cast<float>(v)); }
template <> __device__ __nv_bfloat16 from_double<__nv_bfloat16>(double v) {
  return __float2bfloat16(static_cast<float>(v));
}
template <> __device__ bool from_double<bool>(double v) { return v != 0.0; }

// a + b * c with the product rounded on its own, as the CPU kernels compute it:
// nvcc would fuse it into one FMA, and arange(-1, 1, 0.1) gave 5.6e-17 on CUDA
// where the CPU gives 0 (found by the fuzz suite).
__device__ __forceinline__ double mul_add_unfused(double a, double b, double c) { return __dadd_rn(a, __dmul_rn(b, c)); }

template <typename T>
__global__ void affine_kernel(T* dst, int64_t n, double start, double step) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    dst[i] = from_double<T>(mul_add_unfused(start, static_cast<double>(i), step));
  }
}

// In uint64, where overflow is defined; the caller checked that every value fits int64.
__global__ void affine_int64_kernel(int64_t* dst, int64_t n, int64_t start, int64_t step) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    dst[i] = static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
  }
}

// Stores the points (NOTE [ Linspace as torch computes it ] in base/linspace_points.h).
template <typename T, typename Points>
__global__ void linspace_kernel(T* dst, int64_t n, Points points) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    dst[i] = from_double<T>(points(i));
  }
}

// float16 and bfloat16 rounding for linspace's 16-bit arithmetic.
struct RoundHalf {
  __host__ __device__ float operator()(float f) const { return __half2float(__float2half_rn(f)); }
};
struct RoundBFloat16 {
  __host__ __device__ float operator()(float f) const { return __bfloat162float(__float2bfloat16_rn(f)); }
};

// Calls f(T{}) with the C++ type of `dtype`.
template <typename F>
void dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(__half{});
    case DType::BFloat16: return f(__nv_bfloat16{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Bool: return f(bool{});
  }
  GX_CORE_INTERNAL_ASSERT(false, "unhandled dtype");
}

template <typename F>
void dispatch_word(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(Word<1>::type{});
    case 2: return f(Word<2>::type{});
    case 4: return f(Word<4>::type{});
    case 8: return f(Word<8>::type{});
  }
  GX_CORE_INTERNAL_ASSERT(false, "unsupported item size");
}

}  // namespace

void launch_strided_copy(void* dst, const Layout& dst_layout, const void* src,
                         const Layout& src_layout, size_t itemsize, int64_t numel,
                         Stream stream) {
  if (numel == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  if (layout_is_contiguous(dst_layout) && layout_is_contiguous(src_layout)) {
    GX_CUDA_CHECK(cudaMemcpyAsync(dst, src, numel * itemsize, cudaMemcpyDeviceToDevice, s));
    return;
  }
  dispatch_word(itemsize, [&](auto w) {
    using W = decltype(w);
    strided_copy_kernel<W><<<blocks_for(numel), kThreads, 0, s>>>(
        static_cast<W*>(dst), dst_layout, static_cast<const W*>(src), src_layout, numel);
  });
  GX_CUDA_CHECK(cudaGetLastError());
}

void launch_fill(void* dst, const Layout& layout, size_t itemsize, uint64_t bits,
                 int64_t numel, Stream stream) {
  if (numel == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const bool contiguous = layout_is_contiguous(layout);
  if (contiguous && itemsize == 1) {
    GX_CUDA_CHECK(cudaMemsetAsync(dst, static_cast<int>(bits & 0xff), numel, s));
    return;
  }
  dispatch_word(itemsize, [&](auto w) {
    using W = decltype(w);
    fill_kernel<W><<<blocks_for(numel), kThreads, 0, s>>>(static_cast<W*>(dst), layout,
                                                        static_cast<W>(bits), numel, contiguous);
  });
  GX_CUDA_CHECK(cudaGetLastError());
}

void launch_affine(void* dst, DType dtype, int64_t n, double start, double step,
                   Stream stream) {
  if (n == 0) return;
  dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    affine_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(dst), n, start, step);
  });
  GX_CUDA_CHECK(cudaGetLastError());
}

void launch_affine_int64(int64_t* dst, int64_t n, int64_t start, int64_t step, Stream stream) {
  if (n == 0) return;
  affine_int64_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(dst, n, start, step);
  GX_CUDA_CHECK(cudaGetLastError());
}

void launch_linspace(void* dst, DType dtype, int64_t n, double start, double end,
                     Stream stream) {
  if (n == 0) return;
  using namespace gx::core::linspace;
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::Float32:
      linspace_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<float*>(dst), n, FloatPoints(start, end, n));
      break;
    case DType::Float16:
      linspace_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__half*>(dst), n,
                                                          SixteenBitPoints<RoundHalf>(start, end, n));
      break;
    case DType::BFloat16:
      linspace_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(dst), n,
                                                          SixteenBitPoints<RoundBFloat16>(start, end, n));
      break;
    default:
      dispatch_dtype(dtype, [&](auto t) {
        using T = decltype(t);
        linspace_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(dst), n, DoublePoints(start, end, n));
      });
  }
  GX_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gx::core::cuda
