// NCCL, loaded with dlopen when a process group first needs it (docs/DESIGN.md
// decision 7, as cuBLAS): nccl.h is not needed, the few functions and enums
// used are declared here as NCCL documents them. Communicators live in a
// table; JS holds a communicator as a schema Handle of its index (NOTE [ NCCL communicators ]).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace gx::ops::nccl {

using Comm = void*;   // ncclComm_t
using Result = int;   // ncclResult_t; 0 is ncclSuccess
struct UniqueId {
  char internal[128];
};

// ncclDataType_t, by NCCL's names (the dtype list's NCCL type column names
// them; `none` marks a dtype NCCL has no type for). ncclRedOp_t's codes are
// the collective table's (ops/dist/collective-list.js).
enum DataType : int {
  none = -1, ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5,
  ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9
};

struct Api {
  Result (*GetVersion)(int*) = nullptr;
  Result (*GetUniqueId)(UniqueId*) = nullptr;
  Result (*CommInitRank)(Comm*, int nranks, UniqueId id, int rank) = nullptr;
  Result (*CommDestroy)(Comm) = nullptr;
  Result (*CommAbort)(Comm) = nullptr;
  Result (*CommGetAsyncError)(Comm, Result*) = nullptr;
  Result (*GroupStart)() = nullptr;
  Result (*GroupEnd)() = nullptr;
  const char* (*GetErrorString)(Result) = nullptr;
  Result (*AllReduce)(const void*, void*, size_t, int, int, Comm, cudaStream_t) = nullptr;
  Result (*Broadcast)(const void*, void*, size_t, int, int root, Comm, cudaStream_t) = nullptr;
  Result (*Reduce)(const void*, void*, size_t, int, int, int root, Comm, cudaStream_t) = nullptr;
  Result (*AllGather)(const void*, void*, size_t sendcount, int, Comm, cudaStream_t) = nullptr;
  Result (*ReduceScatter)(const void*, void*, size_t recvcount, int, int, Comm, cudaStream_t) = nullptr;
  Result (*Send)(const void*, size_t, int, int peer, Comm, cudaStream_t) = nullptr;
  Result (*Recv)(void*, size_t, int, int peer, Comm, cudaStream_t) = nullptr;
};

}  // namespace gx::ops::nccl
