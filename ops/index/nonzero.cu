// CUDA nonzero and masked_select: NOTE [ Compaction ] in select_iter.h.
// Count, scan, one read of the total (the sync), allocate, write.
#include "index_iter.h"
#include "index_launch.cuh"
#include "select_iter.h"

namespace gx::ops {
namespace {

constexpr int kLaneItems = 16;               // elements per lane and segment
constexpr int kSegment = 32 * kLaneItems;    // elements per warp (a segment)
constexpr int kWarps = kThreads / 32;        // segments per block
constexpr int kScanThreads = 1024;

struct Shape {
  int64_t sizes[kMaxDims];  // outermost first
  int ndim;
};

// Whether element e is kept: masked_select reads the mask (operand 1), nonzero self (operand 0).
template <bool kMasked, typename I> __device__ __forceinline__ bool kept(const SelectWalk& w, I e, int64_t& a) {
  int64_t b;
  if (w.contiguous) {
    a = static_cast<int64_t>(e) * w.item;
    b = static_cast<int64_t>(e);
  } else {
    w.offsets<I>(e, a, b);
  }
  if constexpr (kMasked) return *reinterpret_cast<const bool*>(w.data[1] + b);
  else return load_as<bool>(w.data[0] + a, w.dtype[0]);
}

template <bool kMasked, typename I> __device__ __forceinline__ void count_body(const SelectWalk& w, int64_t nseg, int32_t* counts) {
  const int64_t seg = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (seg >= nseg) return;
  const int lane = threadIdx.x % 32;
  const I base = static_cast<I>(seg * kSegment);
  const I n = static_cast<I>(w.numel);
  int count = 0;
#pragma unroll 4
  for (int j = 0; j < kLaneItems; ++j) {
    const I e = base + static_cast<I>(j * 32 + lane);
    int64_t a;
    const bool k = e < n && kept<kMasked, I>(w, e, a);
    count += __popc(__ballot_sync(0xffffffffu, k));
  }
  if (lane == 0) counts[seg] = count;
}

template <bool kMasked>
__global__ void __launch_bounds__(kThreads) count_kernel(const __grid_constant__ SelectWalk w, int64_t nseg, int32_t* counts) {
  if (w.numel <= 0x7fffffffll) count_body<kMasked, uint32_t>(w, nseg, counts);
  else count_body<kMasked, uint64_t>(w, nseg, counts);
}

// offsets[i] = counts[0] + ... + counts[i - 1] for i in [0, n]; one block.
__global__ void __launch_bounds__(kScanThreads) scan_kernel(const int32_t* counts, int64_t n, int64_t* offsets) {
  __shared__ int64_t warp_sums[kScanThreads / 32];
  __shared__ int64_t carry;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  if (tid == 0) carry = 0;
  __syncthreads();
  for (int64_t base = 0; base < n; base += kScanThreads) {
    const int64_t i = base + tid;
    const int64_t v = i < n ? counts[i] : 0;
    int64_t incl = v;
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
      const int64_t up = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += up;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
      int64_t s = warp_sums[lane];
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        const int64_t up = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o) s += up;
      }
      warp_sums[lane] = s;  // inclusive over warps
    }
    __syncthreads();
    const int64_t before = (warp > 0 ? warp_sums[warp - 1] : 0) + carry;
    if (i < n) offsets[i] = before + incl - v;
    __syncthreads();
    if (tid == kScanThreads - 1) carry = before + incl;
    __syncthreads();
  }
  if (tid == 0) offsets[n] = carry;
}

template <bool kMasked, typename I>
__device__ __forceinline__ void write_body(const SelectWalk& w, int64_t nseg, const int64_t* offsets, char* out,
                                           int64_t item, const Shape& shape) {
  const int64_t seg = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (seg >= nseg) return;
  const int lane = threadIdx.x % 32;
  const unsigned below = (1u << lane) - 1u;
  const I base = static_cast<I>(seg * kSegment);
  const I n = static_cast<I>(w.numel);
  int64_t pos = offsets[seg];
  for (int j = 0; j < kLaneItems; ++j) {
    const I e = base + static_cast<I>(j * 32 + lane);
    int64_t a = 0;
    const bool k = e < n && kept<kMasked, I>(w, e, a);
    const unsigned bits = __ballot_sync(0xffffffffu, k);
    if (k) {
      const int64_t p = pos + __popc(bits & below);
      if constexpr (kMasked) copy_element(out + p * item, w.data[0] + a, item);
      else unravel_to<I>(e, shape.sizes, shape.ndim, reinterpret_cast<int64_t*>(out) + p * shape.ndim);
    }
    pos += __popc(bits);
    if (bits == 0 && base + static_cast<I>(j * 32) >= n) break;
  }
}

template <bool kMasked>
__global__ void __launch_bounds__(kThreads) write_kernel(const __grid_constant__ SelectWalk w, int64_t nseg, const int64_t* offsets,
                                                         char* out, int64_t item, const __grid_constant__ Shape shape) {
  if (w.numel <= 0x7fffffffll) write_body<kMasked, uint32_t>(w, nseg, offsets, out, item, shape);
  else write_body<kMasked, uint64_t>(w, nseg, offsets, out, item, shape);
}

// The kept elements of w in C order: masked_select's values ([n], self's dtype) or nonzero's indices ([n, ndim]).
template <bool kMasked> Tensor compact(const Tensor& self, const SelectWalk& w) {
  const int device = self.device().index;
  const int64_t ndim = self.dim();
  const auto result = [&](int64_t n) {
    return kMasked ? empty({n}, self.dtype(), self.device()) : empty({n, ndim}, kInt64, self.device());
  };
  if (w.numel == 0) return result(0);
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  const int64_t nseg = (w.numel + kSegment - 1) / kSegment;
  const unsigned blocks = static_cast<unsigned>((nseg + kWarps - 1) / kWarps);
  Tensor counts = empty({nseg}, kInt32, self.device());
  Tensor offsets = empty({nseg + 1}, kInt64, self.device());
  auto* c = static_cast<int32_t*>(counts.data_ptr());
  auto* o = static_cast<int64_t*>(offsets.data_ptr());
  count_kernel<kMasked><<<blocks, kThreads, 0, stream>>>(w, nseg, c);
  scan_kernel<<<1, kScanThreads, 0, stream>>>(c, nseg, o);
  GX_CHECK_LAUNCH();
  int64_t n = 0;
  GX_CHECK(cudaMemcpyAsync(&n, o + nseg, sizeof(n), cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
               cudaStreamSynchronize(stream) == cudaSuccess,
           "reading the count back failed");
  Tensor out = result(n);
  if (n == 0) return out;
  Shape shape{};
  shape.ndim = static_cast<int>(ndim);
  for (int64_t d = 0; d < ndim; ++d) shape.sizes[d] = self.sizes()[d];
  write_kernel<kMasked><<<blocks, kThreads, 0, stream>>>(w, nseg, o, static_cast<char*>(out.data_ptr()),
                                                          itemsize(self.dtype()), shape);
  GX_CHECK_LAUNCH();
  return out;
}

}  // namespace

Tensor nonzero_cuda(const Tensor& self) {
  return compact<false>(self, make_select_walk(self, nullptr));
}

Tensor masked_select_cuda(const Tensor& self, const Tensor& mask) {
  GX_CHECK(mask.dtype() == kBool, "the mask must be bool, got ", mask.dtype());
  return compact<true>(self, make_select_walk(self, &mask));
}

}  // namespace gx::ops
