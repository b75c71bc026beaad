// The CUDA runtime as the core sees it: devices, the current stream, sync.
// Declared without CUDA headers so CPU-only code can include it; implemented
// by csrc/cuda/runtime.cpp, or by csrc/cuda/no_cuda.cpp in a CPU-only build.
//
// NOTE [ Current stream ]
// Each CUDA device has a current stream per thread (per Node.js worker, since
// each worker runs JS on its own thread). Every launch and copy the core makes
// goes on it, and extensions get it through gx_api.current_stream, so work from
// one thread is ordered without global synchronization. The default current
// stream is a stream the core creates for the thread (blocking with respect to
// the legacy default stream, so code that launches on stream 0 still orders
// with ours); issue-level APIs (gx.withStream) can swap it.
//
// NOTE [ Current device ]
// There is one current device per thread, the CUDA runtime's own (cudaSetDevice
// / cudaGetDevice of the core's runtime): gx.cuda.setDevice sets it,
// gx.cuda.currentDevice and 'cuda' (lib/core/device.ts) ask for it, extensions get it
// through gx_api.current_device (gx::current_device(), gx::kCUDA). Nobody keeps
// a copy, so C++ and JS cannot disagree. A new thread (a Node.js worker) starts
// on cuda:0, as CUDA's threads do, unless GPUEXT_DEVICE says otherwise
// (lib/core/gpus.ts applies it on each thread that loads gpuext; `gpuext run` sets
// it per rank).
#pragma once
#include <cstddef>
#include <cstdint>

