// NVRTC, loaded with dlopen when first used (NOTE [ Loaded when first used ]
// in rtc.h). nvrtc.h is not needed: the few functions used are declared here
// with their documented C signatures.
#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include <gpuext/optional_library.h>

#include "rtc/internal.h"
#include "rtc/rtc.h"

namespace gx::core::rtc {
namespace {

// --- the NVRTC C API, as documented (nvrtc.h) -----------------------------------
using nvrtcResult = int;  // enum nvrtcResult
constexpr nvrtcResult NVRTC_SUCCESS = 0;
constexpr nvrtcResult NVRTC_ERROR_INVALID_OPTION = 5;
constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

struct Nvrtc {
  void* lib = nullptr;
  std::string path;
  int major = 0, minor = 0;
  const char* (*GetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*Version)(int*, int*) = nullptr;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  nvrtcResult (*DestroyProgram)(nvrtcProgram*) = nullptr;
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetPTX)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*AddNameExpression)(nvrtcProgram, const char* const) = nullptr;
  nvrtcResult (*GetLoweredName)(nvrtcProgram, const char* const, const char**) = nullptr;
};

struct LoadState {
  Nvrtc api;
  bool ok = false;
  std::string error;
};

using optional_library::resolve;

// The CUDA driver's major version when libcuda is already loaded, else 0.
// Listing candidates for the kernel cache must stay cheap (NOTE [ NVRTC
// identity ]): loading the driver and cuInit take milliseconds, while
// cuDriverGetVersion on a loaded driver needs no cuInit. Whether it is loaded
// comes from the list of loaded objects: a dlopen(RTLD_NOLOAD) of a soname
// that is not loaded searches the library path (0.3 ms, a process's first
// kernel cache lookup pays it).
int find_loaded_libcuda(struct dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  const char* slash = std::strrchr(name, '/');
  if (std::strncmp(slash != nullptr ? slash + 1 : name, "libcuda.so", 10) != 0) return 0;
  *static_cast<std::string*>(out) = name;
  return 1;  // stop
}

int loaded_driver_major() {
  std::string path;
  dl_iterate_phdr(find_loaded_libcuda, &path);
  if (path.empty()) return 0;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib == nullptr) return 0;
  int version = 0;
  using GetVersion = int (*)(int*);
  if (auto f = reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion")); f == nullptr || f(&version) != 0) {
    version = 0;
  }
  dlclose(lib);  // drops only the reference RTLD_NOLOAD took
  return version / 1000;
}

}  // namespace

// Candidate files, most wanted first: $GPUEXT_NVRTC_PATH, then each soname
// (the driver's major version first, when the driver is loaded) under $CUDA_HOME/lib64, $CUDA_PATH/lib64
// and /usr/local/cuda/lib64, then bare (LD_LIBRARY_PATH, the ld cache). The
// toolkit's own directories come before the loader's search so that NVRTC
// matches the headers compiles include (-I from the same toolkit), and so
// that the kernel cache can name NVRTC by its file without loading it
// (NOTE [ NVRTC identity ] in lib/rtc/compiler.ts).
std::vector<std::string> nvrtc_candidates(bool load_driver) {
  std::vector<const char*> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  const int driver_major = load_driver ? detail::driver_version() / 1000 : loaded_driver_major();
  if (driver_major == 12) std::swap(names[0], names[1]);
  return optional_library::candidates("GPUEXT_NVRTC_PATH", names);
}

namespace {

LoadState& load() {
  static LoadState state;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string other_errors;  // failures other than "no such file": worth showing
    for (const std::string& path : nvrtc_candidates(/*load_driver=*/true)) {
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) {
        const char* e = dlerror();
        if (e != nullptr && std::strstr(e, "No such file") == nullptr) {
          other_errors += str("; ", e);
        }
        continue;
      }
      Nvrtc& a = state.api;
      std::string missing;
      resolve(lib, "nvrtcGetErrorString", a.GetErrorString, missing);
      resolve(lib, "nvrtcVersion", a.Version, missing);
      resolve(lib, "nvrtcCreateProgram", a.CreateProgram, missing);
      resolve(lib, "nvrtcDestroyProgram", a.DestroyProgram, missing);
      resolve(lib, "nvrtcCompileProgram", a.CompileProgram, missing);
      resolve(lib, "nvrtcGetProgramLogSize", a.GetProgramLogSize, missing);
      resolve(lib, "nvrtcGetProgramLog", a.GetProgramLog, missing);
      resolve(lib, "nvrtcGetPTXSize", a.GetPTXSize, missing);
      resolve(lib, "nvrtcGetPTX", a.GetPTX, missing);
      resolve(lib, "nvrtcGetCUBINSize", a.GetCUBINSize, missing);
      resolve(lib, "nvrtcGetCUBIN", a.GetCUBIN, missing);
      resolve(lib, "nvrtcAddNameExpression", a.AddNameExpression, missing);
      resolve(lib, "nvrtcGetLoweredName", a.GetLoweredName, missing);
      if (!missing.empty()) {
        other_errors += str("; ", path, " lacks ", missing, " (NVRTC older than 11.1?)");
        dlclose(lib);
        continue;
      }
      if (a.Version(&a.major, &a.minor) != NVRTC_SUCCESS) {
        other_errors += str("; ", path, ": nvrtcVersion failed");
        dlclose(lib);
        continue;
      }
      a.lib = lib;
      a.path = path;
      state.ok = true;
      return;
    }
    state.error = str(
        "NVRTC (libnvrtc.so.13 or libnvrtc.so.12) not found: install the CUDA toolkit's nvrtc component "
        "(e.g. apt install cuda-nvrtc-13-0) or set CUDA_HOME "
        "(looked in $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64 and on the library path; "
        "GPUEXT_NVRTC_PATH names a file directly); gpuext falls back to nvcc for compiling",
        other_errors);
  });
  return state;
}

