// The optimizers' multi-tensor steps (ops/op-list.js has their schemas;
// lib/optim/foreach.ts calls them for gx.optim.SGD, Adam and AdamW): one call
// updates every parameter of a list, written once for both devices
// (foreach_cpu.cpp, foreach.cu).
//
// NOTE [ Multi-tensor steps round as the per-parameter path ]
// The per-parameter path (lib/optim/sgd.ts, adam-update.ts) is a chain of
// elementwise ops: each computes in the compute type (NOTE [ Compute types ])
// and stores its result in the parameter's dtype. The steps here do the same
// chain per element in registers, rounding each intermediate through the
// storage type T (`r`), with the scalars converted to the compute type as the
// ops' scalar operands are (scalar_as), so both paths agree bit for bit. The
// products and sums go through rn_mul and friends (NOTE [ Rounded arithmetic ]
// in ../common/rn.h): nvcc would otherwise contract a * b + c into one fused
// multiply-add, which rounds once where the op chain rounds twice.
#pragma once
#include <gpuext/extension.h>

#include <cmath>
#include <vector>

#include "../binary/functors.h"
#include "../common/dispatch.h"
#include "../common/hd.h"
#include "../common/rn.h"
#include "../ops.h"
#include "../unary/functors.h"

namespace gx::ops {

// The compute type of storage type T: double for double, else float (the optimizers take floating dtypes only).
template <typename T> using OptCompute = std::conditional_t<std::is_same_v<T, double>, double, float>;

// One op of the per-parameter chain: the compute-type result stored as T and read back.
template <typename T, typename C> GX_HD C r(C x) {
  if constexpr (std::is_same_v<T, C>) return x;
  else return to<C>(to<T>(x));
}

// SGD's scalars, in the compute type (NOTE [ Multi-tensor steps round as the per-parameter path ]).
template <typename C> struct SgdScalars {
  C weight_decay, momentum, one_minus_dampening, neg_lr;
  bool has_decay, has_momentum, nesterov, maximize, first;
};

// SGD on element i of one parameter: p, its gradient g, its momentum buffer b (null without momentum).
template <typename T, typename C> GX_HD void sgd_element(const SgdScalars<C>& s, T* p, const T* g, T* b, int64_t i) {
  const C pv = to<C>(p[i]);
  C d = to<C>(g[i]);
  if (s.maximize) d = r<T>(NegOp{}(d));
  if (s.has_decay) d = r<T>(rn_add(d, r<T>(rn_mul(pv, s.weight_decay))));
  if (s.has_momentum) {
    C buf;
    if (s.first) {
      buf = d;
    } else {
      buf = r<T>(rn_add(r<T>(rn_mul(to<C>(b[i]), s.momentum)), r<T>(rn_mul(d, s.one_minus_dampening))));
    }
    b[i] = to<T>(buf);
    d = s.nesterov ? r<T>(rn_add(d, r<T>(rn_mul(buf, s.momentum)))) : buf;
  }
  p[i] = to<T>(rn_add(pv, r<T>(rn_mul(d, s.neg_lr))));
}

// Adam's scalars that do not depend on the step, as doubles (converted to C per element's list).
struct AdamHost {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled;
};

// The step-dependent scalars: passed from JS (adam-update.ts's values), or, for a capturable step whose count
// lives in a tensor, computed here from it (std::pow / CUDA's pow: they may differ from JS's ** in the last ulp).
struct AdamStepScalars {
  double neg_step_size, bias_correction2_sqrt;
};

GX_HD AdamStepScalars adam_step_scalars(double lr, double beta1, double beta2, double step) {
  const double bias_correction1 = 1 - ::pow(beta1, step);
  return {-(lr / bias_correction1), ::sqrt(1 - ::pow(beta2, step))};
}

template <typename C> struct AdamScalars {
  C decay_factor, weight_decay, lerp_w, lerp_one_minus_w, beta2, one_minus_beta2, eps;
  bool has_decay, decoupled, lerp_small, amsgrad, maximize;
};

template <typename C> AdamScalars<C> adam_scalars(const AdamHost& h) {
  const double w = 1 - h.beta1;
  return {static_cast<C>(1 - h.lr * h.weight_decay), static_cast<C>(h.weight_decay), static_cast<C>(w),
          static_cast<C>(1 - w), static_cast<C>(h.beta2), static_cast<C>(1 - h.beta2), static_cast<C>(h.eps),
          h.weight_decay != 0, h.decoupled, (w < 0 ? -w : w) < 0.5, h.amsgrad, h.maximize};
}

// Adam (AdamW with decoupled) on element i: p, g, the moments m and v, vmax (null without amsgrad).
template <typename T, typename C>
GX_HD void adam_element(const AdamScalars<C>& s, C neg_step_size, C bias_correction2_sqrt, T* p, const T* g, T* m,
                        T* v, T* vmax, int64_t i) {
  C pv = to<C>(p[i]);
  C d = to<C>(g[i]);
  if (s.maximize) d = r<T>(NegOp{}(d));
  if (s.has_decay) {
    if (s.decoupled) pv = r<T>(rn_mul(pv, s.decay_factor));
    else d = r<T>(rn_add(d, r<T>(rn_mul(pv, s.weight_decay))));
  }
  C mv = to<C>(m[i]);
  const C diff = r<T>(rn_sub(d, mv));
  mv = s.lerp_small ? r<T>(rn_add(mv, r<T>(rn_mul(diff, s.lerp_w))))
                    : r<T>(rn_sub(d, r<T>(rn_mul(diff, s.lerp_one_minus_w))));
  m[i] = to<T>(mv);
  C vv = r<T>(rn_add(r<T>(rn_mul(to<C>(v[i]), s.beta2)), r<T>(rn_mul(r<T>(rn_mul(d, s.one_minus_beta2)), d))));
  v[i] = to<T>(vv);
  if (s.amsgrad) {
    vv = r<T>(MaximumOp{}(to<C>(vmax[i]), vv));
    vmax[i] = to<T>(vv);
  }
  const C denom = r<T>(rn_add(r<T>(r<T>(SqrtOp{}(vv)) / bias_correction2_sqrt), s.eps));
  p[i] = to<T>(rn_add(pv, r<T>(r<T>(rn_mul(mv, neg_step_size)) / denom)));
}

// The lists of one call, checked: every tensor contiguous, of the parameters' floating dtype and device, each
// list entry of its parameter's size; `optional` lists may be empty.
struct ForeachLists {
  std::vector<const std::vector<Tensor>*> lists;
  ScalarType dtype = kFloat32;
  Device device;
  size_t count = 0;
};

inline ForeachLists check_foreach(const char* op, std::initializer_list<std::pair<const std::vector<Tensor>*, const char*>> lists,
                                  std::initializer_list<bool> required) {
  ForeachLists out;
  const auto& params = *lists.begin()->first;
  out.count = params.size();
  GX_CHECK(out.count > 0, op, ": params is empty");
  out.dtype = params[0].dtype();
  out.device = params[0].device();
  GX_CHECK(out.dtype == kFloat32 || out.dtype == kFloat64 || out.dtype == kFloat16 || out.dtype == kBFloat16, op,
           ": parameters must be floating, got ", out.dtype);
  auto req = required.begin();
  for (const auto& [list, name] : lists) {
    const bool need = *req++;
    if (!need && list->empty()) {
      out.lists.push_back(list);
      continue;
    }
    GX_CHECK(list->size() == out.count, op, ": ", name, " has ", list->size(), " tensors, params ", out.count);
    for (size_t i = 0; i < out.count; ++i) {
      const Tensor& t = (*list)[i];
      GX_CHECK(t.dtype() == out.dtype, op, ": ", name, "[", i, "] is ", t.dtype(), ", params[0] ", out.dtype);
      GX_CHECK(t.device() == out.device, op, ": ", name, "[", i, "] is on ", t.device(), ", params[0] on ",
               out.device);
      GX_CHECK(t.numel() == params[i].numel(), op, ": ", name, "[", i, "] has ", t.numel(), " elements, params[", i,
               "] ", params[i].numel());
      GX_CHECK(t.is_contiguous(), op, ": ", name, "[", i, "] is not contiguous");
    }
    out.lists.push_back(list);
  }
  return out;
}

// The step tensors of a capturable Adam: one float64 element per parameter, on its device.
inline void check_steps(const char* op, const std::vector<Tensor>& steps, const ForeachLists& l) {
  if (steps.empty()) return;
  GX_CHECK(steps.size() == l.count, op, ": steps has ", steps.size(), " tensors, params ", l.count);
  for (size_t i = 0; i < steps.size(); ++i) {
    GX_CHECK(steps[i].dtype() == kFloat64 && steps[i].numel() == 1 && steps[i].device() == l.device, op, ": steps[",
             i, "] must be one float64 element on ", l.device);
  }
}

}  // namespace gx::ops
