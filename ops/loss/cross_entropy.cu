// CUDA cross_entropy_loss and its backward (cross_entropy.h).
//
//   xent_rows_kernel      a warp per row (8 rows a block, grid-stride): max,
//                         sum of exp and (smoothing) sum of w lp over the
//                         row's classes in lane partials and a shuffle
//                         butterfly; writes the row's loss ('none': out; else
//                         a scratch of the compute type) and its logsumexp, and
//                         records a target out of range in the index ops'
//                         check record (index_launch.cuh), read back after the
//                         launch: the caller's error names the value.
//   xent_reduce_kernel    'sum' / 'mean': one block of kXentReduce threads
//                         sums the rows' losses and the counted targets'
//                         weights in the fixed order of NOTE [ One order for
//                         the cross entropy's sums ], and divides for the mean.
//   xent_backward_kernel  a warp per row: sum of the weights (smoothing), then
//                         each lane writes its classes' gradients.
// Instantiations: float (float32, float16, bfloat16) and double; loads and
// stores go by runtime dtype.
#include "../common/cuda_loops.cuh"
#include "../index/index_launch.cuh"
#include "cross_entropy.h"

namespace gx::ops {
namespace {

constexpr int kRowsPerBlock = kThreads / kXentLanes;

struct Sum {
  template <typename C> __device__ __forceinline__ C operator()(C a, C b) const { return a + b; }
};
struct Max {
  template <typename C> __device__ __forceinline__ C operator()(C a, C b) const { return b > a ? b : a; }
};

// The xor butterfly xent_butterfly replays on the CPU: every lane ends with the same value.
template <typename C, typename Op> __device__ __forceinline__ C butterfly(C v, Op op) {
#pragma unroll
  for (int o = kXentLanes / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

struct Out {
  char* p = nullptr;
  ScalarType dtype = kFloat32;
  int64_t item = 4;
};
Out out_of(const std::optional<Tensor>& t) {
  if (!t.has_value()) return {};
  return Out{static_cast<char*>(t->data_ptr()), t->dtype(), itemsize(t->dtype())};
}
Out out_of(const Tensor& t) { return out_of(std::optional<Tensor>(t)); }

template <typename C>
__global__ void __launch_bounds__(kThreads) xent_rows_kernel(XentArgs a, bool none, Out out, C* scratch, Out lse,
                                                             unsigned long long* bad) {
  const int lane = threadIdx.x % kXentLanes;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kXentLanes; m < a.rows; m += step) {
    const int64_t base = xent_base(a, m), t = xent_target(a, m);
    C l = C(0);
    if (!a.log_probs) {
      const C mx = butterfly(xent_lane_max<C>(a, base, lane), Max{});
      l = xent_lse(mx, butterfly(xent_lane_sum_exp<C>(a, base, lane, mx), Sum{}));
    }
    C loss = C(0);
    if (xent_counts(a, t)) {
      const C sum_wlp = a.smoothing == 0 ? C(0) : butterfly(xent_lane_sum_wlp<C>(a, base, lane, l), Sum{});
      loss = xent_row_loss(a, xent_x<C>(a, base, t) - l, xent_w<C>(a, t), sum_wlp);
    } else if (t != a.ignore && lane == 0) {
      record_bad(bad, t);
    }
    if (lane != 0) continue;
    if (lse.p != nullptr) store_as(lse.p + m * lse.item, lse.dtype, l);
    if (none) store_as(out.p + m * out.item, out.dtype, loss);
    else scratch[m] = loss;
  }
}

template <typename C>
__global__ void __launch_bounds__(kXentReduce) xent_reduce_kernel(XentArgs a, const C* scratch, bool mean, Out out, Out total_weight) {
  __shared__ C ls[kXentReduce];
  __shared__ C ws[kXentReduce];
  const int i = threadIdx.x;
  C l = C(0), w = C(0);
  for (int64_t m = i; m < a.rows; m += kXentReduce) {
    l += scratch[m];
    const int64_t t = xent_target(a, m);
    if (xent_counts(a, t)) w += xent_w<C>(a, t);
  }
  ls[i] = l;
  ws[i] = w;
  __syncthreads();
  for (int h = kXentReduce / 2; h > 0; h >>= 1) {
    if (i < h) {
      ls[i] += ls[i + h];
      ws[i] += ws[i + h];
    }
    __syncthreads();
  }
  if (i != 0) return;
  if (total_weight.p != nullptr) store_as(total_weight.p, total_weight.dtype, ws[0]);
  store_as(out.p, out.dtype, mean ? ls[0] / ws[0] : ls[0]);
}

struct GradArgs {
  const char* grad;
  ScalarType g_dtype;
  int64_t g_item;
  int64_t reduction;
  Out lse, total_weight, grad_input;
};

template <typename C> __global__ void __launch_bounds__(kThreads) xent_backward_kernel(XentArgs a, GradArgs b) {
  const int lane = threadIdx.x % kXentLanes;
  const C total = b.total_weight.p != nullptr ? load_as<C>(b.total_weight.p, b.total_weight.dtype) : C(1);
  const bool need_w = a.weight != nullptr && a.smoothing != 0 && !a.log_probs;
  const C sum_w = need_w ? butterfly(xent_lane_sum_w<C>(a, lane), Sum{}) : static_cast<C>(a.classes);
  const int64_t step = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kXentLanes; m < a.rows; m += step) {
    const int64_t base = xent_base(a, m), t = xent_target(a, m);
    const bool counts = xent_counts(a, t);
    const C w_t = counts ? xent_w<C>(a, t) : C(0);
    const C l = a.log_probs ? C(0) : load_as<C>(b.lse.p + m * b.lse.item, b.lse.dtype);
    const C scale = xent_scale<C>(b.reduction, b.grad, b.g_dtype, b.g_item, m, total);
    const C big_a = xent_row_a(a, w_t, sum_w);
    for (int64_t c = lane; c < a.classes; c += kXentLanes) {
      const C v = counts ? xent_grad<C>(a, base, c, t, w_t, l, big_a, scale) : C(0);
      store_as(b.grad_input.p + (base + c * a.inner) * b.grad_input.item, b.grad_input.dtype, v);
    }
  }
}

unsigned row_grid(int64_t rows) {
  const int64_t want = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
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
    // The rows' losses for the reduction: the allocator's cached block, freed on return (stream-ordered).
    Tensor scratch = none ? Tensor() : empty({a.rows > 0 ? a.rows : 1}, dtype_of<C>::value, self.device());
    C* sp = none ? nullptr : static_cast<C*>(scratch.data_ptr());
    bad = run_checked(self.device().index, [&](cudaStream_t stream, unsigned long long* record) {
      if (a.rows > 0) xent_rows_kernel<C><<<row_grid(a.rows), kThreads, 0, stream>>>(a, none, out_of(out), sp, out_of(lse), record);
      if (!none) xent_reduce_kernel<C><<<1, kXentReduce, 0, stream>>>(a, sp, reduction == kXentMean, out_of(out), out_of(total_weight));
    });
  });
  return bad.found ? bad.value : a.ignore;
}

