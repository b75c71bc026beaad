// launchKernel: launching a run-time kernel (lib/rtc/raw.ts, elementwise.ts,
// reduction.ts) with its extents and arguments, which this file reads from
// the staging area or an array, checks against the kernel's parameter kinds
// (binding/arg_kinds.h) and the device's limits, and packs one slot per
// argument. It is the hot path of every run-time kernel call, hence apart
// from the module functions: no allocation for up to 32 arguments.
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/device.h"
#include "binding/arg_kinds.h"
#include "binding/bindings.h"
#include "binding/rtc_boxes.h"
#include "binding/staging.h"
#include "binding/stream_box.h"
#include "binding/tagged_external.h"
#include "binding/tensor_handle.h"
#include "cuda/runtime.h"
#include "rtc/rtc.h"

namespace gx::core::js {
namespace {

// NOTE [ Argument slots ]
// launchKernel(fn, stream, values?) launches `fn` with the extents, shared
// memory and arguments the caller wrote into this thread's staging area
// (NOTE [ Staging area ] in binding/staging.h); each argument's C type comes from the kinds
// given to moduleGetFunction. Each parameter gets its own 8-byte slot, its
// value in the slot's first bytes (little-endian), and cuLaunchKernel gets one
// pointer per slot: the driver copies as many bytes as the kernel's parameter
// declares, at the offset its ABI wants, so slots need not mimic the C layout.
// The arguments come in one of two forms:
// - numbers in the staging area (no N-API call per argument): tensors as
//   their device addresses (Tensor.address(), exact below 2^53), which the
//   caller has checked are alive and on the kernel's device (lib/rtc/raw.ts
//   does);
// - `values`, an array: tensor handles (checked here: alive, on the kernel's
//   device), numbers, bigints, booleans, null for a null pointer. For what a
//   double cannot hold (bigints beyond 2^53) and for more arguments than the
//   staging area has room for.
// Numbers are range-checked for their kind either way.

constexpr const char* kLaunch = "launchKernel";

// "args[i]" for error messages (TensorHandle wants a C string naming the
// argument before it knows whether it will fail): made once for the first 64.
const char* arg_name(size_t i, char (&buf)[32]) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int k = 0; k < 64; ++k) v.push_back("args[" + std::to_string(k) + "]");
    return v;
  }();
  if (i < names.size()) return names[i].c_str();
  std::snprintf(buf, sizeof(buf), "args[%zu]", i);
  return buf;
}

[[noreturn]] void scalar_range_error(const Napi::Value& v, size_t i, int kind) {
  fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", v.ToString().Utf8Value(), " is out of range for ",
       kKindNames[kind], " (", kKindMin[kind], "..", kKindMax[kind], ")");
}

[[noreturn]] void scalar_type_error(const Napi::Value& v, size_t i, int kind, const char* expected) {
  const std::string got = v.IsBigInt()    ? str("the bigint ", v.ToString().Utf8Value())
                          : v.IsNumber()  ? str("the number ", v.ToString().Utf8Value())
                          : v.IsBoolean() ? str("the boolean ", v.ToString().Utf8Value())
                          : v.IsString()  ? std::string("a string")
                          : v.IsNull()    ? std::string("null")
                          : v.IsUndefined() ? std::string("undefined")
                                            : std::string("an object");
  fail(ErrorKind::Type, kLaunch, ": args[", i, "] is declared ", kKindNames[kind], " and must be ", expected,
       ", got ", got);
}

