#include "core/op_call.h"

#include "base/error.h"
#include "core/abi.h"
#include "core/tensor.h"

namespace gx::core {
namespace {

const char* kind_name(int32_t kind) {
  switch (kind) {
    case GX_VALUE_NONE: return "None";
    case GX_VALUE_TENSOR: return "a Tensor";
    case GX_VALUE_INT: return "an int";
    case GX_VALUE_FLOAT: return "a float";
    case GX_VALUE_BOOL: return "a bool";
    case GX_VALUE_STR: return "a str";
    case GX_VALUE_INT_LIST: return "an int[]";
    case GX_VALUE_TENSOR_LIST: return "a Tensor[]";
    case GX_VALUE_DTYPE: return "a ScalarType";
    case GX_VALUE_HANDLE: return "a Handle";
    case GX_VALUE_DEVICE: return "a Device";
  }
  return "an unknown value kind";
}

gx_value_kind kind_of(ArgType t) {
  switch (t) {
    case ArgType::Tensor: return GX_VALUE_TENSOR;
    case ArgType::TensorList: return GX_VALUE_TENSOR_LIST;
    case ArgType::Int: return GX_VALUE_INT;
    case ArgType::Float: return GX_VALUE_FLOAT;
    case ArgType::Bool: return GX_VALUE_BOOL;
    case ArgType::Str: return GX_VALUE_STR;
    case ArgType::IntList: return GX_VALUE_INT_LIST;
    case ArgType::ScalarType: return GX_VALUE_DTYPE;
    case ArgType::Handle: return GX_VALUE_HANDLE;
    case ArgType::Device: return GX_VALUE_DEVICE;
  }
  return GX_VALUE_NONE;
}

}  // namespace

gx_value value_of_default(const DefaultValue& d) {
  gx_value out{};
  out.kind = d.kind;
  switch (d.kind) {
    case GX_VALUE_INT: out.v.i = d.i; break;
    case GX_VALUE_FLOAT: out.v.f = d.f; break;
    case GX_VALUE_BOOL: out.v.b = d.b ? 1 : 0; break;
    case GX_VALUE_STR: out.v.str.data = d.s.data(); out.v.str.len = d.s.size(); break;
    case GX_VALUE_INT_LIST: out.v.ints.data = d.ints.data(); out.v.ints.len = d.ints.size(); break;
    case GX_VALUE_DTYPE: out.v.dtype = d.dtype; break;
    default: break;
  }
  return out;
}

namespace {

struct Dispatch {
  bool found = false;
  Device device;
  const char* first_arg = nullptr;
};

void note_device(const OpDef& op, Dispatch& d, const gx_tensor* t, const char* arg) {
  const Device dev = static_cast<const TensorImpl*>(t)->device();
  if (!d.found) {
    d = Dispatch{true, dev, arg};
    return;
  }
  if (dev != d.device) {
    fail(ErrorKind::Value, op.qualified, ": argument '", arg, "' is on ", dev.str(), " but argument '", d.first_arg,
         "' is on ", d.device.str(), "; move it with .to('", d.device.str(), "')");
  }
}

// Tensors an implementation returned that will not reach the caller (after an error).
void release_returns(gx_value* rets, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    gx_value& r = rets[i];
    if (r.kind == GX_VALUE_TENSOR) static_cast<TensorImpl*>(r.v.tensor)->release();
    if (r.kind == GX_VALUE_TENSOR_LIST)
      for (size_t k = 0; k < r.v.tensors.len; ++k) static_cast<TensorImpl*>(r.v.tensors.data[k])->release();
    r.kind = GX_VALUE_NONE;
  }
}

// Restores the caller's dispatch device when an op called from inside another returns.
class DispatchDeviceScope {
 public:
  explicit DispatchDeviceScope(int device) : saved_(abi_dispatch_device()) { abi_set_dispatch_device(device); }
  ~DispatchDeviceScope() { abi_set_dispatch_device(saved_); }
  DispatchDeviceScope(const DispatchDeviceScope&) = delete;
  DispatchDeviceScope& operator=(const DispatchDeviceScope&) = delete;

 private:
  int saved_;
};

}  // namespace

