// N-API functions over streams, events and CUDA graphs (lib/core/stream.ts,
// lib/core/graph.ts), and the tensor calls that involve streams (recordStream,
// non-blocking copies).
#include "binding/bindings.h"
#include "binding/args.h"
#include "binding/js_errors.h"
#include "binding/promise_worker.h"
#include "binding/stream_box.h"
#include "binding/tagged_external.h"
#include "binding/tensor_handle.h"
#include "core/capture.h"
#include "core/tensor_ops.h"
#include "cuda/caching_allocator.h"
#include "cuda/runtime.h"

namespace gx::core::js {
namespace {

struct EventBox {
  static constexpr napi_type_tag kTag = {0x6770757865766e74ULL, 0x0000000000000001ULL};
  static constexpr const char* kName = "Event";
  cuda::Event event;
  int device;
  bool timing;
  bool external;  // recorded and waited on as a graph's event nodes inside a capture (cuda::record_event_on)
  ~EventBox() { cuda::destroy_event(event); }
};

struct GraphBox {
  static constexpr napi_type_tag kTag = {0x6770757867726170ULL, 0x6800000000000001ULL};
  static constexpr const char* kName = "CUDAGraph";
  cuda::GraphExec exec = nullptr;
  int device = 0;
  CaptureKeepAlive keep;  // NOTE [ Graph memory ]
  ~GraphBox() { cuda::destroy_graph(exec); }
};

Napi::Value CreateStream(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const int device = arg_cuda_device(info, 0, "gx.Stream");
    const bool non_blocking = arg_flag(info, 1);
    const int priority = static_cast<int>(arg_int(info, 2, "gx.Stream", "priority"));
    return wrap_external(info.Env(), new StreamBox{cuda::create_stream(device, non_blocking, priority), device, true});
  });
}

Napi::Value CurrentStream(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const int device = arg_cuda_device(info, 0, "gx.cuda.currentStream");
    return wrap_external(info.Env(), new StreamBox{cuda::peek_current_stream(device), device, false});
  });
}

Napi::Value SetCurrentStream(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    StreamBox& s = unwrap_external<StreamBox>(info[0], "setCurrentStream", "stream");
    cuda::set_current_stream(s.device, s.stream);
    return info.Env().Undefined();
  });
}

Napi::Value StreamInfo(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    StreamBox& s = unwrap_external<StreamBox>(info[0], "Stream", "stream");
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("device", Napi::Number::New(info.Env(), s.device));
    o.Set("handle", Napi::BigInt::New(info.Env(), static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s.stream))));
    return o;
  });
}

Napi::Value StreamSynchronize(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    cuda::synchronize_stream(unwrap_external<StreamBox>(info[0], "Stream.synchronize", "stream").stream);
    return info.Env().Undefined();
  });
}

Napi::Value StreamQuery(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    return Napi::Boolean::New(info.Env(), cuda::stream_done(unwrap_external<StreamBox>(info[0], "Stream.query", "stream").stream));
  });
}

Napi::Value StreamWaitEvent(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    StreamBox& s = unwrap_external<StreamBox>(info[0], "Stream.waitEvent", "stream");
    EventBox& e = unwrap_external<EventBox>(info[1], "Stream.waitEvent", "event");
    cuda::check_capture_device(s.device, "Stream.waitEvent");
    cuda::stream_wait_event(s.stream, e.event, e.external);
    return info.Env().Undefined();
  });
}

// joinStreams(waiter, producer): Stream.waitStream by the core's one join
// event per device and thread (cuda::join_streams), where a gx.Event per call
// cost an event created, and destroyed only when the collector got to it.
Napi::Value JoinStreams(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    StreamBox& waiter = unwrap_external<StreamBox>(info[0], "Stream.waitStream", "stream");
    StreamBox& producer = unwrap_external<StreamBox>(info[1], "Stream.waitStream", "other");
    cuda::check_capture_device(waiter.device, "Stream.waitStream");
    cuda::check_capture_device(producer.device, "Stream.waitStream (its argument)");
    cuda::join_streams(waiter.stream, producer.stream, producer.device);
    return info.Env().Undefined();
  });
}

Napi::Value PriorityRange(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    int least = 0, greatest = 0;
    cuda::priority_range(arg_cuda_device(info, 0, "Stream.priorityRange"), &least, &greatest);
    Napi::Array a = Napi::Array::New(info.Env(), 2);
    a.Set(0u, Napi::Number::New(info.Env(), least));
    a.Set(1u, Napi::Number::New(info.Env(), greatest));
    return a;
  });
}

