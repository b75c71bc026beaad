// cuBLAS loading and per-thread handles (cublas.h).
#include "cublas.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <gpuext/extension.h>

namespace gx::ops::cublas {
namespace {

struct Loaded {
  Api api;
  bool ok = false;
  std::string error;
};

template <typename F>
void resolve(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
}

// $GPUEXT_CUBLAS_PATH, then the toolkit's lib64 directories, then the loader's search.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("GPUEXT_CUBLAS_PATH"); p != nullptr && *p != '\0') out.push_back(p);
  const char* names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* d = std::getenv(var); d != nullptr && *d != '\0') dirs.push_back(std::string(d) + "/lib64");
  }
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string& d : dirs) {
    for (const char* n : names) out.push_back(d + "/" + n);
  }
  for (const char* n : names) out.push_back(n);
  return out;
}

Loaded& loaded() {
  static Loaded state;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string errors;
    for (const std::string& path : candidates()) {
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) continue;
      std::string missing;
      Api& a = state.api;
      resolve(lib, "cublasCreate_v2", a.Create, missing);
      resolve(lib, "cublasSetStream_v2", a.SetStream, missing);
      resolve(lib, "cublasGetStatusString", a.GetStatusString, missing);
      resolve(lib, "cublasSetWorkspace_v2", a.SetWorkspace, missing);
      resolve(lib, "cublasGemmEx", a.GemmEx, missing);
      resolve(lib, "cublasGemmStridedBatchedEx", a.GemmStridedBatchedEx, missing);
      if (!missing.empty()) {
        errors += "; " + path + " lacks " + missing;
        dlclose(lib);
        continue;
      }
      state.ok = true;
      return;  // the library stays loaded for the process
    }
    state.error = "cuBLAS (libcublas.so.13 or .12) could not be loaded: install the CUDA toolkit's cuBLAS (e.g. "
                  "apt install libcublas-13-0), set CUDA_HOME, or name the file in GPUEXT_CUBLAS_PATH" + errors;
  });
  return state;
}

// Handles outlive the threads that made them: a thread's handles go back to
// this pool when it exits (no cuBLAS call at exit, when the driver may be
// going away) and the next thread takes them.
struct Pooled {
  int device;
  Handle handle;
  void* workspace;
  cudaStream_t stream;  // the stream the handle is bound to now
  bool bound;
};
std::mutex pool_mutex;
std::vector<Pooled> pool;

struct ThreadHandles {
  std::vector<Pooled> mine;
  ~ThreadHandles() {
    std::lock_guard<std::mutex> lock(pool_mutex);
    for (Pooled& e : mine) e.bound = false;  // the next thread binds it to its own stream
    pool.insert(pool.end(), mine.begin(), mine.end());
  }
};
thread_local ThreadHandles tls_handles;

// GPUEXT_CUBLAS_WORKSPACE_MB (default 32; 0: cuBLAS's own workspace pool).
size_t workspace_bytes() {
  static const size_t bytes = [] {
    const char* v = std::getenv("GPUEXT_CUBLAS_WORKSPACE_MB");
    return v != nullptr && *v != '\0' ? static_cast<size_t>(std::strtoull(v, nullptr, 10)) << 20 : kWorkspaceBytes;
  }();
  return bytes;
}

// Binds a handle to a stream, with our workspace after it (cublasSetStream
// puts the handle back on cuBLAS's default workspace pool). Only when the
// stream changes: the calls are not free.
void bind(const Api& a, Pooled& e, cudaStream_t stream, const char* what) {
  e.bound = false;
  check(a.SetStream(e.handle, stream), what, "cublasSetStream");
  if (e.workspace != nullptr) check(a.SetWorkspace(e.handle, e.workspace, workspace_bytes()), what, "cublasSetWorkspace");
  e.stream = stream;
  e.bound = true;
}

}  // namespace

const Api& api(const char* what) {
  Loaded& l = loaded();
  GX_CHECK(l.ok, what, ": ", l.error);
  return l.api;
}

void check(Status s, const char* what, const char* call) {
  if (s == 0) return;
  const Api& a = api(what);
  GX_CHECK(false, what, ": ", call, " failed: ", a.GetStatusString(s), " (", s, ")");
}

Handle handle(const char* what, cudaStream_t stream) {
  const Api& a = api(what);
  int device = 0;
  GX_CHECK(cudaGetDevice(&device) == cudaSuccess, what, ": cudaGetDevice failed");
  for (Pooled& e : tls_handles.mine) {
    if (e.device != device) continue;
    if (!e.bound || e.stream != stream) bind(a, e, stream, what);
    return e.handle;
  }
  Handle h = nullptr;
  void* ws = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool_mutex);
    for (size_t i = 0; i < pool.size(); ++i) {
      if (pool[i].device == device) {
        h = pool[i].handle;
        ws = pool[i].workspace;
        pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  if (h == nullptr) {
    // The workspace lives as long as the handle (handles are pooled, never
    // destroyed); one handle serves one thread at a time, on its stream.
    if (workspace_bytes() > 0) {
      GX_CHECK(cudaMalloc(&ws, workspace_bytes()) == cudaSuccess, what, ": could not allocate cuBLAS's ",
               workspace_bytes() >> 20, " MiB workspace");
    }
    const Status s = a.Create(&h);
    if (s != 0) cudaFree(ws);
    check(s, what, "cublasCreate");
  }
  tls_handles.mine.push_back(Pooled{device, h, ws, nullptr, false});
  bind(a, tls_handles.mine.back(), stream, what);
  return h;
}

}  // namespace gx::ops::cublas
