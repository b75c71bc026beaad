// The groups of N-API functions the addon exports (see addon.cpp).
#pragma once
#include <napi.h>

#include "cache/cache_files.h"

namespace gx::core::js {
void register_tensor_functions(Napi::Env env, Napi::Object exports);
void register_device_functions(Napi::Env env, Napi::Object exports);
void register_op_functions(Napi::Env env, Napi::Object exports);
void register_stream_functions(Napi::Env env, Napi::Object exports);
// Run-time kernels: compiling, loaded modules, launches (rtc_*.cpp).
void register_rtc_compile_functions(Napi::Env env, Napi::Object exports);
void register_rtc_module_functions(Napi::Env env, Napi::Object exports);
void register_rtc_launch_functions(Napi::Env env, Napi::Object exports);
void register_cache_functions(Napi::Env env, Napi::Object exports);
void register_file_functions(Napi::Env env, Napi::Object exports);

// [size, mtimeSec, mtimeNsec, dev, ino]: a file's stat as lib/rtc/cache-io.ts's identityOf takes it.
Napi::Array file_stat_array(Napi::Env env, const cache::FileStat& st);
}  // namespace gx::core::js
