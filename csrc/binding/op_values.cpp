// Op arguments from JS values and the staging area, returns to JS values (op_values.h).
#include "binding/op_values.h"
#include "base/thread_local.h"

#include <cmath>

#include "binding/js_errors.h"
#include "binding/staging.h"
#include "binding/tagged_external.h"
#include "binding/tensor_handle.h"
#include "core/abi.h"
#include "core/op_call.h"

namespace gx::core::js {
namespace {


// A Handle an op returned (NOTE [ Handles and devices in schemas ] in
// core/schema.h), as JS holds it: the op's 64 bits and the namespace of the
// library that made it, so another library's op cannot be handed it.
struct OpaqueHandle {
  static constexpr napi_type_tag kTag = {0x6770757868616e64ULL, 0x6c65000000000001ULL};
  static constexpr const char* kName = "Handle (the result of an op that returns one)";
  uint64_t value = 0;
  std::string ns;
};

// 'cpu' or 'cuda:N' (lib/core/device.ts resolves 'cuda' to the current device before the call).
gx_device parse_device(const OpDef& op, const Argument& a, const std::string& text) {
  if (text == "cpu") return gx_device{GX_CPU, 0};
  const std::string prefix = "cuda:";
  bool ok = text.size() > prefix.size() && text.size() <= prefix.size() + 9 && text.compare(0, prefix.size(), prefix) == 0;
  int32_t index = 0;
  for (size_t k = prefix.size(); ok && k < text.size(); ++k) {
    ok = text[k] >= '0' && text[k] <= '9';
    index = index * 10 + (text[k] - '0');
  }
  GX_CHECK_TYPE(ok, op.qualified, ": argument '", a.name, "' must be 'cpu' or 'cuda:N', got \"", text, "\"");
  return gx_device{GX_CUDA, index};
}

const char* kind_word(ArgType t) {
  switch (t) {
    case ArgType::Tensor: return "a Tensor";
    case ArgType::TensorList: return "an array of Tensors";
    case ArgType::Int: return "an integer";
    case ArgType::Float: return "a number";
    case ArgType::Bool: return "a boolean";
    case ArgType::Str: return "a string";
    case ArgType::IntList: return "an array of integers";
    case ArgType::ScalarType: return "a dtype name (or its code)";
    case ArgType::Handle: return "a Handle";
    case ArgType::Device: return "a device ('cpu' or 'cuda:N')";
  }
  return "a value";
}

std::string js_type_of(const Napi::Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsArray()) return "an array";
  switch (v.Type()) {
    case napi_number: return "number " + v.ToString().Utf8Value();
    case napi_string: return "string \"" + v.As<Napi::String>().Utf8Value() + "\"";
    case napi_boolean: return v.As<Napi::Boolean>().Value() ? "true" : "false";
    case napi_bigint: return "bigint";
    case napi_object: return "an object";
    case napi_function: return "a function";
    default: return "undefined";
  }
}
napi_valuetype type_of(const Napi::Value& v) {
  napi_valuetype t = napi_undefined;
  napi_typeof(v.Env(), v, &t);
  return t;
}

int64_t to_int(const OpDef& op, const Argument& a, const Napi::Value& v, napi_valuetype type) {
  if (type == napi_bigint) {
    bool lossless = false;
    const int64_t x = v.As<Napi::BigInt>().Int64Value(&lossless);
    GX_CHECK_RANGE(lossless, op.qualified, ": argument '", a.name, "' does not fit in int64");
    return x;
  }
  if (type == napi_number) {
    const double d = v.As<Napi::Number>().DoubleValue();
    GX_CHECK_TYPE(std::isfinite(d) && std::floor(d) == d, op.qualified, ": argument '", a.name,
                  "' must be an integer, got ", js_type_of(v));
    GX_CHECK_RANGE(std::fabs(d) <= 9007199254740991.0, op.qualified, ": argument '", a.name,
                   "' is beyond 2^53; pass a bigint");
    return static_cast<int64_t>(d);
  }
  fail(ErrorKind::Type, op.qualified, ": argument '", a.name, "' must be an integer, got ", js_type_of(v));
}


// Tensors an implementation returned but that did not reach JS (after an error).
void release_returns(CallValues& rets) {
  for (gx_value& r : rets) {
    if (r.kind == GX_VALUE_TENSOR) static_cast<TensorImpl*>(r.v.tensor)->release();
    if (r.kind == GX_VALUE_TENSOR_LIST)
      for (size_t k = 0; k < r.v.tensors.len; ++k) static_cast<TensorImpl*>(r.v.tensors.data[k])->release();
    r.kind = GX_VALUE_NONE;
  }
}

}  // namespace

