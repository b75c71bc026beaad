// NCCL collectives for gx.distributed (nccl.h): the library loaded on first
// use, communicators made from a unique id the ranks exchanged through the
// process group's store, and every collective enqueued on the current stream
// of its tensors' device.
//
// NOTE [ NCCL communicators ]
// A communicator is made for one device and used only there: the table keeps
// the device with it, and each call makes that device current and checks
// that its tensors are on it. JS holds a communicator as a Handle of its
// index in the table (NOTE [ Handles and devices in schemas ] in the core's
// schema.h), and each op without tensors names its device as a Device
// argument, which is also what dispatches it to CUDA; a destroyed one's slot
// stays empty. One process may also drive several GPUs: one communicator
// per device, each joined (nccl_comm_init) and each collective enqueued on
// all of them between nccl_group(start) and nccl_group(end), as NCCL
// requires of a thread that drives more than one rank (else the first call
// waits for the others).
#include "nccl.h"

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <gpuext/cuda.h>
#include <gpuext/extension.h>
#include <gpuext/optional_library.h>

#include "../common/loaded_api.h"

#include "../generated/collectives.h"
#include "../generated/entry_points.h"

namespace gx::ops {
namespace {

namespace ol = ::gx::optional_library;
using nccl::Api;

const ol::Loaded<Api>& loaded() {
  return ol::load_once<Api>(
      "GPUEXT_NCCL_PATH", {"libnccl.so.2", "libnccl.so"},
      [](void* lib, Api& a, std::string& missing) {
        ol::resolve(lib, "ncclGetVersion", a.GetVersion, missing);
        ol::resolve(lib, "ncclGetUniqueId", a.GetUniqueId, missing);
        ol::resolve(lib, "ncclCommInitRank", a.CommInitRank, missing);
        ol::resolve(lib, "ncclCommDestroy", a.CommDestroy, missing);
        ol::resolve(lib, "ncclCommAbort", a.CommAbort, missing);
        ol::resolve(lib, "ncclCommGetAsyncError", a.CommGetAsyncError, missing);
        ol::resolve(lib, "ncclGroupStart", a.GroupStart, missing);
        ol::resolve(lib, "ncclGroupEnd", a.GroupEnd, missing);
        ol::resolve(lib, "ncclGetErrorString", a.GetErrorString, missing);
        ol::resolve(lib, "ncclAllReduce", a.AllReduce, missing);
        ol::resolve(lib, "ncclBroadcast", a.Broadcast, missing);
        ol::resolve(lib, "ncclReduce", a.Reduce, missing);
        ol::resolve(lib, "ncclAllGather", a.AllGather, missing);
        ol::resolve(lib, "ncclReduceScatter", a.ReduceScatter, missing);
        ol::resolve(lib, "ncclSend", a.Send, missing);
        ol::resolve(lib, "ncclRecv", a.Recv, missing);
      },
      "NCCL (libnccl.so.2) could not be loaded: install it (apt install libnccl2, or pip install nvidia-nccl-cu12 "
      "and name its lib/libnccl.so.2), or set GPUEXT_NCCL_PATH to the file");
}

const Api& api(const char* what) {
  return loaded_api(loaded(), what);
}

void check(nccl::Result r, const char* what, const char* call) {
  if (r == 0) return;
  GX_CHECK(false, what, ": ", call, " failed: ", api(what).GetErrorString(r), " (ncclResult_t ", r, ")");
}

struct CommEntry {
  nccl::Comm comm = nullptr;
  int device = -1;
};
std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}
std::vector<CommEntry>& table() {
  static std::vector<CommEntry> t;
  return t;
}

CommEntry entry(Handle comm, const Device& device, const char* what) {
  std::lock_guard<std::mutex> lock(table_mutex());
  const uint64_t k = comm.value;
  GX_CHECK(k < table().size() && table()[k].comm != nullptr, what, ": communicator ", k, " was destroyed or never made");
  GX_CHECK(device.is_cuda() && device.index == table()[k].device, what, ": the communicator is for cuda:", table()[k].device,
           ", not ", device);
  return table()[k];
}

// The ncclDataType_t of each dtype: the dtype list's NCCL type column (gpuext/dtype_list.h).
int data_type(ScalarType t, const char* what) {
  int type = nccl::none;
  switch (t) {
#define GX_NCCL_TYPE_CASE(Enum, name, kind, size, storage, value, ctype, kernel_ctype, compute, npy, safetensors, nccl_type) \
  case k##Enum: type = nccl::nccl_type; break;
    GX_FORALL_DTYPES(GX_NCCL_TYPE_CASE)
#undef GX_NCCL_TYPE_CASE
  }
  GX_CHECK(type != nccl::none, what, ": NCCL has no ", t, " type");
  return type;
}

// The new communicator's handle.
Handle add_entry(nccl::Comm comm, int device) {
  std::lock_guard<std::mutex> lock(table_mutex());
  table().push_back(CommEntry{comm, device});
  return Handle{table().size() - 1};
}

// One collective's operands, as each enqueue_<kind> below takes them.
struct Call {
  const Api& a;
  nccl::Comm comm;
  const Tensor& input;
  const Tensor& output;
  int type;  // ncclDataType_t
  int op;    // ncclRedOp_t
  int peer;  // the root, or the other rank of send / recv
  cudaStream_t stream;
  const char* what;
};

size_t count(const Tensor& t) {
  return static_cast<size_t>(t.numel());
}

// NOTE [ One body per collective ]
// The kinds are the collective table's (ops/dist/collective-list.js): the
// generated GX_FORALL_NCCL_COLLECTIVES lists them, and the dispatch below is
// a switch made from it, calling enqueue_<name>. A row added to the table
// without its function here does not compile.
void enqueue_all_reduce(const Call& c) {
  check(c.a.AllReduce(c.input.data_ptr(), c.output.data_ptr(), count(c.input), c.type, c.op, c.comm, c.stream), c.what,
        "ncclAllReduce");
}
void enqueue_broadcast(const Call& c) {
  check(c.a.Broadcast(c.input.data_ptr(), c.output.data_ptr(), count(c.input), c.type, c.peer, c.comm, c.stream), c.what,
        "ncclBroadcast");
}
void enqueue_reduce(const Call& c) {
  check(c.a.Reduce(c.input.data_ptr(), c.output.data_ptr(), count(c.input), c.type, c.op, c.peer, c.comm, c.stream),
        c.what, "ncclReduce");
}
void enqueue_all_gather(const Call& c) {
  check(c.a.AllGather(c.input.data_ptr(), c.output.data_ptr(), count(c.input), c.type, c.comm, c.stream), c.what,
        "ncclAllGather");
}
void enqueue_reduce_scatter(const Call& c) {
  check(c.a.ReduceScatter(c.input.data_ptr(), c.output.data_ptr(), count(c.output), c.type, c.op, c.comm, c.stream),
        c.what, "ncclReduceScatter");
}
void enqueue_send(const Call& c) {
  check(c.a.Send(c.input.data_ptr(), count(c.input), c.type, c.peer, c.comm, c.stream), c.what, "ncclSend");
}
void enqueue_recv(const Call& c) {
  check(c.a.Recv(c.output.data_ptr(), count(c.output), c.type, c.peer, c.comm, c.stream), c.what, "ncclRecv");
}

// Enqueues one collective of `e` on the current stream of its device (which the caller made current).
void enqueue(const CommEntry& e, const Tensor& input, const Tensor& output, const std::string& kind, int64_t op,
             int64_t peer, const char* what) {
  GX_CHECK(input.device().is_cuda() && output.device().is_cuda() && input.device().index == e.device &&
               output.device().index == e.device,
           what, ": the communicator is for cuda:", e.device, " but the tensors are on ", input.device(), " and ",
           output.device());
  GX_CHECK(input.is_contiguous() && output.is_contiguous(), what, ": the tensors must be contiguous");
  GX_CHECK(input.dtype() == output.dtype(), what, ": input and output dtypes differ");
  collectives::Kind k{};
  GX_CHECK(collectives::parse_kind(kind.c_str(), &k), what, ": unknown collective '", kind, "'");
  const Call c{api(what), e.comm, input, output, data_type(input.dtype(), what), static_cast<int>(op),
               static_cast<int>(peer), current_stream(e.device), what};
  switch (k) {
#define GX_NCCL_CASE(Enum, name) \
  case collectives::Kind::k##Enum: \
    return enqueue_##name(c);
    GX_FORALL_NCCL_COLLECTIVES(GX_NCCL_CASE)
#undef GX_NCCL_CASE
  }
}

std::string hex(const char* p, size_t n) {
  std::string s(2 * n, '0');
  static const char* d = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = d[(static_cast<unsigned char>(p[i]) >> 4) & 15];
    s[2 * i + 1] = d[static_cast<unsigned char>(p[i]) & 15];
  }
  return s;
}

}  // namespace

