// Access to the core's gx_api table (see NOTE [ Why a C table ] in gpuext/abi.h).
#pragma once
#include "base/error.h"
#include "gpuext/abi.h"

namespace gx::core {

const gx_api* abi_table();
// This thread's last error message set through the table.
const char* abi_last_error();
// The error kind a status stands for (the JS error class follows from it).
ErrorKind error_kind_of(gx_status status);
// The CUDA device the op now running was dispatched to: what an extension's
// gx::current_stream() (device -1) resolves to on this thread; -1 outside a
// CUDA op (the thread's current device is used then).
void abi_set_dispatch_device(int device);
int abi_dispatch_device();

}  // namespace gx::core