// A number as argument i of kind `kind`, checked, as the bits its slot holds
// (NOTE [ Argument slots ]). Both argument forms read numbers through here.
uint64_t slot_of_number(double d, size_t i, int kind) {
  switch (kind) {
    case kTensor:
    case kPointer:  // an address (the caller checked the tensor); exact below 2^53
      if (!(d >= 0 && d <= 9007199254740991.0 && std::floor(d) == d)) {
        fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is not a device address");
      }
      return static_cast<uint64_t>(d);
    case kF32: {
      const float x = static_cast<float>(d);
      if (std::isfinite(d) && !std::isfinite(x)) {
        fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is out of range for float32 (|x| <= ", FLT_MAX, ")");
      }
      uint64_t slot = 0;
      std::memcpy(&slot, &x, sizeof(x));
      return slot;
    }
    case kF64: {
      uint64_t slot = 0;
      std::memcpy(&slot, &d, sizeof(d));
      return slot;
    }
    case kBool:
      if (d != 0 && d != 1) fail(ErrorKind::Type, kLaunch, ": args[", i, "] is declared bool and must be a boolean (or 0 / 1), got the number ", d);
      return d == 1 ? 1 : 0;
    default:
      break;
  }
  if (kind <= kTensor || kind > kU64) {
    fail(ErrorKind::Type, kLaunch, ": kinds[", i, "] = ", kind, " is not an argument kind (0..", kNumKinds - 1, ")");
  }
  if (!std::isfinite(d) || std::floor(d) != d) {
    if (std::isfinite(d)) fail(ErrorKind::Type, kLaunch, ": args[", i, "] is declared ", kKindNames[kind], " and must be an integer, got the number ", d);
    fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is not a finite integer for ", kKindNames[kind]);
  }
  if (std::fabs(d) > 9007199254740991.0) {
    fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is beyond 2^53 and may have lost precision; pass ",
         kKindNames[kind], " values this large as a bigint");
  }
  const int64_t x = static_cast<int64_t>(d);
  const bool is_signed = kind <= kI64;
  if (is_signed ? (x < kKindMin[kind] || x > static_cast<int64_t>(kKindMax[kind])) : (x < 0 || static_cast<uint64_t>(x) > kKindMax[kind])) {
    fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is out of range for ", kKindNames[kind], " (", kKindMin[kind], "..",
         kKindMax[kind], ")");
  }
  return static_cast<uint64_t>(x);
}

// A bigint as argument i of an integer kind, range-checked; returned as its bit pattern.
uint64_t slot_of_bigint(const Napi::Value& v, size_t i, int kind) {
  bool lossless = false;
  if (kind <= kI64) {
    const int64_t x = v.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless || x < kKindMin[kind] || x > static_cast<int64_t>(kKindMax[kind])) scalar_range_error(v, i, kind);
    return static_cast<uint64_t>(x);
  }
  const uint64_t x = v.As<Napi::BigInt>().Uint64Value(&lossless);
  if (!lossless || x > kKindMax[kind]) scalar_range_error(v, i, kind);
  return x;
}

// Argument i from the array form: a tensor handle, a number, a bigint, a boolean or null.
uint64_t slot_of_value(const Napi::Value& v, size_t i, int kind, int device) {
  if (kind == kTensor) {
    char buf[32];
    const TensorImpl& t = TensorHandle::FromValue(v, kLaunch, arg_name(i, buf));
    const Device d = t.device();
    if (!d.is_cuda() || d.index != device) {
      fail(ErrorKind::Value, kLaunch, ": args[", i, "] is a tensor on ", d.str(), " but the kernel is loaded on cuda:", device);
    }
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data()));
  }
  if (kind == kPointer) {
    if (v.IsNull()) return 0;
    if (!v.IsBigInt()) scalar_type_error(v, i, kind, "a bigint (a device address) or null");
    bool lossless = false;
    const uint64_t p = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) {
      fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", v.ToString().Utf8Value(), " is not a valid address (must fit in 64 unsigned bits)");
    }
    return p;
  }
  if (v.IsNumber()) return slot_of_number(v.As<Napi::Number>().DoubleValue(), i, kind);
  if (kind == kBool) {
    if (!v.IsBoolean()) scalar_type_error(v, i, kind, "a boolean (or 0 / 1)");
    return v.As<Napi::Boolean>().Value() ? 1 : 0;
  }
  if (kind == kF32 || kind == kF64) scalar_type_error(v, i, kind, "a number");
  if (kind > kTensor && kind <= kU64) {
    if (!v.IsBigInt()) scalar_type_error(v, i, kind, "an integer (a number or a bigint)");
    return slot_of_bigint(v, i, kind);
  }
  fail(ErrorKind::Type, kLaunch, ": kinds[", i, "] = ", kind, " is not an argument kind (0..", kNumKinds - 1, ")");
}

