// NCCL, loaded with dlopen when a process group first needs it (docs/DESIGN.md
// decision 7, as cuBLAS): nccl.h is not needed, the few functions and enums
// used are declared here as NCCL documents them. Communicators live in a
// table and are named to JS by their index (NOTE [ NCCL communicators ]).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace gx::ops::nccl {

using Comm = void*;   // ncclComm_t
using Result = int;   // ncclResult_t; 0 is ncclSuccess
struct UniqueId {
  char internal[128];
};

// ncclDataType_t (ncclRedOp_t's codes are the collective table's: ops/dist/collective-list.js)
enum DataType : int { kInt8 = 0, kUint8 = 1, kInt32 = 2, kInt64 = 4, kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9 };

struct Api {
  Result (*GetVersion)(int*) = nullptr;
  Result (*GetUniqueId)(UniqueId*) = nullptr;
  Result (*CommInitRank)(Comm*, int nranks, UniqueId id, int rank) = nullptr;
  Result (*CommDestroy)(Comm) = nullptr;
  Result (*CommAbort)(Comm) = nullptr;
  Result (*CommInitAll)(Comm*, int ndev, const int* devlist) = nullptr;
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
