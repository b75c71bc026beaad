// The gx_api table handed to extensions (csrc/include/gpuext/abi.h).
// Entries catch every exception and turn it into a gx_status plus a
// thread-local message: nothing may unwind across the C boundary.
#include "core/abi.h"
#include "base/thread_local.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/op_call.h"
#include "core/registry.h"
#include "core/tensor.h"
#include "core/tensor_ops.h"
#include "cuda/runtime.h"

namespace gx::core {
namespace {

GX_THREAD_LOCAL std::string tls_last_error;
GX_THREAD_LOCAL int tls_dispatch_device = -1;  // -1: no CUDA op running; current_stream(-1) then means the current device

const TensorImpl* impl(const gx_tensor* t) { return static_cast<const TensorImpl*>(t); }

}  // namespace

ErrorKind error_kind_of(gx_status status) {
  switch (status) {
    case GX_ERR_INVALID_ARGUMENT: return ErrorKind::Value;
    case GX_ERR_OUT_OF_MEMORY: return ErrorKind::OutOfMemory;
    case GX_ERR_CUDA: return ErrorKind::Cuda;
    case GX_ERR_NOT_COMPILED: return ErrorKind::NotCompiled;
    default: return ErrorKind::Internal;
  }
}

namespace {

gx_status status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Type:
    case ErrorKind::Range:
    case ErrorKind::Value: return GX_ERR_INVALID_ARGUMENT;
    case ErrorKind::OutOfMemory: return GX_ERR_OUT_OF_MEMORY;
    case ErrorKind::Cuda: return GX_ERR_CUDA;
    case ErrorKind::NotCompiled: return GX_ERR_NOT_COMPILED;
    case ErrorKind::Internal: return GX_ERR_INTERNAL;
  }
  return GX_ERR_INTERNAL;
}

template <typename F>
gx_status guarded(F&& f) noexcept {
  try {
    f();
    return GX_OK;
  } catch (const Error& e) {
    tls_last_error = e.what();
    return status_of(e.kind());
  } catch (const std::exception& e) {
    tls_last_error = e.what();
    return GX_ERR_INTERNAL;
  } catch (...) {
    tls_last_error = "unknown C++ exception";
    return GX_ERR_INTERNAL;
  }
}

const char* last_error() { return tls_last_error.c_str(); }
int32_t tensor_ndim(const gx_tensor* t) { return impl(t)->ndim(); }
const int64_t* tensor_sizes(const gx_tensor* t) { return impl(t)->sizes(); }
const int64_t* tensor_strides(const gx_tensor* t) { return impl(t)->strides(); }
int64_t tensor_numel(const gx_tensor* t) { return impl(t)->numel(); }
gx_dtype tensor_dtype(const gx_tensor* t) { return static_cast<gx_dtype>(impl(t)->dtype()); }
gx_device tensor_device(const gx_tensor* t) { return impl(t)->device().to_c(); }
void* tensor_data(const gx_tensor* t) { return impl(t)->data(); }
void tensor_retain(gx_tensor* t) { impl(t)->retain(); }
void tensor_release(gx_tensor* t) { impl(t)->release(); }

gx_status tensor_empty(int32_t ndim, const int64_t* sizes, gx_dtype dtype, gx_device device,
                       gx_tensor** out) {
  return guarded([&] {
    GX_CHECK_RANGE(ndim >= 0 && ndim <= kMaxDims, "empty: ndim must be in [0, ", kMaxDims, "], got ", ndim);
    GX_CHECK_TYPE(is_valid_dtype(dtype), "empty: unknown dtype code ", static_cast<int>(dtype));
    GX_CHECK_TYPE(device.type == GX_CPU || device.type == GX_CUDA, "empty: unknown device type ", device.type);
    Device dev{static_cast<gx_device_type>(device.type), device.type == GX_CPU ? 0 : device.index};
    if (dev.is_cuda()) cuda::check_device(dev.index, "empty");
    *out = TensorImpl::empty(sizes, static_cast<int32_t>(ndim), static_cast<DType>(dtype), dev);
  });
}

gx_status current_stream(int32_t device_index, void** stream_out) {
  return guarded([&] {
    // NOTE [ Current device ] in cuda/runtime.h: outside a CUDA op, the thread's current device.
    const int device = device_index >= 0 ? device_index : tls_dispatch_device >= 0 ? tls_dispatch_device : cuda::current_device();
    *stream_out = cuda::current_stream(device);
  });
}

void set_error(gx_status, const char* message) { tls_last_error = message ? message : ""; }

gx_status def_op(gx_registrar* reg, const char* ns, const char* schema, const char* doc, int32_t* op_out) {
  return guarded([&] {
    GX_CHECK_VALUE(ns && schema, "def: namespace and schema are required");
    *op_out = static_cast<Registrar*>(reg)->def(ns, schema, doc ? doc : "");
  });
}

gx_status impl_op(gx_registrar* reg, int32_t op, gx_device_type device, gx_boxed_fn fn, void* ctx,
                  const char* signature) {
  return guarded([&] {
    GX_CHECK_VALUE(fn != nullptr, "impl: null function");
    static_cast<Registrar*>(reg)->impl(op, device, fn, ctx, signature ? signature : "");
  });
}

