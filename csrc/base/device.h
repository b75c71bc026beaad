// Device: cpu or cuda:N, as the core keeps it (gx::core::Device). Extensions
// see their own value type, gx::Device (gpuext/tensor.h); both cross the C
// ABI as gx_device.
#pragma once
#include <cstdint>
#include <string>

#include "base/error.h"
#include "gpuext/abi.h"

namespace gx::core {

// Devices are indexed 0..kMaxDevices-1 in per-device tables: slot 0 is the CPU,
// slot 1 + i is cuda:i.
constexpr int kMaxCudaDevices = 16;
constexpr int kMaxDeviceSlots = 1 + kMaxCudaDevices;

struct Device {
  gx_device_type type = GX_CPU;
  int32_t index = 0;

  static Device cpu() { return Device{GX_CPU, 0}; }
  static Device cuda(int32_t i) { return Device{GX_CUDA, i}; }
  bool is_cpu() const { return type == GX_CPU; }
  bool is_cuda() const { return type == GX_CUDA; }
  int slot() const { return is_cpu() ? 0 : 1 + index; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
  gx_device to_c() const { return gx_device{type, index}; }
};

}  // namespace gx::core
