// CUDA bincount and histc: NOTE [ Histograms on CUDA ] in histogram.h.
#include "histogram.h"
#include "index_launch.cuh"

namespace gx::ops {
namespace {

constexpr int64_t kSharedBytes = 48 * 1024;  // without opting in to more
constexpr int kUnroll = 4;                   // elements each thread loads before it adds them

__device__ __forceinline__ void add_to(unsigned int* p, unsigned int v) { atomicAdd(p, v); }
__device__ __forceinline__ void add_to(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void add_to(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void add_to(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

// S: the type of the private bins (shared memory), T: the output's.
template <typename S, typename T, typename Bin, typename Weight>
__global__ void __launch_bounds__(kThreads) histogram_shared_kernel(int64_t n, int64_t bins, Bin bin, Weight weight, T* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  S* h = reinterpret_cast<S*>(smem);
  for (int64_t i = threadIdx.x; i < bins; i += kThreads) h[i] = S(0);
  __syncthreads();
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; l < n; l += stride * kUnroll) {
    int64_t b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) b[u] = l + u * stride < n ? bin(l + u * stride) : -1;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (b[u] >= 0) add_to(h + b[u], static_cast<S>(weight(l + u * stride)));
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < bins; i += kThreads)
    if (h[i] != S(0)) add_to(out + i, static_cast<T>(h[i]));
}

template <typename T, typename Bin, typename Weight>
__global__ void __launch_bounds__(kThreads) histogram_global_kernel(int64_t n, Bin bin, Weight weight, T* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; l < n; l += stride) {
    const int64_t b = bin(l);
    if (b >= 0) add_to(out + b, weight(l));
  }
}

template <typename S, typename T, typename Bin, typename Weight>
void histogram(const Tensor& out, int64_t n, const Bin& bin, const Weight& weight) {
  if (n == 0) return;
  const int device = out.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  const int64_t bins = out.numel();
  T* o = static_cast<T*>(out.data_ptr());
  const int64_t shared = bins * static_cast<int64_t>(sizeof(S));
  if (shared <= kSharedBytes) {
    // Enough blocks to fill the GPU, not so many that flushing the private bins costs much.
    const int64_t want = (n + kThreads * kUnroll - 1) / (kThreads * kUnroll);
    const int64_t most = static_cast<int64_t>(sm_count(device)) * 8;
    const unsigned blocks = static_cast<unsigned>(want < 1 ? 1 : want > most ? most : want);
    histogram_shared_kernel<S, T><<<blocks, kThreads, static_cast<size_t>(shared), stream>>>(n, bins, bin, weight, o);
  } else {
    histogram_global_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(n, bin, weight, o);
  }
  GX_CHECK_LAUNCH();
}

void check_input(const Tensor& self, const Tensor& out) {
  GX_CHECK(self.dim() == 1 && self.is_contiguous(), "self must be 1-d and contiguous, got shape ", self.sizes());
  GX_CHECK(out.dim() == 1 && out.is_contiguous(), "out must be 1-d and contiguous, got shape ", out.sizes());
  GX_CHECK(self.device() == out.device(), "self on ", self.device(), " but out on ", out.device());
}

}  // namespace

void bincount_cuda(const Tensor& self, const std::optional<Tensor>& weights, const Tensor& out) {
  check_input(self, out);
  const int64_t n = self.numel();
  const BincountBin bin{static_cast<const char*>(self.data_ptr()), self.dtype(), itemsize(self.dtype())};
  if (!weights.has_value()) {
    GX_CHECK(out.dtype() == kInt64, "counts are int64, got out of ", out.dtype());
    histogram<unsigned int, int64_t>(out, n, bin, UnitWeight<int64_t>{});
    return;
  }
  const Tensor& w = *weights;
  GX_CHECK(w.dtype() == out.dtype() && w.numel() == n && w.is_contiguous() && w.device() == out.device(),
           "weights must be contiguous, of self's length, out's dtype and device");
  if (out.dtype() == kFloat32) histogram<float, float>(out, n, bin, ArrayWeight<float>{static_cast<const float*>(w.data_ptr())});
  else if (out.dtype() == kFloat64) histogram<double, double>(out, n, bin, ArrayWeight<double>{static_cast<const double*>(w.data_ptr())});
  else GX_CHECK(false, "weighted counts are float32 or float64, got ", out.dtype());
}

void histc_cuda(const Tensor& self, double min, double max, const Tensor& out) {
  check_input(self, out);
  GX_CHECK(out.dtype() == kInt64, "counts are int64, got out of ", out.dtype());
  GX_CHECK(max > min, "max (", max, ") must be larger than min (", min, ")");
  const ScalarType dtype = self.dtype();
  const auto run = [&](auto c) {
    using C = decltype(c);
    const HistcBin<C> bin{static_cast<const char*>(self.data_ptr()), dtype, itemsize(dtype), static_cast<C>(min), static_cast<C>(max), out.numel()};
    histogram<unsigned int, int64_t>(out, self.numel(), bin, UnitWeight<int64_t>{});
  };
  if (computes_as<float>(dtype)) run(0.0f);  // the bins in the dtype's compute type
  else run(0.0);
}

}  // namespace gx::ops
