// CUDA runtime layer: device discovery, per-thread current streams, copies.
// See NOTE [ Current stream ] in runtime.h.
#include "cuda/runtime.h"
#include "base/thread_local.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/device.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"

namespace gx::core::cuda {
namespace {

struct DeviceInfo {
  int count = 0;
  std::string reason;
};

// Discovery runs once per process. Without a driver or GPU the runtime answers
// cudaErrorNoDevice / cudaErrorInsufficientDriver: that is a CPU-only process,
// not an error. A function-local static, not std::call_once: every allocation
// and launch asks for the count, and a static's check is one load where
// call_once went through pthread_once and TLS on each call (measured at 5% of
// a one-element elementwise call on the H100 host).
std::string cuda_version_text(int v) { return str(v / 1000, ".", (v % 1000) / 10); }

// Why there are no devices, in the user's terms: the runtime's own message for
// a missing driver ("CUDA driver version is insufficient") reads as if an
// update would help, so the three cases are told apart here.
std::string unavailable_because(cudaError_t err) {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  cudaRuntimeGetVersion(&runtime);
  if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice) {
    if (driver == 0) return "no NVIDIA driver is installed (libcuda.so.1 not found)";
    if (err == cudaErrorInsufficientDriver) {
      return str("the NVIDIA driver supports CUDA ", cuda_version_text(driver), " but gpuext was built with CUDA ",
                 cuda_version_text(runtime), ": update the driver");
    }
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (visible != nullptr) return str("no CUDA device is visible (CUDA_VISIBLE_DEVICES='", visible, "')");
    return str("no CUDA device is visible (driver for CUDA ", cuda_version_text(driver), " installed)");
  }
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

DeviceInfo discover_devices() {
  DeviceInfo info;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    info.reason = unavailable_because(err);
    cudaGetLastError();
    return info;
  }
  info.count = n > kMaxCudaDevices ? kMaxCudaDevices : n;
  if (n == 0) info.reason = unavailable_because(cudaErrorNoDevice);
  return info;
}

const DeviceInfo& device_info() {
  static const DeviceInfo info = discover_devices();
  return info;
}

// The calling thread's streams, one slot per device; nullptr until first use.
struct ThreadStreams {
  cudaStream_t current[kMaxCudaDevices] = {};
  cudaStream_t owned[kMaxCudaDevices] = {};
  // join_streams' event per device, recorded again on every join (see there).
  cudaEvent_t join[kMaxCudaDevices] = {};
  // The device whose graph this thread is capturing; -1 when none (NOTE [ One device per capture ]).
  int capture_device = -1;
};
GX_THREAD_LOCAL ThreadStreams tls_streams;


}  // namespace

bool compiled() { return true; }
int device_count() { return device_info().count; }
int current_device() {
  int d = 0;
  if (device_count() == 0 || cudaGetDevice(&d) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return d;
}
const char* unavailable_reason() { return device_info().reason.c_str(); }

void set_device(int index, const char* what) {
  check_device(index, what);
  GX_CUDA_CHECK(cudaSetDevice(index));
}

void check_device(int index, const char* what) {
  const int n = device_count();
  if (n == 0) {
    fail(ErrorKind::Range, what, ": CUDA device cuda:", index,
         " requested but no CUDA device is available (", unavailable_reason(), ")");
  }
  GX_CHECK_RANGE(index >= 0 && index < n, what, ": device index ", index,
                 " is out of range; this machine has ", n, " CUDA device",
                 n == 1 ? "" : "s", " (cuda:0", n > 1 ? str("..cuda:", n - 1) : "", ")");
}

// NOTE [ One device per capture ]
// A capture records the work queued on one stream of one device (and the
// streams joined to it). Work this thread queues on another GPU meanwhile is
// not recorded: it runs at once, and no replay runs it again, so a graph of a
// step that touched two GPUs would silently replay half of it. So between
// begin_capture and end_capture every path that queues work on a device (an
// op, a kernel launch, a copy, an allocation: each asks current_stream for
// its stream, or is handed one and asks check_capture_device) refuses any
// device but the capture's, with the remedy: one graph per GPU, as torch's
// graphs and block graphs (lib/distributed/block-graphs.ts) are. A mere
// question (which stream is current, peek_current_stream) is not refused.
// The state is the thread's, as the capture is: a Node.js worker's own
// captures are its own.
void check_capture_device(int device, const char* what) {
  const int capturing = tls_streams.capture_device;
  if (capturing < 0 || capturing == device) return;
  fail(ErrorKind::Value, "gx.cuda.graph: ", what, " on cuda:", device, " inside a capture of cuda:", capturing,
       " would run at once and never be replayed; capture each GPU's work in its own gx.cuda.graph");
}

Stream current_stream(int device) {
  if (tls_streams.capture_device >= 0) check_capture_device(device, "work (an op, a kernel, a copy or an allocation)");
  return peek_current_stream(device);
}

Stream peek_current_stream(int device) {
  check_device(device, "current_stream");
  cudaStream_t& cur = tls_streams.current[device];
  if (cur == nullptr) {
    CoreDeviceGuard guard(device);
    cudaStream_t s = nullptr;
    GX_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamDefault));
    tls_streams.owned[device] = s;
    cur = s;
  }
  return cur;
}

