// Loading a system BLAS / LAPACK on first use (blas.h, NOTE [ Which BLAS ]).
#include "blas.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace gx::ops::blas {
namespace {

// cblas's enums (CBLAS_ORDER, CBLAS_TRANSPOSE) as the reference cblas.h defines them.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

using CblasS = void (*)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                        const float* b, int ldb, float beta, float* c, int ldc);
using CblasD = void (*)(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                        const double* b, int ldb, double beta, double* c, int ldc);
// Fortran gemm, column-major, every argument by reference; the two trailing
// lengths are the hidden ones gfortran passes for the character arguments
// (C implementations ignore them).
using FortranS = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                          const int*, const float*, const int*, const float*, float*, const int*, size_t, size_t);
using FortranD = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                          const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);

struct Blas {
  CblasS cs = nullptr;
  CblasD cd = nullptr;
  FortranS fs = nullptr;
  FortranD fd = nullptr;
  SgesddFn sgesdd = nullptr;
  DgesddFn dgesdd = nullptr;
  Lapack<float> ls;
  Lapack<double> ld;
  void* lib = nullptr;
  std::string path, lapack_path;
  std::string why_not;  // when no gemm was loaded
  bool ok() const { return cs != nullptr || fs != nullptr; }
};

std::atomic<bool> g_enabled{true};

bool is_none(const char* v) { return v != nullptr && (std::strcmp(v, "none") == 0 || std::strcmp(v, "0") == 0); }

// The file dlopen actually opened (a soname resolves to a path through the loader).
std::string path_of(void* lib, const char* symbol, const std::string& fallback) {
  void* sym = dlsym(lib, symbol);
  Dl_info info;
  if (sym != nullptr && dladdr(sym, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return fallback;
}

template <typename T>
bool call_gemm(const Blas& b, bool ta, bool tb, int m, int n, int k, const T* a, int lda, const T* bp, int ldb, T* c,
               int ldc) {
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (b.cs != nullptr) {
      b.cs(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, one, a, lda, bp, ldb, zero, c, ldc);
      return true;
    }
  } else {
    if (b.cd != nullptr) {
      b.cd(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, one, a, lda, bp, ldb, zero, c, ldc);
      return true;
    }
  }
  // Column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major
  // matrix read column-major is its transpose, so B comes first with the same flags, m and n swapped.
  const char* tA = ta ? "T" : "N";
  const char* tB = tb ? "T" : "N";
  if constexpr (std::is_same_v<T, float>) {
    b.fs(tB, tA, &n, &m, &k, &one, bp, &ldb, a, &lda, &zero, c, &ldc, 1, 1);
  } else {
    b.fd(tB, tA, &n, &m, &k, &one, bp, &ldb, a, &lda, &zero, c, &ldc, 1, 1);
  }
  return true;
}

// A 2 x 2 product with a transpose and a padded leading dimension: a library
// with another integer width or argument order gets it wrong.
template <typename T>
bool probe(const Blas& b) {
  const T a[6] = {1, 2, -1, 3, 4, -1};  // [[1, 2], [3, 4]], ld 3
  const T bt[4] = {5, 7, 6, 8};          // [[5, 6], [7, 8]] stored transposed
  T c[4] = {-1, -1, -1, -1};
  call_gemm<T>(b, false, true, 2, 2, 2, a, 3, bt, 2, c, 2);
  return c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50;
}

bool bind_gemm(void* lib, Blas& b, std::string& why) {
  b = Blas{};
  b.cs = reinterpret_cast<CblasS>(dlsym(lib, "cblas_sgemm"));
  b.cd = reinterpret_cast<CblasD>(dlsym(lib, "cblas_dgemm"));
  if (b.cs == nullptr || b.cd == nullptr) {
    b.cs = nullptr;
    b.cd = nullptr;
    b.fs = reinterpret_cast<FortranS>(dlsym(lib, "sgemm_"));
    b.fd = reinterpret_cast<FortranD>(dlsym(lib, "dgemm_"));
    if (b.fs == nullptr || b.fd == nullptr) {
      why = "has neither cblas_sgemm/cblas_dgemm nor sgemm_/dgemm_";
      return false;
    }
  }
  using ConfigFn = const char* (*)();
  if (auto config = reinterpret_cast<ConfigFn>(dlsym(lib, "openblas_get_config")); config != nullptr) {
    const char* text = config();
    if (text != nullptr && std::strstr(text, "USE64BITINT") != nullptr) {
      why = "is an ILP64 (64-bit integer) build; gpuext calls the 32-bit integer interface";
      return false;
    }
  }
  if (!probe<float>(b) || !probe<double>(b)) {
    why = "computed a 2 x 2 test product wrongly (an ILP64 build under the usual names?)";
    return false;
  }
  return true;
}

// One routine's float and double versions ("s" + name, "d" + name), both or neither.
template <typename Fs, typename Fd>
void bind_pair(void* lib, const char* name, Fs& s, Fd& d) {
  s = reinterpret_cast<Fs>(dlsym(lib, (std::string("s") + name).c_str()));
  d = reinterpret_cast<Fd>(dlsym(lib, (std::string("d") + name).c_str()));
  if (s == nullptr || d == nullptr) {
    s = nullptr;
    d = nullptr;
  }
}

void bind_lapack(void* lib, Blas& b) {
  bind_pair(lib, "gesdd_", b.sgesdd, b.dgesdd);
  if (b.sgesdd == nullptr) return;  // not a LAPACK: the decompositions come from the same library or none
  bind_pair(lib, "geqrf_", b.ls.geqrf, b.ld.geqrf);
  bind_pair(lib, "orgqr_", b.ls.orgqr, b.ld.orgqr);
  bind_pair(lib, "potrf_", b.ls.potrf, b.ld.potrf);
  bind_pair(lib, "getrf_", b.ls.getrf, b.ld.getrf);
  bind_pair(lib, "getrs_", b.ls.getrs, b.ld.getrs);
  bind_pair(lib, "syevd_", b.ls.syevd, b.ld.syevd);
}

Blas load() {
  Blas out;
  const char* env = std::getenv("GPUEXT_BLAS");
  if (is_none(env)) {
    out.why_not = "GPUEXT_BLAS=none";
    return out;
  }
  std::vector<std::string> names;
  if (env != nullptr && *env != '\0') names.push_back(env);
  for (const char* n : {"libopenblas.so.0", "libopenblas.so", "libmkl_rt.so.2", "libmkl_rt.so", "libblis.so.4",
                        "libflexiblas.so.3", "libblas.so.3"}) {
    names.push_back(n);
  }
  std::string errors;
  for (const std::string& name : names) {
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) continue;
    Blas b;
    std::string why;
    if (!bind_gemm(lib, b, why)) {
      errors += (errors.empty() ? "" : "; ") + name + " " + why;
      dlclose(lib);
      continue;
    }
    b.lib = lib;  // stays loaded for the process
    b.path = path_of(lib, b.cs != nullptr ? "cblas_sgemm" : "sgemm_", name);
    out = b;
    break;
  }
  if (!out.ok()) {
    out.why_not = errors.empty() ? "no BLAS library found" : errors;
    if (env != nullptr && *env != '\0' && errors.find(env) == std::string::npos) {
      out.why_not = std::string("GPUEXT_BLAS=") + env + " could not be opened; " + out.why_not;
    }
  }
  // LAPACK: $GPUEXT_LAPACK, the BLAS library itself, then the reference LAPACK's soname.
  const char* lenv = std::getenv("GPUEXT_LAPACK");
  if (is_none(lenv)) return out;
  if (lenv != nullptr && *lenv != '\0') {
    if (void* l = dlopen(lenv, RTLD_NOW | RTLD_LOCAL); l != nullptr) {
      bind_lapack(l, out);
      if (out.sgesdd != nullptr) out.lapack_path = path_of(l, "dgesdd_", lenv);
      else dlclose(l);
    }
  }
  if (out.sgesdd == nullptr && out.lib != nullptr) {
    bind_lapack(out.lib, out);
    if (out.sgesdd != nullptr) out.lapack_path = out.path;
  }
  if (out.sgesdd == nullptr) {
    if (void* l = dlopen("liblapack.so.3", RTLD_NOW | RTLD_LOCAL); l != nullptr) {
      bind_lapack(l, out);
      if (out.sgesdd != nullptr) out.lapack_path = path_of(l, "dgesdd_", "liblapack.so.3");
      else dlclose(l);
    }
  }
  return out;
}

