// CPU nonzero and masked_select (NOTE [ Compaction ] in select_iter.h): a
// counting pass, then the result allocated and filled in C order.
#include "select_iter.h"
#include "index_iter.h"

namespace gx::ops {
namespace {

// Calls f(l, a, b) for every element l in C order with its byte offsets in the walk's operands.
template <typename F> void walk_all(const SelectWalk& w, F&& f) {
  int64_t idx[kMaxDims] = {0};
  int64_t a = 0, b = 0;
  for (int64_t l = 0; l < w.numel; ++l) {
    f(l, a, b);
    for (int d = 0; d < w.ndim; ++d) {  // odometer, innermost first
      a += w.strides[0][d];
      b += w.strides[1][d];
      if (++idx[d] < w.sizes[d]) break;
      a -= w.strides[0][d] * w.sizes[d];
      b -= w.strides[1][d] * w.sizes[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

Tensor nonzero_cpu(const Tensor& self) {
  const SelectWalk w = make_select_walk(self, nullptr);
  const ScalarType dtype = self.dtype();
  int64_t n = 0;
  walk_all(w, [&](int64_t, int64_t a, int64_t) { n += load_as<bool>(w.data[0] + a, dtype) ? 1 : 0; });
  const int64_t ndim = self.dim();
  Tensor out = empty({n, ndim}, kInt64, self.device());
  auto* o = static_cast<int64_t*>(out.data_ptr());
  const IntArrayRef shape = self.sizes();
  int64_t shp[kMaxDims];
  for (int64_t d = 0; d < ndim; ++d) shp[d] = shape[d];
  int64_t k = 0;
  walk_all(w, [&](int64_t l, int64_t a, int64_t) {
    if (!load_as<bool>(w.data[0] + a, dtype)) return;
    unravel_to<int64_t>(l, shp, static_cast<int>(ndim), o + k * ndim);
    ++k;
  });
  return out;
}

Tensor masked_select_cpu(const Tensor& self, const Tensor& mask) {
  GX_CHECK(mask.dtype() == kBool, "the mask must be bool, got ", mask.dtype());
  const SelectWalk w = make_select_walk(self, &mask);
  int64_t n = 0;
  walk_all(w, [&](int64_t, int64_t, int64_t b) { n += *reinterpret_cast<const bool*>(w.data[1] + b) ? 1 : 0; });
  Tensor out = empty({n}, self.dtype(), self.device());
  char* o = static_cast<char*>(out.data_ptr());
  const int64_t item = itemsize(self.dtype());
  walk_all(w, [&](int64_t, int64_t a, int64_t b) {
    if (!*reinterpret_cast<const bool*>(w.data[1] + b)) return;
    copy_element(o, w.data[0] + a, item);
    o += item;
  });
  return out;
}

}  // namespace gx::ops
