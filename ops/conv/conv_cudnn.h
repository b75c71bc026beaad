// Convolutions through cuDNN (conv_cudnn.cu, conv_cudnn_ops.cu): the
// geometry of one call, its descriptors, and the per-shape choice of
// algorithm. NOTE [ cuDNN convolutions ] in lib/ops/conv/cudnn.ts says why
// and when this path runs; ops/op-list.js has the ops' schemas.
//
// NOTE [ cuDNN algorithms per shape ]
// Each direction (forward, backward data, backward filter) of each shape key
// (device, dtype, the input's and weight's sizes, padding, stride, dilation,
// groups, TF32, benchmark) chooses its algorithm once and keeps it for the
// process, as torch does:
//   benchmark  cudnnFind*AlgorithmEx runs every algorithm on the call's own
//              tensors (torch.backends.cudnn.benchmark = True) and the fastest
//              usable one is kept; its workspace is the largest the
//              heuristics list asks, up to GPUEXT_CUDNN_WORKSPACE_MB (1024);
//   otherwise  cudnnGet*Algorithm_v7's first usable entry (torch's default).
// Usable: cuDNN's status is success, the workspace fits, and for float32
// without TF32 the math is FMA (the descriptor asks CUDNN_FMA_MATH, as torch
// does with allow_tf32 off, so results agree with the unfold path within
// float32 rounding). A stream being captured into a CUDA graph cannot run the
// Find calls: it takes the heuristics' choice. Workspaces come from the
// caching allocator, ordered on the current stream.
#pragma once
#include <gpuext/extension.h>

#include <string>

#include "cudnn_api.h"

namespace gx::ops::cudnn {

enum class Dir : int { kForward = 0, kData = 1, kFilter = 2 };

// One convolution: x (n, c, h, w) * w (oc, c/groups, kh, kw) -> y (n, oc, oh, ow), cuDNN's symmetric padding.
struct Geometry {
  int n = 0, c = 0, h = 0, w = 0, oc = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int ph = 0, pw = 0, sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  ScalarType dtype = kFloat32;
  int device = 0;
  bool allow_tf32 = false;
  bool benchmark = true;
};

// The geometry of x, w and y, checked (GX_CHECK, naming `what`), or a reason cuDNN cannot take it (32-bit sizes).
std::string make_geometry(const char* what, const Tensor& x, const Tensor& w, const Tensor& y, IntArrayRef padding,
                          IntArrayRef stride, IntArrayRef dilation, int64_t groups, bool allow_tf32, bool benchmark,
                          Geometry& g);

// The device pointers of a call: x, w, y (forward writes y, backward data x, backward filter w).
struct Buffers {
  void* x;
  void* w;
  void* y;
};

// The tensor, filter and convolution descriptors of a geometry, destroyed with it.
class Descriptors {
 public:
  Descriptors(const char* what, const Geometry& g);
  ~Descriptors();
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  // Empty when cuDNN took the descriptors, else why not.
  const std::string& refusal() const { return refusal_; }
  TensorDesc x = nullptr, y = nullptr;
  FilterDesc w = nullptr;
  ConvDesc conv = nullptr;

 private:
  void release();
  const Api& a_;
  std::string refusal_;
};

struct Choice {
  int algo = 0;
  int math = 0;
  size_t memory = 0;
};

// The algorithm of direction `dir` for g (NOTE [ cuDNN algorithms per shape ]), or false with `reason`; `run`
// false: only whether one exists (heuristics, nothing runs: the forward asks this of the backward directions).
bool choose(const char* what, Handle h, const Geometry& g, const Descriptors& d, Dir dir, const Buffers* run,
            cudaStream_t stream, Choice& out, std::string& reason);

// Runs direction `dir` with its chosen algorithm: out = alpha * op + beta * out (alpha 1, beta 0).
void run(const char* what, Handle h, const Geometry& g, const Descriptors& d, Dir dir, const Choice& c,
         const Buffers& b);

// 1 and 0 of the scaling type cuDNN takes for dtype (double for float64, else float).
const void* one(ScalarType t);
const void* zero(ScalarType t);

// cuDNN's data type of a floating dtype.
int data_type(ScalarType t);

}  // namespace gx::ops::cudnn
