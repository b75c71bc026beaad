// The launch floor on this machine: an empty 4-argument kernel launched from
// C++ with no JS in between, through the runtime (<<<>>>) and the driver
// (cuLaunchKernel, what gx.RawKernel uses), 20 000 launches in batches of
// 1 000 closed by a synchronize, as bench/rtc.bench.ts times its calls.
// Prints one JSON line: {"runtimeUs": .., "driverUs": ..}.
//   nvcc -O2 -o launch_floor bench/launch_floor.cu -lcuda && ./launch_floor
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

__global__ void empty4(const float*, const float*, float*, int) {}

template <typename F>
double per_launch_us(F launch) {
  for (int i = 0; i < 2000; ++i) launch();
  cudaDeviceSynchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int b = 0; b < 20; ++b) {
    for (int i = 0; i < 1000; ++i) launch();
    cudaDeviceSynchronize();
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / 20000.0;
}

int main() {
  float* p = nullptr;
  if (cudaMalloc(&p, 64) != cudaSuccess) {
    std::printf("{\"error\": \"no GPU\"}\n");
    return 0;
  }
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  const double rt = per_launch_us([&] { empty4<<<1, 32, 0, s>>>(p, p, p, 1); });
  cudaFunction_t f = nullptr;
  cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(empty4));
  int n = 1;
  void* args[] = {&p, &p, &p, &n};
  const double drv = per_launch_us([&] {
    cuLaunchKernel(reinterpret_cast<CUfunction>(f), 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr);
  });
  std::printf("{\"runtimeUs\": %.3f, \"driverUs\": %.3f}\n", rt, drv);
  return 0;
}
