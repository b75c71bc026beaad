// cuDNN convolutions' geometry, descriptors and per-shape algorithm choice
// (conv_cudnn.h, NOTE [ cuDNN algorithms per shape ]).
#include "conv_cudnn.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace gx::ops::cudnn {
namespace {

constexpr int64_t kIntMax = 2147483647;

// GPUEXT_CUDNN_WORKSPACE_MB (default 1024): the most workspace the benchmark's Find may use.
size_t workspace_limit() {
  static const size_t bytes = [] {
    const char* v = std::getenv("GPUEXT_CUDNN_WORKSPACE_MB");
    return (v != nullptr && *v != '\0' ? static_cast<size_t>(std::strtoull(v, nullptr, 10)) : size_t{1024}) << 20;
  }();
  return bytes;
}

// Success, or the refusal's reason in `reason` (false); any other status throws naming the call.
bool took(Status s, const char* what, const char* call, std::string& reason) {
  if (s == kSuccess) return true;
  if (!refused(s)) check(s, what, call);
  reason = std::string(call) + " refused: " + describe(s);
  return false;
}

// The math the descriptor asks for: FMA keeps float32 off TF32; 16-bit floats use tensor cores (torch's choices).
int requested_math(const Geometry& g) {
  if (g.dtype == kFloat32) return g.allow_tf32 ? kDefaultMath : kFmaMath;
  if (g.dtype == kFloat16 || g.dtype == kBFloat16) return kTensorOpMath;
  return kDefaultMath;
}

bool usable(const Geometry& g, const AlgoPerf& p, size_t workspace) {
  if (p.status != kSuccess || p.memory > workspace) return false;
  return !(g.dtype == kFloat32 && !g.allow_tf32) || p.mathType == kFmaMath;
}

const char* dir_name(Dir d) {
  return d == Dir::kForward ? "forward" : d == Dir::kData ? "backward data" : "backward filter";
}

// cudnnGet*Algorithm_v7: every algorithm, the heuristics' best first.
bool heuristics(const Api& a, Handle h, const Descriptors& d, Dir dir, std::vector<AlgoPerf>& out, const char* what,
                std::string& reason) {
  out.assign(static_cast<size_t>(kMaxAlgos), AlgoPerf{});
  int n = 0;
  const int req = static_cast<int>(out.size());
  Status s = kSuccess;
  const char* call = "";
  switch (dir) {
    case Dir::kForward:
      s = a.GetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, req, &n, out.data());
      call = "cudnnGetConvolutionForwardAlgorithm_v7";
      break;
    case Dir::kData:
      s = a.GetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, req, &n, out.data());
      call = "cudnnGetConvolutionBackwardDataAlgorithm_v7";
      break;
    case Dir::kFilter:
      s = a.GetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, req, &n, out.data());
      call = "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
      break;
  }
  out.resize(static_cast<size_t>(std::max(n, 0)));
  return took(s, what, call, reason);
}

// cudnnFind*AlgorithmEx on the call's buffers: every algorithm run and timed, the fastest first.
bool find(const Api& a, Handle h, const Descriptors& d, Dir dir, const Buffers& b, void* ws, size_t bytes,
          std::vector<AlgoPerf>& out, const char* what, std::string& reason) {
  out.assign(static_cast<size_t>(kMaxAlgos), AlgoPerf{});
  int n = 0;
  const int req = static_cast<int>(out.size());
  Status s = kSuccess;
  const char* call = "";
  switch (dir) {
    case Dir::kForward:
      s = a.FindConvolutionForwardAlgorithmEx(h, d.x, b.x, d.w, b.w, d.conv, d.y, b.y, req, &n, out.data(), ws, bytes);
      call = "cudnnFindConvolutionForwardAlgorithmEx";
      break;
    case Dir::kData:
      s = a.FindConvolutionBackwardDataAlgorithmEx(h, d.w, b.w, d.y, b.y, d.conv, d.x, b.x, req, &n, out.data(), ws, bytes);
      call = "cudnnFindConvolutionBackwardDataAlgorithmEx";
      break;
    case Dir::kFilter:
      s = a.FindConvolutionBackwardFilterAlgorithmEx(h, d.x, b.x, d.y, b.y, d.conv, d.w, b.w, req, &n, out.data(), ws, bytes);
      call = "cudnnFindConvolutionBackwardFilterAlgorithmEx";
      break;
  }
  out.resize(static_cast<size_t>(std::max(n, 0)));
  return took(s, what, call, reason);
}

