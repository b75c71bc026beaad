// Reading the arguments of N-API calls: one checked reader per kind of
// argument, used by every binding file, so a given kind is checked the same
// way everywhere and each error names the function (`fn`) and the argument.
// Type mistakes throw a TypeError ("fn: argument 'name' must be ..."), values
// out of range a RangeError. The hot paths (callOp, empty) read through these
// too: none allocates unless its result does (a string, a list).
#pragma once
#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/device.h"
#include "base/dtype.h"

namespace gx::core::js {

// A safe integer: a number (integral, |x| <= 2^53 - 1) or a bigint that fits in int64.
int64_t arg_int(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
double arg_double(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
// An array of safe integers (a shape, strides).
std::vector<int64_t> arg_int_list(const Napi::CallbackInfo& info, size_t i, const char* fn,
                                  const char* name);

// A flag: JS truthiness (undefined and null are false), as lib/ passes
// optional booleans; never throws.
inline bool arg_flag(const Napi::CallbackInfo& info, size_t i) { return info[i].ToBoolean(); }

std::string arg_string(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
// An array of strings; undefined or null reads as none.
std::vector<std::string> arg_string_list(const Napi::CallbackInfo& info, size_t i, const char* fn,
                                         const char* name);
// A string that names a file: not empty, no NUL (which the OS would cut the path at).
std::string arg_path(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);

// A device address as a bigint (64 unsigned bits).
uint64_t arg_pointer(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
// The bytes of an ArrayBuffer or ArrayBufferView (typed array, DataView, Buffer), where they lie.
void arg_bytes(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name,
               const uint8_t** data, size_t* size);

// Dtypes cross as their code in the C ABI (gx_dtype).
DType dtype_of(int64_t code, const char* fn);
DType arg_dtype(const Napi::CallbackInfo& info, size_t i, const char* fn);

// Devices. Three readers for three contracts:
//   device_of / arg_device     a (type, index) pair, 0 = cpu, 1 = cuda; a CUDA
//                              device must exist (checked with the runtime);
//   arg_cuda_device            the index of a CUDA device that exists;
//   arg_device_index           an index below kMaxCudaDevices only: for the
//                              driver-API calls (lib/rtc), which check the device
//                              themselves and report a missing driver their way.
Device device_of(int64_t type, int64_t index, const char* fn);
Device arg_device(const Napi::CallbackInfo& info, size_t i, const char* fn);
int arg_cuda_device(const Napi::CallbackInfo& info, size_t i, const char* fn);
int arg_device_index(const Napi::CallbackInfo& info, size_t i, const char* fn);

}  // namespace gx::core::js