void check_values(const OpDef& op, gx_value* args, int32_t nargs) {
  const Schema& s = op.schema;
  GX_CHECK_TYPE(nargs == static_cast<int32_t>(s.args.size()), op.qualified, ": takes ", s.args.size(), " argument",
                s.args.size() == 1 ? "" : "s", " but ", nargs, " were given (schema: ", s.text, ")");
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Argument& a = s.args[i];
    gx_value& v = args[i];
    if (v.kind == GX_VALUE_NONE) {
      if (a.default_value) {
        v = value_of_default(*a.default_value);
        continue;
      }
      GX_CHECK_TYPE(a.type.optional, op.qualified, ": missing required argument '", a.name, "' (",
                    type_to_string(a.type), ")");
      continue;
    }
    const gx_value_kind want = kind_of(a.type.type);
    if (want == GX_VALUE_FLOAT && v.kind == GX_VALUE_INT) {
      v.kind = GX_VALUE_FLOAT;  // an int where a float goes, as a JS integer is one
      v.v.f = static_cast<double>(v.v.i);
    }
    GX_CHECK_TYPE(v.kind == want, op.qualified, ": argument '", a.name, "' must be ", kind_name(want),
                  a.type.optional ? " or None" : "", ", got ", kind_name(v.kind));
    switch (v.kind) {
      case GX_VALUE_TENSOR:
        GX_CHECK_TYPE(v.v.tensor != nullptr, op.qualified, ": argument '", a.name, "' is an undefined Tensor");
        break;
      case GX_VALUE_TENSOR_LIST:
        GX_CHECK_TYPE(v.v.tensors.len == 0 || v.v.tensors.data != nullptr, op.qualified, ": argument '", a.name,
                      "' is a null list");
        for (size_t k = 0; k < v.v.tensors.len; ++k) {
          GX_CHECK_TYPE(v.v.tensors.data[k] != nullptr, op.qualified, ": argument '", a.name, "[", k,
                        "]' is an undefined Tensor");
        }
        break;
      case GX_VALUE_INT_LIST:
        GX_CHECK_TYPE(v.v.ints.len == 0 || v.v.ints.data != nullptr, op.qualified, ": argument '", a.name,
                      "' is a null list");
        break;
      case GX_VALUE_STR:
        GX_CHECK_TYPE(v.v.str.len == 0 || v.v.str.data != nullptr, op.qualified, ": argument '", a.name,
                      "' is a null string");
        break;
      case GX_VALUE_DTYPE:
        GX_CHECK_TYPE(v.v.dtype >= 0 && v.v.dtype < kNumDTypes, op.qualified, ": argument '", a.name,
                      "': unknown dtype code ", v.v.dtype);
        break;
      case GX_VALUE_DEVICE:
        GX_CHECK_TYPE((v.v.device.type == GX_CPU && v.v.device.index == 0) ||
                          (v.v.device.type == GX_CUDA && v.v.device.index >= 0),
                      op.qualified, ": argument '", a.name, "' is not a device (type ", v.v.device.type, ", index ",
                      v.v.device.index, ")");
        break;
      default: break;
    }
  }
}

void invoke_op(const OpDef& op, const gx_value* args, gx_value* rets) {
  const Schema& s = op.schema;
  Dispatch dispatch;
  for (size_t i = 0; i < s.args.size(); ++i) {
    const gx_value& v = args[i];
    const char* name = s.args[i].name.c_str();
    if (v.kind == GX_VALUE_TENSOR) note_device(op, dispatch, v.v.tensor, name);
    if (v.kind == GX_VALUE_TENSOR_LIST)
      for (size_t k = 0; k < v.v.tensors.len; ++k) note_device(op, dispatch, v.v.tensors.data[k], name);
  }
  // No tensor: the first Device argument says where (NOTE [ Handles and devices in schemas ]).
  for (size_t i = 0; i < s.args.size() && !dispatch.found; ++i) {
    const gx_value& v = args[i];
    if (v.kind == GX_VALUE_DEVICE) {
      dispatch.found = true;
      dispatch.device = v.v.device.type == GX_CUDA ? Device::cuda(v.v.device.index) : Device::cpu();
    }
  }
  const Device device = dispatch.found ? dispatch.device : Device::cpu();
  const OpImpl& impl = op.impls[device.type];
  if (impl.fn == nullptr) {
    const bool other = op.impls[device.is_cpu() ? GX_CUDA : GX_CPU].fn != nullptr;
    fail(ErrorKind::Value, op.qualified, ": no ", device.is_cpu() ? "CPU" : "CUDA", " implementation for inputs on ",
         device.str(),
         other ? (device.is_cpu() ? "; it runs on CUDA: move the inputs with .to('cuda')"
                                  : "; it runs on the CPU: move the inputs with .cpu()")
               : "");
  }
  const size_t nrets = s.returns.size();
  gx_status st;
  {
    // A CPU op keeps the caller's dispatch device: a CUDA op calling it still has its stream.
    DispatchDeviceScope scope(device.is_cuda() ? device.index : abi_dispatch_device());
    st = impl.fn(impl.ctx, args, static_cast<int32_t>(s.args.size()), rets, static_cast<int32_t>(nrets));
  }
  if (st != GX_OK) {
    release_returns(rets, nrets);
    fail(error_kind_of(st), op.qualified, ": ", abi_last_error());
  }
}

}  // namespace gx::core