// At most one napi_typeof per argument (a tensor handle needs none): each Napi::Value::IsX() is a call of its own.
gx_value convert_arg(const OpDef& op, const Argument& a, const Napi::Value& v, CallScratch& scratch) {
  gx_value out{};
  if (a.type.type == ArgType::Tensor) {
    // A tensor handle, the common argument, needs no napi_typeof: unwrapping it says what it is.
    if (TensorImpl* t = TensorHandle::TryFromArgument(v.Env(), v, op.qualified.c_str(), a.name.c_str(), scratch.request)) {
      out.kind = GX_VALUE_TENSOR;
      out.v.tensor = t;
      return out;
    }
  }
  const napi_valuetype type = type_of(v);
  if (type == napi_undefined || type == napi_null) {
    if (a.default_value) return value_of_default(*a.default_value);
    GX_CHECK_TYPE(a.type.optional, op.qualified, ": missing required argument '", a.name, "' (",
                  type_to_string(a.type), ")");
    out.kind = GX_VALUE_NONE;
    return out;
  }
  auto expect = [&](bool ok) {
    GX_CHECK_TYPE(ok, op.qualified, ": argument '", a.name, "' must be ", kind_word(a.type.type),
                  a.type.optional ? " or null" : "", ", got ", js_type_of(v));
  };
  switch (a.type.type) {
    case ArgType::Tensor: {
      // Not a tensor handle (TryFromArgument above): the error names what it is.
      expect(type == napi_external);  // tensor handles are Externals (tensor_handle.h)
      GX_CHECK_TYPE(false, op.qualified, ": argument '", a.name, "' must be a Tensor");
      break;
    }
    case ArgType::TensorList: {
      expect(v.IsArray());
      Napi::Array arr = v.As<Napi::Array>();
      scratch.tensor_lists.emplace_back(arr.Length());
      auto& list = scratch.tensor_lists.back();
      for (uint32_t k = 0; k < arr.Length(); ++k) {
        const std::string name = a.name + "[" + std::to_string(k) + "]";
        TensorImpl& t = TensorHandle::FromValue(arr.Get(k), op.qualified.c_str(), name.c_str());
        list[k] = &t;
      }
      out.kind = GX_VALUE_TENSOR_LIST;
      out.v.tensors.data = list.data();
      out.v.tensors.len = list.size();
      break;
    }
    case ArgType::Int:
      out.kind = GX_VALUE_INT;
      out.v.i = to_int(op, a, v, type);
      break;
    case ArgType::Float:
      expect(type == napi_number);
      out.kind = GX_VALUE_FLOAT;
      out.v.f = v.As<Napi::Number>().DoubleValue();
      break;
    case ArgType::Bool:
      expect(type == napi_boolean);
      out.kind = GX_VALUE_BOOL;
      out.v.b = v.As<Napi::Boolean>().Value() ? 1 : 0;
      break;
    case ArgType::Str:
      expect(type == napi_string);
      scratch.strings.push_back(v.As<Napi::String>().Utf8Value());
      out.kind = GX_VALUE_STR;
      out.v.str.data = scratch.strings.back().data();
      out.v.str.len = scratch.strings.back().size();
      break;
    case ArgType::IntList: {
      scratch.int_lists.emplace_back();
      auto& list = scratch.int_lists.back();
      if (v.IsArray()) {
        Napi::Array arr = v.As<Napi::Array>();
        for (uint32_t k = 0; k < arr.Length(); ++k) {
          const Napi::Value e = arr.Get(k);
          list.push_back(to_int(op, a, e, type_of(e)));
        }
      } else {
        expect(type == napi_number || type == napi_bigint);  // a single int means [int], as in PyTorch
        list.push_back(to_int(op, a, v, type));
      }
      out.kind = GX_VALUE_INT_LIST;
      out.v.ints.data = list.data();
      out.v.ints.len = list.size();
      break;
    }
    case ArgType::ScalarType: {
      int code = -1;
      if (type == napi_number) {
        // The built-in ops' calls pass the dtype's code (lib/generated/ops.ts): no string to read.
        const double d = v.As<Napi::Number>().DoubleValue();
        if (d >= 0 && d < kNumDTypes && d == static_cast<double>(static_cast<int>(d))) code = static_cast<int>(d);
        GX_CHECK_TYPE(code >= 0, op.qualified, ": argument '", a.name, "': unknown dtype code ", d);
      } else {
        expect(type == napi_string);
        const std::string name = v.As<Napi::String>().Utf8Value();
        for (int k = 0; k < kNumDTypes; ++k)
          if (name == dtype_name(static_cast<DType>(k))) code = k;
        GX_CHECK_TYPE(code >= 0, op.qualified, ": argument '", a.name, "': unknown dtype \"", name, "\"");
      }
      out.kind = GX_VALUE_DTYPE;
      out.v.dtype = code;
      break;
    }
    case ArgType::Handle: {
      OpaqueHandle* h = try_unwrap_external<OpaqueHandle>(v);
      expect(h != nullptr);
      GX_CHECK_TYPE(h->ns == op.ns, op.qualified, ": argument '", a.name, "' is a Handle made by library '", h->ns,
                    "'; only its own ops take it");
      out.kind = GX_VALUE_HANDLE;
      out.v.handle = h->value;
      break;
    }
    case ArgType::Device:
      expect(v.IsString());
      out.kind = GX_VALUE_DEVICE;
      out.v.device = parse_device(op, a, v.As<Napi::String>().Utf8Value());
      break;
  }
  return out;
}


