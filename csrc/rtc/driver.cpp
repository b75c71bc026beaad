// The CUDA driver API for run-time kernels: modules, functions, launches.
// libcuda is dlopen'ed when first used (NOTE [ Loaded when first used ] in
// rtc.h); <cuda.h> is used for its types only. cuda.h #defines several names
// to versioned symbols (cuModuleGetGlobal -> cuModuleGetGlobal_v2, ...): the
// dlsym names below are the exported symbols those macros select.
#include <cuda.h>
#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include <gpuext/optional_library.h>

#include "base/device.h"
#include "rtc/internal.h"
#include "rtc/rtc.h"

namespace gx::core::rtc {
namespace {

struct Driver {
  CUresult (*Init)(unsigned int) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*GetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*ModuleLoadDataEx)(CUmodule*, const void*, unsigned int, CUjit_option*, void**) = nullptr;
  CUresult (*ModuleUnload)(CUmodule) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*ModuleGetGlobal)(CUdeviceptr*, size_t*, CUmodule, const char*) = nullptr;
  CUresult (*FuncGetAttribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                           unsigned int, unsigned int, CUstream, void**, void**) = nullptr;
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
};

struct DriverState {
  Driver api;
  bool loaded = false;       // library and symbols
  bool initialized = false;  // cuInit succeeded
  int version = 0;
  std::string error;  // why !loaded or !initialized
};

using optional_library::resolve;

