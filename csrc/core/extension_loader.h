// Loading extensions: dlopen a built .node file, check its ABI version, run
// its registration (gx_extension_init_v1) against a Registrar.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/registry.h"

namespace gx::core {

// Loads the extension at `path` once per process (later calls with the same
// file return the same ops) and registers its ops.
std::vector<const OpDef*> load_extension(const std::string& path);

// Runs the extension's registration without registering anything, for the
// build toolkit's code generation. The library is unloaded again.
std::unique_ptr<Registrar> describe_extension(const std::string& path);

}  // namespace gx::core