Napi::Value CreateEvent(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const int device = arg_cuda_device(info, 0, "gx.Event");
    const bool timing = arg_flag(info, 1);
    const bool external = arg_flag(info, 2);
    return wrap_external(info.Env(), new EventBox{cuda::create_event(device, timing), device, timing, external});
  });
}

Napi::Value RecordEvent(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    EventBox& e = unwrap_external<EventBox>(info[0], "Event.record", "event");
    cuda::Stream stream;
    if (info[1].IsUndefined()) {
      stream = cuda::current_stream(e.device);  // the event's device's current stream, as CUDAGraph.replay's
    } else {
      StreamBox& s = unwrap_external<StreamBox>(info[1], "Event.record", "stream");
      GX_CHECK_VALUE(e.device == s.device, "Event.record: the event is on cuda:", e.device, " but the stream on cuda:", s.device);
      cuda::check_capture_device(s.device, "Event.record");
      stream = s.stream;
    }
    cuda::record_event_on(e.event, stream, e.external);
    return info.Env().Undefined();
  });
}

Napi::Value EventSynchronize(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    cuda::wait_event(unwrap_external<EventBox>(info[0], "Event.synchronize", "event").event);
    return info.Env().Undefined();
  });
}

Napi::Value EventQuery(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    return Napi::Boolean::New(info.Env(), cuda::event_done(unwrap_external<EventBox>(info[0], "Event.query", "event").event));
  });
}

Napi::Value EventElapsed(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    EventBox& a = unwrap_external<EventBox>(info[0], "Event.elapsedTime", "start");
    EventBox& b = unwrap_external<EventBox>(info[1], "Event.elapsedTime", "end");
    GX_CHECK_VALUE(a.timing && b.timing, "Event.elapsedTime: both events must be created with { timing: true }");
    return Napi::Number::New(info.Env(), cuda::event_elapsed_ms(a.event, b.event));
  });
}

// NOTE [ Async waits ]
// await stream.done() / event.done(): a libuv pool thread blocks on an event
// while the event loop runs on. The worker holds a reference to the JS
// handle, so the event cannot be destroyed while it waits.
class EventWaitWorker : public PromiseWorker {
 public:
  EventWaitWorker(Napi::Env env, Napi::Value handle, cuda::Event event)
      : PromiseWorker(env, "gpuext.wait"), handle_(Napi::Persistent(handle.As<Napi::Object>())), event_(event) {}

 protected:
  void Run() override { cuda::wait_event(event_); }

 private:
  Napi::Reference<Napi::Object> handle_;
  cuda::Event event_;
};

Napi::Value WaitEventAsync(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    EventBox& e = unwrap_external<EventBox>(info[0], "Event.done", "event");
    return PromiseWorker::start(new EventWaitWorker(info.Env(), info[0], e.event), [] {});
  });
}

// --- tensors and streams ----------------------------------------------------------

Napi::Value RecordStream(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    TensorImpl& t = TensorHandle::From(info, 0, "Tensor.recordStream", "self");
    StreamBox& s = unwrap_external<StreamBox>(info[1], "Tensor.recordStream", "stream");
    GX_CHECK_VALUE(t.device().is_cuda() && t.device().index == s.device, "Tensor.recordStream: the tensor is on ",
                   t.device().str(), " but the stream on cuda:", s.device);
    if (t.storage().nbytes() > 0) {
      cuda::device_record_stream(t.storage().data(), s.stream);
      t.storage().mark_stream_shared();  // the tensor cache must not reuse it (NOTE [ Tensor cache ])
    }
    return info.Env().Undefined();
  });
}

// --- graphs ---------------------------------------------------------------------------

// beginCapture(stream): this thread's CUDA allocations are kept for the graph from now on.
Napi::Value BeginCapture(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    StreamBox& s = unwrap_external<StreamBox>(info[0], "cuda.graph", "stream");
    GX_CHECK_VALUE(capture_keepalive() == nullptr, "cuda.graph: a capture is already running on this thread");
    auto* graph = new GraphBox();
    graph->device = s.device;
    Napi::Value handle = wrap_external(info.Env(), graph);
    cuda::begin_capture(s.stream, s.device);
    capture_keepalive() = &graph->keep;
    return handle;
  });
}

