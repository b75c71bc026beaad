// The CUDA layer of a CPU-only core (built with no CUDA toolkit, no GPU or
// GPUEXT_NO_CUDA=1: scripts/find-cuda.js cudaPlan). Device
// queries answer "no devices"; anything that needs a GPU throws a clear error.
#include "base/error.h"
#include "cuda/caching_allocator.h"
#include "cuda/kernels.h"
#include "cuda/pinned_allocator.h"
#include "cuda/runtime.h"

namespace gx::core::cuda {
namespace {
[[noreturn]] void not_compiled(const char* what) {
  fail(ErrorKind::NotCompiled, what,
       ": this gpuext core was built for the CPU only (no CUDA toolkit or no GPU when it was built, or "
       "GPUEXT_NO_CUDA=1). With the CUDA toolkit installed, `GPUEXT_CUDA_ARCH=all npm rebuild gpuext "
       "--build-from-source` builds the CUDA code.");
}
}  // namespace

bool compiled() { return false; }
int device_count() { return 0; }
int current_device() { return 0; }
void set_device(int, const char* what) { not_compiled(what); }
const char* unavailable_reason() { return "gpuext was built for the CPU only"; }
void check_device(int, const char* what) { not_compiled(what); }
Stream current_stream(int) { not_compiled("current_stream"); }
Stream peek_current_stream(int) { not_compiled("current_stream"); }
void set_current_stream(int, Stream) { not_compiled("set_current_stream"); }
void release_thread_streams() {}
Event record_event(Stream) { not_compiled("record_event"); }
void wait_event(Event) { not_compiled("wait_event"); }
void destroy_event(Event) noexcept {}
void nvtx_range_push(const char*) noexcept {}
void nvtx_range_pop() noexcept {}
Stream create_stream(int, bool, int) { not_compiled("Stream"); }
void drop_stream(int, Stream) noexcept {}
bool stream_done(Stream) { not_compiled("Stream"); }
void stream_wait_event(Stream, Event, bool) { not_compiled("Stream"); }
void join_streams(Stream, Stream, int) { not_compiled("join_streams"); }
void priority_range(int, int*, int*) { not_compiled("Stream"); }
Event create_event(int, bool) { not_compiled("Event"); }
void record_event_on(Event, Stream, bool) { not_compiled("Event"); }
bool event_done(Event) { not_compiled("Event"); }
float event_elapsed_ms(Event, Event) { not_compiled("Event"); }
void begin_capture(Stream, int) { not_compiled("cuda.graph"); }
void check_capture_device(int, const char*) {}
GraphExec end_capture(Stream, size_t*) { not_compiled("cuda.graph"); }
void graph_launch(GraphExec, Stream) { not_compiled("cuda.graph"); }
void destroy_graph(GraphExec) noexcept {}
bool is_capturing(Stream) { return false; }
void synchronize_device(int) { not_compiled("synchronize"); }
void synchronize_stream(Stream) { not_compiled("synchronize"); }
void memcpy_async(void*, const void*, size_t, CopyKind, Stream) { not_compiled("copy"); }
void copy_to_host_blocking(void*, const void*, size_t) { not_compiled("copy"); }
bool enable_peer_access(int, int) { return false; }
bool staged_copy_pays(size_t) { return false; }
void copy_to_host_staged(void*, const void*, size_t) { not_compiled("copy"); }
void copy_file_to_device(int, int, int64_t, void*, size_t) { not_compiled("copy"); }
DeviceProps device_props(int) { not_compiled("device_props"); }
void mem_info(int, size_t*, size_t*) { not_compiled("mem_info"); }

void* device_alloc(int, size_t, Stream) { not_compiled("allocate"); }
void device_free(void*) noexcept {}
void device_record_stream(void*, Stream) { not_compiled("recordStream"); }
void device_empty_cache(int) {}
MemoryStats device_stats(int) { return MemoryStats{}; }
void device_set_limit(int, int64_t) { not_compiled("set_limit"); }

void* pinned_alloc(size_t) { not_compiled("pinned memory"); }
void pinned_free(void*, Stream) noexcept {}
void pinned_empty_cache() {}
MemoryStats pinned_stats() { return MemoryStats{}; }

void launch_strided_copy(void*, const Layout&, const void*, const Layout&, size_t, int64_t,
                         Stream) {
  not_compiled("copy");
}
void launch_fill(void*, const Layout&, size_t, uint64_t, int64_t, Stream) {
  not_compiled("fill");
}
void launch_affine(void*, DType, int64_t, double, double, Stream) { not_compiled("arange"); }
void launch_affine_int64(int64_t*, int64_t, int64_t, int64_t, Stream) { not_compiled("arange"); }
void launch_linspace(void*, DType, int64_t, double, double, Stream) {
  not_compiled("linspace");
}

}  // namespace gx::core::cuda
