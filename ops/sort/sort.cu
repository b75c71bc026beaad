// CUDA sort (sort_keys.h): the row sort of NOTE [ Row sorts on CUDA ]
// (sort_cuda.cuh) and the device-wide and segmented CUB radix sorts behind it.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>
#include <climits>

#include "sort_cuda.cuh"

namespace gx::ops {
namespace {

using sortkey::Codec;
using sortkey::load_bits;
using sortkey::store_bits;

// The first `keep` of each sorted row: values decoded from the keys (special
// keys read from x at their index) and the indices widened to int64.
template <typename K>
__global__ void __launch_bounds__(kThreads) sort_post_kernel(const char* __restrict__ x, const Codec c, int64_t rows,
                                                             int64_t n, int64_t keep, K flip, const K* __restrict__ keys,
                                                             const int32_t* __restrict__ idx, char* __restrict__ values,
                                                             int64_t* __restrict__ indices) {
  const int64_t total = rows * keep, stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total; i += stride) {
    int64_t r = 0, s = i;  // the row, and the element's place in the sorted rows
    if (keep != n) {
      r = i / keep;
      s = r * n + (i - r * keep);
    }
    const uint64_t k = static_cast<K>(keys[s] ^ flip);
    const int32_t id = idx[s];
    uint64_t v;
    if (c.special(k)) {
      if (keep == n) r = i / n;
      v = load_bits(x + (r * n + id) * c.item, c.item);
    } else {
      v = c.decode(k);
    }
    store_bits(values + i * c.item, c.item, v);
    indices[i] = id;
  }
}

__global__ void segment_offsets_kernel(int* offsets, int64_t count, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < count) offsets[i] = static_cast<int>(i * n);
}

template <typename K>
int segmented_sort(K* const keys[2], int32_t* const vals[2], int64_t total, int64_t segments, const int* offsets,
                   int end_bit, int device, cudaStream_t stream) {
  cub::DoubleBuffer<K> dk(keys[0], keys[1]);
  cub::DoubleBuffer<int32_t> dv(vals[0], vals[1]);
  size_t bytes = 0;
  const int items = static_cast<int>(total), segs = static_cast<int>(segments);
  cub_check(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, bytes, dk, dv, items, segs, offsets, offsets + 1, 0, end_bit,
                                                     stream),
            "cub::DeviceSegmentedRadixSort::SortPairs");
  Tensor tmp = scratch(static_cast<int64_t>(bytes), device);
  cub_check(cub::DeviceSegmentedRadixSort::SortPairs(tmp.data_ptr(), bytes, dk, dv, items, segs, offsets, offsets + 1, 0,
                                                     end_bit, stream),
            "cub::DeviceSegmentedRadixSort::SortPairs");
  GX_CHECK(dk.selector == dv.selector, "cub::DeviceSegmentedRadixSort left keys and values in different buffers");
  return dk.selector;
}

