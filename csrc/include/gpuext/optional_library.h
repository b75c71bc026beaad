// Finding and dlopen-ing an optional CUDA library when it is first used
// (docs/DESIGN.md decision 7: NVRTC and the driver in the core, cuBLAS and
// cuSOLVER in the built-in ops, anything an extension wants), and per-thread
// handles that outlive their threads. Header-only; not part of the C ABI, and
// not included by gpuext/extension.h (it pulls in <string> and <vector>).
#pragma once
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace gx::optional_library {

// `fn` = the symbol `name` of `lib`; appends the name to `missing` when absent.
template <typename F>
void resolve(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
}

// $env_var, then each name under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
// /usr/local/cuda/lib64 (the toolkit the headers come from), then the bare
// names for the loader's search path.
inline std::vector<std::string> candidates(const char* env_var, const std::vector<const char*>& names) {
  std::vector<std::string> out;
  if (const char* p = std::getenv(env_var); p != nullptr && *p != '\0') out.push_back(p);
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* d = std::getenv(var); d != nullptr && *d != '\0') dirs.push_back(std::string(d) + "/lib64");
  }
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string& d : dirs) {
    for (const char* n : names) out.push_back(d + "/" + n);
  }
  for (const char* n : names) out.push_back(n);
  return out;
}

// Opens the first candidate for which `bind(lib, missing)` resolves every
// symbol; the library stays loaded for the process. Returns false with
// `errors` saying what the candidates that opened lacked.
template <typename Bind>
bool load_first(const std::vector<std::string>& paths, Bind bind, std::string& errors) {
  for (const std::string& path : paths) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) continue;
    std::string missing;
    bind(lib, missing);
    if (missing.empty()) return true;
    errors += "; " + path + " lacks " + missing;
    dlclose(lib);
  }
  return false;
}

// A library's function table, loaded once per process.
template <typename Api>
struct Loaded {
  Api api;
  bool ok = false;
  std::string error;  // why not, when !ok
};

// Loads the first of candidates(env_var, names) whose symbols
// `bind(lib, api, missing)` resolves, once (per Api type); `missing_hint`
// starts the error when none does. A function-local static rather than
// std::call_once, whose pthread_once and TLS writes every call would pay.
template <typename Api, typename Bind>
const Loaded<Api>& load_once(const char* env_var, const std::vector<const char*>& names, Bind bind,
                             const char* missing_hint) {
  static const Loaded<Api> state = [&] {
    Loaded<Api> s;
    std::string errors;
    s.ok = load_first(candidates(env_var, names), [&](void* lib, std::string& missing) { bind(lib, s.api, missing); },
                      errors);
    if (!s.ok) s.error = missing_hint + errors;
    return s;
  }();
  return state;
}

// Library handles per thread and device. A thread's handles go back to a
// shared pool when it exits (no library call at exit, when the driver may be
// going away) and the next thread that needs one takes it; they are never
// destroyed. Entry has `int device` and `void release_to_pool()` (forgets
// per-thread state such as the bound stream).
template <typename Entry>
class HandlePool {
 public:
  // This thread's entry for `device`, else one a finished thread left, else nullptr.
  static Entry* find(int device) {
    for (Entry& e : local().mine) {
      if (e.device == device) return &e;
    }
    std::lock_guard<std::mutex> lock(mutex());
    std::vector<Entry>& pool = shared();
    for (size_t i = 0; i < pool.size(); ++i) {
      if (pool[i].device != device) continue;
      local().mine.push_back(pool[i]);
      pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(i));
      return &local().mine.back();
    }
    return nullptr;
  }
  static Entry& add(const Entry& e) {
    local().mine.push_back(e);
    return local().mine.back();
  }

 private:
  struct Local {
    std::vector<Entry> mine;
    ~Local() {
      std::lock_guard<std::mutex> lock(mutex());
      for (Entry& e : mine) e.release_to_pool();
      shared().insert(shared().end(), mine.begin(), mine.end());
    }
  };
  static Local& local() {
    thread_local Local l;
    return l;
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<Entry>& shared() {
    static std::vector<Entry> v;
    return v;
  }
};

}  // namespace gx::optional_library