// One grid or block extent: a positive integer (JS has checked the common
// cases; this guards the native boundary).
uint32_t read_extent(double d, const char* name, char axis) {
  if (!(d >= 1 && d <= 4294967295.0 && std::floor(d) == d)) {
    fail(ErrorKind::Range, kLaunch, ": ", name, ".", axis, " must be a positive integer, got ", d);
  }
  return static_cast<uint32_t>(d);
}

void check_launch_shape(rtc::Function& f, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_mem) {
  static constexpr char kAxis[3] = {'x', 'y', 'z'};
  const rtc::DeviceLimits& l = *f.limits;
  for (int k = 0; k < 3; ++k) {
    if (block[k] > static_cast<uint32_t>(l.max_block[k])) {
      fail(ErrorKind::Range, kLaunch, ": block.", kAxis[k], " = ", block[k], " is more than cuda:", f.device,
           " allows (", l.max_block[k], ")");
    }
    if (grid[k] > static_cast<uint32_t>(l.max_grid[k])) {
      fail(ErrorKind::Range, kLaunch, ": grid.", kAxis[k], " = ", grid[k], " is more than cuda:", f.device,
           " allows (", l.max_grid[k], ")");
    }
  }
  const uint64_t threads = static_cast<uint64_t>(block[0]) * block[1] * block[2];
  if (threads > static_cast<uint64_t>(f.max_threads)) {
    fail(ErrorKind::Range, kLaunch, ": block ", block[0], "x", block[1], "x", block[2], " = ", threads,
         " threads is more than this kernel's limit of ", f.max_threads, " threads per block",
         f.max_threads < l.max_threads_per_block
             ? str(" (below cuda:", f.device, "'s ", l.max_threads_per_block,
                   " because of the kernel's register use or __launch_bounds__)")
             : std::string());
  }
  if (shared_mem > static_cast<uint32_t>(f.max_dynamic_shared)) {
    f.max_dynamic_shared = rtc::query_max_dynamic_shared(kLaunch, f);  // another handle may have raised it
    if (shared_mem > static_cast<uint32_t>(f.max_dynamic_shared)) {
      fail(ErrorKind::Range, kLaunch, ": sharedMem = ", shared_mem,
           " bytes is more than this kernel's dynamic shared memory limit of ", f.max_dynamic_shared,
           " bytes; use setMaxDynamicSharedSize (opt-in up to ", l.max_shared_per_block_optin - f.static_shared,
           " bytes on cuda:", f.device, ")");
    }
  }
}

Napi::Value LaunchKernel(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    FunctionBox& box = unwrap_external<FunctionBox>(info[0], kLaunch, "function");
    rtc::Function& f = box.fn;
    GX_CHECK_TYPE(box.has_kinds, kLaunch, ": the kernel handle was made without its parameter kinds; pass them to moduleGetFunction");
    const double* dims = staging::area() + staging::kLaunchDims;
    uint32_t grid[3], block[3];
    static constexpr char kAxis[3] = {'x', 'y', 'z'};
    for (int k = 0; k < 3; ++k) grid[k] = read_extent(dims[k], "grid", kAxis[k]);
    for (int k = 0; k < 3; ++k) block[k] = read_extent(dims[3 + k], "block", kAxis[k]);
    const double s = dims[6];
    if (!(s >= 0 && s <= UINT32_MAX && std::floor(s) == s)) {
      fail(ErrorKind::Range, kLaunch, ": sharedMem must be a non-negative number of bytes, got ", s);
    }
    const uint32_t shared_mem = static_cast<uint32_t>(s);
    check_launch_shape(f, grid, block, shared_mem);

    cuda::Stream stream;
    if (info[1].IsUndefined() || info[1].IsNull()) {
      stream = cuda::current_stream(f.device);
    } else {
      const StreamBox* sb = &unwrap_external<StreamBox>(info[1], kLaunch, "stream");
      GX_CHECK_VALUE(sb->device == f.device, kLaunch, ": the stream is on cuda:", sb->device,
                     " but the kernel is loaded on cuda:", f.device);
      cuda::check_capture_device(f.device, kLaunch);
      stream = sb->stream;
    }

    const size_t n = box.kinds.size();
    Napi::Array values;
    const bool staged = info[2].IsUndefined();
    if (staged) {
      GX_CHECK_RANGE(n <= staging::kMaxArgs, kLaunch, ": ", n, " arguments do not fit the staging area (", staging::kMaxArgs,
                     "); pass them as an array");
    } else {
      if (!info[2].IsArray()) fail(ErrorKind::Type, kLaunch, ": argument 'values' must be an array (or left out)");
      values = info[2].As<Napi::Array>();
      GX_CHECK_TYPE(values.Length() == n, kLaunch, ": the kernel takes ", n, " arguments but ", values.Length(), " were given");
    }

    constexpr size_t kInline = 32;
    uint64_t inline_slots[kInline];
    void* inline_ptrs[kInline];
    std::vector<uint64_t> heap_slots;
    std::vector<void*> heap_ptrs;
    uint64_t* slots = inline_slots;
    void** ptrs = inline_ptrs;
    if (n > kInline) {
      heap_slots.resize(n);
      heap_ptrs.resize(n);
      slots = heap_slots.data();
      ptrs = heap_ptrs.data();
    }
    const int8_t* kinds = box.kinds.data();
    const double* numbers = staging::area() + staging::kArgs;
    for (size_t i = 0; i < n; ++i) {
      slots[i] = staged ? slot_of_number(numbers[i], i, kinds[i])
                        : slot_of_value(values.Get(static_cast<uint32_t>(i)), i, kinds[i], f.device);
      ptrs[i] = &slots[i];
    }
    rtc::launch(kLaunch, f, grid, block, shared_mem, stream, n > 0 ? ptrs : nullptr);
    return info.Env().Undefined();
  });
}

