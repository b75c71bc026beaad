// cross_entropy_loss and its backward (ops/op-list.js has the schemas; the JS
// side is lib/ops/loss/cross-entropy.ts): the math both devices share, written
// once.
//
//   cross_entropy_loss(self, target, weight?, ignore_index, label_smoothing, reduction, log_probs,
//                      out, lse?, total_weight?) -> int
//     self [N, C, D] contiguous (torch's [N, C, d1, ...] with the d's flattened; [N, C] is D = 1), a row
//     m = n D + d being the C classes of (n, d) at stride D; target [N D] int64 or int32; weight [C] or
//     none. Per row, with lp_c = x_c - lse (log_probs: the input is log-probabilities, lp_c = x_c),
//     w the weights (1 without), s the smoothing:
//       loss_m = -(1 - s) w_t lp_t - s / C sum_c w_c lp_c    (0 where t = ignore_index)
//     out: loss_m ([N D], reduction 0 'none'), or over the rows (NOTE [ The cross entropy's mean ]) with
//     N = sum of -w_t lp_t, S = sum of -sum_c w_c lp_c and W = total_weight = sum of w_t over the rows
//     not ignored: (1 - s) N + s / C S ([], 1 'sum') or (1 - s) N / W + s / C S / W ([], 2 'mean'),
//     as torch's nll_loss / cross_entropy. lse
//     ([N D], the compute type) gets each row's logsumexp for the backward (cross entropy only);
//     total_weight ([], the compute type) the mean's denominator. Returns ignore_index, or the first
//     target out of [0, C) found (not ignored), leaving out unwritten: the caller words the error.
//   cross_entropy_loss_backward(grad, self, target, weight?, lse?, total_weight?, ignore_index,
//                      label_smoothing, reduction, log_probs, grad_input) -> ()
//     grad_input [N, C, D] = G_m (p_c A_m - a_c) (cross entropy) or -G_m a_c (log_probs), where
//       a_c = (1 - s) w_t [c = t] + s / C w_c,  A_m = sum_c a_c = (1 - s) w_t + s / C sum_c w_c,
//       p_c = exp(x_c - lse_m),  G_m = grad_m (none), grad (sum), grad / total_weight (mean);
//     0 on ignored rows (targets were checked by the forward: one out of range is taken as ignored);
//     a counted row whose term (1 - s) G_m w_t is NaN is NaN (NOTE [ The cross entropy's mean ]).
//
// NOTE [ The cross entropy's mean ]
// torch divides each term by the total weight apart, (1 - s) N / W + s / C S / W
// (cross_entropy_loss_label_smoothing: nll_loss's mean plus the smoothing
// term's sum over the same weights), and so do we: with W = 0 (every target
// ignored, or weighing 0) N / W is 0 / 0 = NaN and so is the loss, where one
// sum of the rows' losses over W was +-inf once the smoothing term was not 0.
// The backward follows torch's composite likewise: G = g / W is inf, the nll
// term's gradient at the target G (1 - s) w_t = inf * 0 is NaN, and
// log_softmax's backward spreads it over the row (every row counted is NaN,
// the ignored ones 0); nll_loss's own backward writes the target's class
// only (NaN there, 0 beside it).
//
// NOTE [ One order for the cross entropy's sums ]
// Every sum here has one order on both devices, so the CPU and CUDA differ
// only by rounding inside the terms: libm's ulps in exp and log (the CPU's
// expf is cpu_math.h's) and nvcc's fused multiply-adds (test/nn-cross-
// entropy.test.ts compares the devices within that). A sum
// over a row's C classes is 32 lane sums (lane j adds classes j, j + 32, ...
// in order) folded by the xor butterfly of a warp shuffle (each level adds
// lane i and lane i ^ o, o = 16, 8, ..., 1), which the CPU (and CUDA's
// thread-per-row kernels, for D > 1) replays on an array; the 'sum' and 'mean' reductions over rows are kXentReduce partial
// sums (partial i adds rows i, i + kXentReduce, ... in order), then a tree
// halving them (partial i += partial i + h for h = kXentReduce / 2, ..., 1),
// one CUDA block's shared-memory reduction, replayed likewise. Half inputs
// compute in float32 (torch's accumulate type), float64 in double.
#pragma once
#include <gpuext/extension.h>

