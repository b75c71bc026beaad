// scale: y = alpha * x + beta for every numeric dtype — one templated kernel,
// instantiated per dtype by GX_DISPATCH_ALL_TYPES (float16/bfloat16 compute
// in float). The same element function runs on the host for the CPU version.
#include <gpuext/dispatch.h>
#include <gpuext/extension.h>

namespace {

template <typename T>
__host__ __device__ T affine(T x, float alpha, float beta) {
  return static_cast<T>(alpha * static_cast<float>(x) + beta);
}

template <typename T>
__global__ void scale_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, float alpha, float beta) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = affine(x[i], alpha, beta);
  }
}

gx::Tensor scale_cuda(const gx::Tensor& x, double alpha, double beta) {
  GX_CHECK(x.is_contiguous(), "expected a contiguous tensor");
  gx::Tensor y = gx::empty_like(x);
  const int64_t n = x.numel();
  GX_DISPATCH_ALL_TYPES(x.dtype(), "scale", [&] {
    scale_kernel<scalar_t><<<gx::blocks(n), 256, 0, gx::current_stream()>>>(
        x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, static_cast<float>(alpha), static_cast<float>(beta));
  });
  GX_CHECK_LAUNCH();
  return y;
}

gx::Tensor scale_cpu(const gx::Tensor& x, double alpha, double beta) {
  GX_CHECK(x.is_contiguous(), "expected a contiguous tensor");
  gx::Tensor y = gx::empty_like(x);
  GX_DISPATCH_ALL_TYPES(x.dtype(), "scale", [&] {
    const scalar_t* px = x.data_ptr<scalar_t>();
    scalar_t* py = y.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) py[i] = affine(px[i], static_cast<float>(alpha), static_cast<float>(beta));
  });
  return y;
}

}  // namespace

GX_LIBRARY(scale_dtypes, m) {
  m.def("scale(Tensor x, float alpha, float beta=0) -> Tensor",
        "alpha * x + beta, elementwise, for every numeric dtype (computed in float32).")
      .impl(gx::kCUDA, scale_cuda)
      .impl(gx::kCPU, scale_cpu);
}
