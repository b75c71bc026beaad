// N-API functions over registered ops: loading and describing extensions,
// and calling an op by id. lib/extension/runtime.ts is the JS side.
//
// NOTE [ Op calls ]
// callOp(id, ...args) converts each JS argument by the op's schema (count,
// kind, int range, defaults); core/op_call.h's invoke_op (the path C++
// extensions' calls take too) picks the device from the tensor arguments (all
// must agree) and calls that device's boxed implementation; the returns become
// JS values. Every failure names the op and the argument. A new result goes
// into a disposed tensor's handle where JS passes one (NOTE [ Recycled
// handles ] in tensor_handle.h): allocated here from the staged request for
// a built-in op's `out`, or taking a returned tensor. callOpStaged is the
// same call with the non-tensor arguments read from the staging area (NOTE
// [ Staged op calls ] in op_values.cpp): what the generated calls use. The
// conversions both share are op_values.h's.
#include <chrono>
#include <string>
#include <vector>

#include "binding/args.h"
#include "binding/bindings.h"
#include "binding/js_errors.h"
#include "binding/op_values.h"
#include "binding/staging.h"
#include "core/abi.h"
#include "core/extension_loader.h"
#include "core/op_call.h"
#include "core/registry.h"
#include "core/tensor.h"
#include "cuda/runtime.h"

namespace gx::core::js {
namespace {

Napi::Value CallOp(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    // NOTE [ Recycled handles ]: a spare handle after the arguments (its flag
    // cleared first, so that no error leaves it for the next call), and a staged result request.
    double* area = staging::area();
    const bool has_spare = area[staging::kResultSpare] == 1;
    area[staging::kResultSpare] = 0;
    const OpDef& op = cached_op(arg_int(info, 0, "callOp", "op"));
    const Schema& s = op.schema;
    Napi::Value spare;
    size_t given = info.Length() - 1;
    if (has_spare && given > 0) spare = info[given--];
    GX_CHECK_TYPE(given <= s.args.size(), op.qualified, ": takes ", s.args.size(), " argument",
                  s.args.size() == 1 ? "" : "s", " but ", given, " were given (schema: ", s.text, ")");
    CallScratch scratch;
    if (area[staging::kResultPending] == 1) scratch.request = area + staging::kResultRequest;
    CallValues args(s.args.size());
    for (size_t i = 0; i < s.args.size(); ++i) {
      args[i] = convert_arg(op, s.args[i], i < given ? info[i + 1] : info.Env().Undefined(), scratch);
    }
    return invoke_to_js(info.Env(), op, args, spare);
  });
}

// The arguments of a staged call (NOTE [ Staged op calls ]): the tensors from info[first...], the rest from their slots.
void convert_staged(const Napi::CallbackInfo& info, const OpDef& op, size_t first, CallScratch& scratch, CallValues& args) {
  const Schema& s = op.schema;
  GX_CHECK_TYPE(s.args.size() <= staging::kMaxStagedOpArgs, op.qualified, ": internal error: ", s.args.size(),
                " arguments are more than a staged call holds; call it with callOp");
  const size_t given = info.Length() > first ? info.Length() - first : 0;
  const double* slots = staging::area() + staging::kOpArgs;
  size_t next = 0;  // tensors taken from info
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Argument& a = s.args[i];
    if (a.type.type == ArgType::Tensor) {
      args[i] = convert_arg(op, a, next < given ? info[first + next] : info.Env().Undefined(), scratch);
      ++next;
    } else {
      args[i] = staged_arg(op, a, slots + staging::kOpArgSlots * i);
    }
  }
  for (size_t k = next; k < given; ++k) {
    GX_CHECK_TYPE(info[first + k].IsUndefined(), op.qualified, ": takes ", next, " tensor argument", next == 1 ? "" : "s",
                  " but more were given (schema: ", s.text, ")");
  }
}

Napi::Value CallOpStaged(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    double* area = staging::area();
    const bool has_spare = area[staging::kResultSpare] == 1;
    area[staging::kResultSpare] = 0;
    const OpDef& op = cached_op(arg_int(info, 0, "callOpStaged", "op"));
    Napi::Value spare;
    size_t first = 1;  // info index of the first tensor
    if (has_spare && info.Length() > 1) spare = info[first++];
    CallScratch scratch;
    if (area[staging::kResultPending] == 1) scratch.request = area + staging::kResultRequest;
    CallValues args(op.schema.args.size());
    convert_staged(info, op, first, scratch, args);
    return invoke_to_js(info.Env(), op, args, spare);
  });
}

// timeOpCall(id, batches, perBatch, ...tensors): the C++ part of a staged op
// call, for the call-latency benchmark (bench/calls.bench.ts): the arguments
// converted once as callOpStaged converts them, then the op invoked perBatch
// times from C++ (core/op_call.h's invoke_op: dispatch, the implementation,
// its launch), each batch closed by a synchronize of the device's current
// stream. One figure per batch, microseconds per call. Against launchFloor in
// the same process it says what the op's C++ costs over a bare launch, and
// against callOpStaged what the N-API crossing and the conversion cost. Only
// for ops that write into their arguments and return nothing.
Napi::Value TimeOpCall(const Napi::CallbackInfo& info) {
  constexpr const char* kFn = "timeOpCall";
  return guard(info.Env(), [&]() -> Napi::Value {
    const OpDef& op = cached_op(arg_int(info, 0, kFn, "op"));
    GX_CHECK_TYPE(op.schema.returns.empty(), kFn, ": ", op.qualified, " returns a value; only ops that return nothing are timed");
    const int64_t batches = arg_int(info, 1, kFn, "batches"), per = arg_int(info, 2, kFn, "perBatch");
    GX_CHECK_RANGE(batches >= 1 && batches <= 10000 && per >= 1 && per <= 1000000, kFn,
                   ": batches must be in [1, 10000] and perBatch in [1, 1000000]");
    staging::area()[staging::kResultSpare] = 0;
    CallScratch scratch;
    CallValues args(op.schema.args.size());
    convert_staged(info, op, 3, scratch, args);
    Device device = Device::cpu();
    for (const gx_value& v : args)
      if (v.kind == GX_VALUE_TENSOR) device = static_cast<const TensorImpl*>(v.v.tensor)->device();
    Napi::Float64Array out = Napi::Float64Array::New(info.Env(), static_cast<size_t>(batches));
    for (size_t b = 0; b < out.ElementLength(); ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      gx_value none{};  // no returns: the op writes into its arguments
      for (int64_t i = 0; i < per; ++i) invoke_op(op, args.data(), &none);
      if (device.is_cuda()) cuda::synchronize_stream(cuda::current_stream(device.index));
      out[b] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / static_cast<double>(per);
    }
    return out;
  });
}

