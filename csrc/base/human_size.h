// Byte counts for people: "0 B", "512 B", "1.50 KiB", "3.20 MiB", "79.11 GiB"
// (binary units, two decimals; TiB and up only for absurd requests).
// Used by the allocators' out-of-memory messages.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace gx::core {

inline std::string human_size(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  // Stay in the smaller unit until the value would read at least "1.00" of the next.
  while (unit < 5 && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f %s", value, kUnits[unit]);
  return buf;
}

}  // namespace gx::core