std::string nccl_version_cuda(Device device) {
  DeviceGuard guard(device.index);
  int v = 0;
  check(api("nccl_version").GetVersion(&v), "nccl_version", "ncclGetVersion");
  return std::to_string(v);
}

std::string nccl_unique_id_cuda(Device device) {
  DeviceGuard guard(device.index);
  nccl::UniqueId id{};
  check(api("nccl_unique_id").GetUniqueId(&id), "nccl_unique_id", "ncclGetUniqueId");
  return hex(id.internal, sizeof id.internal);
}

Handle nccl_comm_init_cuda(Device device, std::string unique_id, int64_t world_size, int64_t rank) {
  constexpr const char* kWhat = "nccl_comm_init";
  GX_CHECK(unique_id.size() == 2 * sizeof(nccl::UniqueId), kWhat, ": the unique id must be ", 2 * sizeof(nccl::UniqueId),
           " hex digits");
  GX_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, kWhat, ": rank ", rank, " of ", world_size);
  nccl::UniqueId id{};
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    unsigned v = 0;
    GX_CHECK(std::sscanf(unique_id.c_str() + 2 * i, "%2x", &v) == 1, kWhat, ": the unique id is not hex");
    id.internal[i] = static_cast<char>(v);
  }
  // NCCL takes the current device as the rank's, also inside a group (where the join completes at ncclGroupEnd).
  DeviceGuard guard(device.index);
  nccl::Comm comm = nullptr;
  check(api(kWhat).CommInitRank(&comm, static_cast<int>(world_size), id, static_cast<int>(rank)), kWhat, "ncclCommInitRank");
  return add_entry(comm, device.index);
}

