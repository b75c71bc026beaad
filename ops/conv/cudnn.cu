// cuDNN loading and per-thread handles (cudnn_api.h; gpuext/optional_library.h),
// as ops/linalg/cublas.cu does for cuBLAS.
#include "cudnn_api.h"

#include <string>

#include <gpuext/extension.h>
#include <gpuext/optional_library.h>

#include "../common/loaded_api.h"

namespace gx::ops::cudnn {
namespace {

namespace ol = ::gx::optional_library;

// libcudnn.so.9 is cuDNN 9's front library: it loads its sub-libraries (libcudnn_cnn.so.9, ...) from its own folder.
const ol::Loaded<Api>& loaded() {
  return ol::load_once<Api>(
      "GPUEXT_CUDNN_PATH", {"libcudnn.so.9"},
      [](void* lib, Api& a, std::string& missing) {
        ol::resolve(lib, "cudnnGetVersion", a.GetVersion, missing);
        ol::resolve(lib, "cudnnGetErrorString", a.GetErrorString, missing);
        ol::resolve(lib, "cudnnCreate", a.Create, missing);
        ol::resolve(lib, "cudnnSetStream", a.SetStream, missing);
        ol::resolve(lib, "cudnnCreateTensorDescriptor", a.CreateTensorDescriptor, missing);
        ol::resolve(lib, "cudnnSetTensor4dDescriptor", a.SetTensor4dDescriptor, missing);
        ol::resolve(lib, "cudnnDestroyTensorDescriptor", a.DestroyTensorDescriptor, missing);
        ol::resolve(lib, "cudnnCreateFilterDescriptor", a.CreateFilterDescriptor, missing);
        ol::resolve(lib, "cudnnSetFilter4dDescriptor", a.SetFilter4dDescriptor, missing);
        ol::resolve(lib, "cudnnDestroyFilterDescriptor", a.DestroyFilterDescriptor, missing);
        ol::resolve(lib, "cudnnCreateConvolutionDescriptor", a.CreateConvolutionDescriptor, missing);
        ol::resolve(lib, "cudnnSetConvolution2dDescriptor", a.SetConvolution2dDescriptor, missing);
        ol::resolve(lib, "cudnnSetConvolutionGroupCount", a.SetConvolutionGroupCount, missing);
        ol::resolve(lib, "cudnnSetConvolutionMathType", a.SetConvolutionMathType, missing);
        ol::resolve(lib, "cudnnDestroyConvolutionDescriptor", a.DestroyConvolutionDescriptor, missing);
        ol::resolve(lib, "cudnnGetConvolutionForwardAlgorithm_v7", a.GetConvolutionForwardAlgorithm_v7, missing);
        ol::resolve(lib, "cudnnFindConvolutionForwardAlgorithmEx", a.FindConvolutionForwardAlgorithmEx, missing);
        ol::resolve(lib, "cudnnConvolutionForward", a.ConvolutionForward, missing);
        ol::resolve(lib, "cudnnGetConvolutionBackwardDataAlgorithm_v7", a.GetConvolutionBackwardDataAlgorithm_v7, missing);
        ol::resolve(lib, "cudnnFindConvolutionBackwardDataAlgorithmEx", a.FindConvolutionBackwardDataAlgorithmEx, missing);
        ol::resolve(lib, "cudnnConvolutionBackwardData", a.ConvolutionBackwardData, missing);
        ol::resolve(lib, "cudnnGetConvolutionBackwardFilterAlgorithm_v7", a.GetConvolutionBackwardFilterAlgorithm_v7, missing);
        ol::resolve(lib, "cudnnFindConvolutionBackwardFilterAlgorithmEx", a.FindConvolutionBackwardFilterAlgorithmEx, missing);
        ol::resolve(lib, "cudnnConvolutionBackwardFilter", a.ConvolutionBackwardFilter, missing);
        std::string optional;  // not required: the refusals' reasons are shorter without it
        ol::resolve(lib, "cudnnGetLastErrorString", a.GetLastErrorString, optional);
      },
      "cuDNN 9 (libcudnn.so.9) could not be loaded: install it (e.g. apt install libcudnn9-cuda-13, or pip's "
      "nvidia-cudnn-cu13), or name the file in GPUEXT_CUDNN_PATH");
}

struct Entry {
  int device;
  Handle handle;
  cudaStream_t stream;  // the stream the handle is bound to now
  bool bound;
  void release_to_pool() { bound = false; }  // the next thread binds it to its own stream
};

}  // namespace

const Api& api(const char* what) {
  return loaded_api(loaded(), what);
}

std::string describe(Status s) {
  const Api& a = loaded().api;
  std::string out = (a.GetErrorString != nullptr ? a.GetErrorString(s) : "cudnnStatus_t") + std::string(" (") +
                    std::to_string(s) + ")";
  if (a.GetLastErrorString != nullptr) {
    char message[512] = {0};
    a.GetLastErrorString(message, sizeof message);
    if (message[0] != '\0') out += std::string(": ") + message;
  }
  return out;
}

void check(Status s, const char* what, const char* call) {
  GX_CHECK(s == kSuccess, what, ": ", call, " failed: ", describe(s));
}

Handle handle(const char* what, int device, cudaStream_t stream) {
  const Api& a = api(what);
  check_handle_device(what, "cuDNN", device);
  Entry* e = ol::HandlePool<Entry>::find(device);
  if (e == nullptr) {
    Handle h = nullptr;
    check(a.Create(&h), what, "cudnnCreate");
    e = &ol::HandlePool<Entry>::add(Entry{device, h, nullptr, false});
  }
  if (!e->bound || e->stream != stream) {
    e->bound = false;
    check(a.SetStream(e->handle, stream), what, "cudnnSetStream");
    e->stream = stream;
    e->bound = true;
  }
  return e->handle;
}

}  // namespace gx::ops::cudnn
