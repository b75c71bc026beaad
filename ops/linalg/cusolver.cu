// cuSOLVER loading and per-thread handles (cusolver.h; gpuext/optional_library.h).
#include "cusolver.h"

#include <string>

#include <gpuext/extension.h>
#include <gpuext/optional_library.h>


namespace gx::ops::cusolver {
namespace {

namespace ol = ::gx::optional_library;

const ol::Loaded<Api>& loaded() {
  return ol::load_once<Api>(
      "GPUEXT_CUSOLVER_PATH", {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"},
      [](void* lib, Api& a, std::string& missing) {
        ol::resolve(lib, "cusolverDnCreate", a.Create, missing);
        ol::resolve(lib, "cusolverDnSetStream", a.SetStream, missing);
        ol::resolve(lib, "cusolverDnCreateGesvdjInfo", a.CreateGesvdjInfo, missing);
        ol::resolve(lib, "cusolverDnDestroyGesvdjInfo", a.DestroyGesvdjInfo, missing);
        ol::resolve(lib, "cusolverDnSgesvdj_bufferSize", a.SgesvdjBufferSize, missing);
        ol::resolve(lib, "cusolverDnDgesvdj_bufferSize", a.DgesvdjBufferSize, missing);
        ol::resolve(lib, "cusolverDnSgesvdj", a.Sgesvdj, missing);
        ol::resolve(lib, "cusolverDnDgesvdj", a.Dgesvdj, missing);
      },
      "cuSOLVER (libcusolver.so.12 or .11) could not be loaded: install the CUDA toolkit's cuSOLVER (e.g. apt "
      "install libcusolver-13-0), set CUDA_HOME, or name the file in GPUEXT_CUSOLVER_PATH");
}

struct Entry {
  int device;
  Handle handle;
  void release_to_pool() {}
};

}  // namespace

const Api& api(const char* what) {
  const ol::Loaded<Api>& l = loaded();
  GX_CHECK(l.ok, what, ": ", l.error);
  return l.api;
}

void check(Status s, const char* what, const char* call) {
  GX_CHECK(s == 0, what, ": ", call, " failed with cusolverStatus_t ", s);
}

Handle handle(const char* what, int device, cudaStream_t stream) {
  const Api& a = api(what);
  int current = -1;
  GX_CHECK(cudaGetDevice(&current) == cudaSuccess, what, ": cudaGetDevice failed");
  // Right by construction: a handle is made for and used on one device, the one current in the caller's DeviceGuard.
  GX_CHECK(current == device, what, ": the cuSOLVER handle of cuda:", device, " was asked for while cuda:", current,
           " is current (the op must make its tensors' device current first)");
  Entry* e = ol::HandlePool<Entry>::find(device);
  if (e == nullptr) {
    Handle h = nullptr;
    check(a.Create(&h), what, "cusolverDnCreate");
    e = &ol::HandlePool<Entry>::add(Entry{device, h});
  }
  check(a.SetStream(e->handle, stream), what, "cusolverDnSetStream");
  return e->handle;
}

}  // namespace gx::ops::cusolver