void set_current_stream(int device, Stream stream) {
  check_device(device, "set_current_stream");
  tls_streams.current[device] = static_cast<cudaStream_t>(stream);
}

void release_thread_streams() {
  for (int d = 0; d < kMaxCudaDevices; ++d) {
    if (tls_streams.owned[d] != nullptr) {
      cudaStreamSynchronize(tls_streams.owned[d]);
      cudaStreamDestroy(tls_streams.owned[d]);
    }
    tls_streams.owned[d] = nullptr;
    tls_streams.current[d] = nullptr;
    if (tls_streams.join[d] != nullptr) cudaEventDestroy(tls_streams.join[d]);
    tls_streams.join[d] = nullptr;
  }
}

Event record_event(Stream stream) {
  // An event belongs to the device current at its creation, and recording it
  // on another device's stream fails (cudaErrorInvalidResourceHandle): create
  // it on the stream's device, whatever device the caller has current.
  int device = 0;
  GX_CUDA_CHECK(cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &device));
  CoreDeviceGuard on(device);
  cudaEvent_t e = nullptr;
  GX_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaError_t err = cudaEventRecord(e, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) {
    cudaEventDestroy(e);
    GX_CUDA_CHECK(err);
  }
  return e;
}

void wait_event(Event event) { GX_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); }

void destroy_event(Event event) noexcept {
  if (event != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

void synchronize_device(int device) {
  check_device(device, "synchronize");
  CoreDeviceGuard guard(device);
  GX_CUDA_CHECK(cudaDeviceSynchronize());
}

void synchronize_stream(Stream stream) {
  GX_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

void memcpy_async(void* dst, const void* src, size_t nbytes, CopyKind kind, Stream stream) {
  if (nbytes == 0) return;
  // Device-to-device uses cudaMemcpyDefault so unified addressing finds both
  // devices when they differ (a peer copy).
  static const cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                         cudaMemcpyDefault};
  GX_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, kinds[static_cast<int>(kind)],
                                static_cast<cudaStream_t>(stream)));
}

// NOTE [ Peer access ]
// Without peer access, a copy between two GPUs goes through the driver's
// staging in host memory: on two H200s (NVLink) a 32 KiB copy held the host
// for tens of microseconds (gx.mapBlocks copying a broadcast operand to the
// second GPU spent more host time on it than on its eight launches). With it,
// the copy is one DMA over the link. CUDA leaves it off, as torch's
// get_p2p_access turns it on lazily for the pairs its copies use; so do we:
// both directions, the first time a copy joins two devices, remembered per
// pair (enabling it again is an error the runtime reports,
// cudaErrorPeerAccessAlreadyEnabled, as NCCL may have done it first). Where
// cudaDeviceCanAccessPeer says no (GPUs on different PCIe roots), the pair is
// remembered as unavailable and copies keep the staged path.
bool enable_peer_access(int a, int b) {
  if (a == b) return true;
  if (a < 0 || b < 0 || a >= kMaxCudaDevices || b >= kMaxCudaDevices) return false;
  static std::atomic<int8_t> state[kMaxCudaDevices][kMaxCudaDevices];  // 0 not tried, 1 enabled, -1 unavailable
  std::atomic<int8_t>& s = state[a < b ? a : b][a < b ? b : a];
  const int8_t known = s.load(std::memory_order_acquire);
  if (known != 0) return known > 0;
  auto enable = [](int device, int peer) {
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess || can == 0) {
      (void)cudaGetLastError();
      return false;
    }
    CoreDeviceGuard on(device);
    const cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
    else if (err != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: the copy falls back to the staged path
      return false;
    }
    return true;
  };
  const bool ok = enable(a, b) && enable(b, a);
  s.store(ok ? 1 : -1, std::memory_order_release);
  return ok;
}