const Blas& loaded() {
  static const Blas b = load();  // thread-safe static initialization; once per process
  return b;
}

}  // namespace

void set_enabled(bool on) { g_enabled.store(on); }
bool enabled() { return g_enabled.load(); }

bool sgemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  if (!enabled()) return false;
  const Blas& l = loaded();
  return l.ok() && call_gemm<float>(l, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

bool dgemm(bool ta, bool tb, int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c,
           int ldc) {
  if (!enabled()) return false;
  const Blas& l = loaded();
  return l.ok() && call_gemm<double>(l, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

SgesddFn sgesdd() { return enabled() ? loaded().sgesdd : nullptr; }
DgesddFn dgesdd() { return enabled() ? loaded().dgesdd : nullptr; }

template <>
const Lapack<float>* lapack<float>() {
  return enabled() && loaded().sgesdd != nullptr ? &loaded().ls : nullptr;
}
template <>
const Lapack<double>* lapack<double>() {
  return enabled() && loaded().dgesdd != nullptr ? &loaded().ld : nullptr;
}

std::string gemm_description() {
  const Blas& l = loaded();
  if (!l.ok()) return "built-in kernel (" + l.why_not + ")";
  if (!enabled()) return "built-in kernel (BLAS turned off; loaded: " + l.path + ")";
  return l.path + (l.cs != nullptr ? " (cblas)" : " (Fortran gemm)");
}

std::string lapack_description() {
  const Blas& l = loaded();
  if (l.sgesdd == nullptr) return "built-in Jacobi SVD (no LAPACK gesdd found)";
  if (!enabled()) return "built-in Jacobi SVD (LAPACK turned off; loaded: " + l.lapack_path + ")";
  return l.lapack_path + " (gesdd)";
}

}  // namespace gx::ops::blas
