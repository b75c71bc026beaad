#include "core/extension_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <map>
#include <mutex>

#include "core/abi.h"
#include "base/error.h"

namespace gx::core {
namespace {

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  GX_CHECK_VALUE(::realpath(path.c_str(), buf) != nullptr, "loading extension: no such file '", path,
                 "' (build it with `npx gpuext build`)");
  return buf;
}

// dlopen + ABI check + init. Returns the handle; on failure closes it and throws.
void* open_and_init(const std::string& path, Registrar& reg) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    fail(ErrorKind::Value, "loading extension ", path, ": ", why ? why : "dlopen failed");
  }
  try {
    auto* version = static_cast<const uint32_t*>(::dlsym(handle, "gx_extension_abi_version"));
    auto init = reinterpret_cast<gx_extension_init_fn>(::dlsym(handle, GX_EXTENSION_INIT_SYMBOL));
    GX_CHECK_VALUE(version != nullptr && init != nullptr, "loading extension ", path,
                   ": not a gpuext extension (no ", GX_EXTENSION_INIT_SYMBOL,
                   "); build it with `npx gpuext build`");
    GX_CHECK_VALUE(version[0] == GX_ABI_VERSION_MAJOR && version[1] <= GX_ABI_VERSION_MINOR,
                   "loading extension ", path, ": built for gpuext C ABI ", version[0], ".", version[1],
                   " but this core provides ", GX_ABI_VERSION_MAJOR, ".", GX_ABI_VERSION_MINOR,
                   "; rebuild it with `npx gpuext build`");
    const gx_status st = init(abi_table(), &reg);
    if (st != GX_OK) fail(error_kind_of(st), "loading extension ", path, ": ", abi_last_error());
    // An extension that defines nothing is a mistake (a missing or misspelt
    // block, a source left out of the build): loading it silently gives no ops.
    GX_CHECK_VALUE(!reg.pending().empty(), "loading extension ", path,
                   ": it registers no ops; a `GX_LIBRARY(name, m) { m.def(...); }` block is missing from its sources");
  } catch (...) {
    ::dlclose(handle);
    throw;
  }
  return handle;
}

struct Loaded {
  void* handle;
  std::vector<const OpDef*> ops;
};

}  // namespace

std::vector<const OpDef*> load_extension(const std::string& path) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, Loaded>();  // kept for the process's lifetime
  const std::string real = real_path(path);
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded->find(real);
  if (it != loaded->end()) return it->second.ops;
  Registrar reg(real);
  void* handle = open_and_init(real, reg);
  try {
    std::vector<const OpDef*> ops = reg.commit();
    loaded->emplace(real, Loaded{handle, ops});
    return ops;
  } catch (...) {
    ::dlclose(handle);
    throw;
  }
}

std::unique_ptr<Registrar> describe_extension(const std::string& path) {
  const std::string real = real_path(path);
  auto reg = std::make_unique<Registrar>(real);
  void* handle = open_and_init(real, *reg);
  // The boxed functions point into the library: they are not to be called
  // after this; only the schemas and docs are read.
  ::dlclose(handle);
  return reg;
}

}  // namespace gx::core
