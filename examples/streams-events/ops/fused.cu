// The two kernels of the CuPy course's streams example
// (../../shared/reference/cupy-course.md): elementwise_computation =
// sin(x) + cos(y) / sqrt(z) and squared_diff = (x - y)^2, float32, each with a
// CPU twin. Each launches on the current stream, so the caller picks the
// stream with gx.withStream.
#include <gpuext/extension.h>

#include <cmath>

namespace {

__global__ void elementwise_kernel(const float* x, const float* y, const float* z, float* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = sinf(x[i]) + cosf(y[i]) / sqrtf(z[i]);
}

__global__ void squared_diff_kernel(const float* x, const float* y, float* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float d = x[i] - y[i];
    out[i] = d * d;
  }
}

void check_same(const char* what, const gx::Tensor& a, const gx::Tensor& b) {
  GX_CHECK(a.sizes() == b.sizes(), what, ": shapes differ: ", a.sizes(), " vs ", b.sizes());
  GX_CHECK(a.dtype() == gx::kFloat32 && b.dtype() == gx::kFloat32, what, ": expected float32 tensors");
  GX_CHECK(a.is_contiguous() && b.is_contiguous(), what, ": expected contiguous tensors");
}

gx::Tensor elementwise_cuda(const gx::Tensor& x, const gx::Tensor& y, const gx::Tensor& z) {
  check_same("y", x, y);
  check_same("z", x, z);
  gx::Tensor out = gx::empty_like(x);
  const int64_t n = x.numel();
  elementwise_kernel<<<gx::blocks(n), 256, 0, gx::current_stream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), z.data_ptr<float>(), out.data_ptr<float>(), n);
  GX_CHECK_LAUNCH();
  return out;
}

gx::Tensor elementwise_cpu(const gx::Tensor& x, const gx::Tensor& y, const gx::Tensor& z) {
  check_same("y", x, y);
  check_same("z", x, z);
  gx::Tensor out = gx::empty_like(x);
  const float *px = x.data_ptr<float>(), *py = y.data_ptr<float>(), *pz = z.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) po[i] = std::sin(px[i]) + std::cos(py[i]) / std::sqrt(pz[i]);
  return out;
}

gx::Tensor squared_diff_cuda(const gx::Tensor& x, const gx::Tensor& y) {
  check_same("y", x, y);
  gx::Tensor out = gx::empty_like(x);
  const int64_t n = x.numel();
  squared_diff_kernel<<<gx::blocks(n), 256, 0, gx::current_stream()>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                                                       out.data_ptr<float>(), n);
  GX_CHECK_LAUNCH();
  return out;
}

gx::Tensor squared_diff_cpu(const gx::Tensor& x, const gx::Tensor& y) {
  check_same("y", x, y);
  gx::Tensor out = gx::empty_like(x);
  const float *px = x.data_ptr<float>(), *py = y.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) po[i] = (px[i] - py[i]) * (px[i] - py[i]);
  return out;
}

}  // namespace

GX_LIBRARY(fused, m) {
  m.def("elementwise_computation(Tensor x, Tensor y, Tensor z) -> Tensor", "sin(x) + cos(y) / sqrt(z), elementwise.")
      .impl(gx::kCUDA, elementwise_cuda)
      .impl(gx::kCPU, elementwise_cpu);
  m.def("squared_diff(Tensor x, Tensor y) -> Tensor", "(x - y) * (x - y), elementwise.")
      .impl(gx::kCUDA, squared_diff_cuda)
      .impl(gx::kCPU, squared_diff_cpu);
}
