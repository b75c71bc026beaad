// NOTE [ Staging area ] in staging.h.
#include "binding/staging.h"
#include "base/thread_local.h"

#include <cmath>
#include <cstdint>

#include "binding/args.h"
#include "binding/js_errors.h"
#include "base/layout.h"

namespace gx::core::js::staging {
namespace {

static_assert(kMaxShape == static_cast<size_t>(kMaxDims), "the shape slots hold a tensor of the most dimensions");
static_assert(kViewShapeLast + 1 - kViewShape == kMaxShape && kViewStridesLast + 1 - kViewStrides == kMaxShape,
              "the view slots hold a layout of the most dimensions");

GX_THREAD_LOCAL double tls_area[kSize];

// The ArrayBuffer over this thread's area, made once: V8 may refuse a second
// ArrayBuffer over the same external memory, so every caller on the thread
// (two copies of the library, say) gets the same one.
GX_THREAD_LOCAL napi_ref tls_area_ref = nullptr;

void forget_area(void* ref) {
  if (tls_area_ref == ref) tls_area_ref = nullptr;
}

Napi::Value StagingArea(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    napi_value ab = nullptr;
    const bool known = tls_area_ref != nullptr && napi_get_reference_value(env, tls_area_ref, &ab) == napi_ok && ab != nullptr;
    // No finalizer: the memory is the thread's.
    if (!known && (napi_create_external_arraybuffer(env, tls_area, sizeof(tls_area), nullptr, nullptr, &ab) != napi_ok ||
                   napi_create_reference(env, ab, 1, &tls_area_ref) != napi_ok ||
                   napi_add_env_cleanup_hook(env, forget_area, tls_area_ref) != napi_ok)) {
      fail(ErrorKind::Internal, "stagingArea: could not create the staging area");
    }
    return Napi::Float64Array::New(env, kSize, Napi::ArrayBuffer(env, ab), 0);
  });
}

// [last address, args, max args, empty request, shape, result request, its
// shape, view request, its shape, its strides, size]: for the test that
// lib/core/staging.ts agrees.
Napi::Value StagingLayout(const Napi::CallbackInfo& info) {
  const size_t slots[] = {kLastAddress, kArgs, kMaxArgs, kEmpty, kShape, kResultPending, kResultShape, kView, kViewShape,
                          kViewStrides, kSize};
  constexpr uint32_t n = sizeof(slots) / sizeof(slots[0]);
  Napi::Array a = Napi::Array::New(info.Env(), n);
  for (uint32_t i = 0; i < n; ++i) a.Set(i, Napi::Number::New(info.Env(), static_cast<double>(slots[i])));
  return a;
}

}  // namespace

double* area() { return tls_area; }

void set_last_address(const void* address) {
  const auto p = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(address));
  tls_area[kLastAddress] = p <= (uint64_t{1} << 53) ? static_cast<double>(p) : NAN;
}

TensorImpl* empty_from(const double* request, const double* shape, const char* fn) {
  auto whole = [](double x, double max) { return x >= 0 && x <= max && std::floor(x) == x; };
  auto small_int = [&](double x, const char* what) {
    GX_CHECK_TYPE(whole(x, INT32_MAX), fn, ": ", what, " must be a non-negative integer, got ", x);
    return static_cast<int64_t>(x);
  };
  const int64_t ndim = small_int(request[0], "ndim");
  GX_CHECK_RANGE(ndim <= static_cast<int64_t>(kMaxShape), fn, ": a tensor has at most ", kMaxShape,
                 " dimensions, got ", ndim);
  const DType dtype = dtype_of(small_int(request[1], "dtype"), fn);
  const Device device = device_of(small_int(request[2], "deviceType"), small_int(request[3], "deviceIndex"), fn);
  int64_t sizes[kMaxShape];
  for (int64_t d = 0; d < ndim; ++d) {
    const double x = shape[d];
    GX_CHECK_TYPE(whole(x, 9007199254740991.0), fn, ": shape[", d, "] must be a non-negative integer, got ", x);
    sizes[d] = static_cast<int64_t>(x);
  }
  TensorImpl* t = TensorImpl::empty(sizes, static_cast<int32_t>(ndim), dtype, device, false);
  set_last_address(t->data());
  return t;
}

TensorImpl* view_from(const TensorImpl& base, const char* fn) {
  const double* v = tls_area + kView;
  // As a JS integer argument is read (binding/args.cpp): sign and range are the layout check's to judge.
  auto safe = [&](double x, const char* what, int64_t d = -1) -> int64_t {
    if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) <= 9007199254740991.0) return static_cast<int64_t>(x);
    if (d < 0) fail(ErrorKind::Type, fn, ": ", what, " must be a safe integer, got ", x);
    fail(ErrorKind::Type, fn, ": ", what, "[", d, "] must be a safe integer, got ", x);
  };
  const int64_t ndim = safe(v[0], "ndim"), nstrides = safe(v[1], "strides' count");
  GX_CHECK_RANGE(ndim <= static_cast<int64_t>(kMaxShape), fn, ": a tensor has at most ", kMaxShape,
                 " dimensions, got ", ndim);
  GX_CHECK_VALUE(nstrides == ndim, fn, ": got ", ndim, " sizes but ", nstrides, " strides");
  int64_t sizes[kMaxShape], strides[kMaxShape];
  for (int64_t d = 0; d < ndim; ++d) {
    sizes[d] = safe(tls_area[kViewShape + d], "shape", d);
    strides[d] = safe(tls_area[kViewStrides + d], "strides", d);
  }
  return TensorImpl::view(base, ndim, sizes, strides, safe(v[2], "offset"));
}

void register_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("stagingArea", Napi::Function::New<StagingArea>(env, "stagingArea"));
  exports.Set("stagingLayout", Napi::Function::New<StagingLayout>(env, "stagingLayout"));
}

}  // namespace gx::core::js::staging
