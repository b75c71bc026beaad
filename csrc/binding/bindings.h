// The groups of N-API functions the addon exports (see addon.cpp).
#pragma once
#include <napi.h>

namespace gx::js {
void register_tensor_functions(Napi::Env env, Napi::Object exports);
void register_runtime_functions(Napi::Env env, Napi::Object exports);
void register_op_functions(Napi::Env env, Napi::Object exports);
void register_stream_functions(Napi::Env env, Napi::Object exports);
void register_rtc_functions(Napi::Env env, Napi::Object exports);
void register_cache_functions(Napi::Env env, Napi::Object exports);
}  // namespace gx::js
