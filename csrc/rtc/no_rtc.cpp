// Run-time kernels in a CPU-only core (see csrc/cuda/no_cuda.cpp): nothing
// is available, and every entry point throws a clear error.
#include "rtc/rtc.h"

namespace gx::core::rtc {
namespace {
constexpr const char* kWhy =
    "this gpuext core was built for the CPU only (no CUDA toolkit or no GPU when it was built, or "
    "GPUEXT_NO_CUDA=1), so run-time kernels (NVRTC and the CUDA driver) are not available. With the CUDA "
    "toolkit installed, `GPUEXT_CUDA_ARCH=all npm rebuild gpuext --build-from-source` builds the CUDA code.";

[[noreturn]] void not_compiled(const char* what) { fail(ErrorKind::NotCompiled, what, ": ", kWhy); }
}  // namespace

Availability availability() noexcept {
  Availability a;
  a.nvrtc_error = kWhy;
  a.driver_error = kWhy;
  return a;
}

std::vector<std::string> nvrtc_candidates(bool) { return {}; }

CompileResult compile(const char* what, const std::string&, const std::string&, const std::vector<std::string>&,
                      const std::vector<std::string>&, const std::string&) {
  not_compiled(what);
}
const DeviceLimits& device_limits(int, const char* what) { not_compiled(what); }
Module::~Module() = default;
ModulePtr module_load(const char* what, int, const void*, size_t) { not_compiled(what); }
Function get_function(const char* what, const ModulePtr&, const std::string&) { not_compiled(what); }
FunctionAttributes function_attributes(const char* what, const Function&) { not_compiled(what); }
void set_max_dynamic_shared(const char* what, Function&, int) { not_compiled(what); }
int query_max_dynamic_shared(const char* what, const Function&) { not_compiled(what); }
void launch(const char* what, const Function&, const uint32_t*, const uint32_t*, uint32_t, cuda::Stream, void**) {
  not_compiled(what);
}
Global module_global(const char* what, const Module&, const std::string&) { not_compiled(what); }
void memcpy_htod(const char* what, int, uint64_t, const void*, size_t) { not_compiled(what); }
void memcpy_dtoh(const char* what, int, void*, uint64_t, size_t) { not_compiled(what); }

}  // namespace gx::core::rtc
