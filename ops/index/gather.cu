// CUDA gather and scatter (index_iter.h): kUnroll index positions per
// thread, in a grid-stride loop, dividing positions in 32 bits (by
// multiplication) where they fit. Out of
// range index values are skipped and the first one seen is recorded, then
// read back after the kernel (index_launch.cuh: a sync per call). scatter
// with reduce add uses atomicAdd for float32, float64, int32 and int64 and
// the compare-and-swap loops of atomics.cuh for the other dtypes
// (scatter_reduce.cu); the order of the adds is unspecified, so float sums
// may differ in the last bits from run to run.
#include "atomics.cuh"
#include "index_iter.h"
#include "index_launch.cuh"

namespace gx::ops {
namespace {

constexpr int kUnroll = 4;  // positions per thread: their loads are all issued before any is used

template <int kItem> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };

// The kUnroll positions base, base + kThreads, ... (those below n): each one's
// index value k (-1 where past n or out of range, recorded in `bad`), and its
// byte offsets in the walked operand (w) and the indexed one (x).
template <typename I>
__device__ __forceinline__ void read_indices(const IndexIter& it, I base, I n, int64_t (&k)[kUnroll], int64_t (&w)[kUnroll],
                                             int64_t (&x)[kUnroll], unsigned long long* bad) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const I l = base + static_cast<I>(u * kThreads);
    k[u] = -1;
    if (l < n) {
      int64_t i;
      it.offsets<I>(l, i, w[u], x[u]);
      k[u] = it.value(i);
      if (!it.in_range(k[u])) {
        record_bad(bad, k[u]);
        k[u] = -1;
      }
    }
  }
}

