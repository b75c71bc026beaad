// cuSOLVER loading and per-thread handles (cusolver.h). Handles are pooled
// like cuBLAS's (cublas.cu): never destroyed, handed to the next thread.
#include "cusolver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <gpuext/extension.h>

namespace gx::ops::cusolver {
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

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("GPUEXT_CUSOLVER_PATH"); p != nullptr && *p != '\0') out.push_back(p);
  const char* names[] = {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"};
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
      resolve(lib, "cusolverDnCreate", a.Create, missing);
      resolve(lib, "cusolverDnSetStream", a.SetStream, missing);
      resolve(lib, "cusolverDnCreateGesvdjInfo", a.CreateGesvdjInfo, missing);
      resolve(lib, "cusolverDnDestroyGesvdjInfo", a.DestroyGesvdjInfo, missing);
      resolve(lib, "cusolverDnSgesvdj_bufferSize", a.SgesvdjBufferSize, missing);
      resolve(lib, "cusolverDnDgesvdj_bufferSize", a.DgesvdjBufferSize, missing);
      resolve(lib, "cusolverDnSgesvdj", a.Sgesvdj, missing);
      resolve(lib, "cusolverDnDgesvdj", a.Dgesvdj, missing);
      if (!missing.empty()) {
        errors += "; " + path + " lacks " + missing;
        dlclose(lib);
        continue;
      }
      state.ok = true;
      return;
    }
    state.error = "cuSOLVER (libcusolver.so.12 or .11) could not be loaded: install the CUDA toolkit's cuSOLVER "
                  "(e.g. apt install libcusolver-13-0), set CUDA_HOME, or name the file in GPUEXT_CUSOLVER_PATH" + errors;
  });
  return state;
}

struct Pooled {
  int device;
  Handle handle;
};
std::mutex pool_mutex;
std::vector<Pooled> pool;

struct ThreadHandles {
  std::vector<Pooled> mine;
  ~ThreadHandles() {
    std::lock_guard<std::mutex> lock(pool_mutex);
    pool.insert(pool.end(), mine.begin(), mine.end());
  }
};
thread_local ThreadHandles tls_handles;

}  // namespace

const Api& api(const char* what) {
  Loaded& l = loaded();
  GX_CHECK(l.ok, what, ": ", l.error);
  return l.api;
}

void check(Status s, const char* what, const char* call) {
  GX_CHECK(s == 0, what, ": ", call, " failed with cusolverStatus_t ", s);
}

Handle handle(const char* what, cudaStream_t stream) {
  const Api& a = api(what);
  int device = 0;
  GX_CHECK(cudaGetDevice(&device) == cudaSuccess, what, ": cudaGetDevice failed");
  Handle h = nullptr;
  for (const Pooled& e : tls_handles.mine) {
    if (e.device == device) h = e.handle;
  }
  if (h == nullptr) {
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      for (size_t i = 0; i < pool.size(); ++i) {
        if (pool[i].device == device) {
          h = pool[i].handle;
          pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
    }
    if (h == nullptr) check(a.Create(&h), what, "cusolverDnCreate");
    tls_handles.mine.push_back(Pooled{device, h});
  }
  check(a.SetStream(h, stream), what, "cusolverDnSetStream");
  return h;
}

}  // namespace gx::ops::cusolver
