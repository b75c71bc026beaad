// Run-time kernels: NVRTC compiles CUDA source to CUBIN/PTX, the driver API
// loads it as a module and launches its kernels (lib/ run-time kernels).
// Declared without CUDA headers so the binding compiles in CPU-only builds;
// implemented by csrc/rtc/nvrtc.cpp + csrc/rtc/driver.cpp, or by
// csrc/rtc/no_rtc.cpp in a CPU-only build.
//
// NOTE [ Loaded when first used ]
// Neither NVRTC nor the driver library is linked: both are dlopen'ed on first
// use (docs/DESIGN.md decision 7), so the core loads on machines that have neither.
// A library that cannot be found throws LibraryMissing, whose message says
// what is missing and how to get it; the binding gives it its own error code
// (GX_NVRTC_NOT_FOUND / GX_DRIVER_NOT_FOUND) so the TypeScript side can fall
// back (to nvcc, for compiling). The outcome of loading is cached for the
// process.
//
// NOTE [ Contexts ]
// The core allocates and creates streams through the CUDA runtime, which uses
// each device's primary context. Driver calls here run with that same primary
// context current (ContextScope in driver.cpp), then restore whatever context
// the thread had, so the runtime's idea of the current device never changes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "cuda/runtime.h"

namespace gx::core::rtc {

// A library (NVRTC or the driver) that could not be loaded.
class LibraryMissing : public Error {
 public:
  enum class Which { Nvrtc, Driver };
  LibraryMissing(Which which, const std::string& msg) : Error(ErrorKind::Cuda, msg), which_(which) {}
  Which which() const { return which_; }

 private:
  Which which_;
};

// What is available; never throws (tries loading both libraries).
struct Availability {
  bool nvrtc = false;
  int nvrtc_major = 0, nvrtc_minor = 0;
  std::string nvrtc_path;   // the candidate that loaded
  std::string nvrtc_error;  // why nvrtc is false
  bool driver = false;
  std::string driver_error;  // why driver is false
};
Availability availability() noexcept;

// Where NVRTC is looked for, in order (file paths, then bare sonames for the
// dynamic loader). The driver's version orders them; load_driver = false
// reads it only from a driver already loaded (cheap), else loads it.
std::vector<std::string> nvrtc_candidates(bool load_driver);

// --- NVRTC ----------------------------------------------------------------------

struct CompileResult {
  bool ok = false;
  std::string log;             // NVRTC's log (warnings on success, errors on failure)
  std::vector<uint8_t> image;  // CUBIN, or PTX including its terminating NUL; empty when !ok
  bool ptx = false;
  // name expression -> lowered (mangled) name, in the order given.
  std::vector<std::pair<std::string, std::string>> lowered_names;
};

// Compiles for `arch`: "sm_XY[a|f]" gives a CUBIN, "compute_XY[a|f]" PTX. A
// compile error (or an option NVRTC rejects) is ok == false with the log, not
// a throw. `what` names the caller in errors.
CompileResult compile(const char* what, const std::string& source, const std::string& program_name,
                      const std::vector<std::string>& options,
                      const std::vector<std::string>& name_expressions, const std::string& arch);

// --- driver: modules, functions, launches ----------------------------------------

struct DeviceLimits {
  int max_threads_per_block;
  int max_block[3];
  int max_grid[3];
  int max_shared_per_block;        // bytes, without opt-in
  int max_shared_per_block_optin;  // bytes, with cuFuncSetAttribute opt-in
  int multiprocessors;
  int cc_major, cc_minor;
};
// Queried once per device and cached; the reference stays valid.
const DeviceLimits& device_limits(int device, const char* what);

// A loaded module (a CUmodule). Kept alive by every Function taken from it.
struct Module {
  void* handle = nullptr;   // CUmodule
  void* context = nullptr;  // the device's primary CUcontext
  int device = 0;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();  // cuModuleUnload, with the device's context current
};
using ModulePtr = std::shared_ptr<Module>;

// cuModuleLoadDataEx on `device`'s primary context; PTX is JIT-compiled here.
// Errors carry the driver's message and the JIT's error log.
ModulePtr module_load(const char* what, int device, const void* image, size_t nbytes);

struct Function {
  ModulePtr module;
  void* handle = nullptr;   // CUfunction
  void* context = nullptr;  // the module's CUcontext
  int device = 0;
  const DeviceLimits* limits = nullptr;
  int max_threads = 0;         // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int static_shared = 0;       // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  int max_dynamic_shared = 0;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (tracked)
};
Function get_function(const char* what, const ModulePtr& module, const std::string& name);

struct FunctionAttributes {
  int num_regs, max_threads_per_block, shared_size_bytes, const_size_bytes, local_size_bytes,
      max_dynamic_shared_size_bytes, ptx_version, binary_version;
};
FunctionAttributes function_attributes(const char* what, const Function& fn);
// Raises (or lowers) the kernel's dynamic shared memory limit; RangeError
// beyond the device's opt-in limit less the kernel's static shared memory.
void set_max_dynamic_shared(const char* what, Function& fn, int bytes);
// The driver's current value of CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
// (another Function for the same kernel may have raised it).
int query_max_dynamic_shared(const char* what, const Function& fn);

// cuLaunchKernel; arguments are checked by the caller. `params` holds one
// pointer per kernel parameter.
void launch(const char* what, const Function& fn, const uint32_t grid[3], const uint32_t block[3],
            uint32_t shared_mem, cuda::Stream stream, void** params);

struct Global {
  uint64_t ptr;
  size_t size;
};
// A __device__ / __constant__ variable of the module (cuModuleGetGlobal).
Global module_global(const char* what, const Module& module, const std::string& name);

// Synchronous copies, ordered after the device's current stream (which is
// synchronized first).
void memcpy_htod(const char* what, int device, uint64_t dst, const void* src, size_t nbytes);
void memcpy_dtoh(const char* what, int device, void* dst, uint64_t src, size_t nbytes);

}  // namespace gx::core::rtc