const Nvrtc& nvrtc(const char* what) {
  LoadState& s = load();
  if (!s.ok) throw LibraryMissing(LibraryMissing::Which::Nvrtc, str(what, ": ", s.error));
  return s.api;
}

void check(const Nvrtc& n, nvrtcResult r, const char* what, const char* call) {
  if (r != NVRTC_SUCCESS) fail(ErrorKind::Cuda, what, ": ", call, " failed: ", n.GetErrorString(r), " (", r, ")");
}

struct ProgramGuard {
  const Nvrtc& n;
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog != nullptr) n.DestroyProgram(&prog);
  }
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_arch_option(const std::string& o) {
  return starts_with(o, "-arch") || starts_with(o, "--gpu-architecture") || starts_with(o, "--gpu-name");
}

}  // namespace

namespace detail {
bool nvrtc_available(int* major, int* minor, std::string* path, std::string* error) noexcept {
  try {
    LoadState& s = load();
    if (s.ok) {
      *major = s.api.major;
      *minor = s.api.minor;
      *path = s.api.path;
    } else {
      *error = s.error;
    }
    return s.ok;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}
}  // namespace detail

CompileResult compile(const char* what, const std::string& source, const std::string& program_name,
                      const std::vector<std::string>& options,
                      const std::vector<std::string>& name_expressions, const std::string& arch) {
  CompileResult out;
  if (starts_with(arch, "sm_")) {
    out.ptx = false;
  } else if (starts_with(arch, "compute_")) {
    out.ptx = true;
  } else {
    fail(ErrorKind::Type, what, ": argument 'arch' must be like 'sm_90' (compiles to CUBIN) or 'compute_90' "
         "(compiles to PTX), got '", arch, "'");
  }
  for (const std::string& o : options) {
    GX_CHECK_TYPE(!is_arch_option(o), what, ": option '", o, "' sets the architecture; pass it as 'arch' instead");
  }
  const Nvrtc& n = nvrtc(what);

  ProgramGuard g{n};
  check(n, n.CreateProgram(&g.prog, source.c_str(), program_name.empty() ? "kernel.cu" : program_name.c_str(), 0,
                           nullptr, nullptr),
        what, "nvrtcCreateProgram");
  for (const std::string& e : name_expressions) {
    const nvrtcResult r = n.AddNameExpression(g.prog, e.c_str());
    if (r != NVRTC_SUCCESS) {
      fail(ErrorKind::Value, what, ": name expression '", e, "' was rejected by NVRTC: ", n.GetErrorString(r));
    }
  }
  const std::string arch_option = "-arch=" + arch;
  std::vector<const char*> opts;
  opts.reserve(options.size() + 1);
  opts.push_back(arch_option.c_str());
  for (const std::string& o : options) opts.push_back(o.c_str());
  const nvrtcResult r = n.CompileProgram(g.prog, static_cast<int>(opts.size()), opts.data());

  size_t log_size = 0;
  if (n.GetProgramLogSize(g.prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (n.GetProgramLog(g.prog, log.data()) == NVRTC_SUCCESS) {
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
      out.log = std::move(log);
    }
  }
  if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) {
    out.ok = false;
    if (out.log.empty()) out.log = n.GetErrorString(r);
    return out;
  }
  check(n, r, what, "nvrtcCompileProgram");

  size_t size = 0;
  if (out.ptx) {
    check(n, n.GetPTXSize(g.prog, &size), what, "nvrtcGetPTXSize");
    out.image.resize(size);
    if (size > 0) check(n, n.GetPTX(g.prog, reinterpret_cast<char*>(out.image.data())), what, "nvrtcGetPTX");
  } else {
    check(n, n.GetCUBINSize(g.prog, &size), what, "nvrtcGetCUBINSize");
    out.image.resize(size);
    if (size > 0) check(n, n.GetCUBIN(g.prog, reinterpret_cast<char*>(out.image.data())), what, "nvrtcGetCUBIN");
  }
  GX_CHECK_VALUE(size > 0, what, ": NVRTC produced an empty ", out.ptx ? "PTX" : "CUBIN", " for ", arch);

  out.lowered_names.reserve(name_expressions.size());
  for (const std::string& e : name_expressions) {
    const char* lowered = nullptr;
    const nvrtcResult lr = n.GetLoweredName(g.prog, e.c_str(), &lowered);
    if (lr != NVRTC_SUCCESS || lowered == nullptr) {
      fail(ErrorKind::Value, what, ": name expression '", e, "' names no __global__ function or __device__/__constant__ variable in the program (",
           n.GetErrorString(lr), "); it must be e.g. 'my_kernel<float>' or '&my_kernel<float>'");
    }
    out.lowered_names.emplace_back(e, lowered);
  }
  out.ok = true;
  return out;
}

}  // namespace gx::core::rtc