Napi::Value to_js(Napi::Env env, const OpDef& op, gx_value& v, Napi::Value* spare) {
  switch (v.kind) {
    case GX_VALUE_TENSOR: {
      TensorImpl* t = static_cast<TensorImpl*>(v.v.tensor);
      v.kind = GX_VALUE_NONE;  // ownership moves to the handle
      if (spare == nullptr || spare->IsEmpty()) return TensorHandle::Wrap(env, t);
      const Napi::Value h = TensorHandle::Refill(env, *spare, t);
      *spare = Napi::Value();
      return h;
    }
    case GX_VALUE_TENSOR_LIST: {
      Napi::Array arr = Napi::Array::New(env, v.v.tensors.len);
      for (size_t k = 0; k < v.v.tensors.len; ++k) {
        arr.Set(static_cast<uint32_t>(k), TensorHandle::Wrap(env, static_cast<TensorImpl*>(v.v.tensors.data[k])));
      }
      v.kind = GX_VALUE_NONE;
      return arr;
    }
    case GX_VALUE_INT:
      if (std::llabs(v.v.i) <= 9007199254740991LL) return Napi::Number::New(env, static_cast<double>(v.v.i));
      return Napi::BigInt::New(env, v.v.i);
    case GX_VALUE_FLOAT: return Napi::Number::New(env, v.v.f);
    case GX_VALUE_BOOL: return Napi::Boolean::New(env, v.v.b != 0);
    case GX_VALUE_STR: return Napi::String::New(env, v.v.str.data, v.v.str.len);
    case GX_VALUE_DTYPE: return Napi::String::New(env, dtype_name(static_cast<DType>(v.v.dtype)));
    case GX_VALUE_HANDLE: return wrap_external(env, new OpaqueHandle{v.v.handle, op.ns});
    case GX_VALUE_DEVICE: {
      const Device d = v.v.device.type == GX_CUDA ? Device::cuda(v.v.device.index) : Device::cpu();
      return Napi::String::New(env, d.str());
    }
    default: return env.Null();
  }
}

// The OpDef of a registry id, remembered per thread: ops are never unregistered,
// and the registry's lock showed in a one-element call's profile.
const OpDef& cached_op(int64_t id) {
  GX_THREAD_LOCAL std::vector<const OpDef*> ops;
  if (id >= 0 && static_cast<uint64_t>(id) < ops.size() && ops[static_cast<size_t>(id)] != nullptr) {
    return *ops[static_cast<size_t>(id)];
  }
  const OpDef& op = op_by_id(id);
  if (ops.size() <= static_cast<size_t>(id)) ops.resize(static_cast<size_t>(id) + 1, nullptr);
  ops[static_cast<size_t>(id)] = &op;
  return op;
}

