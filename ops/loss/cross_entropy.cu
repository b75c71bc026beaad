// CUDA cross_entropy_loss and its backward (cross_entropy.h).
//
//   xent_rows_kernel      a warp per row (8 rows a block, grid-stride): max,
//                         sum of exp and (smoothing) sum of w lp over the
//                         row's classes in lane partials and a shuffle
//                         butterfly; writes the row's loss ('none': out; else
//                         its two terms to a scratch of the compute type, the
//                         nll's at m, the smoothing's at rows + m) and its logsumexp, and
//                         records a target out of range in the index ops'
//                         check record (index_launch.cuh), read back after the
//                         launch: the caller's error names the value.
//   xent_reduce_kernel    'sum' / 'mean': one block of kXentReduce threads
//                         sums the rows' two terms and the counted targets'
//                         weights in the fixed order of NOTE [ One order for
//                         the cross entropy's sums ], and combines them (NOTE
//                         [ The cross entropy's mean ]).
//   xent_backward_kernel  a warp per row: sum of the weights (smoothing), then
//                         each lane writes its classes' gradients.
//   xent_thread_rows_kernel, xent_thread_backward_kernel
//                         torch's [N, C, d...] layouts (D > 1): a thread per
//                         row, so that a warp reads 32 neighbouring d's of a
//                         class together; each row's sums as cross_entropy.h's
//                         one-thread replay of the warp (the CPU's code).
// Instantiations: float (float32, float16, bfloat16) and double; loads and
// stores go by runtime dtype.
#include "../common/cuda_loops.cuh"
#include "../index/index_launch.cuh"
#include "cross_entropy.h"

namespace gx::ops {
namespace {

constexpr int kRowsPerBlock = kThreads / kXentLanes;

// The xor butterfly xent_butterfly replays on the CPU: every lane ends with the same value.
template <typename C, typename Op> __device__ __forceinline__ C butterfly(C v, Op op) {
#pragma unroll
  for (int o = kXentLanes / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

XentBuf buf_of(const Tensor& t) { return xent_buf(std::optional<Tensor>(t)); }

// Row m's loss to out ('none'), or its two terms to the scratch [2, rows] for the reduction.
template <typename C> __device__ __forceinline__ void store_terms(const XentArgs& a, bool none, XentBuf out, C* scratch, int64_t m, XentTerms<C> r) {
  if (none) {
    store_as(out.p + m * out.item, out.dtype, xent_combine(a, r));
  } else {
    scratch[m] = r.nll;
    scratch[a.rows + m] = r.smooth;
  }
}

template <typename C>
__global__ void __launch_bounds__(kThreads) xent_rows_kernel(XentArgs a, bool none, XentBuf out, C* scratch, XentBuf lse,
                                                             unsigned long long* bad) {
  const int lane = threadIdx.x % kXentLanes;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kXentLanes; m < a.rows; m += step) {
    const int64_t base = xent_base(a, m), t = xent_target(a, m);
    C l = C(0);
    if (!a.log_probs) {
      const C mx = butterfly(xent_lane_max<C>(a, base, lane), XentMax{});
      l = xent_lse(mx, butterfly(xent_lane_sum_exp<C>(a, base, lane, mx), XentAdd{}));
    }
    XentTerms<C> r;
    if (xent_counts(a, t)) {
      if (a.smoothing != 0) r.smooth = -butterfly(xent_lane_sum_wlp<C>(a, base, lane, l), XentAdd{});
      r.nll = -(xent_w<C>(a, t) * (xent_x<C>(a, base, t) - l));
    } else if (t != a.ignore && lane == 0) {
      record_bad(bad, t);
    }
    if (lane != 0) continue;
    if (lse.p != nullptr) store_as(lse.p + m * lse.item, lse.dtype, l);
    store_terms(a, none, out, scratch, m, r);
  }
}

// A thread per row (D > 1): xent_row, the CPU's code.
template <typename C>
__global__ void __launch_bounds__(kThreads) xent_thread_rows_kernel(XentArgs a, bool none, XentBuf out, C* scratch, XentBuf lse,
                                                                    unsigned long long* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; m < a.rows; m += step) {
    const int64_t t = xent_target(a, m);
    if (t != a.ignore && !xent_in_range(a, t)) record_bad(bad, t);
    C l;
    const XentTerms<C> r = xent_row<C>(a, m, l);
    if (lse.p != nullptr) store_as(lse.p + m * lse.item, lse.dtype, l);
    store_terms(a, none, out, scratch, m, r);
  }
}

template <typename C>
__global__ void __launch_bounds__(kXentReduce) xent_reduce_kernel(XentArgs a, const C* scratch, int64_t reduction, XentBuf out, XentBuf total_weight) {
  __shared__ C ns[kXentReduce];
  __shared__ C ss[kXentReduce];
  __shared__ C ws[kXentReduce];
  const int i = threadIdx.x;
  C n = C(0), s = C(0), w = C(0);
  for (int64_t m = i; m < a.rows; m += kXentReduce) {
    n += scratch[m];
    s += scratch[a.rows + m];
    const int64_t t = xent_target(a, m);
    if (xent_counts(a, t)) w += xent_w<C>(a, t);
  }
  ns[i] = n;
  ss[i] = s;
  ws[i] = w;
  __syncthreads();
  for (int h = kXentReduce / 2; h > 0; h >>= 1) {
    if (i < h) {
      ns[i] += ns[i + h];
      ss[i] += ss[i + h];
      ws[i] += ws[i + h];
    }
    __syncthreads();
  }
  if (i != 0) return;
  if (total_weight.p != nullptr) store_as(total_weight.p, total_weight.dtype, ws[0]);
  XentTerms<C> sums;
  sums.nll = ns[0];
  sums.smooth = ss[0];
  store_as(out.p, out.dtype, xent_reduce(a, reduction, sums, ws[0]));
}

template <typename C> __device__ __forceinline__ C total_of(XentBuf total_weight) {
  return total_weight.p != nullptr ? load_as<C>(total_weight.p, total_weight.dtype) : C(1);
}

template <typename C> __global__ void __launch_bounds__(kThreads) xent_backward_kernel(XentArgs a, XentGradArgs b, XentBuf total_weight) {
  const int lane = threadIdx.x % kXentLanes;
  const C total = total_of<C>(total_weight);
  const C sum_w = a.weight == nullptr ? static_cast<C>(a.classes) : butterfly(xent_lane_sum_w<C>(a, lane), XentAdd{});
  const int64_t step = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kXentLanes; m < a.rows; m += step)
    xent_backward_row<C>(a, b, m, sum_w, total, lane, kXentLanes);
}

template <typename C> __global__ void __launch_bounds__(kThreads) xent_thread_backward_kernel(XentArgs a, XentGradArgs b, XentBuf total_weight) {
  const C total = total_of<C>(total_weight);
  const C sum_w = xent_sum_w<C>(a);
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; m < a.rows; m += step)
    xent_backward_row<C>(a, b, m, sum_w, total, 0, 1);
}

