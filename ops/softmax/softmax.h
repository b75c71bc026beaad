// softmax, log_softmax and logsumexp (ops/op-list.js has their schemas; the
// JS side is lib/ops/softmax/softmax.ts and lib/ops/reduce/statistics.ts): the numerics both
// devices share.
//
//   softmax(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()
//   log_softmax(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()
//     out (self's shape) = exp(x - max) / sum(exp(x - max)) along axis, or
//     x - max - log(sum(exp(x - max))); `dtype` (floating) picks the compute
//     type (NOTE [ Compute types ]). As torch: a line with NaN or +inf, or of
//     only -inf, gives NaN; -inf elements give 0 (-inf for log_softmax).
//   logsumexp(Tensor self, int[] axis, ScalarType dtype, Tensor out) -> ()
//     a reduction (NOTE [ Reductions ]): max + log(sum(exp(x - max))) with
//     torch's treatment of infinities: lines of -inf (and empty ones) give
//     -inf, a +inf gives +inf, a NaN gives NaN. Integer inputs are read as
//     the compute type (JS asks for float32, as torch's default float).
#pragma once
#include <gpuext/extension.h>

#include "../common/dim_iter.h"
#include "../common/dispatch.h"
#include "../ops.h"

namespace gx::ops {


// Checks shared by both devices' softmax entry points.
inline DimIter softmax_iter(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  GX_CHECK(is_floating(dtype), "dtype ", dtype, " is not supported (softmax computes in a floating dtype)");
  GX_CHECK(is_floating(out.dtype()), "out of dtype ", out.dtype(), " cannot hold a softmax");
  return make_dim_iter(self, dim, out);
}

// --- online softmax sums --------------------------------------------------------
// (m, s): the running maximum of the elements folded so far and the sum of
// exp(x - m) over them, exactly as the two-pass sum(exp(x - max)) would count
// them: a -inf element adds nothing, and a +inf maximum adds exp(inf - inf),
// NaN, as torch's sum does (so a line holding +inf gives NaN, as in torch).
template <typename C> GX_HD void online_step(C& m, C& s, C x) {
  if (x > m) {
    s = s * m_exp(m - x) + (C(1) + (x - x));  // exp(x - x): 1, or NaN for x = +inf
    m = x;
  } else if (x != lowest<C>()) {
    s += m_exp(x - m);  // NaN x (or s) stays NaN
  }
}

// A partial sum s taken relative to m, rescaled to the overall maximum mx >= m.
template <typename C> GX_HD C online_rescale(C m, C s, C mx) { return m == mx ? s : s * m_exp(m - mx); }

// The output of element x given the line's maximum and sum.
template <bool Log, typename C> GX_HD C softmax_value(C x, C mx, C sum, C log_sum) {
  if constexpr (Log) return x - mx - log_sum;
  else return m_exp(x - mx) / sum;
}

// --- logsumexp as a reducer (reduce/reducers.h's interface) ---------------------
template <typename A> struct LseAcc {
  A m;  // the maximum so far (-inf: nothing yet; NaN: a NaN was seen)
  A s;  // sum of exp(x - m)
};

template <typename A> struct LogSumExpReducer {
  using Value = A;
  using Acc = LseAcc<A>;
  GX_HD Acc init() const { return Acc{lowest<A>(), A(0)}; }
  GX_HD Acc combine(Acc a, Acc b) const {
    if (is_nan(a.m) || is_nan(b.m)) return is_nan(a.m) ? a : b;
    const bool a_hi = a.m >= b.m;
    const Acc hi = a_hi ? a : b, lo = a_hi ? b : a;
    if (hi.m == highest<A>()) return Acc{hi.m, A(1)};  // +inf whatever else
    if (lo.m == lowest<A>()) return hi;                // includes both -inf
    return Acc{hi.m, hi.s + lo.s * m_exp(lo.m - hi.m)};
  }
  GX_HD Acc step(Acc acc, A x, int64_t) const {
    if (is_nan(x)) return Acc{x, A(1)};
    if (x > acc.m) {
      if (x == highest<A>()) return Acc{x, A(1)};
      return Acc{x, acc.s * m_exp(acc.m - x) + A(1)};  // acc.m = -inf: 0 * 0 + 1
    }
    if (x == lowest<A>() || acc.m == highest<A>() || is_nan(acc.m)) return acc;
    return Acc{acc.m, acc.s + m_exp(x - acc.m)};
  }
  // -inf + log(0) = -inf for nothing (or only -inf) seen; NaN stays NaN.
  GX_HD A project(Acc a) const { return a.m + m_log(a.s); }
};

}  // namespace gx::ops