// A workspace of `bytes` (at least one) from the caching allocator; an empty tensor when even that fails.
Tensor workspace(size_t bytes, const Geometry& g) {
  return empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, kUInt8, Device(kCUDA, g.device));
}

// The choices made so far, by shape key and direction (a choice for the process, as torch's benchmark cache).
struct Cache {
  std::mutex mutex;
  std::map<std::vector<int64_t>, Choice> chosen;
  std::map<std::vector<int64_t>, std::string> probed;  // a backward direction asked about by the forward: '' or why not
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: ops may run while the process exits
  return *c;
}

std::vector<int64_t> key_of(const Geometry& g, Dir dir, bool benchmark) {
  return {static_cast<int64_t>(dir), g.device, static_cast<int64_t>(g.dtype), g.allow_tf32, benchmark, g.n, g.c, g.h,
          g.w, g.oc, g.kh, g.kw, g.ph, g.pw, g.sh, g.sw, g.dh, g.dw, g.groups};
}

bool capturing(cudaStream_t s) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(s, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone;
}

// The first usable entry of `perf`, or a reason naming what cuDNN offered.
bool first_usable(const Geometry& g, const std::vector<AlgoPerf>& perf, size_t ws, Dir dir, Choice& out,
                  std::string& reason) {
  for (const AlgoPerf& p : perf) {
    if (!usable(g, p, ws)) continue;
    out = Choice{p.algo, p.mathType, p.memory};
    return true;
  }
  reason = std::string("no usable ") + dir_name(dir) + " algorithm among cuDNN's " + std::to_string(perf.size()) +
           (g.dtype == kFloat32 && !g.allow_tf32 ? " (float32 without TF32 needs an FMA algorithm)" : "");
  return false;
}

}  // namespace

std::string make_geometry(const char* what, const Tensor& x, const Tensor& w, const Tensor& y, IntArrayRef padding,
                          IntArrayRef stride, IntArrayRef dilation, int64_t groups, bool allow_tf32, bool benchmark,
                          Geometry& g) {
  GX_CHECK(x.dim() == 4 && w.dim() == 4 && y.dim() == 4, what, ": expected input, weight and output as 4-d (N, C, H, W), got ",
           x.sizes(), ", ", w.sizes(), " and ", y.sizes());
  GX_CHECK(padding.size() == 2 && stride.size() == 2 && dilation.size() == 2, what,
           ": padding, stride and dilation must have 2 entries (height, width)");
  GX_CHECK(x.dtype() == w.dtype() && x.dtype() == y.dtype(), what, ": operands of dtypes ", x.dtype(), ", ", w.dtype(),
           " and ", y.dtype());
  GX_CHECK(x.dtype() == kFloat32 || x.dtype() == kFloat64 || x.dtype() == kFloat16 || x.dtype() == kBFloat16, what,
           ": dtype ", x.dtype(), " is not supported (floating only)");
  GX_CHECK(x.device() == w.device() && x.device() == y.device() && x.device().is_cuda(), what,
           ": operands must be on one CUDA device, got ", x.device(), ", ", w.device(), " and ", y.device());
  GX_CHECK(x.is_contiguous() && w.is_contiguous() && y.is_contiguous(), what, ": operands must be contiguous");
  GX_CHECK(groups >= 1 && x.size(1) == w.size(1) * groups && w.size(0) % groups == 0 && y.size(1) == w.size(0) &&
               y.size(0) == x.size(0),
           what, ": input ", x.sizes(), ", weight ", w.sizes(), " and output ", y.sizes(), " do not fit groups ", groups);
  for (int i = 0; i < 2; ++i) {
    GX_CHECK(padding[i] >= 0 && stride[i] >= 1 && dilation[i] >= 1, what,
             ": padding must be non-negative, stride and dilation positive");
    const int64_t in = x.size(2 + i), k = w.size(2 + i);
    const int64_t span = in + 2 * padding[i] - dilation[i] * (k - 1) - 1;
    GX_CHECK(span >= 0 && span / stride[i] + 1 == y.size(2 + i), what, ": output ", y.sizes(), " is not the input ",
             x.sizes(), " convolved with kernel ", w.sizes(), " (padding ", padding, ", stride ", stride, ", dilation ",
             dilation, ")");
  }
  for (const Tensor* t : {&x, &w, &y}) {
    if (t->numel() > kIntMax) return std::string("a tensor of ") + std::to_string(t->numel()) + " elements (cuDNN takes fewer than 2^31)";
  }
  for (int64_t v : {padding[0], padding[1], stride[0], stride[1], dilation[0], dilation[1], groups}) {
    if (v > kIntMax) return "padding, stride, dilation or groups of 2^31 or more";
  }
  g.n = static_cast<int>(x.size(0)), g.c = static_cast<int>(x.size(1)), g.h = static_cast<int>(x.size(2)), g.w = static_cast<int>(x.size(3));
  g.oc = static_cast<int>(w.size(0)), g.kh = static_cast<int>(w.size(2)), g.kw = static_cast<int>(w.size(3));
  g.oh = static_cast<int>(y.size(2)), g.ow = static_cast<int>(y.size(3));
  g.ph = static_cast<int>(padding[0]), g.pw = static_cast<int>(padding[1]), g.sh = static_cast<int>(stride[0]);
  g.sw = static_cast<int>(stride[1]), g.dh = static_cast<int>(dilation[0]), g.dw = static_cast<int>(dilation[1]);
  g.groups = static_cast<int>(groups);
  g.dtype = x.dtype();
  g.device = x.device().index;
  g.allow_tf32 = allow_tf32;
  g.benchmark = benchmark;
  return "";
}

