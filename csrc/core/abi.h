// Access to the core's gx_api table (see NOTE [ Why a C table ] in gpuext/abi.h).
#pragma once
#include "gpuext/abi.h"

namespace gx {
const gx_api* abi_table();
}
