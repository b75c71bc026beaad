// The versioned C ABI between the gpuext core and extensions.
//
// NOTE [ Why a C table ]
// Extensions never link against core sources or C++ symbols. At load time the
// core hands each extension a pointer to one `gx_api` table (NumPy's C-API
// capsule is the precedent). Only plain C types cross it, so an extension built
// against core 1.x keeps working with core 1.y:
//   - the major version changes only when an entry changes meaning or moves;
//   - minor versions only append entries; `size` says how many the core has,
//     so an extension can test for an entry before calling it.
// Every fallible entry returns a gx_status; on failure the message is available
// from last_error() on the same thread. Nothing here throws or aborts.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "gpuext/dtype_list.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gx_api;

#define GX_ABI_VERSION_MAJOR 1
#define GX_ABI_VERSION_MINOR 2

typedef enum gx_dtype {
#define GX_ABI_DTYPE_ENUM(Enum, ...) GX_##Enum,
  GX_FORALL_DTYPES(GX_ABI_DTYPE_ENUM)
#undef GX_ABI_DTYPE_ENUM
  GX_NUM_DTYPES
} gx_dtype;

typedef enum gx_device_type { GX_CPU = 0, GX_CUDA = 1 } gx_device_type;

typedef enum gx_status {
  GX_OK = 0,
  GX_ERR_INVALID_ARGUMENT = 1,  // the caller's mistake: bad shape, dtype, device...
  GX_ERR_OUT_OF_MEMORY = 2,
  GX_ERR_CUDA = 3,              // a CUDA call failed
  GX_ERR_NOT_COMPILED = 4,      // the core was built without CUDA
  GX_ERR_INTERNAL = 5
} gx_status;

typedef struct gx_device {
  int32_t type;   // gx_device_type
  int32_t index;  // 0 for cpu
} gx_device;

// A reference-counted tensor owned by the core: storage + sizes + strides
// (in elements) + storage offset (in elements) + dtype.
typedef struct gx_tensor gx_tensor;

// A registered op (any library's, the built-in ops' included), found by its
// qualified name once and called through call_op; valid for the process's life.
typedef struct gx_op gx_op;

// One argument or return value of a registered op, as the schema types it.
typedef enum gx_value_kind {
  GX_VALUE_NONE = 0,         // an absent `Tensor?`, or no value
  GX_VALUE_TENSOR = 1,       // Tensor, Tensor?
  GX_VALUE_INT = 2,          // int
  GX_VALUE_FLOAT = 3,        // float
  GX_VALUE_BOOL = 4,         // bool
  GX_VALUE_STR = 5,          // str
  GX_VALUE_INT_LIST = 6,     // int[]
  GX_VALUE_TENSOR_LIST = 7,  // Tensor[]
  GX_VALUE_DTYPE = 8,        // ScalarType (a gx_dtype)
  // 1.2 (NOTE [ Handles and devices in schemas ] in csrc/core/schema.h):
  GX_VALUE_HANDLE = 9,       // Handle: 64 bits the op that made it gives meaning to
  GX_VALUE_DEVICE = 10       // Device (a gx_device)
} gx_value_kind;

typedef struct gx_value {
  int32_t kind;  // gx_value_kind
  union {
    gx_tensor* tensor;  // borrowed in arguments; owned (a new reference) in returns
    int64_t i;
    double f;
    int32_t b;
    int32_t dtype;
    uint64_t handle;   // 1.2
    gx_device device;  // 1.2
    struct { const char* data; size_t len; } str;
    struct { const int64_t* data; size_t len; } ints;
    struct { gx_tensor* const* data; size_t len; } tensors;  // borrowed
  } v;
} gx_value;

// A registered implementation, boxed: the core converts and checks arguments
// from the schema, then calls it with exactly the schema's argument count.
// On failure it returns a status after calling gx_api.set_error.
typedef gx_status (*gx_boxed_fn)(void* ctx, const gx_value* args, int32_t nargs,
                                 gx_value* rets, int32_t nrets);

// The core's side of one extension's registration, passed to its init.
typedef struct gx_registrar gx_registrar;

// Every extension exports this; the core calls it once when loading.
#define GX_EXTENSION_INIT_SYMBOL "gx_extension_init_v1"
typedef gx_status (*gx_extension_init_fn)(const struct gx_api* api, gx_registrar* reg);