// endCapture(stream, graph): instantiates; [allocations kept, nodes captured].
// On failure the graph handle stays empty.
Napi::Value EndCapture(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    StreamBox& s = unwrap_external<StreamBox>(info[0], "cuda.graph", "stream");
    GraphBox& g = unwrap_external<GraphBox>(info[1], "cuda.graph", "graph");
    capture_keepalive() = nullptr;
    size_t nodes = 0;
    g.exec = cuda::end_capture(s.stream, &nodes);
    Napi::Array out = Napi::Array::New(info.Env(), 2);
    out.Set(0u, Napi::Number::New(info.Env(), static_cast<double>(g.keep.size())));
    out.Set(1u, Napi::Number::New(info.Env(), static_cast<double>(nodes)));
    return out;
  });
}

Napi::Value GraphReplay(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    GraphBox& g = unwrap_external<GraphBox>(info[0], "CUDAGraph.replay", "graph");
    GX_CHECK_VALUE(g.exec != nullptr, "CUDAGraph.replay: the graph was not captured (or was disposed)");
    cuda::Stream stream;
    if (info[1].IsUndefined()) {
      // The graph's device's current stream, asked here: no Stream handle made per replay (NOTE [ Graph replay ]).
      stream = cuda::current_stream(g.device);
    } else {
      StreamBox& s = unwrap_external<StreamBox>(info[1], "CUDAGraph.replay", "stream");
      GX_CHECK_VALUE(g.device == s.device, "CUDAGraph.replay: the graph is on cuda:", g.device, " but the stream on cuda:", s.device);
      cuda::check_capture_device(s.device, "CUDAGraph.replay");
      stream = s.stream;
    }
    cuda::graph_launch(g.exec, stream);
    return info.Env().Undefined();
  });
}

// Frees the executable graph now and lets go of its memory.
Napi::Value GraphDispose(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    GraphBox& g = unwrap_external<GraphBox>(info[0], "CUDAGraph.dispose", "graph");
    cuda::destroy_graph(g.exec);
    g.exec = nullptr;
    g.keep.clear();
    return info.Env().Undefined();
  });
}

}  // namespace

void register_stream_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("createStream", Napi::Function::New<CreateStream>(env, "createStream"));
  exports.Set("currentStream", Napi::Function::New<CurrentStream>(env, "currentStream"));
  exports.Set("setCurrentStream", Napi::Function::New<SetCurrentStream>(env, "setCurrentStream"));
  exports.Set("streamInfo", Napi::Function::New<StreamInfo>(env, "streamInfo"));
  exports.Set("streamSynchronize", Napi::Function::New<StreamSynchronize>(env, "streamSynchronize"));
  exports.Set("streamQuery", Napi::Function::New<StreamQuery>(env, "streamQuery"));
  exports.Set("streamWaitEvent", Napi::Function::New<StreamWaitEvent>(env, "streamWaitEvent"));
  exports.Set("joinStreams", Napi::Function::New<JoinStreams>(env, "joinStreams"));
  exports.Set("streamPriorityRange", Napi::Function::New<PriorityRange>(env, "streamPriorityRange"));
  exports.Set("createEvent", Napi::Function::New<CreateEvent>(env, "createEvent"));
  exports.Set("recordEvent", Napi::Function::New<RecordEvent>(env, "recordEvent"));
  exports.Set("eventSynchronize", Napi::Function::New<EventSynchronize>(env, "eventSynchronize"));
  exports.Set("eventQuery", Napi::Function::New<EventQuery>(env, "eventQuery"));
  exports.Set("eventElapsed", Napi::Function::New<EventElapsed>(env, "eventElapsed"));
  exports.Set("eventWait", Napi::Function::New<WaitEventAsync>(env, "eventWait"));
  exports.Set("recordStream", Napi::Function::New<RecordStream>(env, "recordStream"));
  exports.Set("beginCapture", Napi::Function::New<BeginCapture>(env, "beginCapture"));
  exports.Set("endCapture", Napi::Function::New<EndCapture>(env, "endCapture"));
  exports.Set("graphReplay", Napi::Function::New<GraphReplay>(env, "graphReplay"));
  exports.Set("graphDispose", Napi::Function::New<GraphDispose>(env, "graphDispose"));
}

}  // namespace gx::core::js