std::string nccl_comm_error_cuda(Device device, Handle comm) {
  constexpr const char* kWhat = "nccl_comm_error";
  const CommEntry e = entry(comm, device, kWhat);
  const Api& a = api(kWhat);
  nccl::Result r = 0;
  check(a.CommGetAsyncError(e.comm, &r), kWhat, "ncclCommGetAsyncError");
  // ncclInProgress (7) is a non-blocking communicator still at work, not an error.
  return r == 0 || r == 7 ? std::string() : std::string(a.GetErrorString(r)) + " (ncclResult_t " + std::to_string(r) + ")";
}

void nccl_comm_destroy_cuda(Device device, Handle comm, bool abort) {
  constexpr const char* kWhat = "nccl_comm_destroy";
  const CommEntry e = entry(comm, device, kWhat);
  {
    std::lock_guard<std::mutex> lock(table_mutex());
    table()[comm.value].comm = nullptr;
  }
  DeviceGuard guard(e.device);
  const Api& a = api(kWhat);
  check(abort ? a.CommAbort(e.comm) : a.CommDestroy(e.comm), kWhat, abort ? "ncclCommAbort" : "ncclCommDestroy");
}

void nccl_collective_cuda(const Tensor& input, const Tensor& output, Handle comm, std::string kind, int64_t op,
                          int64_t peer) {
  constexpr const char* kWhat = "nccl_collective";
  const CommEntry e = entry(comm, input.device(), kWhat);
  DeviceGuard guard(e.device);
  enqueue(e, input, output, kind, op, peer, kWhat);
}

void nccl_group_cuda(Device device, bool start) {
  constexpr const char* kWhat = "nccl_group";
  (void)device;  // what dispatches the call to CUDA; ncclGroupStart/End are per thread
  const Api& a = api(kWhat);
  check(start ? a.GroupStart() : a.GroupEnd(), kWhat, start ? "ncclGroupStart" : "ncclGroupEnd");
}

}  // namespace gx::ops
