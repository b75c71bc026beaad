// Calling a registered op with converted arguments: the one path from JS
// (binding/op_functions.cpp) and from C++ extensions (gx_api.call_op), so both
// get the same device checks, dispatch and errors.
#pragma once
#include <cstdint>

#include "core/registry.h"
#include "gpuext/abi.h"

namespace gx::core {

// A schema default as the value an implementation receives (pointing into `d`).
gx_value value_of_default(const DefaultValue& d);

// Checks values from C++ against op's schema as the binding's conversion checks
// JS values: the count, each value's kind (an int where a float goes is
// widened), live tensors, known dtypes; GX_VALUE_NONE takes the argument's
// default, or stays None for an optional one. Errors name the op and the argument.
void check_values(const OpDef& op, gx_value* args, int32_t nargs);

// Picks the device from the tensor arguments (all must agree; the CPU when
// there are none), calls that device's implementation with the dispatch device
// set for gx::current_stream() (and restored after: calls nest), and throws
// "<op>: <message>" when it fails, releasing any tensors it returned.
void invoke_op(const OpDef& op, const gx_value* args, gx_value* rets);

}  // namespace gx::core
