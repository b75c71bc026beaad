// cuSOLVER loading and per-thread handles (cusolver.h; gpuext/optional_library.h).
#include "cusolver.h"

#include <string>

#include <gpuext/extension.h>
#include <gpuext/optional_library.h>

#include "../common/loaded_api.h"


namespace gx::ops::cusolver {
namespace {

namespace ol = ::gx::optional_library;

// The decompositions' routines of one precision (`p`: "S" or "D").
template <typename T>
void resolve_dense(void* lib, const std::string& p, Dense<T>& d, std::string& missing) {
  const std::string dn = "cusolverDn" + p;
  ol::resolve(lib, (dn + "geqrf_bufferSize").c_str(), d.geqrf_buffer_size, missing);
  ol::resolve(lib, (dn + "geqrf").c_str(), d.geqrf, missing);
  ol::resolve(lib, (dn + "orgqr_bufferSize").c_str(), d.orgqr_buffer_size, missing);
  ol::resolve(lib, (dn + "orgqr").c_str(), d.orgqr, missing);
  ol::resolve(lib, (dn + "potrf_bufferSize").c_str(), d.potrf_buffer_size, missing);
  ol::resolve(lib, (dn + "potrf").c_str(), d.potrf, missing);
  ol::resolve(lib, (dn + "getrf_bufferSize").c_str(), d.getrf_buffer_size, missing);
  ol::resolve(lib, (dn + "getrf").c_str(), d.getrf, missing);
  ol::resolve(lib, (dn + "getrs").c_str(), d.getrs, missing);
  ol::resolve(lib, (dn + "syevd_bufferSize").c_str(), d.syevd_buffer_size, missing);
  ol::resolve(lib, (dn + "syevd").c_str(), d.syevd, missing);
}

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
        // Not required for loading (the SVD does not need them): dense() names any that are missing.
        resolve_dense(lib, "S", a.s, a.dense_missing);
        resolve_dense(lib, "D", a.d, a.dense_missing);
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
  return loaded_api(loaded(), what);
}

template <typename T>
const Dense<T>& dense(const char* what) {
  const Api& a = api(what);
  GX_CHECK(a.dense_missing.empty(), what, ": the loaded cuSOLVER lacks ", a.dense_missing,
           " (a cuSOLVER without the legacy dense API?)");
  return a.routines<T>();
}
template const Dense<float>& dense<float>(const char*);
template const Dense<double>& dense<double>(const char*);

void check(Status s, const char* what, const char* call) {
  GX_CHECK(s == 0, what, ": ", call, " failed with cusolverStatus_t ", s);
}

Handle handle(const char* what, int device, cudaStream_t stream) {
  const Api& a = api(what);
  check_handle_device(what, "cuSOLVER", device);
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