std::string cu_error_of(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* msg = nullptr;
  if (d.GetErrorName == nullptr || d.GetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (d.GetErrorString == nullptr || d.GetErrorString(r, &msg) != CUDA_SUCCESS) msg = nullptr;
  return str(msg != nullptr ? msg : "unknown error", " (", name != nullptr ? name : "CUresult", " ",
             static_cast<int>(r), ")");
}

// Loads and initializes the driver; the result is kept by state().
DriverState load_driver() {
  DriverState s;
  void* lib = nullptr;
  std::string why;
  for (const char* name : {"libcuda.so.1", "libcuda.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* e = dlerror();
    if (why.empty() && e != nullptr) why = e;
  }
  if (lib == nullptr) {
    s.error = str("the CUDA driver library (libcuda.so.1) could not be loaded (", why,
                  "): install the NVIDIA driver, which provides it; in a container, run with the GPU "
                  "exposed (e.g. docker run --gpus all)");
    return s;
  }
  Driver& a = s.api;
  std::string missing;
  resolve(lib, "cuInit", a.Init, missing);
  resolve(lib, "cuDriverGetVersion", a.DriverGetVersion, missing);
  resolve(lib, "cuGetErrorString", a.GetErrorString, missing);
  resolve(lib, "cuGetErrorName", a.GetErrorName, missing);
  resolve(lib, "cuDeviceGet", a.DeviceGet, missing);
  resolve(lib, "cuDeviceGetAttribute", a.DeviceGetAttribute, missing);
  resolve(lib, "cuDevicePrimaryCtxRetain", a.DevicePrimaryCtxRetain, missing);
  resolve(lib, "cuCtxGetCurrent", a.CtxGetCurrent, missing);
  resolve(lib, "cuCtxSetCurrent", a.CtxSetCurrent, missing);
  resolve(lib, "cuModuleLoadDataEx", a.ModuleLoadDataEx, missing);
  resolve(lib, "cuModuleUnload", a.ModuleUnload, missing);
  resolve(lib, "cuModuleGetFunction", a.ModuleGetFunction, missing);
  resolve(lib, "cuModuleGetGlobal_v2", a.ModuleGetGlobal, missing);
  resolve(lib, "cuFuncGetAttribute", a.FuncGetAttribute, missing);
  resolve(lib, "cuFuncSetAttribute", a.FuncSetAttribute, missing);
  resolve(lib, "cuLaunchKernel", a.LaunchKernel, missing);
  resolve(lib, "cuMemcpyHtoD_v2", a.MemcpyHtoD, missing);
  resolve(lib, "cuMemcpyDtoH_v2", a.MemcpyDtoH, missing);
  if (!missing.empty()) {
    s.error = str("the CUDA driver library (libcuda.so.1) lacks ", missing,
                  ": the NVIDIA driver is too old for gpuext; update it");
    return s;  // the library stays loaded: harmless, and the runtime may use it
  }
  s.loaded = true;
  if (a.DriverGetVersion(&s.version) != CUDA_SUCCESS) s.version = 0;
  const CUresult r = a.Init(0);
  if (r != CUDA_SUCCESS) {
    s.error = str("the CUDA driver could not be initialized: cuInit failed: ", cu_error_of(a, r));
    return s;
  }
  s.initialized = true;
  return s;
}

// Loaded once per process, in a function-local static: every launch asks,
// and std::call_once costs a pthread_once and TLS writes per call.
DriverState& state() {
  static DriverState s = load_driver();
  return s;
}

// The driver, loaded and initialized; throws otherwise.
const Driver& driver(const char* what) {
  DriverState& s = state();
  if (!s.loaded) throw LibraryMissing(LibraryMissing::Which::Driver, str(what, ": ", s.error));
  if (!s.initialized) fail(ErrorKind::Cuda, what, ": ", s.error);
  return s.api;
}

[[noreturn]] void cu_fail(const Driver& d, CUresult r, const char* what, const char* call) {
  fail(ErrorKind::Cuda, what, ": ", call, " failed: ", cu_error_of(d, r));
}

inline void cu_check(const Driver& d, CUresult r, const char* what, const char* call) {
  if (r != CUDA_SUCCESS) cu_fail(d, r, what, call);
}

CUcontext primary_context(const Driver& d, int device, const char* what) {
  static CUcontext contexts[kMaxCudaDevices] = {};
  static std::once_flag once[kMaxCudaDevices];
  std::call_once(once[device], [&] {
    CUdevice dev = 0;
    cu_check(d, d.DeviceGet(&dev, device), what, "cuDeviceGet");
    CUcontext ctx = nullptr;
    cu_check(d, d.DevicePrimaryCtxRetain(&ctx, dev), what, "cuDevicePrimaryCtxRetain");  // held for the process
    contexts[device] = ctx;
  });
  return contexts[device];
}

// Makes `ctx` current on this thread for the scope, then restores the
// thread's previous context (NOTE [ Contexts ] in rtc.h).
class ContextScope {
 public:
  ContextScope(const Driver& d, void* ctx, const char* what) : d_(d) {
    cu_check(d, d.CtxGetCurrent(&prev_), what, "cuCtxGetCurrent");
    if (prev_ != static_cast<CUcontext>(ctx)) {
      cu_check(d, d.CtxSetCurrent(static_cast<CUcontext>(ctx)), what, "cuCtxSetCurrent");
      switched_ = true;
    }
  }
  ~ContextScope() {
    if (switched_) d_.CtxSetCurrent(prev_);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const Driver& d_;
  CUcontext prev_ = nullptr;
  bool switched_ = false;
};

int func_attr(const Driver& d, CUfunction f, CUfunction_attribute a, const char* what) {
  int v = 0;
  cu_check(d, d.FuncGetAttribute(&v, a, f), what, "cuFuncGetAttribute");
  return v;
}

}  // namespace

// --- availability -------------------------------------------------------------------

namespace detail {
int driver_version() noexcept {
  try {
    const DriverState& s = state();
    return s.loaded ? s.version : 0;
  } catch (...) {
    return 0;
  }
}

bool driver_available(std::string* error) noexcept {
  try {
    const DriverState& s = state();
    if (!s.initialized) *error = s.error;
    return s.initialized;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}
}  // namespace detail

Availability availability() noexcept {
  Availability a;
  a.driver = detail::driver_available(&a.driver_error);
  a.nvrtc = detail::nvrtc_available(&a.nvrtc_major, &a.nvrtc_minor, &a.nvrtc_path, &a.nvrtc_error);
  return a;
}

// --- devices ----------------------------------------------------------------------------

const DeviceLimits& device_limits(int device, const char* what) {
  static DeviceLimits limits[kMaxCudaDevices];
  static std::once_flag once[kMaxCudaDevices];
  const Driver& d = driver(what);
  cuda::check_device(device, what);
  std::call_once(once[device], [&] {
    CUdevice dev = 0;
    cu_check(d, d.DeviceGet(&dev, device), what, "cuDeviceGet");
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      cu_check(d, d.DeviceGetAttribute(&v, a, dev), what, "cuDeviceGetAttribute");
      return v;
    };
    DeviceLimits& l = limits[device];
    l.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    l.max_block[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    l.max_block[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    l.max_block[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    l.max_grid[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    l.max_grid[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    l.max_grid[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    l.max_shared_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    l.max_shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    l.multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    l.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    l.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  });
  return limits[device];
}

// --- modules ------------------------------------------------------------------------------

Module::~Module() {
  if (handle == nullptr) return;
  const DriverState& s = state();
  if (!s.initialized) return;
  const Driver& d = s.api;
  // Errors are ignored: at process exit the context may already be gone.
  CUcontext prev = nullptr;
  const bool switched = d.CtxGetCurrent(&prev) == CUDA_SUCCESS && prev != static_cast<CUcontext>(context) &&
                        d.CtxSetCurrent(static_cast<CUcontext>(context)) == CUDA_SUCCESS;
  d.ModuleUnload(static_cast<CUmodule>(handle));
  if (switched) d.CtxSetCurrent(prev);
}

ModulePtr module_load(const char* what, int device, const void* image, size_t nbytes) {
  const Driver& d = driver(what);
  cuda::check_device(device, what);
  GX_CHECK_VALUE(nbytes > 0, what, ": the module image is empty");
  // PTX must end in a NUL; CUBIN and fatbin images are sized by their headers,
  // so the extra byte does them no harm.
  const auto* bytes = static_cast<const uint8_t*>(image);
  std::vector<uint8_t> terminated;
  if (bytes[nbytes - 1] != 0) {
    terminated.reserve(nbytes + 1);
    terminated.assign(bytes, bytes + nbytes);
    terminated.push_back(0);
    image = terminated.data();
  }
  auto mod = std::make_shared<Module>();
  mod->device = device;
  mod->context = primary_context(d, device, what);
  ContextScope scope(d, mod->context, what);

  char log[8192];
  log[0] = '\0';
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log)))};
  CUmodule handle = nullptr;
  const CUresult r = d.ModuleLoadDataEx(&handle, image, 2, options, values);
  if (r != CUDA_SUCCESS) {
    log[sizeof(log) - 1] = '\0';
    std::string hint;
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE) {
      const DeviceLimits& l = device_limits(device, what);
      hint = str("; cuda:", device, " is sm_", l.cc_major, l.cc_minor, ": compile for arch 'sm_", l.cc_major, l.cc_minor,
                 "' (or 'compute_", l.cc_major, l.cc_minor, "' for PTX)");
    } else if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
      const DriverState& s = state();
      hint = str("; the PTX was made by a compiler newer than this driver (CUDA ", s.version / 1000, ".",
                 (s.version % 1000) / 10, "): use an NVRTC no newer than the driver, or update the driver");
    }
    fail(ErrorKind::Cuda, what, ": cuModuleLoadData failed on cuda:", device, ": ", cu_error_of(d, r), hint,
         log[0] != '\0' ? "\n" : "", log);
  }
  mod->handle = handle;
  return mod;
}

Function get_function(const char* what, const ModulePtr& module, const std::string& name) {
  const Driver& d = driver(what);
  ContextScope scope(d, module->context, what);
  CUfunction f = nullptr;
  const CUresult r = d.ModuleGetFunction(&f, static_cast<CUmodule>(module->handle), name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) {
    fail(ErrorKind::Value, what, ": the module has no kernel named '", name,
         "'; a kernel defined in C++ has a mangled name: declare it extern \"C\", or compile it with "
         "a name expression (e.g. 'my_kernel<float>') and use the lowered name NVRTC returns");
  }
  if (r != CUDA_SUCCESS) cu_fail(d, r, what, "cuModuleGetFunction");
  Function fn;
  fn.module = module;
  fn.handle = f;
  fn.context = module->context;
  fn.device = module->device;
  fn.limits = &device_limits(module->device, what);
  fn.max_threads = func_attr(d, f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, what);
  fn.static_shared = func_attr(d, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, what);
  fn.max_dynamic_shared = func_attr(d, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, what);
  return fn;
}

FunctionAttributes function_attributes(const char* what, const Function& fn) {
  const Driver& d = driver(what);
  ContextScope scope(d, fn.context, what);
  const auto f = static_cast<CUfunction>(fn.handle);
  FunctionAttributes a;
  a.num_regs = func_attr(d, f, CU_FUNC_ATTRIBUTE_NUM_REGS, what);
  a.max_threads_per_block = func_attr(d, f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, what);
  a.shared_size_bytes = func_attr(d, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, what);
  a.const_size_bytes = func_attr(d, f, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, what);
  a.local_size_bytes = func_attr(d, f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, what);
  a.max_dynamic_shared_size_bytes = func_attr(d, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, what);
  a.ptx_version = func_attr(d, f, CU_FUNC_ATTRIBUTE_PTX_VERSION, what);
  a.binary_version = func_attr(d, f, CU_FUNC_ATTRIBUTE_BINARY_VERSION, what);
  return a;
}

int query_max_dynamic_shared(const char* what, const Function& fn) {
  const Driver& d = driver(what);
  ContextScope scope(d, fn.context, what);
  return func_attr(d, static_cast<CUfunction>(fn.handle), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, what);
}

void set_max_dynamic_shared(const char* what, Function& fn, int bytes) {
  const Driver& d = driver(what);
  const int limit = fn.limits->max_shared_per_block_optin - fn.static_shared;
  GX_CHECK_RANGE(bytes >= 0, what, ": bytes must be >= 0, got ", bytes);
  GX_CHECK_RANGE(bytes <= limit, what, ": ", bytes, " bytes of dynamic shared memory is more than cuda:", fn.device,
                 " allows this kernel: at most ", limit, " bytes (the device's opt-in limit of ",
                 fn.limits->max_shared_per_block_optin, " bytes per block, less the kernel's ", fn.static_shared,
                 " bytes of static shared memory)");
  ContextScope scope(d, fn.context, what);
  cu_check(d, d.FuncSetAttribute(static_cast<CUfunction>(fn.handle),
                                    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes), what, "cuFuncSetAttribute");
  fn.max_dynamic_shared = bytes;
}

void launch(const char* what, const Function& fn, const uint32_t grid[3], const uint32_t block[3],
            uint32_t shared_mem, cuda::Stream stream, void** params) {
  const Driver& d = driver(what);
  ContextScope scope(d, fn.context, what);
  const CUresult r = d.LaunchKernel(static_cast<CUfunction>(fn.handle), grid[0], grid[1], grid[2], block[0],
                                    block[1], block[2], shared_mem, static_cast<CUstream>(stream), params, nullptr);
  if (r == CUDA_SUCCESS) return;
  std::string hint;
  if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) {
    int regs = 0;
    d.FuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, static_cast<CUfunction>(fn.handle));
    hint = str("; the kernel uses ", regs, " registers per thread: launch fewer threads per block, or bound "
               "them with __launch_bounds__ / -maxrregcount");
  }
  fail(ErrorKind::Cuda, what, ": cuLaunchKernel failed: ", cu_error_of(d, r), hint);
}

