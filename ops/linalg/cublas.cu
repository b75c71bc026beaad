// cuBLAS loading and per-thread handles (cublas.h; gpuext/optional_library.h).
#include "cublas.h"

#include <cstdlib>
#include <string>

#include <gpuext/extension.h>
#include <gpuext/optional_library.h>

#include "../common/loaded_api.h"


namespace gx::ops::cublas {
namespace {

namespace ol = ::gx::optional_library;

const ol::Loaded<Api>& loaded() {
  return ol::load_once<Api>(
      "GPUEXT_CUBLAS_PATH", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"},
      [](void* lib, Api& a, std::string& missing) {
        ol::resolve(lib, "cublasCreate_v2", a.Create, missing);
        ol::resolve(lib, "cublasSetStream_v2", a.SetStream, missing);
        ol::resolve(lib, "cublasGetStatusString", a.GetStatusString, missing);
        ol::resolve(lib, "cublasSetWorkspace_v2", a.SetWorkspace, missing);
        ol::resolve(lib, "cublasGemmEx", a.GemmEx, missing);
        ol::resolve(lib, "cublasGemmStridedBatchedEx", a.GemmStridedBatchedEx, missing);
      },
      "cuBLAS (libcublas.so.13 or .12) could not be loaded: install the CUDA toolkit's cuBLAS (e.g. apt install "
      "libcublas-13-0), set CUDA_HOME, or name the file in GPUEXT_CUBLAS_PATH");
}

// GPUEXT_CUBLAS_WORKSPACE_MB (default 32; 0: cuBLAS's own workspace pool).
size_t workspace_bytes() {
  static const size_t bytes = [] {
    const char* v = std::getenv("GPUEXT_CUBLAS_WORKSPACE_MB");
    return v != nullptr && *v != '\0' ? static_cast<size_t>(std::strtoull(v, nullptr, 10)) << 20 : kWorkspaceBytes;
  }();
  return bytes;
}

struct Entry {
  int device;
  Handle handle;
  void* workspace;      // lives as long as the handle
  cudaStream_t stream;  // the stream the handle is bound to now
  bool bound;
  void release_to_pool() { bound = false; }  // the next thread binds it to its own stream
};

// Binds a handle to a stream, with our workspace after it (cublasSetStream
// puts the handle back on cuBLAS's default workspace pool). Only when the
// stream changes: the calls are not free.
void bind(const Api& a, Entry& e, cudaStream_t stream, const char* what) {
  e.bound = false;
  check(a.SetStream(e.handle, stream), what, "cublasSetStream");
  if (e.workspace != nullptr) check(a.SetWorkspace(e.handle, e.workspace, workspace_bytes()), what, "cublasSetWorkspace");
  e.stream = stream;
  e.bound = true;
}

}  // namespace

const Api& api(const char* what) {
  return loaded_api(loaded(), what);
}

void check(Status s, const char* what, const char* call) {
  if (s == 0) return;
  const Api& a = api(what);
  GX_CHECK(false, what, ": ", call, " failed: ", a.GetStatusString(s), " (", s, ")");
}

Handle handle(const char* what, int device, cudaStream_t stream) {
  const Api& a = api(what);
  check_handle_device(what, "cuBLAS", device);
  Entry* e = ol::HandlePool<Entry>::find(device);
  if (e == nullptr) {
    void* ws = nullptr;
    if (workspace_bytes() > 0) {
      GX_CHECK(cudaMalloc(&ws, workspace_bytes()) == cudaSuccess, what, ": could not allocate cuBLAS's ",
               workspace_bytes() >> 20, " MiB workspace");
    }
    Handle h = nullptr;
    const Status s = a.Create(&h);
    if (s != 0 && ws != nullptr) cudaFree(ws);
    check(s, what, "cublasCreate");
    e = &ol::HandlePool<Entry>::add(Entry{device, h, ws, nullptr, false});
  }
  if (!e->bound || e->stream != stream) bind(a, *e, stream, what);
  return e->handle;
}

}  // namespace gx::ops::cublas