void copy_to_host_blocking(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  if (staged_copy_pays(nbytes)) return copy_to_host_staged(dst, src, nbytes);
  GX_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, cudaStreamPerThread));
  GX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

DeviceProps device_props(int device) {
  check_device(device, "device_props");
  cudaDeviceProp p;
  GX_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceProps out{};
  std::snprintf(out.name, sizeof(out.name), "%s", p.name);
  out.major = p.major;
  out.minor = p.minor;
  out.total_memory = p.totalGlobalMem;
  out.multiprocessors = p.multiProcessorCount;
  return out;
}

void mem_info(int device, size_t* free_bytes, size_t* total_bytes) {
  check_device(device, "mem_info");
  CoreDeviceGuard guard(device);
  GX_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
}

// NOTE [ Streams are kept ]
// The CUDA stream of a gx.Stream outlives its handle. Memory the program
// declared used on a stream (recordStream) has an event recorded on that
// stream when it is freed (NOTE [ Cross-stream frees ] in caching_allocator.cpp),
// and pinned memory on the stream of its last copy; that free may come long
// after the handle went: at a disposal carried by a later call (NOTE [ Deferred
// disposal ] in binding/tensor_handle.h), or from a finalizer at exit. On a
// destroyed stream that record is undefined (it crashed a test process at exit
// on an H200 host). So, as torch's stream pool does, a dropped stream is kept
// and handed to the next gx.Stream of its device, flags and priority: a stream
// handle stays valid for the whole process, at most as many streams exist as
// were ever alive at once, and the blocks the allocator keeps for a stream are
// reused in that stream's own order.
namespace {
struct KeptStream {
  int device;
  unsigned flags;
  int priority;
  cudaStream_t stream;
};
std::mutex g_kept_mu;
std::vector<KeptStream> g_kept;
}  // namespace

Stream create_stream(int device, bool non_blocking, int priority) {
  check_device(device, "Stream");
  CoreDeviceGuard guard(device);
  int least = 0, greatest = 0;
  GX_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  const int p = priority < greatest ? greatest : (priority > least ? least : priority);
  const unsigned flags = non_blocking ? cudaStreamNonBlocking : cudaStreamDefault;
  {
    std::lock_guard<std::mutex> lock(g_kept_mu);
    for (size_t i = 0; i < g_kept.size(); ++i) {
      const KeptStream& k = g_kept[i];
      if (k.device != device || k.flags != flags || k.priority != p) continue;
      cudaStream_t st = k.stream;
      g_kept[i] = g_kept.back();
      g_kept.pop_back();
      return st;
    }
  }
  cudaStream_t st = nullptr;
  GX_CUDA_CHECK(cudaStreamCreateWithPriority(&st, flags, p));
  return st;
}

void drop_stream(int device, Stream stream) noexcept {
  if (stream == nullptr) return;
  // NOTE [ Streams are kept ]: not destroyed, kept for the next gx.Stream like it.
  unsigned flags = 0;
  int priority = 0;
  const auto st = static_cast<cudaStream_t>(stream);
  if (cudaStreamGetFlags(st, &flags) != cudaSuccess || cudaStreamGetPriority(st, &priority) != cudaSuccess) {
    (void)cudaGetLastError();  // the context is going away: nothing more to do with it
    return;
  }
  try {
    std::lock_guard<std::mutex> lock(g_kept_mu);
    g_kept.push_back(KeptStream{device, flags, priority, st});
  } catch (...) {
    // No memory for the entry: the stream stays alive, unlisted, rather than be destroyed.
  }
}

bool stream_done(Stream stream) {
  const cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(stream));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  GX_CUDA_CHECK(err);
  return true;
}

// The external flags are for a capture only: outside one the runtime refuses
// them (cudaErrorIllegalState), where the event is an ordinary one.
void stream_wait_event(Stream stream, Event event, bool external) {
  external = external && is_capturing(stream);
  GX_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event),
                                    external ? cudaEventWaitExternal : cudaEventWaitDefault));
}

