// add_gpu: elementwise c = a + b for float32 tensors of the same shape — the
// AddGPU extension from ../../shared/reference/pytorch-custom-cuda-kernel.md,
// with a CPU implementation beside the CUDA one.
#include <gpuext/extension.h>
#include <gpuext/launch.h>  // gx::launch: the driver's launch, less host time than <<<>>> (a one-element add is mostly launch)

namespace {

constexpr int kThreads = 256;

// One float4 (four elements) per thread: 16-byte loads and stores keep the
// memory system busy with fewer instructions, which is what a
// bandwidth-bound add needs. The last n % 4 elements are done by thread 0..3
// of the first block.
__global__ void add_kernel_vec4(const float4* __restrict__ a, const float4* __restrict__ b,
                                float4* __restrict__ c, int64_t n4, const float* __restrict__ a_tail,
                                const float* __restrict__ b_tail, float* __restrict__ c_tail, int tail) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n4) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  if (i < tail) c_tail[i] = a_tail[i] + b_tail[i];
}

// Any alignment: one element per thread, grid-stride so any grid covers n.
__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    c[i] = a[i] + b[i];
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

void check_inputs(const gx::Tensor& a, const gx::Tensor& b) {
  GX_CHECK(a.sizes() == b.sizes(), "shapes differ: ", a.sizes(), " vs ", b.sizes());
  GX_CHECK(a.dtype() == gx::kFloat32 && b.dtype() == gx::kFloat32,
           "expected float32 tensors, got ", a.dtype(), " and ", b.dtype());
  GX_CHECK(a.is_contiguous() && b.is_contiguous(), "expected contiguous tensors (call .contiguous())");
}

gx::Tensor add_cuda(const gx::Tensor& a, const gx::Tensor& b) {
  check_inputs(a, b);
  gx::Tensor c = gx::empty_like(a);
  const int64_t n = a.numel();
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  cudaStream_t stream = gx::current_stream();
  if (aligned16(pa) && aligned16(pb) && aligned16(pc)) {  // views at odd offsets may not be
    const int64_t n4 = n / 4;
    const int64_t done = n4 * 4;
    gx::launch<add_kernel_vec4>(gx::blocks(n4 > 0 ? n4 : 1, kThreads), kThreads, stream,
        reinterpret_cast<const float4*>(pa), reinterpret_cast<const float4*>(pb), reinterpret_cast<float4*>(pc),
        n4, pa + done, pb + done, pc + done, static_cast<int>(n - done));
  } else {
    gx::launch<add_kernel>(gx::blocks(n, kThreads), kThreads, stream, pa, pb, pc, n);  // throws if the launch fails
  }
  return c;
}

gx::Tensor add_cpu(const gx::Tensor& a, const gx::Tensor& b) {
  check_inputs(a, b);
  gx::Tensor c = gx::empty_like(a);
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) pc[i] = pa[i] + pb[i];
  return c;
}

}  // namespace

GX_LIBRARY(add_gpu, m) {
  m.def("add_gpu(Tensor a, Tensor b) -> Tensor", "Adds two float32 tensors of the same shape elementwise.")
      .impl(gx::kCUDA, add_cuda)
      .impl(gx::kCPU, add_cpu);
}