// Calls the op on converted arguments and gives its returns to JS (a returned tensor into `spare` when there is one).
Napi::Value invoke_to_js(Napi::Env env, const OpDef& op, CallValues& args, Napi::Value& spare) {
  const Schema& s = op.schema;
  CallValues rets(s.returns.size());  // each GX_VALUE_NONE until the implementation sets it
  invoke_op(op, args.data(), rets.data());
  if (!s.returns_tuple) return s.returns.empty() ? env.Undefined() : to_js(env, op, rets[0], &spare);
  Napi::Array out = Napi::Array::New(env, rets.size());
  try {
    for (size_t k = 0; k < rets.size(); ++k) out.Set(static_cast<uint32_t>(k), to_js(env, op, rets[k], &spare));
  } catch (...) {
    release_returns(rets);
    throw;
  }
  return out;
}
// NOTE [ Staged op calls ]
// callOpStaged(id, ...tensors) is callOp with only the tensor arguments
// (`Tensor`, `Tensor?`, in schema order; after the spare handle when one is
// flagged) passed as JS values; every other argument i is read from the
// staging area's OpArgs region, slots kOpArgs + 3i: value, tag, low word.
// Reading a number through N-API (napi_typeof, then napi_get_value_*) cost
// about as much as a one-element CPU kernel per scalar; a slot is a load. The
// calls generated for the built-in ops (lib/generated/ops.ts) and for users'
// ops (lib/toolkit/codegen.ts, through extensionRuntime.callStaged, which
// passes a fixed number of tensors: trailing undefined ones are no
// arguments) stage right before calling, with no JS in between that could
// call an op. Tags: 0 absent (the default, None for `T?`, else the usual
// missing-argument error); 1 the value is in slot 0; for ints, 2 the value is
// slot 0 * 2^32 + slot 2 (a bigint beyond 2^53), 3 it does not fit in int64.
// Types with no slot form (lists, str, Handle, Device) keep callOp.
namespace {
int64_t staged_int(const OpDef& op, const Argument& a, const double* slot) {
  if (slot[1] == 2) return static_cast<int64_t>(static_cast<uint64_t>(static_cast<int64_t>(slot[0])) << 32 |
                                                static_cast<uint64_t>(slot[2]));
  GX_CHECK_RANGE(slot[1] != 3, op.qualified, ": argument '", a.name, "' does not fit in int64");
  const double d = slot[0];
  // Within 2^53 the cast is exact, so it tests wholeness; NaN and the infinities fail the range test.
  if (std::fabs(d) <= 9007199254740991.0 && static_cast<double>(static_cast<int64_t>(d)) == d) return static_cast<int64_t>(d);
  GX_CHECK_TYPE(std::isfinite(d) && std::floor(d) == d, op.qualified, ": argument '", a.name, "' must be an integer, got number ", d);
  fail(ErrorKind::Range, op.qualified, ": argument '", a.name, "' is beyond 2^53; pass a bigint");
}

}  // namespace

gx_value staged_arg(const OpDef& op, const Argument& a, const double* slot) {
  gx_value out{};
  if (slot[1] == 0) {
    if (a.default_value) return value_of_default(*a.default_value);
    GX_CHECK_TYPE(a.type.optional, op.qualified, ": missing required argument '", a.name, "' (", type_to_string(a.type), ")");
    return out;  // None
  }
  switch (a.type.type) {
    case ArgType::Int:
      out.kind = GX_VALUE_INT;
      out.v.i = staged_int(op, a, slot);
      break;
    case ArgType::Float:
      out.kind = GX_VALUE_FLOAT;
      out.v.f = slot[0];
      break;
    case ArgType::Bool:
      out.kind = GX_VALUE_BOOL;
      out.v.b = slot[0] != 0 ? 1 : 0;
      break;
    case ArgType::ScalarType: {
      const double d = slot[0];
      GX_CHECK_TYPE(d >= 0 && d < kNumDTypes && d == static_cast<double>(static_cast<int>(d)), op.qualified,
                    ": argument '", a.name, "': unknown dtype code ", d);
      out.kind = GX_VALUE_DTYPE;
      out.v.dtype = static_cast<int>(d);
      break;
    }
    default:
      fail(ErrorKind::Type, op.qualified, ": internal error: argument '", a.name, "' (", type_to_string(a.type),
           ") cannot be staged; call it with callOp");
  }
  return out;
}

}  // namespace gx::core::js
