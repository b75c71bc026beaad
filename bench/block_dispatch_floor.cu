// The host's floor for what gx.mapBlocks does with a launch plan on
// bench:dist's add_broadcast (65536 x 8192 float32 in 8192 x 8192 blocks over
// every GPU, y's one block on cuda:0 copied to each other GPU on every call),
// from C++ with no JS in between, in four designs:
//   - direct: each block's kernel launched, the copies as gx makes them (the
//     destination's stream waits for the source's, copies, and the source's
//     stream waits for the copy: NOTE [ Copies between GPUs ]);
//   - per-device graphs: the copies as above, then one graph of its blocks
//     per GPU replayed (what mapBlocks does, NOTE [ Block graphs ]);
//   - one graph: every GPU's blocks and the copies captured into one graph
//     over all GPUs (forked from cuda:0's stream by events), replayed on
//     cuda:0's stream; the other GPUs' streams joined to it before and after,
//     so it is ordered with their other work as the designs above are;
//   - replicated: per-device graphs with y already on every GPU (what
//     mapBlocks does with gx.chunked(y, { replicate: true })), no copies.
// Host µs per call as bench:dist measures mapBlocks' (four calls after each
// synchronize, the cases in rotation), so the two can be read side by side.
// Prints one JSON line: {"gpus": n, "directUs": .., "deviceGraphsUs": .., "oneGraphUs": .., "replicatedUs": ..}.
//   nvcc -O2 -o block_dispatch_floor bench/block_dispatch_floor.cu && ./block_dispatch_floor
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

constexpr int kRows = 65536, kCols = 8192, kChunk = 8192, kMaxGpus = 8;