// Blocks for `rows` rows: a warp per row, or (D > 1) a thread per row.
unsigned row_grid(const XentArgs& a) {
  const int64_t per_block = a.inner > 1 ? kThreads : kRowsPerBlock;
  const int64_t want = (a.rows + per_block - 1) / per_block;
  constexpr int64_t kMaxGrid = 1 << 16;
  return static_cast<unsigned>(want < 1 ? 1 : want > kMaxGrid ? kMaxGrid : want);
}

}  // namespace

int64_t cross_entropy_loss_cuda(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                int64_t ignore_index, double label_smoothing, int64_t reduction, bool log_probs,
                                const Tensor& out, const std::optional<Tensor>& lse, const std::optional<Tensor>& total_weight) {
  const XentArgs a = xent_args(self, target, weight, ignore_index, label_smoothing, log_probs);
  const bool none = reduction == kXentNone;
  BadIndex bad;
  with_compute<kCFloating>(self.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    // The rows' two terms for the reduction: the allocator's cached block, freed on return (stream-ordered).
    Tensor scratch = none ? Tensor() : empty({a.rows > 0 ? 2 * a.rows : 1}, dtype_of<C>::value, self.device());
    C* sp = none ? nullptr : static_cast<C*>(scratch.data_ptr());
    bad = run_checked(self.device().index, [&](cudaStream_t stream, unsigned long long* record) {
      if (a.rows > 0 && a.inner > 1) {
        xent_thread_rows_kernel<C><<<row_grid(a), kThreads, 0, stream>>>(a, none, buf_of(out), sp, xent_buf(lse), record);
      } else if (a.rows > 0) {
        xent_rows_kernel<C><<<row_grid(a), kThreads, 0, stream>>>(a, none, buf_of(out), sp, xent_buf(lse), record);
      }
      if (!none) xent_reduce_kernel<C><<<1, kXentReduce, 0, stream>>>(a, sp, reduction, buf_of(out), xent_buf(total_weight));
    });
  });
  return bad.found ? bad.value : a.ignore;
}

void cross_entropy_loss_backward_cuda(const Tensor& grad, const Tensor& self, const Tensor& target,
                                      const std::optional<Tensor>& weight, const std::optional<Tensor>& lse,
                                      const std::optional<Tensor>& total_weight, int64_t ignore_index, double label_smoothing,
                                      int64_t reduction, bool log_probs, const Tensor& grad_input) {
  const XentArgs a = xent_args(self, target, weight, ignore_index, label_smoothing, log_probs);
  const XentGradArgs b = xent_grad_args(a, grad, self, lse, total_weight, reduction, grad_input);
  if (a.rows == 0) return;
  DeviceGuard guard(self.device().index);
  cudaStream_t stream = current_stream(self.device().index);
  const XentBuf tw = xent_buf(total_weight);
  with_compute<kCFloating>(self.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (a.inner > 1) xent_thread_backward_kernel<C><<<row_grid(a), kThreads, 0, stream>>>(a, b, tw);
    else xent_backward_kernel<C><<<row_grid(a), kThreads, 0, stream>>>(a, b, tw);
  });
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
