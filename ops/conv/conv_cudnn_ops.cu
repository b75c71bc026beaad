// The cuDNN convolution ops (ops/op-list.js: cudnn_version, conv_cudnn and its
// three backward ops): arguments checked, the device made current, the
// thread's handle bound to the current stream, the algorithm chosen once per
// shape (conv_cudnn.h, NOTE [ cuDNN algorithms per shape ]) and run.
#include <string>
#include <vector>

#include "../ops.h"
#include "conv_cudnn.h"

namespace gx::ops {
namespace {

namespace dnn = ::gx::ops::cudnn;

// One call of a direction: geometry from (x, w, y), descriptors, handle; the direction chosen and run, or a refusal.
struct Call {
  const char* what;
  dnn::Geometry g;
  std::string refusal;

  Call(const char* w, const Tensor& x, const Tensor& wt, const Tensor& y, IntArrayRef padding, IntArrayRef stride,
       IntArrayRef dilation, int64_t groups, bool allow_tf32, bool benchmark)
      : what(w), refusal(dnn::make_geometry(w, x, wt, y, padding, stride, dilation, groups, allow_tf32, benchmark, g)) {}

  // Runs `dir` on b (with the backward directions in `probe` only asked whether they have an algorithm first);
  // returns '' when done, else cuDNN's refusal, nothing written.
  std::string operator()(dnn::Dir dir, const dnn::Buffers& b, const std::vector<dnn::Dir>& probe = {}) {
    if (!refusal.empty()) return refusal;
    DeviceGuard guard(g.device);
    cudaStream_t stream = current_stream(g.device);
    dnn::Handle h = dnn::handle(what, g.device, stream);
    dnn::Descriptors d(what, g);
    if (!d.refusal().empty()) return d.refusal();
    std::string reason;
    dnn::Choice c;
    for (dnn::Dir p : probe) {
      if (!dnn::choose(what, h, g, d, p, nullptr, stream, c, reason)) return reason;
    }
    if (!dnn::choose(what, h, g, d, dir, &b, stream, c, reason)) return reason;
    dnn::run(what, h, g, d, dir, c, b);
    return "";
  }
};

size_t bytes_of(const Tensor& t) { return static_cast<size_t>(t.numel() * itemsize(t.dtype())); }

}  // namespace

int64_t cudnn_version_cuda(Device device) {
  DeviceGuard guard(device.index);
  return static_cast<int64_t>(dnn::api("cudnn_version").GetVersion());
}

std::string conv_cudnn_cuda(const Tensor& input, const Tensor& weight, IntArrayRef padding, IntArrayRef stride, IntArrayRef dilation, int64_t groups,
                            bool allow_tf32, bool benchmark, bool check_grad_input, bool check_grad_weight,
                            const Tensor& out) {
  const char* what = "conv_cudnn";
  Call call(what, input, weight, out, padding, stride, dilation, groups, allow_tf32, benchmark);
  if (out.numel() == 0) return call.refusal;
  std::vector<dnn::Dir> probe;
  if (check_grad_input) probe.push_back(dnn::Dir::kData);
  if (check_grad_weight) probe.push_back(dnn::Dir::kFilter);
  return call(dnn::Dir::kForward, {input.data_ptr(), weight.data_ptr(), out.data_ptr()}, probe);
}

void conv_cudnn_backward_input_cuda(const Tensor& grad_output, const Tensor& weight, IntArrayRef padding,
                                    IntArrayRef stride, IntArrayRef dilation, int64_t groups, bool allow_tf32,
                                    bool benchmark, const Tensor& grad_input) {
  const char* what = "conv_cudnn_backward_input";
  Call call(what, grad_input, weight, grad_output, padding, stride, dilation, groups, allow_tf32, benchmark);
  if (grad_input.numel() == 0) return;
  if (grad_output.numel() == 0) {  // no windows: nothing reaches the input
    DeviceGuard guard(grad_input.device().index);
    GX_CHECK(cudaMemsetAsync(grad_input.data_ptr(), 0, bytes_of(grad_input), current_stream(grad_input.device().index)) == cudaSuccess,
             what, ": cudaMemsetAsync failed");
    return;
  }
  const std::string r = call(dnn::Dir::kData, {grad_input.data_ptr(), weight.data_ptr(), grad_output.data_ptr()});
  GX_CHECK(r.empty(), what, ": cuDNN refused the backward data pass the forward was told it takes: ", r);
}

void conv_cudnn_backward_weight_cuda(const Tensor& input, const Tensor& grad_output, IntArrayRef padding,
                                     IntArrayRef stride, IntArrayRef dilation, int64_t groups, bool allow_tf32,
                                     bool benchmark, const Tensor& grad_weight) {
  const char* what = "conv_cudnn_backward_weight";
  Call call(what, input, grad_weight, grad_output, padding, stride, dilation, groups, allow_tf32, benchmark);
  if (grad_weight.numel() == 0) return;
  if (grad_output.numel() == 0) {  // an empty batch: the gradient is zero
    DeviceGuard guard(grad_weight.device().index);
    GX_CHECK(cudaMemsetAsync(grad_weight.data_ptr(), 0, bytes_of(grad_weight), current_stream(grad_weight.device().index)) == cudaSuccess,
             what, ": cudaMemsetAsync failed");
    return;
  }
  const std::string r = call(dnn::Dir::kFilter, {input.data_ptr(), grad_weight.data_ptr(), grad_output.data_ptr()});
  GX_CHECK(r.empty(), what, ": cuDNN refused the backward filter pass the forward was told it takes: ", r);
}

}  // namespace gx::ops