// One event per device and thread serves every join: a wait takes the
// event's state when it is queued (cudaStreamWaitEvent: later records "will
// not have any effect on stream"), so recording it again for the next join
// cannot disturb the waits already queued, and a join no longer creates and
// destroys an event (two of the ten runtime calls of a copy between GPUs).
// The caller names the producer's device: asking the stream for it was two
// more runtime calls per copy between GPUs.
void join_streams(Stream waiter, Stream producer, int device) {
  cudaEvent_t& e = tls_streams.join[device];
  if (e == nullptr) {
    // An event belongs to the device current at its creation (record_event says why that matters).
    CoreDeviceGuard on(device);
    GX_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  GX_CUDA_CHECK(cudaEventRecord(e, static_cast<cudaStream_t>(producer)));
  GX_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(waiter), e, 0));
}

void priority_range(int device, int* least, int* greatest) {
  check_device(device, "Stream.priorityRange");
  CoreDeviceGuard guard(device);
  GX_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(least, greatest));
}

Event create_event(int device, bool timing) {
  check_device(device, "Event");
  CoreDeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  GX_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

void record_event_on(Event event, Stream stream, bool external) {
  external = external && is_capturing(stream);  // as in stream_wait_event
  GX_CUDA_CHECK(cudaEventRecordWithFlags(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream),
                                         external ? cudaEventRecordExternal : cudaEventRecordDefault));
}

bool event_done(Event event) {
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  GX_CUDA_CHECK(err);
  return true;
}

float event_elapsed_ms(Event start, Event end) {
  float ms = 0;
  GX_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  return ms;
}

void begin_capture(Stream stream, int device) {
  GX_CUDA_CHECK(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeRelaxed));
  tls_streams.capture_device = device;
}

// NOTE [ Graph replay ]
// A replay (CUDAGraph.replay -> graphReplay in binding/stream_functions.cpp)
// is one N-API call: two handle unwraps, a device check and cudaGraphLaunch on
// the stream given, as CuPy's Graph.launch is one cudaGraphLaunch; with no
// stream given, the core's current stream of the graph's device (a slot read,
// where asking JS for it made a Stream handle per replay: 0.8-1.8 µs on the
// lent x2 host); no synchronize, no event record. The
// graph is instantiated with no flags, as CuPy's and torch's are (node
// priorities and device launch are not used), and uploaded at once on the
// capture stream (cudaGraphUpload), so no replay pays the upload. Its node
// count is kept (CUDAGraph.nodes): the allocator (cudaMalloc, relaxed
// capture) and the launch checks add none, so a graph of K launches replays K
// kernel nodes, as CuPy's does. bench/streams.bench.ts measures both on a
// non-blocking stream (CuPy replays on one; gpuext's default current stream is
// a blocking one, shown beside it).
GraphExec end_capture(Stream stream, size_t* nodes) {
  tls_streams.capture_device = -1;
  cudaGraph_t graph = nullptr;
  GX_CUDA_CHECK(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph));
  size_t n = 0;
  cudaError_t err = cudaGraphGetNodes(graph, nullptr, &n);
  cudaGraphExec_t exec = nullptr;
  if (err == cudaSuccess) err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);  // the executable graph keeps what it needs
  GX_CUDA_CHECK(err);
  err = cudaGraphUpload(exec, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) {
    cudaGraphExecDestroy(exec);
    GX_CUDA_CHECK(err);
  }
  if (nodes != nullptr) *nodes = n;
  return exec;
}

void graph_launch(GraphExec exec, Stream stream) {
  GX_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), static_cast<cudaStream_t>(stream)));
}

void destroy_graph(GraphExec exec) noexcept {
  if (exec != nullptr) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
}

bool is_capturing(Stream stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GX_CUDA_CHECK(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status));
  return status != cudaStreamCaptureStatusNone;
}

// NOTE [ NVTX ranges ]
// NVTX 3 is header-only (the CUDA toolkit's include/nvtx3): its first call
// looks for a tool to hand the ranges to (Nsight Systems sets
// NVTX_INJECTION64_PATH and loads it with dlopen), and without one every call
// returns at once. So the core links nothing new, and ranges cost a few
// nanoseconds when no profiler of NVIDIA's is watching.
void nvtx_range_push(const char* name) noexcept { nvtxRangePushA(name); }
void nvtx_range_pop() noexcept { nvtxRangePop(); }

}  // namespace gx::core::cuda