// launchFloor(fn, batches, perBatch): the launch floor measured in this
// process, for the call-latency benchmarks (bench/calls.bench.ts): `fn`
// (an empty kernel, its arguments staged as for launchKernel, one block of
// 32 threads on the current stream) launched perBatch times from C++, each
// batch closed by a synchronize, as the benchmarks time their calls. One
// figure per batch, microseconds per launch. The same driver, context and
// stream as the calls it is the floor of, with no JS between launches: what
// no binding can beat here, now (a separate process's floor, the other
// figure, can land on a quieter or a busier moment of the host).
Napi::Value LaunchFloor(const Napi::CallbackInfo& info) {
  constexpr const char* kFloor = "launchFloor";
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    FunctionBox& box = unwrap_external<FunctionBox>(info[0], kFloor, "function");
    rtc::Function& f = box.fn;
    GX_CHECK_TYPE(box.has_kinds && box.kinds.size() <= staging::kMaxArgs, kFloor, ": the kernel needs its parameter kinds, at most ",
                  staging::kMaxArgs);
    GX_CHECK_TYPE(info[1].IsNumber() && info[2].IsNumber(), kFloor, ": batches and perBatch must be numbers");
    const double batches = info[1].As<Napi::Number>().DoubleValue(), per = info[2].As<Napi::Number>().DoubleValue();
    GX_CHECK_RANGE(batches >= 1 && batches <= 1e4 && per >= 1 && per <= 1e6 && std::floor(batches) == batches && std::floor(per) == per,
                   kFloor, ": batches and perBatch must be whole numbers of at least 1");
    const size_t n = box.kinds.size();
    uint64_t slots[staging::kMaxArgs];
    void* ptrs[staging::kMaxArgs];
    const double* numbers = staging::area() + staging::kArgs;
    for (size_t i = 0; i < n; ++i) {
      slots[i] = slot_of_number(numbers[i], i, box.kinds[i]);
      ptrs[i] = &slots[i];
    }
    const uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    const cuda::Stream stream = cuda::current_stream(f.device);
    Napi::Float64Array out = Napi::Float64Array::New(info.Env(), static_cast<size_t>(batches));
    for (size_t b = 0; b < out.ElementLength(); ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (double i = 0; i < per; ++i) rtc::launch(kFloor, f, grid, block, 0, stream, n > 0 ? ptrs : nullptr);
      cuda::synchronize_stream(stream);
      out[b] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / per;
    }
    return out;
  });
}

}  // namespace

void register_rtc_launch_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("launchKernel", Napi::Function::New<LaunchKernel>(env, "launchKernel"));
  exports.Set("launchFloor", Napi::Function::New<LaunchFloor>(env, "launchFloor"));
}

}  // namespace gx::core::js