__global__ void add_broadcast(const float* x, const float* y, float* z, int cols) {
  const int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
  z[static_cast<size_t>(r) * cols + c] = x[static_cast<size_t>(r) * cols + c] + y[c];
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("{\"error\": \"%s: %s\"}\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("{\"error\": \"no GPU\"}\n");
    return 0;
  }
  n = std::min(n, kMaxGpus);
  const int blocks = kRows / kChunk;  // one column of blocks: kCols == kChunk
  const size_t block_bytes = static_cast<size_t>(kChunk) * kCols * sizeof(float);
  std::vector<float*> x(blocks), z(blocks);
  float* y[kMaxGpus] = {};
  cudaStream_t s[kMaxGpus] = {};
  cudaEvent_t fork[kMaxGpus] = {}, join[kMaxGpus] = {};
  // Blocks go to the GPUs in contiguous runs, as gx.chunked places them.
  auto device_of = [&](int k) { return k * n / blocks; };
  for (int d = 0; d < n; ++d) {
    cudaSetDevice(d);
    if (!ok(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking), "stream") ||
        !ok(cudaMalloc(&y[d], kCols * sizeof(float)), "malloc y") ||
        !ok(cudaEventCreateWithFlags(&fork[d], cudaEventDisableTiming), "event") ||
        !ok(cudaEventCreateWithFlags(&join[d], cudaEventDisableTiming), "event")) return 0;
    for (int p = 0; p < n; ++p) if (p != d) cudaDeviceEnablePeerAccess(p, 0);
  }
  (void)cudaGetLastError();  // peer access already enabled, or unavailable: the copies work either way
  for (int k = 0; k < blocks; ++k) {
    cudaSetDevice(device_of(k));
    if (!ok(cudaMalloc(&x[k], block_bytes), "malloc x") || !ok(cudaMalloc(&z[k], block_bytes), "malloc z")) return 0;
  }
  const dim3 grid(kCols / 32, kChunk / 32), threads(32, 32);
  auto launch_blocks = [&](int d) {
    for (int k = 0; k < blocks; ++k)
      if (device_of(k) == d) add_broadcast<<<grid, threads, 0, s[d]>>>(x[k], y[d], z[k], kCols);
  };
  // y from cuda:0 to GPU d, ordered on the streams as gx's copies between GPUs are.
  auto copy_y = [&](int d) {
    cudaEventRecord(fork[0], s[0]);
    cudaStreamWaitEvent(s[d], fork[0], 0);
    cudaMemcpyAsync(y[d], y[0], kCols * sizeof(float), cudaMemcpyDefault, s[d]);
    cudaEventRecord(join[d], s[d]);
    cudaStreamWaitEvent(s[0], join[d], 0);
  };
  std::vector<cudaGraphExec_t> per_device(n);
  auto copy_y_everywhere = [&] {
    for (int d = 1; d < n; ++d) {
      cudaSetDevice(d);
      copy_y(d);
    }
  };
  auto replay_device_graphs = [&] {
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      cudaGraphLaunch(per_device[d], s[d]);
    }
  };
  for (int d = 0; d < n; ++d) {
    cudaSetDevice(d);
    cudaGraph_t g = nullptr;
    if (!ok(cudaStreamBeginCapture(s[d], cudaStreamCaptureModeThreadLocal), "capture")) return 0;
    launch_blocks(d);
    if (!ok(cudaStreamEndCapture(s[d], &g), "end capture") || !ok(cudaGraphInstantiate(&per_device[d], g, 0), "instantiate")) return 0;
    cudaGraphDestroy(g);
  }
  cudaGraphExec_t one = nullptr;
  {
    cudaSetDevice(0);
    cudaGraph_t g = nullptr;
    if (!ok(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeThreadLocal), "capture")) return 0;
    cudaEventRecord(fork[0], s[0]);
    for (int d = 1; d < n; ++d) {
      cudaSetDevice(d);
      cudaStreamWaitEvent(s[d], fork[0], 0);
      cudaMemcpyAsync(y[d], y[0], kCols * sizeof(float), cudaMemcpyDefault, s[d]);
      launch_blocks(d);
      cudaEventRecord(join[d], s[d]);
    }
    cudaSetDevice(0);
    launch_blocks(0);
    for (int d = 1; d < n; ++d) cudaStreamWaitEvent(s[0], join[d], 0);
    if (!ok(cudaStreamEndCapture(s[0], &g), "end capture (one graph)") || !ok(cudaGraphInstantiate(&one, g, 0), "instantiate")) return 0;
    cudaGraphDestroy(g);
  }
  auto sync = [&] {
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      cudaStreamSynchronize(s[d]);
    }
  };
  const std::function<void()> cases[] = {
      [&] {
        copy_y_everywhere();
        for (int d = 0; d < n; ++d) {
          cudaSetDevice(d);
          launch_blocks(d);
        }
      },
      [&] {
        copy_y_everywhere();
        replay_device_graphs();
      },
      [&] {
        // The other GPUs' earlier work before the graph, their later work after it.
        for (int d = 1; d < n; ++d) {
          cudaSetDevice(d);
          cudaEventRecord(join[d], s[d]);
          cudaStreamWaitEvent(s[0], join[d], 0);
        }
        cudaSetDevice(0);
        cudaGraphLaunch(one, s[0]);
        cudaEventRecord(fork[0], s[0]);
        for (int d = 1; d < n; ++d) cudaStreamWaitEvent(s[d], fork[0], 0);
      },
      replay_device_graphs,
  };
  constexpr int kCases = 4, kRounds = 21, kCalls = 4;
  std::vector<double> us[kCases];
  for (int w = 0; w < 20; ++w)
    for (const auto& c : cases) {
      sync();
      for (int i = 0; i < kCalls; ++i) c();
    }
  for (int r = 0; r < kRounds; ++r)
    for (int j = 0; j < kCases; ++j) {
      const int c = (j + r) % kCases;
      sync();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kCalls; ++i) cases[c]();
      const auto t1 = std::chrono::steady_clock::now();
      us[c].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
    }
  sync();
  if (!ok(cudaGetLastError(), "run")) return 0;
  double med[kCases];
  for (int c = 0; c < kCases; ++c) {
    std::sort(us[c].begin(), us[c].end());
    med[c] = us[c][kRounds / 2];
  }
  std::printf("{\"gpus\": %d, \"blocks\": %d, \"directUs\": %.3f, \"deviceGraphsUs\": %.3f, \"oneGraphUs\": %.3f, \"replicatedUs\": %.3f}\n", n,
              blocks, med[0], med[1], med[2], med[3]);
  return 0;
}
