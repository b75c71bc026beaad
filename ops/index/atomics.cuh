// Atomic read-modify-writes on device memory for every dtype, for the ops
// that reduce into their output (scatterAdd, scatterReduce, indexAdd,
// index_put with accumulate), the reductions of reductions.h.
//
// NOTE [ Atomics for every dtype ]
// The hardware adds float32, float64, int32 and int64, and takes the max and
// min of int32 and int64, in one instruction; everything else (products, the
// max and min of floats, 8- and 16-bit dtypes) is a compare-and-swap loop, as
// torch's gpuAtomic* are: read the word, compute the new value, swap it in if
// the word is unchanged, else retry with what was there. An 8- or 16-bit
// element is swapped inside the aligned 32-bit word holding it. The value is
// computed in the dtype's compute type (NOTE [ Compute types ] in hd.h) and
// stored through the dtype, so float16 sums round at every step and integer
// ones wrap, as the CPU loops do. The max and min of floats propagate NaN
// (once an element is NaN it stays NaN). A loop whose new value equals the
// old one stores nothing (a max that does not win costs one read).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "reductions.h"

namespace gx::ops {

// The bits of a T as an unsigned integer of its size, and back.
template <typename T> __device__ __forceinline__ T from_bits(uint64_t bits) {
  T v;
  if constexpr (sizeof(T) == 1) { const uint8_t b = static_cast<uint8_t>(bits); memcpy(&v, &b, 1); }
  else if constexpr (sizeof(T) == 2) { const uint16_t b = static_cast<uint16_t>(bits); memcpy(&v, &b, 2); }
  else if constexpr (sizeof(T) == 4) { const uint32_t b = static_cast<uint32_t>(bits); memcpy(&v, &b, 4); }
  else memcpy(&v, &bits, 8);
  return v;
}
template <typename T> __device__ __forceinline__ uint64_t to_bits(T v) {
  if constexpr (sizeof(T) == 1) { uint8_t b; memcpy(&b, &v, 1); return b; }
  else if constexpr (sizeof(T) == 2) { uint16_t b; memcpy(&b, &v, 2); return b; }
  else if constexpr (sizeof(T) == 4) { uint32_t b; memcpy(&b, &v, 4); return b; }
  else { uint64_t b; memcpy(&b, &v, 8); return b; }
}

// *p = op(*p, v) atomically by compare-and-swap, T the storage type, C the compute type.
template <typename T, typename C, typename Op> __device__ void atomic_cas(T* p, C v, Op op) {
  if constexpr (sizeof(T) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *w, seen;
    do {
      seen = old;
      const T next = to<T>(op(to<C>(from_bits<T>(seen)), v));
      const unsigned long long nb = to_bits(next);
      if (nb == seen) return;
      old = atomicCAS(w, seen, nb);
    } while (old != seen);
  } else if constexpr (sizeof(T) == 4) {
    auto* w = reinterpret_cast<unsigned int*>(p);
    unsigned int old = *w, seen;
    do {
      seen = old;
      const T next = to<T>(op(to<C>(from_bits<T>(seen)), v));
      const unsigned int nb = static_cast<unsigned int>(to_bits(next));
      if (nb == seen) return;
      old = atomicCAS(w, seen, nb);
    } while (old != seen);
  } else {
    // 8 or 16 bits inside their aligned 32-bit word.
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    auto* w = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    constexpr unsigned kMask = sizeof(T) == 1 ? 0xffu : 0xffffu;
    unsigned int old = *w, seen;
    do {
      seen = old;
      const T cur = from_bits<T>((seen >> shift) & kMask);
      const T next = to<T>(op(to<C>(cur), v));
      const unsigned int nb = static_cast<unsigned int>(to_bits(next));
      const unsigned int word = (seen & ~(kMask << shift)) | (nb << shift);
      if (word == seen) return;
      old = atomicCAS(w, seen, word);
    } while (old != seen);
  }
}

// *p = op(*p, v) atomically, with the hardware's instruction where it has one.
template <typename T, typename C, typename Op> __device__ __forceinline__ void atomic_apply(T* p, C v, Op op) {
  if constexpr (std::is_same_v<Op, ReduceSum> && std::is_same_v<T, float>) {
    atomicAdd(p, static_cast<float>(v));
  } else if constexpr (std::is_same_v<Op, ReduceSum> && std::is_same_v<T, double>) {
    atomicAdd(p, static_cast<double>(v));
  } else if constexpr (std::is_same_v<Op, ReduceSum> && std::is_same_v<T, int32_t>) {
    atomicAdd(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(static_cast<int32_t>(v)));
  } else if constexpr (std::is_same_v<Op, ReduceSum> && std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<Op, ReduceMax> && std::is_same_v<T, int32_t>) {
    atomicMax(p, static_cast<int32_t>(v));
  } else if constexpr (std::is_same_v<Op, ReduceMax> && std::is_same_v<T, int64_t>) {
    atomicMax(reinterpret_cast<long long*>(p), static_cast<long long>(v));
  } else if constexpr (std::is_same_v<Op, ReduceMin> && std::is_same_v<T, int32_t>) {
    atomicMin(p, static_cast<int32_t>(v));
  } else if constexpr (std::is_same_v<Op, ReduceMin> && std::is_same_v<T, int64_t>) {
    atomicMin(reinterpret_cast<long long*>(p), static_cast<long long>(v));
  } else {
    atomic_cas<T>(p, v, op);
  }
}

// The same with the element's dtype known at run time: C is its compute
// type (float for float32/float16/bfloat16, double for float64, int64_t for
// the integers and bool); v is converted to the dtype first (as a store
// would), then combined.
template <typename C, typename Op> __device__ void atomic_apply_as(char* p, ScalarType t, C v, Op op) {
  if constexpr (std::is_same_v<C, float>) {
    switch (t) {
      case kFloat32: atomic_apply(reinterpret_cast<float*>(p), v, op); return;
      case kFloat16: atomic_apply(reinterpret_cast<Half*>(p), to<float>(to<Half>(v)), op); return;
      case kBFloat16: atomic_apply(reinterpret_cast<BFloat16*>(p), to<float>(to<BFloat16>(v)), op); return;
      default: return;
    }
  } else if constexpr (std::is_same_v<C, double>) {
    atomic_apply(reinterpret_cast<double*>(p), v, op);
  } else {
    switch (t) {
      case kInt64: atomic_apply(reinterpret_cast<int64_t*>(p), v, op); return;
      case kInt32: atomic_apply(reinterpret_cast<int32_t*>(p), static_cast<int64_t>(static_cast<int32_t>(v)), op); return;
      case kInt16: atomic_apply(reinterpret_cast<int16_t*>(p), static_cast<int64_t>(static_cast<int16_t>(v)), op); return;
      case kInt8: atomic_apply(reinterpret_cast<int8_t*>(p), static_cast<int64_t>(static_cast<int8_t>(v)), op); return;
      case kUInt8: atomic_apply(reinterpret_cast<uint8_t*>(p), static_cast<int64_t>(static_cast<uint8_t>(v)), op); return;
      case kBool: atomic_apply(reinterpret_cast<bool*>(p), static_cast<int64_t>(v != 0), op); return;
      default: return;
    }
  }
}

}  // namespace gx::ops