// Each thread takes kUnroll positions kThreads apart (coalesced), reads all
// their index values, then all the picked elements, then writes them.
template <typename I, int kItem>
__device__ __forceinline__ void gather_body(const IndexIter& it, unsigned long long* bad) {
  using E = typename Bits<kItem>::type;
  const I n = static_cast<I>(it.numel);
  const I stride = static_cast<I>(gridDim.x) * kThreads * kUnroll;
  for (I base = static_cast<I>(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < n; base += stride) {
    int64_t k[kUnroll], w[kUnroll], x[kUnroll];
    read_indices<I>(it, base, n, k, w, x, bad);
    E v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (k[u] >= 0) v[u] = *reinterpret_cast<const E*>(it.indexed + x[u] + k[u] * it.axis_stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (k[u] >= 0) *reinterpret_cast<E*>(it.walked + w[u]) = v[u];
  }
}

// Four consecutive positions of an innermost run at once (gather_vec_ok
// says when): one 16- or 32-byte read of their index values, four picks, one
// vector write.
template <typename E> struct alignas(sizeof(E) * 4) Vec4 {
  E v[4];
};

template <typename I, int kItem>
__device__ __forceinline__ void gather_vec_body(const IndexIter& it, unsigned long long* bad) {
  using E = typename Bits<kItem>::type;
  const I groups = static_cast<I>(it.numel / 4);
  const I stride = static_cast<I>(gridDim.x) * kThreads;
  const int64_t xs0 = it.strides[2][0];
  for (I g = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; g < groups; g += stride) {
    int64_t i, w, x;
    it.offsets<I>(g * 4, i, w, x);
    int64_t k[4];
    if (it.index_dtype == kInt64) {
      const longlong2 a = *reinterpret_cast<const longlong2*>(it.index + i);
      const longlong2 b = *reinterpret_cast<const longlong2*>(it.index + i + 16);
      k[0] = a.x; k[1] = a.y; k[2] = b.x; k[3] = b.y;
    } else {
      const int4 a = *reinterpret_cast<const int4*>(it.index + i);
      k[0] = a.x; k[1] = a.y; k[2] = a.z; k[3] = a.w;
    }
    Vec4<E> v;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (it.wrap && k[u] < 0) k[u] += it.axis_size;
      if (!it.in_range(k[u])) {
        record_bad(bad, k[u]);  // as value() gives it: the host restores a wrapped one
        v.v[u] = E(0);
        continue;
      }
      v.v[u] = *reinterpret_cast<const E*>(it.indexed + x + u * xs0 + k[u] * it.axis_stride);
    }
    *reinterpret_cast<Vec4<E>*>(it.walked + w) = v;
  }
}

template <int kItem>
__global__ void __launch_bounds__(kThreads) gather_vec_kernel(const __grid_constant__ IndexIter it, unsigned long long* bad) {
  if (it.numel <= 0x7fffffffll) gather_vec_body<uint32_t, kItem>(it, bad);
  else gather_vec_body<uint64_t, kItem>(it, bad);
}

// Whether gather_vec_kernel fits: the innermost run is a multiple of 4
// positions, the index and the output walk it contiguously, and every group
// of 4 starts aligned for the vector read and write.
bool gather_vec_ok(const IndexIter& it, int64_t item) {
  if (it.ndim < 1 || it.sizes[0] % 4 != 0) return false;
  const int64_t ii = it.index_dtype == kInt64 ? 8 : 4;
  if (it.strides[0][0] != ii || it.strides[1][0] != item) return false;
  const int64_t ia = 16, wa = 4 * item;
  if (reinterpret_cast<uintptr_t>(it.index) % ia != 0 || reinterpret_cast<uintptr_t>(it.walked) % wa != 0) return false;
  for (int d = 1; d < it.ndim; ++d)
    if (it.strides[0][d] % ia != 0 || it.strides[1][d] % wa != 0) return false;
  return true;
}

// kItem: the element size in bytes (gather moves elements as they are).
template <int kItem>
__global__ void __launch_bounds__(kThreads) gather_kernel(const __grid_constant__ IndexIter it, unsigned long long* bad) {
  if (it.numel <= 0x7fffffffll) gather_body<uint32_t, kItem>(it, bad);
  else gather_body<uint64_t, kItem>(it, bad);
}

// As gather_body: the index values and src's elements of kUnroll positions first, then the writes (or atomics).
template <typename T, typename I>
__device__ __forceinline__ void scatter_body(const IndexIter& it, int64_t item, unsigned long long* bad) {
  using E = std::conditional_t<std::is_void_v<T>, uint64_t, T>;
  const I n = static_cast<I>(it.numel);
  const I stride = static_cast<I>(gridDim.x) * kThreads * kUnroll;
  for (I base = static_cast<I>(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < n; base += stride) {
    int64_t k[kUnroll], w[kUnroll], x[kUnroll];
    read_indices<I>(it, base, n, k, w, x, bad);
    if constexpr (std::is_void_v<T>) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (k[u] >= 0) copy_element(it.indexed + x[u] + k[u] * it.axis_stride, it.walked + w[u], item);
    } else {
      E v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (k[u] >= 0) v[u] = *reinterpret_cast<const E*>(it.walked + w[u]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (k[u] >= 0) atomic_apply(reinterpret_cast<T*>(it.indexed + x[u] + k[u] * it.axis_stride), v[u], ReduceSum{});
    }
  }
}

// T: the element type for add (reduce add), void for assign.
template <typename T>
__global__ void __launch_bounds__(kThreads) scatter_kernel(const __grid_constant__ IndexIter it, int64_t item,
                                                           unsigned long long* bad) {
  if (it.numel <= 0x7fffffffll) scatter_body<T, uint32_t>(it, item, bad);
  else scatter_body<T, uint64_t>(it, item, bad);
}

// Blocks for n positions, kUnroll per thread.
inline unsigned unrolled_blocks(int64_t n) {
  return blocks_for((n + kUnroll - 1) / kUnroll);
}

// Throws for a recorded bad index.
void check(const IndexIter& it, const BadIndex& b) {
  if (b.found) throw_out_of_range(it, b.value);
}

}  // namespace

void gather_cuda(const Tensor& self, int64_t axis, const Tensor& index, bool wrap, const Tensor& out) {
  const IndexIter it = make_index_iter(index, axis, out, self, wrap);
  if (it.numel == 0) return;
  const int64_t item = itemsize(self.dtype());
  check(it, run_checked(it.device, [&](cudaStream_t stream, unsigned long long* bad) {
    if (gather_vec_ok(it, item)) {
      const unsigned blocks = blocks_for(it.numel / 4);
      switch (item) {
        case 1: gather_vec_kernel<1><<<blocks, kThreads, 0, stream>>>(it, bad); break;
        case 2: gather_vec_kernel<2><<<blocks, kThreads, 0, stream>>>(it, bad); break;
        case 4: gather_vec_kernel<4><<<blocks, kThreads, 0, stream>>>(it, bad); break;
        default: gather_vec_kernel<8><<<blocks, kThreads, 0, stream>>>(it, bad); break;
      }
      return;
    }
    const unsigned blocks = unrolled_blocks(it.numel);
    switch (item) {
      case 1: gather_kernel<1><<<blocks, kThreads, 0, stream>>>(it, bad); break;
      case 2: gather_kernel<2><<<blocks, kThreads, 0, stream>>>(it, bad); break;
      case 4: gather_kernel<4><<<blocks, kThreads, 0, stream>>>(it, bad); break;
      default: gather_kernel<8><<<blocks, kThreads, 0, stream>>>(it, bad); break;
    }
  }));
}

void scatter_cuda(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src, int64_t reduce) {
  GX_CHECK(reduce == kScatterAssign || reduce == kScatterAdd, "unknown reduction ", reduce);
  const ScalarType dtype = self.dtype();
  const bool native = dtype == kFloat32 || dtype == kFloat64 || dtype == kInt32 || dtype == kInt64;
  if (reduce == kScatterAdd && !native) {
    scatter_reduce_cuda(self, axis, index, src, kReduceSum);  // a compare-and-swap loop per add
    return;
  }
  const IndexIter it = make_index_iter(index, axis, src, self, false);
  if (it.numel == 0) return;
  const int64_t item = itemsize(dtype);
  check(it, run_checked(it.device, [&](cudaStream_t stream, unsigned long long* bad) {
    const unsigned blocks = unrolled_blocks(it.numel);
    if (reduce == kScatterAssign) scatter_kernel<void><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else if (dtype == kFloat32) scatter_kernel<float><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else if (dtype == kFloat64) scatter_kernel<double><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else if (dtype == kInt32) scatter_kernel<int32_t><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else scatter_kernel<int64_t><<<blocks, kThreads, 0, stream>>>(it, item, bad);
  }));
}

}  // namespace gx::ops