typedef struct gx_api {
  uint32_t abi_major;
  uint32_t abi_minor;
  size_t size;  // sizeof(gx_api) as the core was built: entries beyond it are absent

  // --- errors ---------------------------------------------------------------
  const char* (*last_error)(void);  // message of this thread's last failure

  // --- tensor metadata (never fail on a live tensor) --------------------------
  int32_t (*tensor_ndim)(const gx_tensor* t);
  const int64_t* (*tensor_sizes)(const gx_tensor* t);
  const int64_t* (*tensor_strides)(const gx_tensor* t);
  int64_t (*tensor_numel)(const gx_tensor* t);
  gx_dtype (*tensor_dtype)(const gx_tensor* t);
  gx_device (*tensor_device)(const gx_tensor* t);
  // Address of element [0, 0, ...], storage offset applied.
  void* (*tensor_data)(const gx_tensor* t);

  // --- lifetime ---------------------------------------------------------------
  void (*tensor_retain)(gx_tensor* t);
  void (*tensor_release)(gx_tensor* t);

  // --- creation (contiguous; uninitialized memory) -----------------------------
  gx_status (*tensor_empty)(int32_t ndim, const int64_t* sizes, gx_dtype dtype,
                            gx_device device, gx_tensor** out);

  // --- streams ----------------------------------------------------------------
  // The calling thread's current stream for a CUDA device (a cudaStream_t).
  gx_status (*current_stream)(int32_t device_index, void** stream_out);

  // --- errors raised by extensions ---------------------------------------------
  // Sets this thread's error message (what last_error returns); kind is the
  // gx_status the caller is about to return, which picks the JS error class.
  void (*set_error)(gx_status kind, const char* message);

  // --- registration (only inside gx_extension_init_v1) -------------------------
  // Defines an op from its schema, e.g. "add(Tensor a, Tensor b, float alpha=1) -> Tensor".
  // The name is qualified by the library namespace; duplicates are an error.
  gx_status (*def_op)(gx_registrar* reg, const char* ns, const char* schema, const char* doc,
                      int32_t* op_out);
  // Registers the implementation of op `op` (from def_op) for a device type.
  // `signature` is the C++ function's argument and return types in schema
  // spelling ("Tensor,Tensor,float->Tensor"); the core checks it against the
  // schema so a mismatch is an error at load time, not a crash at call time.
  gx_status (*impl_op)(gx_registrar* reg, int32_t op, gx_device_type device, gx_boxed_fn fn,
                       void* ctx, const char* signature);

  // --- more tensor helpers ----------------------------------------------------
  // Sets every element of `t` to zero, on its device's current stream.
  gx_status (*tensor_zero_)(gx_tensor* t);

  // --- 1.1: views, copies and fills (gx::Tensor's methods) -----------------------
  // Storage offset of element [0, ...], in elements.
  int64_t (*tensor_storage_offset)(const gx_tensor* t);
  // A view of base's storage with these sizes, strides and storage offset (in
  // elements); refused when it would reach beyond the storage.
  gx_status (*tensor_view)(const gx_tensor* base, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                           int64_t storage_offset, gx_tensor** out);
  // dst <- src: the same dtype and sizes, any devices and strides (on the
  // current streams; a copy to the CPU waits for the device).
  gx_status (*tensor_copy_)(gx_tensor* dst, const gx_tensor* src);
  // A contiguous copy of t on `device` (also when it is there already).
  gx_status (*tensor_to_device)(const gx_tensor* t, gx_device device, gx_tensor** out);
  // t itself (a new reference) when contiguous, else a contiguous copy.
  gx_status (*tensor_contiguous)(const gx_tensor* t, gx_tensor** out);
  // Every element of t set to `value` converted to t's dtype.
  gx_status (*tensor_fill_)(gx_tensor* t, double value);

  // --- 1.1: calling registered ops (NOTE [ Ops from C++ ] in gpuext/tensor_methods.h) -----
  // The op registered as `qualified_name` ("gx_ops::matmul"); an error when none is.
  gx_status (*find_op)(const char* qualified_name, const gx_op** out);
  // Calls `op` with exactly its schema's arguments (GX_VALUE_NONE takes an
  // argument's default), checked as a call from JS is, on its tensors' device.
  // Returned tensors are new references the caller owns.
  gx_status (*call_op)(const gx_op* op, const gx_value* args, int32_t nargs, gx_value* rets, int32_t nrets);

  // --- 1.1: devices -------------------------------------------------------------
  // The calling thread's current device: the core's current CUDA device, or
  // the CPU in a build without CUDA or on a machine without a GPU.
  gx_device (*current_device)(void);

  // --- 1.1: derivatives beside the schema (NOTE [ Derivatives beside a user's schema ]) ----
  // Declares op `op`'s derivative (only inside gx_extension_init_v1), in
  // derivatives.yaml's form: "x: cube_backward(grad, x)"; the core keeps the
  // text, the JS side reads and checks it when the library loads.
  gx_status (*set_derivative)(gx_registrar* reg, int32_t op, const char* formula);
} gx_api;

#ifdef __cplusplus
}  // extern "C"
#endif