int data_type(ScalarType t) {
  switch (t) {
    case kFloat64: return kDataDouble;
    case kFloat16: return kDataHalf;
    case kBFloat16: return kDataBFloat16;
    default: return kDataFloat;
  }
}

const void* one(ScalarType t) {
  static const float f = 1.0f;
  static const double d = 1.0;
  return t == kFloat64 ? static_cast<const void*>(&d) : static_cast<const void*>(&f);
}
const void* zero(ScalarType t) {
  static const float f = 0.0f;
  static const double d = 0.0;
  return t == kFloat64 ? static_cast<const void*>(&d) : static_cast<const void*>(&f);
}

Descriptors::Descriptors(const char* what, const Geometry& g) : a_(api(what)) {
  try {
    check(a_.CreateTensorDescriptor(&x), what, "cudnnCreateTensorDescriptor");
    check(a_.CreateTensorDescriptor(&y), what, "cudnnCreateTensorDescriptor");
    check(a_.CreateFilterDescriptor(&w), what, "cudnnCreateFilterDescriptor");
    check(a_.CreateConvolutionDescriptor(&conv), what, "cudnnCreateConvolutionDescriptor");
  } catch (...) {
    release();  // a throwing constructor gets no destructor: free those made
    throw;
  }
  const int dt = data_type(g.dtype);
  // 16-bit floats accumulate in float, as torch's cuDNN convolutions do.
  const int compute = g.dtype == kFloat64 ? kDataDouble : kDataFloat;
  std::string& r = refusal_;
  took(a_.SetTensor4dDescriptor(x, kNCHW, dt, g.n, g.c, g.h, g.w), what, "cudnnSetTensor4dDescriptor (input)", r) &&
      took(a_.SetTensor4dDescriptor(y, kNCHW, dt, g.n, g.oc, g.oh, g.ow), what, "cudnnSetTensor4dDescriptor (output)", r) &&
      took(a_.SetFilter4dDescriptor(w, dt, kNCHW, g.oc, g.c / g.groups, g.kh, g.kw), what, "cudnnSetFilter4dDescriptor", r) &&
      took(a_.SetConvolution2dDescriptor(conv, g.ph, g.pw, g.sh, g.sw, g.dh, g.dw, kCrossCorrelation, compute), what,
           "cudnnSetConvolution2dDescriptor", r) &&
      took(a_.SetConvolutionGroupCount(conv, g.groups), what, "cudnnSetConvolutionGroupCount", r) &&
      took(a_.SetConvolutionMathType(conv, requested_math(g)), what, "cudnnSetConvolutionMathType", r);
}