Global module_global(const char* what, const Module& module, const std::string& name) {
  const Driver& d = driver(what);
  ContextScope scope(d, module.context, what);
  CUdeviceptr ptr = 0;
  size_t size = 0;
  const CUresult r = d.ModuleGetGlobal(&ptr, &size, static_cast<CUmodule>(module.handle), name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) {
    fail(ErrorKind::Value, what, ": the module has no __device__ or __constant__ variable named '", name,
         "'; a variable in C++ code has a mangled name: declare it extern \"C\", or compile with a name "
         "expression for it (e.g. '&my_var') and use the lowered name");
  }
  if (r != CUDA_SUCCESS) cu_fail(d, r, what, "cuModuleGetGlobal");
  return Global{static_cast<uint64_t>(ptr), size};
}

void memcpy_htod(const char* what, int device, uint64_t dst, const void* src, size_t nbytes) {
  const Driver& d = driver(what);
  cuda::check_device(device, what);
  if (nbytes == 0) return;
  GX_CHECK_VALUE(dst != 0, what, ": the destination pointer is null");
  cuda::synchronize_stream(cuda::current_stream(device));
  ContextScope scope(d, primary_context(d, device, what), what);
  cu_check(d, d.MemcpyHtoD(static_cast<CUdeviceptr>(dst), src, nbytes), what, "cuMemcpyHtoD");
}

void memcpy_dtoh(const char* what, int device, void* dst, uint64_t src, size_t nbytes) {
  const Driver& d = driver(what);
  cuda::check_device(device, what);
  if (nbytes == 0) return;
  GX_CHECK_VALUE(src != 0, what, ": the source pointer is null");
  cuda::synchronize_stream(cuda::current_stream(device));
  ContextScope scope(d, primary_context(d, device, what), what);
  cu_check(d, d.MemcpyDtoH(dst, static_cast<CUdeviceptr>(src), nbytes), what, "cuMemcpyDtoH");
}

}  // namespace gx::core::rtc
