// The core's own tensor operations, dispatched on device: copies between any
// devices and layouts, fill, arange, linspace, contiguous, host readback.
// CUDA work goes on the current stream of the tensor's device.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace gx::core {

// dst <- src elementwise. Same dtype and shape; any devices; any strides.
// non_blocking: a device->host copy into pinned memory returns before the data
// has arrived (synchronize the stream before reading it); host->device copies
// never wait for the device.
void copy_(TensorImpl& dst, const TensorImpl& src, bool non_blocking = false);
// Every element gets the bit pattern `bits` (the low itemsize bytes).
void fill_(TensorImpl& t, uint64_t bits);
// Contiguous t[i] = start + i * step, converted to t's dtype.
void arange_(TensorImpl& t, double start, double step);
// Contiguous t: numel points from start to end inclusive.
void linspace_(TensorImpl& t, double start, double end);
// `t` itself (retained) when contiguous, else a contiguous copy on its device.
TensorImpl* contiguous(const TensorImpl& t);
// A contiguous copy of `src` on `device` (also when it is already there).
TensorImpl* to_device(const TensorImpl& src, Device device, bool non_blocking = false);
// Copies the elements of `t` in C order into host memory `dst`
// (numel * itemsize bytes), waiting for the device.
void read_to_host(const TensorImpl& t, void* dst);

// Fills contiguous `t` from numel * itemsize bytes of host memory at `src`
// (the host buffer may be reused as soon as this returns).
void write_from_host(TensorImpl& t, const void* src);

}  // namespace gx::core
