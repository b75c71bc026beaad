// Shared between csrc/rtc/nvrtc.cpp and csrc/rtc/driver.cpp (not for other files).
#pragma once
#include <string>

#include "rtc/rtc.h"

namespace gx::core::rtc::detail {

// The driver's CUDA version (e.g. 12040, 13000), or 0 when the driver cannot
// be loaded. Never throws. Used to prefer the NVRTC whose major version
// matches the driver (a newer NVRTC's CUBIN/PTX may not load on an older driver).
int driver_version() noexcept;

// NVRTC availability, loading it if needed. Never throws.
bool nvrtc_available(int* major, int* minor, std::string* path, std::string* error) noexcept;
// Driver availability, loading it (and calling cuInit) if needed. Never throws.
bool driver_available(std::string* error) noexcept;

}  // namespace gx::core::rtc::detail