namespace gx::core::cuda {

using Stream = void*;  // a cudaStream_t

// True when the core was compiled with CUDA support.
bool compiled();
// Number of visible CUDA devices; 0 when there is no driver or no GPU (never throws).
int device_count();
// Why device_count() is 0 (empty string when devices exist or CUDA is not compiled in).
const char* unavailable_reason();
// The calling thread's current CUDA device (cudaGetDevice of the core's
// runtime); 0 when there is none to ask (never throws). NOTE [ Current device ].
int current_device();
// Makes `index` the calling thread's current CUDA device (cudaSetDevice);
// `what` names the caller in the RangeError for a device that is not there.
void set_device(int index, const char* what);
// Throws a RangeError naming `what` when `index` is not a visible device.
void check_device(int index, const char* what);

// The stream work on `device` goes on. While this thread captures a graph of
// another device it refuses, naming `what` (NOTE [ One device per capture ]).
Stream current_stream(int device);
// The same stream, for a caller that only asks which it is (gx.cuda.currentStream):
// never refused by a capture.
Stream peek_current_stream(int device);
void set_current_stream(int device, Stream stream);
// Destroys the streams this thread created; called when a Node.js environment ends.
void release_thread_streams();

using Event = void*;  // a cudaEvent_t
// An event recorded on `stream` now (timing disabled: cheaper to record).
Event record_event(Stream stream);
// Blocks the calling thread until `event` completes; safe off the JS thread.
void wait_event(Event event);
void destroy_event(Event event) noexcept;

void synchronize_device(int device);
void synchronize_stream(Stream stream);

// --- streams and events the program creates (gx.Stream, gx.Event) ---------------
// priority: lower numbers are higher priority (CUDA's convention); clamped to
// the device's range. non_blocking: no implicit ordering with stream 0.
Stream create_stream(int device, bool non_blocking, int priority);
// A stream the program no longer holds: kept for the next create_stream like it, never destroyed
// (NOTE [ Streams are kept ] in runtime.cpp).
void drop_stream(int device, Stream stream) noexcept;
// True when all work queued on `stream` has completed.
bool stream_done(Stream stream);
// external: inside a stream capture the wait becomes an event wait node of the
// graph (cudaEventWaitExternal), which each replay makes on the event's latest
// record, instead of a dependency on work of the same capture (gx.Event's
// `external`, torch.cuda.Event(external=True)).
void stream_wait_event(Stream stream, Event event, bool external = false);
// Work queued on `waiter` from now on starts after what `producer` (a stream of
// cuda:`producer_device`) has queued so far (no host wait).
void join_streams(Stream waiter, Stream producer, int producer_device);
void priority_range(int device, int* least, int* greatest);
Event create_event(int device, bool timing);
// external: captured as an event record node (cudaEventRecordExternal; see stream_wait_event).
void record_event_on(Event event, Stream stream, bool external = false);
bool event_done(Event event);
// Milliseconds between two timing events that have completed.
float event_elapsed_ms(Event start, Event end);

// --- CUDA graphs ----------------------------------------------------------------
using GraphExec = void*;  // a cudaGraphExec_t
// Starts capturing work queued on `stream`, a stream of `device` (relaxed mode:
// allocating with cudaMalloc during capture stays legal). Until end_capture,
// work this thread queues on any other device is refused (NOTE [ One device
// per capture ] in runtime.cpp).
void begin_capture(Stream stream, int device);
// Ends the capture, instantiates it and uploads it on `stream` (NOTE [ Graph
// replay ] in runtime.cpp); `nodes` gets the captured graph's node count. On a
// failed capture, throws with the reason. Either way the capture's device
// refuses nothing from now on.
GraphExec end_capture(Stream stream, size_t* nodes);
// Throws, naming `what`, when this thread is capturing a graph of a device
// other than `device` (NOTE [ One device per capture ]): for a caller handed a
// stream of `device` instead of asking current_stream for it.
void check_capture_device(int device, const char* what);
void graph_launch(GraphExec exec, Stream stream);
void destroy_graph(GraphExec exec) noexcept;
bool is_capturing(Stream stream);

// Copies between host and device on `stream`. The host pointer may be pageable.
// kind: 0 host->device, 1 device->host, 2 device->device (same or peer device).
enum class CopyKind { HostToDevice = 0, DeviceToHost = 1, DeviceToDevice = 2 };
void memcpy_async(void* dst, const void* src, size_t nbytes, CopyKind kind, Stream stream);
// Lets each of two GPUs read the other's memory, once per pair per process
// (NOTE [ Peer access ] in runtime.cpp); false where the hardware cannot, and
// copies between them stay correct, staged by the driver.
bool enable_peer_access(int a, int b);

// Copies device memory to (pageable) host memory and waits for the copy, on
// the calling thread's per-thread default stream: for a libuv pool thread
// that has waited on an event first, so it orders after the work it read.
void copy_to_host_blocking(void* dst, const void* src, size_t nbytes);

// The same through pinned staging and the CPU thread pool, for large copies
// (NOTE [ Staged readback ] in staged_copy.cpp); staged_copy_pays says when.
constexpr size_t kStagedReadbackMin = size_t{8} << 20;
bool staged_copy_pays(size_t nbytes);
void copy_to_host_staged(void* dst, const void* src, size_t nbytes);

// Fills `nbytes` of device memory at `dst` (of `device`) with the bytes at
// `offset` of the open file `fd`, through pinned staging (NOTE [ Staged file
// reads ] in staged_copy.cpp), and waits for the copies. Safe off the JS
// thread; the caller orders it after earlier work on `dst` (an event).
void copy_file_to_device(int device, int fd, int64_t offset, void* dst, size_t nbytes);

struct DeviceProps {
  char name[256];
  int major, minor;
  size_t total_memory;
  int multiprocessors;
};
DeviceProps device_props(int device);
// Free and total bytes as the driver reports them.
void mem_info(int device, size_t* free_bytes, size_t* total_bytes);

// --- NVTX ranges (gx.profiler.range; NOTE [ NVTX ranges ] in runtime.cpp) ---------------
// Opens a named range on the calling thread, for Nsight Systems; no-ops when
// no tool is attached, and in a CPU-only core.
void nvtx_range_push(const char* name) noexcept;
// Closes the calling thread's innermost range.
void nvtx_range_pop() noexcept;

}  // namespace gx::core::cuda