Descriptors::~Descriptors() { release(); }

void Descriptors::release() {
  // Nothing to report to from a destructor; a failed destroy leaks one descriptor.
  if (conv != nullptr) (void)a_.DestroyConvolutionDescriptor(conv);
  if (w != nullptr) (void)a_.DestroyFilterDescriptor(w);
  if (y != nullptr) (void)a_.DestroyTensorDescriptor(y);
  if (x != nullptr) (void)a_.DestroyTensorDescriptor(x);
  conv = nullptr, w = nullptr, y = nullptr, x = nullptr;
}

bool choose(const char* what, Handle h, const Geometry& g, const Descriptors& d, Dir dir, const Buffers* buffers,
            cudaStream_t stream, Choice& out, std::string& reason) {
  const Api& a = api(what);
  // A captured stream cannot run Find: it takes what a warm-up measured, else (and keeps) the heuristics' choice.
  const bool wanted = g.benchmark && buffers != nullptr;
  const bool bench = wanted && !capturing(stream);
  const std::vector<int64_t> key = key_of(g, dir, bench);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.chosen.find(key); it != c.chosen.end()) {
      out = it->second;
      return true;
    }
    if (wanted && !bench) {
      if (auto it = c.chosen.find(key_of(g, dir, true)); it != c.chosen.end()) {
        out = it->second;
        return true;
      }
    }
    if (buffers == nullptr) {
      if (auto it = c.probed.find(key); it != c.probed.end()) {
        reason = it->second;
        return reason.empty();
      }
    }
  }
  std::vector<AlgoPerf> perf;
  bool ok = heuristics(a, h, d, dir, perf, what, reason) && first_usable(g, perf, workspace_limit(), dir, out, reason);
  if (ok && bench) {
    size_t want = 0;
    for (const AlgoPerf& p : perf) {
      if (usable(g, p, workspace_limit())) want = std::max(want, p.memory);
    }
    Tensor ws;
    try {
      ws = workspace(want, g);
    } catch (const std::exception&) {
      want = out.memory;  // the heuristics' choice's own workspace at least
      ws = workspace(want, g);
    }
    ok = find(a, h, d, dir, *buffers, ws.data_ptr(), want, perf, what, reason) && first_usable(g, perf, want, dir, out, reason);
  }
  std::lock_guard<std::mutex> lock(c.mutex);
  if (buffers == nullptr) {
    c.probed[key] = ok ? "" : reason;
  } else if (ok) {
    c.chosen[key] = out;
  }
  return ok;
}

void run(const char* what, Handle h, const Geometry& g, const Descriptors& d, Dir dir, const Choice& c,
         const Buffers& b) {
  const Api& a = api(what);
  check(a.SetConvolutionMathType(d.conv, c.math), what, "cudnnSetConvolutionMathType");
  Tensor ws = workspace(c.memory, g);
  const void* alpha = one(g.dtype);
  const void* beta = zero(g.dtype);
  switch (dir) {
    case Dir::kForward:
      check(a.ConvolutionForward(h, alpha, d.x, b.x, d.w, b.w, d.conv, c.algo, ws.data_ptr(), c.memory, beta, d.y, b.y),
            what, "cudnnConvolutionForward");
      break;
    case Dir::kData:
      check(a.ConvolutionBackwardData(h, alpha, d.w, b.w, d.y, b.y, d.conv, c.algo, ws.data_ptr(), c.memory, beta, d.x, b.x),
            what, "cudnnConvolutionBackwardData");
      break;
    case Dir::kFilter:
      check(a.ConvolutionBackwardFilter(h, alpha, d.x, b.x, d.y, b.y, d.conv, c.algo, ws.data_ptr(), c.memory, beta, d.w, b.w),
            what, "cudnnConvolutionBackwardFilter");
      break;
  }
}

}  // namespace gx::ops::cudnn