#include "../common/dispatch.h"
#include "../ops.h"

namespace gx::ops {

constexpr int kXentLanes = 32;    // lanes summing a row (a warp on CUDA)
constexpr int kXentReduce = 256;  // partial sums of the rows' reduction (one block on CUDA)

enum XentReduction : int64_t { kXentNone = 0, kXentSum = 1, kXentMean = 2 };

// Everything a row's math reads; pointers are bytes, loads go by runtime dtype.
struct XentArgs {
  const char* x = nullptr;
  const char* target = nullptr;
  const char* weight = nullptr;  // null: every class weighs 1
  ScalarType x_dtype = kFloat32, t_dtype = kInt64, w_dtype = kFloat32;
  int64_t x_item = 4, t_item = 8, w_item = 4;
  int64_t rows = 0;     // N D
  int64_t classes = 0;  // C
  int64_t inner = 1;    // D: the stride between a row's classes
  int64_t ignore = -100;
  double smoothing = 0;
  bool log_probs = false;
};

// Element index of row m's class 0 (its class c is c * inner further).
GX_HD int64_t xent_base(const XentArgs& a, int64_t m) {
  const int64_t n = m / a.inner;
  return n * a.classes * a.inner + (m - n * a.inner);
}

GX_HD int64_t xent_target(const XentArgs& a, int64_t m) { return load_as<int64_t>(a.target + m * a.t_item, a.t_dtype); }

GX_HD bool xent_in_range(const XentArgs& a, int64_t t) { return t >= 0 && t < a.classes; }

// A target counts when it is not ignored (an out-of-range one has been reported by then).
GX_HD bool xent_counts(const XentArgs& a, int64_t t) { return t != a.ignore && xent_in_range(a, t); }

template <typename C> GX_HD C xent_x(const XentArgs& a, int64_t base, int64_t c) {
  return load_as<C>(a.x + (base + c * a.inner) * a.x_item, a.x_dtype);
}

template <typename C> GX_HD C xent_w(const XentArgs& a, int64_t c) {
  return a.weight == nullptr ? C(1) : load_as<C>(a.weight + c * a.w_item, a.w_dtype);
}

// --- lane partials of one row: lane j of kXentLanes takes classes j, j + 32, ... in order ---
template <typename C> GX_HD C xent_lane_max(const XentArgs& a, int64_t base, int lane) {
  C m = lowest<C>();
  for (int64_t c = lane; c < a.classes; c += kXentLanes) {
    const C v = xent_x<C>(a, base, c);
    m = v > m ? v : m;
  }
  return m;
}

template <typename C> GX_HD C xent_lane_sum_exp(const XentArgs& a, int64_t base, int lane, C mx) {
  C s = C(0);
  for (int64_t c = lane; c < a.classes; c += kXentLanes) s += m_exp(xent_x<C>(a, base, c) - mx);
  return s;
}

// sum of w_c lp_c over the lane's classes (the smoothing term).
template <typename C> GX_HD C xent_lane_sum_wlp(const XentArgs& a, int64_t base, int lane, C lse) {
  C s = C(0);
  for (int64_t c = lane; c < a.classes; c += kXentLanes) s += xent_w<C>(a, c) * (xent_x<C>(a, base, c) - lse);
  return s;
}

template <typename C> GX_HD C xent_lane_sum_w(const XentArgs& a, int lane) {
  C s = C(0);
  for (int64_t c = lane; c < a.classes; c += kXentLanes) s += xent_w<C>(a, c);
  return s;
}

// logsumexp from the row's maximum and sum of exp(x - max).
template <typename C> GX_HD C xent_lse(C mx, C sum_exp) { return mx + m_log(sum_exp); }

// A row's two terms, nll = -w_t lp_t and smooth = -sum_c w_c lp_c (0 unless s > 0): the loss is
// (1 - s) nll + s / C smooth, summed over rows apart for the reductions (NOTE [ The cross entropy's mean ]).
template <typename C> struct XentTerms {
  C nll = C(0), smooth = C(0);
};

// loss_m from a row's terms; with the terms' sums over the rows, the 'sum'.
template <typename C> GX_HD C xent_combine(const XentArgs& a, XentTerms<C> r) {
  if (a.smoothing == 0) return r.nll;
  const C s = static_cast<C>(a.smoothing);
  return (C(1) - s) * r.nll + s / static_cast<C>(a.classes) * r.smooth;
}

// The 'mean' from the terms' sums over the rows and the total weight w, each divided apart.
template <typename C> GX_HD C xent_mean(const XentArgs& a, XentTerms<C> r, C w) {
  if (a.smoothing == 0) return r.nll / w;
  const C s = static_cast<C>(a.smoothing);
  return (C(1) - s) * (r.nll / w) + s / static_cast<C>(a.classes) * (r.smooth / w);
}

template <typename C> GX_HD C xent_reduce(const XentArgs& a, int64_t reduction, XentTerms<C> r, C w) {
  return reduction == kXentMean ? xent_mean(a, r, w) : xent_combine(a, r);
}

// A_m = (1 - s) w_t + s / C sum_c w_c.
template <typename C> GX_HD C xent_row_a(const XentArgs& a, C w_t, C sum_w) {
  if (a.smoothing == 0) return w_t;
  const C s = static_cast<C>(a.smoothing);
  return (C(1) - s) * w_t + s / static_cast<C>(a.classes) * sum_w;
}

// grad_input of class c of a counted row (target t, scale G = G_m, big_a = A_m).
template <typename C> GX_HD C xent_grad(const XentArgs& a, int64_t base, int64_t c, int64_t t, C w_t, C lse, C big_a, C g) {
  const C s = static_cast<C>(a.smoothing);
  C ac = c == t ? (a.smoothing == 0 ? w_t : (C(1) - s) * w_t) : C(0);
  if (a.smoothing != 0) ac += s / static_cast<C>(a.classes) * xent_w<C>(a, c);
  // nll_loss's backward writes the target's class only: a G of inf leaves 0 beside it, not inf * 0.
  if (a.log_probs) return c == t || a.smoothing != 0 ? -(g * ac) : C(0);
  return g * (m_exp(xent_x<C>(a, base, c) - lse) * big_a - ac);
}

// The backward's G_m from the incoming gradient.
template <typename C> GX_HD C xent_scale(int64_t reduction, const char* grad, ScalarType g_dtype, int64_t g_item, int64_t m, C total) {
  const C g = load_as<C>(grad + (reduction == kXentNone ? m * g_item : 0), g_dtype);
  return reduction == kXentMean ? g / total : g;
}

// --- whole rows by one thread: the CPU, and CUDA's thread-per-row kernels ---
// (NOTE [ One order for the cross entropy's sums ]: the same sums as a warp's.)
struct XentAdd {
  template <typename C> GX_HD C operator()(C p, C q) const { return p + q; }
};
struct XentMax {
  template <typename C> GX_HD C operator()(C p, C q) const { return q > p ? q : p; }
};

// The xor butterfly over kXentLanes values (v is overwritten), as __shfl_xor_sync folds them.
template <typename C, typename Op> GX_HD C xent_butterfly(C (&v)[kXentLanes], Op op) {
  for (int o = kXentLanes / 2; o > 0; o >>= 1) {
    C next[kXentLanes];
    for (int i = 0; i < kXentLanes; ++i) next[i] = op(v[i], v[i ^ o]);
    for (int i = 0; i < kXentLanes; ++i) v[i] = next[i];
  }
  return v[0];
}

// The halving tree over kXentReduce partials (p is overwritten), as the block's shared-memory sum.
template <typename C> inline C xent_tree(C (&p)[kXentReduce]) {
  for (int h = kXentReduce / 2; h > 0; h >>= 1)
    for (int i = 0; i < h; ++i) p[i] += p[i + h];
  return p[0];
}

template <typename C> GX_HD C xent_row_lse(const XentArgs& a, int64_t base) {
  C v[kXentLanes];
  for (int j = 0; j < kXentLanes; ++j) v[j] = xent_lane_max<C>(a, base, j);
  const C mx = xent_butterfly(v, XentMax{});
  for (int j = 0; j < kXentLanes; ++j) v[j] = xent_lane_sum_exp<C>(a, base, j, mx);
  return xent_lse(mx, xent_butterfly(v, XentAdd{}));
}

template <typename C> GX_HD C xent_sum_w(const XentArgs& a) {
  if (a.weight == nullptr) return static_cast<C>(a.classes);
  C v[kXentLanes];
  for (int j = 0; j < kXentLanes; ++j) v[j] = xent_lane_sum_w<C>(a, j);
  return xent_butterfly(v, XentAdd{});
}

// Row m's terms (0 when its target does not count) and logsumexp (0 for log_probs).
template <typename C> GX_HD XentTerms<C> xent_row(const XentArgs& a, int64_t m, C& lse) {
  const int64_t base = xent_base(a, m);
  lse = a.log_probs ? C(0) : xent_row_lse<C>(a, base);
  const int64_t t = xent_target(a, m);
  XentTerms<C> r;
  if (!xent_counts(a, t)) return r;
  if (a.smoothing != 0) {
    C v[kXentLanes];
    for (int j = 0; j < kXentLanes; ++j) v[j] = xent_lane_sum_wlp<C>(a, base, j, lse);
    r.smooth = -xent_butterfly(v, XentAdd{});
  }
  r.nll = -(xent_w<C>(a, t) * (xent_x<C>(a, base, t) - lse));
  return r;
}

// A tensor the kernels write or read by runtime dtype (null: absent).
struct XentBuf {
  char* p = nullptr;
  ScalarType dtype = kFloat32;
  int64_t item = 4;
};

// What the backward reads beside XentArgs.
struct XentGradArgs {
  const char* grad = nullptr;
  ScalarType g_dtype = kFloat32;
  int64_t g_item = 4;
  int64_t reduction = kXentMean;
  XentBuf lse, grad_input;
};

// Row m's gradients from lane `first` on, every `step`-th class (a thread: 0, 1; a warp's lane: lane, 32).
template <typename C>
GX_HD void xent_backward_row(const XentArgs& a, const XentGradArgs& b, int64_t m, C sum_w, C total, int64_t first, int64_t step) {
  const int64_t base = xent_base(a, m), t = xent_target(a, m);
  const bool counts = xent_counts(a, t);
  const C w_t = counts ? xent_w<C>(a, t) : C(0);
  const C l = a.log_probs ? C(0) : load_as<C>(b.lse.p + m * b.lse.item, b.lse.dtype);
  const C scale = xent_scale<C>(b.reduction, b.grad, b.g_dtype, b.g_item, m, total);
  const C big_a = xent_row_a(a, w_t, sum_w);
  // torch's log_softmax spreads a NaN of the target's term over the row (NOTE [ The cross entropy's mean ]).
  const bool nan_row = counts && !a.log_probs && is_nan(scale * ((C(1) - static_cast<C>(a.smoothing)) * w_t));
  for (int64_t c = first; c < a.classes; c += step) {
    const C v = !counts ? C(0) : nan_row ? C(NAN) : xent_grad<C>(a, base, c, t, w_t, l, big_a, scale);
    store_as(b.grad_input.p + (base + c * a.inner) * b.grad_input.item, b.grad_input.dtype, v);
  }
}

// Shared checks of both devices' entry points; fill the args.
XentArgs xent_args(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t ignore_index,
                   double label_smoothing, bool log_probs);
XentGradArgs xent_grad_args(const XentArgs& a, const Tensor& grad, const Tensor& self, const std::optional<Tensor>& lse,
                            const std::optional<Tensor>& total_weight, int64_t reduction, const Tensor& grad_input);
XentBuf xent_buf(const std::optional<Tensor>& t);

}  // namespace gx::ops