// Rows of at most 2^31 - 1 elements through CUB's device-wide sorts, in
// passes of at most 2^31 - 1 elements (CUB counts in int).
template <typename K>
void sort_rows_radix(const char* x, const Codec& c, int64_t rows, int64_t n, bool descending, int64_t keep,
                     char* values, int64_t* indices, int device, cudaStream_t stream) {
  const K flip = descending ? static_cast<K>(c.mask()) : K(0);
  const bool per_row = rows < 64 || n >= (int64_t{1} << 20);
  const int64_t pass_rows = std::max<int64_t>(1, std::min<int64_t>(rows, INT_MAX / n));
  const int64_t cap = pass_rows * n;
  Tensor kbuf = scratch(2 * cap * static_cast<int64_t>(sizeof(K)), device);
  Tensor vbuf = scratch(2 * cap * static_cast<int64_t>(sizeof(int32_t)), device);
  K* const keys[2] = {static_cast<K*>(kbuf.data_ptr()), static_cast<K*>(kbuf.data_ptr()) + cap};
  int32_t* const vals[2] = {static_cast<int32_t*>(vbuf.data_ptr()), static_cast<int32_t*>(vbuf.data_ptr()) + cap};
  Tensor obuf;
  int* offsets = nullptr;
  if (!per_row) {
    obuf = scratch((pass_rows + 1) * static_cast<int64_t>(sizeof(int)), device);
    offsets = static_cast<int*>(obuf.data_ptr());
    segment_offsets_kernel<<<grid_for(pass_rows + 1), kThreads, 0, stream>>>(offsets, pass_rows + 1, n);
    GX_CHECK_LAUNCH();
  }
  for (int64_t r0 = 0; r0 < rows; r0 += pass_rows) {
    const int64_t nr = std::min(pass_rows, rows - r0), total = nr * n;
    const char* xr = x + r0 * n * c.item;
    sort_prep_kernel<K><<<grid_for(total), kThreads, 0, stream>>>(xr, c, total, n, flip, keys[0], vals[0]);
    GX_CHECK_LAUNCH();
    int sel = -1;
    if (per_row) {
      for (int64_t r = 0; r < nr; ++r) {
        K* const kr[2] = {keys[0] + r * n, keys[1] + r * n};
        int32_t* const vr[2] = {vals[0] + r * n, vals[1] + r * n};
        const int s = radix_sort_pairs<K>(kr, vr, n, c.bits, device, stream);
        GX_CHECK(sel < 0 || s == sel, "cub::DeviceRadixSort left rows in different buffers");
        sel = s;
      }
    } else {
      sel = segmented_sort<K>(keys, vals, total, nr, offsets, c.bits, device, stream);
    }
    sort_post_kernel<K><<<grid_for(nr * keep), kThreads, 0, stream>>>(
        xr, c, nr, n, keep, flip, keys[sel], vals[sel], values + r0 * keep * c.item, indices + r0 * keep);
    GX_CHECK_LAUNCH();
  }
}

}  // namespace

template <typename K>
int radix_sort_pairs(K* const keys[2], int32_t* const vals[2], int64_t n, int end_bit, int device, cudaStream_t stream) {
  cub::DoubleBuffer<K> dk(keys[0], keys[1]);
  cub::DoubleBuffer<int32_t> dv(vals[0], vals[1]);
  size_t bytes = 0;
  cub_check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, n, 0, end_bit, stream), "cub::DeviceRadixSort::SortPairs");
  Tensor tmp = scratch(static_cast<int64_t>(bytes), device);
  cub_check(cub::DeviceRadixSort::SortPairs(tmp.data_ptr(), bytes, dk, dv, n, 0, end_bit, stream),
            "cub::DeviceRadixSort::SortPairs");
  GX_CHECK(dk.selector == dv.selector, "cub::DeviceRadixSort left keys and values in different buffers");
  return dk.selector;
}

template int radix_sort_pairs<uint32_t>(uint32_t* const[2], int32_t* const[2], int64_t, int, int, cudaStream_t);
template int radix_sort_pairs<uint64_t>(uint64_t* const[2], int32_t* const[2], int64_t, int, int, cudaStream_t);

void sort_rows_cuda(const char* x, ScalarType dtype, int64_t rows, int64_t n, bool descending, int64_t keep, char* values,
                    int64_t* indices, int device) {
  if (rows == 0 || n == 0 || keep == 0) return;
  const Codec c = sortkey::codec_of(dtype);
  cudaStream_t stream = current_stream(device);
  if (block_sort(x, c, rows, n, descending, keep, values, indices, stream)) return;
  GX_CHECK(n <= INT_MAX, "rows of ", n, " elements are too long to sort on CUDA (at most 2^31 - 1)");
  if (c.item <= 4) sort_rows_radix<uint32_t>(x, c, rows, n, descending, keep, values, indices, device, stream);
  else sort_rows_radix<uint64_t>(x, c, rows, n, descending, keep, values, indices, device, stream);
}

void sort_cuda(const Tensor& self, bool descending, const Tensor& values, const Tensor& indices) {
  const Rows r = rows_of(self, "sort");
  check_rows_out(self, values, r.n, self.dtype(), "sort", "values");
  check_rows_out(self, indices, r.n, kInt64, "sort", "indices");
  if (r.rows == 0 || r.n == 0) return;
  const int device = self.device().index;
  DeviceGuard guard(device);
  sort_rows_cuda(static_cast<const char*>(self.data_ptr()), self.dtype(), r.rows, r.n, descending, r.n,
                 static_cast<char*>(values.data_ptr()), static_cast<int64_t*>(indices.data_ptr()), device);
}

}  // namespace gx::ops