gx_status set_derivative(gx_registrar* reg, int32_t op, const char* formula) {
  return guarded([&] {
    GX_CHECK_VALUE(formula != nullptr && *formula != '\0', "derivative: the formula is empty");
    static_cast<Registrar*>(reg)->derivative(op, formula);
  });
}

gx_status tensor_zero(gx_tensor* t) {
  return guarded([&] { fill_(*static_cast<TensorImpl*>(t), 0); });
}

// --- 1.1 ----------------------------------------------------------------------

TensorImpl* mut(gx_tensor* t) { return static_cast<TensorImpl*>(t); }

Device device_of(gx_device d, const char* what) {
  GX_CHECK_TYPE(d.type == GX_CPU || d.type == GX_CUDA, what, ": unknown device type ", d.type);
  Device dev{static_cast<gx_device_type>(d.type), d.type == GX_CPU ? 0 : d.index};
  if (dev.is_cuda()) cuda::check_device(dev.index, what);
  return dev;
}

int64_t tensor_storage_offset(const gx_tensor* t) { return impl(t)->offset(); }

gx_status tensor_view(const gx_tensor* base, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                      int64_t offset, gx_tensor** out) {
  return guarded([&] {
    GX_CHECK_RANGE(ndim >= 0 && ndim <= kMaxDims, "view: ndim must be in [0, ", kMaxDims, "], got ", ndim);
    *out = TensorImpl::view(*impl(base), ndim, sizes, strides, offset);
  });
}

gx_status tensor_copy(gx_tensor* dst, const gx_tensor* src) {
  return guarded([&] { copy_(*mut(dst), *impl(src)); });
}

gx_status tensor_to_device(const gx_tensor* t, gx_device device, gx_tensor** out) {
  return guarded([&] { *out = to_device(*impl(t), device_of(device, "to")); });
}

gx_status tensor_contiguous(const gx_tensor* t, gx_tensor** out) {
  return guarded([&] { *out = contiguous(*impl(t)); });
}

// The value's bit pattern in t's dtype comes from the core's own conversion
// (a one-element arange on the CPU), so every dtype, float16 and bfloat16
// included, converts as gx.full's values do.
gx_status tensor_fill(gx_tensor* t, double value) {
  return guarded([&] {
    TensorImpl* one = TensorImpl::empty({1}, mut(t)->dtype(), Device::cpu());
    uint64_t bits = 0;
    try {
      arange_(*one, value, 0);
      std::memcpy(&bits, one->data(), one->itemsize());
    } catch (...) {
      one->release();
      throw;
    }
    one->release();
    fill_(*mut(t), bits);
  });
}

gx_status find_op(const char* name, const gx_op** out) {
  return guarded([&] {
    GX_CHECK_VALUE(name != nullptr, "find_op: null name");
    *out = &op_by_name(name);
  });
}

gx_status call_op(const gx_op* op, const gx_value* args, int32_t nargs, gx_value* rets, int32_t nrets) {
  return guarded([&] {
    GX_CHECK_VALUE(op != nullptr, "call_op: null op");
    const OpDef& def = *static_cast<const OpDef*>(op);
    GX_CHECK_VALUE(nrets == def.num_returns(), def.qualified, ": returns ", def.num_returns(), " value",
                   def.num_returns() == 1 ? "" : "s", " but the caller has room for ", nrets);
    GX_CHECK_VALUE(nargs >= 0 && nargs <= 64, def.qualified, ": ", nargs, " arguments given");
    gx_value checked[64];
    for (int32_t i = 0; i < nargs; ++i) checked[i] = args[i];
    check_values(def, checked, nargs);
    for (int32_t i = 0; i < nrets; ++i) rets[i] = gx_value{};
    invoke_op(def, checked, rets);
  });
}

gx_device current_device() {
  if (cuda::device_count() == 0) return gx_device{GX_CPU, 0};
  return gx_device{GX_CUDA, cuda::current_device()};
}

const gx_api kApi = {
    GX_ABI_VERSION_MAJOR, GX_ABI_VERSION_MINOR, sizeof(gx_api),
    last_error,
    tensor_ndim, tensor_sizes, tensor_strides, tensor_numel, tensor_dtype, tensor_device, tensor_data,
    tensor_retain, tensor_release,
    tensor_empty,
    current_stream,
    set_error,
    def_op,
    impl_op,
    tensor_zero,
    tensor_storage_offset,
    tensor_view,
    tensor_copy,
    tensor_to_device,
    tensor_contiguous,
    tensor_fill,
    find_op,
    call_op,
    current_device,
    set_derivative,
};

}  // namespace

const gx_api* abi_table() { return &kApi; }
const char* abi_last_error() { return tls_last_error.c_str(); }
void abi_set_dispatch_device(int device) { tls_dispatch_device = device; }
int abi_dispatch_device() { return tls_dispatch_device; }

}  // namespace gx::core
