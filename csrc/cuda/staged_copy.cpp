// Copies through pinned staging: device -> pageable host for large readbacks
// (Tensor.toArray of kStagedReadbackMin bytes or more), and file -> device for
// loading tensors from files.
//
// NOTE [ Staged readback ]
// cudaMemcpy into pageable memory copies through the driver's own small
// pinned buffers, one thread, and faults fresh destination pages in one 4 KiB
// page at a time: 1.2 GB/s for a 256 MiB toArray() on the H100 machine. Here
// the copy is cut into chunks that go device -> a pinned slot (DMA at the link's
// speed) while the previous chunk goes slot -> destination on the CPU thread
// pool (gx::parallel_for), two slots alternating. Below 8 MiB the driver's
// copy was as fast (1 and 16 MiB measured on the H100 machine: staging lost at
// 1 MiB, and at 16 MiB in a single chunk). The destination is advised
// to use transparent huge pages first (madvise; a no-op where THP is off), so
// a fresh ArrayBuffer faults in 2 MiB at a time.
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/file_read.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/pinned_allocator.h"
#include "cuda/runtime.h"
#include "gpuext/parallel.h"

namespace gx::core::cuda {
namespace {

// Chunks of a quarter of the copy, 2 to 16 MiB: at least four, so the DMA of
// one overlaps the host copy of another even for the smallest staged copy (one
// 16 MiB chunk measured slower than the driver's own pageable copy).
constexpr size_t kMinChunk = size_t{2} << 20, kMaxChunk = size_t{16} << 20;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kFileChunk = size_t{32} << 20;
constexpr int64_t kMemcpyGrain = int64_t{1} << 20;  // bytes per thread at least

void advise_huge_pages(void* dst, size_t nbytes) {
  const auto begin = (reinterpret_cast<uintptr_t>(dst) + kHugePage - 1) & ~(kHugePage - 1);
  const auto end = (reinterpret_cast<uintptr_t>(dst) + nbytes) & ~(kHugePage - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
}

void parallel_memcpy(char* dst, const char* src, size_t nbytes) {
  gx::parallel_for(0, static_cast<int64_t>(nbytes), kMemcpyGrain, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b, src + b, static_cast<size_t>(e - b));
  });
}

// The slots and their events, released on every path out (an exception included).
struct Staging {
  void* slot[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
  cudaStream_t stream = cudaStreamPerThread;
  ~Staging() {
    for (int i = 0; i < 2; ++i) {
      pinned_free(slot[i], stream);  // reused only after the stream's copies into it are done
      if (done[i]) (void)cudaEventDestroy(done[i]);
    }
  }
};

}  // namespace

bool staged_copy_pays(size_t nbytes) { return nbytes >= kStagedReadbackMin; }

void copy_to_host_staged(void* dst, const void* src, size_t nbytes) {
  advise_huge_pages(dst, nbytes);
  Staging st;
  const size_t chunk = std::min(nbytes, std::clamp(nbytes / 4, kMinChunk, kMaxChunk));
  for (int i = 0; i < 2; ++i) {
    st.slot[i] = pinned_alloc(chunk);
    GX_CUDA_CHECK(cudaEventCreateWithFlags(&st.done[i], cudaEventDisableTiming));
  }
  const size_t chunks = (nbytes + chunk - 1) / chunk;
  auto issue = [&](size_t k) {
    const size_t off = k * chunk, len = std::min(chunk, nbytes - off);
    GX_CUDA_CHECK(cudaMemcpyAsync(st.slot[k % 2], static_cast<const char*>(src) + off, len, cudaMemcpyDeviceToHost,
                                  st.stream));
    GX_CUDA_CHECK(cudaEventRecord(st.done[k % 2], st.stream));
  };
  issue(0);
  for (size_t k = 0; k < chunks; ++k) {
    // Slot (k+1)%2 last held chunk k-1, whose host copy finished in the previous round.
    if (k + 1 < chunks) issue(k + 1);
    GX_CUDA_CHECK(cudaEventSynchronize(st.done[k % 2]));
    const size_t off = k * chunk, len = std::min(chunk, nbytes - off);
    parallel_memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(st.slot[k % 2]), len);
  }
}

// NOTE [ Staged file reads ]
// A file range to device memory: the CPU thread pool reads a chunk of the file
// into one pinned slot (NOTE [ File reads ] in csrc/base/file_read.cpp) while
// the DMA engine copies the previous chunk from the other slot to the device,
// so the link and the page-cache reads overlap. A slot is refilled only once
// its last copy is done (its event). Chunks of 32 MiB: the pool's threads get
// 2 MiB pieces each, and the few events per GiB cost nothing measurable.
void copy_file_to_device(int device, int fd, int64_t offset, void* dst, size_t nbytes) {
  if (nbytes == 0) return;
  CoreDeviceGuard on(device);
  Staging st;
  const size_t chunk = std::min(nbytes, kFileChunk);
  const size_t slots = nbytes > chunk ? 2 : 1;
  for (size_t i = 0; i < slots; ++i) {
    st.slot[i] = pinned_alloc(chunk);
    GX_CUDA_CHECK(cudaEventCreateWithFlags(&st.done[i], cudaEventDisableTiming));
  }
  for (size_t off = 0, k = 0; off < nbytes; off += chunk, ++k) {
    const size_t len = std::min(chunk, nbytes - off), i = k % slots;
    if (k >= slots) GX_CUDA_CHECK(cudaEventSynchronize(st.done[i]));
    read_file_range(fd, offset + static_cast<int64_t>(off), st.slot[i], len);
    GX_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, st.slot[i], len, cudaMemcpyHostToDevice, st.stream));
    GX_CUDA_CHECK(cudaEventRecord(st.done[i], st.stream));
  }
  GX_CUDA_CHECK(cudaStreamSynchronize(st.stream));
}

}  // namespace gx::core::cuda