Napi::Value default_to_js(Napi::Env env, const OpDef& op, const DefaultValue& d) {
  gx_value v = value_of_default(d);
  if (d.kind == GX_VALUE_INT_LIST) {
    Napi::Array arr = Napi::Array::New(env, d.ints.size());
    for (size_t k = 0; k < d.ints.size(); ++k) arr.Set(static_cast<uint32_t>(k), Napi::Number::New(env, static_cast<double>(d.ints[k])));
    return arr;
  }
  return to_js(env, op, v);
}

Napi::Object op_to_js(Napi::Env env, const OpDef& op) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", Napi::Number::New(env, op.id));
  o.Set("name", Napi::String::New(env, op.schema.name));
  o.Set("qualifiedName", Napi::String::New(env, op.qualified));
  o.Set("schema", Napi::String::New(env, op.schema.text));
  o.Set("doc", Napi::String::New(env, op.doc));
  if (!op.derivative.empty()) o.Set("derivative", Napi::String::New(env, op.derivative));
  Napi::Array args = Napi::Array::New(env, op.schema.args.size());
  for (size_t i = 0; i < op.schema.args.size(); ++i) {
    const Argument& a = op.schema.args[i];
    Napi::Object ao = Napi::Object::New(env);
    ao.Set("name", Napi::String::New(env, a.name));
    ao.Set("type", Napi::String::New(env, type_to_string(a.type)));
    ao.Set("kwOnly", Napi::Boolean::New(env, a.kwarg_only));
    if (a.default_value) ao.Set("default", default_to_js(env, op, *a.default_value));
    args.Set(static_cast<uint32_t>(i), ao);
  }
  o.Set("args", args);
  Napi::Array rets = Napi::Array::New(env, op.schema.returns.size());
  for (size_t i = 0; i < op.schema.returns.size(); ++i) {
    Napi::Object ro = Napi::Object::New(env);
    ro.Set("name", Napi::String::New(env, op.schema.returns[i].name));
    ro.Set("type", Napi::String::New(env, type_to_string(op.schema.returns[i].type)));
    rets.Set(static_cast<uint32_t>(i), ro);
  }
  o.Set("returns", rets);
  o.Set("returnsTuple", Napi::Boolean::New(env, op.schema.returns_tuple));
  Napi::Array devices = Napi::Array::New(env);
  if (op.impls[GX_CPU].fn) devices.Set(devices.Length(), Napi::String::New(env, "cpu"));
  if (op.impls[GX_CUDA].fn) devices.Set(devices.Length(), Napi::String::New(env, "cuda"));
  o.Set("devices", devices);
  return o;
}

Napi::Value describe_ops(Napi::Env env, const std::string& path, const std::vector<const OpDef*>& ops) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("path", Napi::String::New(env, path));
  Napi::Array abi = Napi::Array::New(env, 2);
  abi.Set(0u, Napi::Number::New(env, GX_ABI_VERSION_MAJOR));
  abi.Set(1u, Napi::Number::New(env, GX_ABI_VERSION_MINOR));
  o.Set("abiVersion", abi);
  Napi::Array arr = Napi::Array::New(env, ops.size());
  for (size_t i = 0; i < ops.size(); ++i) arr.Set(static_cast<uint32_t>(i), op_to_js(env, *ops[i]));
  o.Set("ops", arr);
  return o;
}

Napi::Value LoadExtension(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::string path = arg_string(info, 0, "loadExtension", "path");
    return describe_ops(info.Env(), path, load_extension(path));
  });
}

Napi::Value DescribeExtension(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::string path = arg_string(info, 0, "describeExtension", "path");
    std::unique_ptr<Registrar> reg = describe_extension(path);
    std::vector<const OpDef*> ops;
    for (const auto& op : reg->pending()) ops.push_back(op.get());
    return describe_ops(info.Env(), path, ops);
  });
}

Napi::Value ParseSchema(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    OpDef op;
    op.schema = parse_schema(arg_string(info, 0, "parseSchema", "schema"));
    op.qualified = op.schema.name;
    return op_to_js(info.Env(), op);
  });
}

}  // namespace

void register_op_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("loadExtension", Napi::Function::New<LoadExtension>(env, "loadExtension"));
  exports.Set("describeExtension", Napi::Function::New<DescribeExtension>(env, "describeExtension"));
  exports.Set("parseSchema", Napi::Function::New<ParseSchema>(env, "parseSchema"));
  exports.Set("callOp", Napi::Function::New<CallOp>(env, "callOp"));
  exports.Set("callOpStaged", Napi::Function::New<CallOpStaged>(env, "callOpStaged"));
  exports.Set("timeOpCall", Napi::Function::New<TimeOpCall>(env, "timeOpCall"));
}

}  // namespace gx::core::js