void cross_entropy_loss_backward_cuda(const Tensor& grad, const Tensor& self, const Tensor& target,
                                      const std::optional<Tensor>& weight, const std::optional<Tensor>& lse,
                                      const std::optional<Tensor>& total_weight, int64_t ignore_index, double label_smoothing,
                                      int64_t reduction, bool log_probs, const Tensor& grad_input) {
  const XentArgs a = xent_args(self, target, weight, ignore_index, label_smoothing, log_probs);
  GX_CHECK(grad_input.sizes() == self.sizes() && grad_input.is_contiguous(), "grad_input must be a contiguous ", self.sizes());
  GX_CHECK(grad.is_contiguous(), "grad must be contiguous");
  GX_CHECK(log_probs || lse.has_value(), "lse is required for the cross entropy's backward");
  GX_CHECK(reduction != kXentMean || total_weight.has_value(), "total_weight is required for the mean's backward");
  if (a.rows == 0) return;
  DeviceGuard guard(self.device().index);
  cudaStream_t stream = current_stream(self.device().index);
  const GradArgs b{static_cast<const char*>(grad.data_ptr()), grad.dtype(), itemsize(grad.dtype()), reduction,
                   out_of(lse), out_of(total_weight), out_of(grad_input)};
  with_compute<kCFloating>(self.dtype(), [&](auto tag) {
    xent_backward_kernel<typename decltype(tag)::type><<<row_grid(a.rows), kThreads, 0, stream>>>(a, b);
  });
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
