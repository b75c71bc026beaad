// N-API functions for compiling run-time kernels (lib/rtc/compiler.ts): what
// NVRTC and the driver are available, where NVRTC would load from, and the
// NVRTC compile itself. The work is in csrc/rtc/nvrtc.cpp; this file reads the
// arguments and builds the results.
#include <cstring>
#include <string>
#include <vector>

#include "binding/args.h"
#include "binding/bindings.h"
#include "binding/rtc_boxes.h"
#include "cache/cache_files.h"
#include "rtc/rtc.h"

namespace gx::core::js {
namespace {

Napi::Value RtcInfo(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const rtc::Availability a = rtc::availability();
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    if (a.nvrtc) {
      o.Set("nvrtc", Napi::String::New(env, str(a.nvrtc_major, ".", a.nvrtc_minor)));
      o.Set("nvrtcPath", Napi::String::New(env, a.nvrtc_path));
    } else {
      o.Set("nvrtc", env.Null());
      o.Set("nvrtcError", Napi::String::New(env, a.nvrtc_error));
    }
    o.Set("driver", Napi::Boolean::New(env, a.driver));
    if (!a.driver) o.Set("driverError", Napi::String::New(env, a.driver_error));
    return o;
  });
}

Napi::Value NvrtcCandidates(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::vector<std::string> c = rtc::nvrtc_candidates(/*load_driver=*/false);
    Napi::Array out = Napi::Array::New(info.Env(), c.size());
    for (size_t i = 0; i < c.size(); ++i) out.Set(static_cast<uint32_t>(i), Napi::String::New(info.Env(), c[i]));
    return out;
  });
}

// nvrtcFile(): [candidate, [size, mtimeSec, mtimeNsec, dev, ino]] of the first
// candidate that is a file, or null when a bare soname (which only dlopen's
// search can resolve) comes first. One call for the kernel cache's first
// lookup (NOTE [ NVRTC identity ] in lib/rtc/compiler.ts).
Napi::Value NvrtcFile(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    for (const std::string& c : rtc::nvrtc_candidates(/*load_driver=*/false)) {
      if (c.empty() || c[0] != '/') break;
      cache::FileStat st;
      if (!cache::stat_file(c, &st)) continue;
      Napi::Array out = Napi::Array::New(env, 2);
      out.Set(0u, Napi::String::New(env, c));
      out.Set(1u, file_stat_array(env, st));
      return out;
    }
    return env.Null();
  });
}

// nvrtcCompile(source, programName, options, nameExpressions, arch)
Napi::Value NvrtcCompile(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "nvrtcCompile";
    const std::string source = arg_string(info, 0, fn, "source");
    const std::string name = arg_string(info, 1, fn, "programName");
    const std::vector<std::string> options = arg_string_list(info, 2, fn, "options");
    const std::vector<std::string> names = arg_string_list(info, 3, fn, "nameExpressions");
    const std::string arch = arg_string(info, 4, fn, "arch");
    const rtc::CompileResult r = rtc::compile(fn, source, name, options, names, arch);

    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("ok", Napi::Boolean::New(env, r.ok));
    o.Set("log", Napi::String::New(env, r.log));
    o.Set("ptx", Napi::Boolean::New(env, r.ptx));
    if (r.ok) {
      Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, r.image.size());
      std::memcpy(ab.Data(), r.image.data(), r.image.size());
      o.Set("image", Napi::Uint8Array::New(env, r.image.size(), ab, 0));
    }
    Napi::Object lowered = Napi::Object::New(env);
    for (const auto& [expr, low] : r.lowered_names) lowered.Set(expr, Napi::String::New(env, low));
    o.Set("loweredNames", lowered);
    return o;
  });
}

}  // namespace

void register_rtc_compile_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("rtcInfo", Napi::Function::New<RtcInfo>(env, "rtcInfo"));
  exports.Set("nvrtcCandidates", Napi::Function::New<NvrtcCandidates>(env, "nvrtcCandidates"));
  exports.Set("nvrtcFile", Napi::Function::New<NvrtcFile>(env, "nvrtcFile"));
  exports.Set("nvrtcCompile", Napi::Function::New<NvrtcCompile>(env, "nvrtcCompile"));
}

}  // namespace gx::core::js
