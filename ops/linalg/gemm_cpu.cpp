// The built-in CPU GEMM (gemm_cpu.h).
//
// NOTE [ Built-in GEMM ]
// The GotoBLAS / BLIS structure: for each NC-wide block of B's columns and
// each KC-deep slice of k, B's block is packed into NR-wide panels (each
// k-step's NR values adjacent) and, per thread, an MC-tall block of A into
// MR-tall panels; a register-blocked MR x NR micro-kernel then runs over the
// panels with the whole tile of C in registers (12 vector accumulators: 6 rows
// of two vectors). Packing reads A and B through arbitrary strides, so the
// kernel itself only sees contiguous, zero-padded panels: edges and views cost
// nothing beyond the packing. The micro-kernel is picked once at run time from
// what the CPU supports (AVX-512F, AVX2 with FMA, else a plain C++ one the
// compiler vectorizes for baseline x86-64), so the ops build needs no
// -march flag (other architectures get the plain one). Threads split the rows
// of C (whole MR panels), or its columns when it has few rows, with
// gx::parallel_for; small products stay on the calling thread. Each k-slice
// adds into C except the first, which stores, so C is never read before it
// is written (no zero fill, and poisoned outputs are fully overwritten).
#include "gemm_cpu.h"

#if defined(__x86_64__)
#define GX_GEMM_X86 1
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>
#include <vector>

#include <gpuext/parallel.h>

namespace gx::ops::gemm {
namespace {

template <typename T>
using Kernel = void (*)(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate);

constexpr int kMR = 6;          // rows of a micro-tile, for every kernel
constexpr int kMaxNR = 32;      // widest micro-tile (AVX-512 float)

#if defined(GX_GEMM_X86)
// The micro-kernel: c[MR x (NV * W)] (=, or += when accumulate) = sum over kc of a-panel column x b-panel row.
#define GX_GEMM_UKERNEL(NAME, T, VEC, W, TARGET, SETZERO, LOADU, STOREU, BCAST, FMADD, ADD)          \
  TARGET void NAME(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate) {          \
    VEC r[kMR][2];                                                                                    \
    _Pragma("GCC unroll 6") for (int i = 0; i < kMR; ++i) {                                           \
      r[i][0] = SETZERO();                                                                            \
      r[i][1] = SETZERO();                                                                            \
    }                                                                                                 \
    for (int64_t p = 0; p < kc; ++p) {                                                                \
      const VEC b0 = LOADU(b), b1 = LOADU(b + (W));                                                   \
      _Pragma("GCC unroll 6") for (int i = 0; i < kMR; ++i) {                                         \
        const VEC av = BCAST(a[i]);                                                                   \
        r[i][0] = FMADD(av, b0, r[i][0]);                                                             \
        r[i][1] = FMADD(av, b1, r[i][1]);                                                             \
      }                                                                                               \
      a += kMR;                                                                                       \
      b += 2 * (W);                                                                                   \
    }                                                                                                 \
    _Pragma("GCC unroll 6") for (int i = 0; i < kMR; ++i) {                                           \
      T* ci = c + i * ldc;                                                                            \
      if (accumulate) {                                                                               \
        STOREU(ci, ADD(r[i][0], LOADU(ci)));                                                          \
        STOREU(ci + (W), ADD(r[i][1], LOADU(ci + (W))));                                              \
      } else {                                                                                        \
        STOREU(ci, r[i][0]);                                                                          \
        STOREU(ci + (W), r[i][1]);                                                                    \
      }                                                                                               \
    }                                                                                                 \
  }

#define GX_AVX512 __attribute__((target("avx512f")))
#define GX_AVX2 __attribute__((target("avx2,fma")))
GX_GEMM_UKERNEL(ukernel_f32_avx512, float, __m512, 16, GX_AVX512, _mm512_setzero_ps, _mm512_loadu_ps, _mm512_storeu_ps,
                _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps)
GX_GEMM_UKERNEL(ukernel_f64_avx512, double, __m512d, 8, GX_AVX512, _mm512_setzero_pd, _mm512_loadu_pd,
                _mm512_storeu_pd, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd)
GX_GEMM_UKERNEL(ukernel_f32_avx2, float, __m256, 8, GX_AVX2, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_storeu_ps,
                _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps)
GX_GEMM_UKERNEL(ukernel_f64_avx2, double, __m256d, 4, GX_AVX2, _mm256_setzero_pd, _mm256_loadu_pd, _mm256_storeu_pd,
                _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd)
#undef GX_GEMM_UKERNEL
#endif  // GX_GEMM_X86

// Baseline x86-64 (SSE2): plain loops over a local tile, which the compiler vectorizes.
template <typename T, int NR>
void ukernel_generic(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate) {
  T r[kMR][NR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < kMR; ++i) {
      const T av = a[i];
      for (int j = 0; j < NR; ++j) r[i][j] += av * b[j];
    }
    a += kMR;
    b += NR;
  }
  for (int i = 0; i < kMR; ++i) {
    T* ci = c + i * ldc;
    for (int j = 0; j < NR; ++j) ci[j] = accumulate ? ci[j] + r[i][j] : r[i][j];
  }
}

template <typename T>
struct Choice {
  Kernel<T> kernel;
  int nr;
};

enum class Isa : int { kAvx512, kAvx2, kGeneric };

Isa best_isa() {
#if defined(GX_GEMM_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kGeneric;
}

// The kernel in use: the best the CPU has, or one set_kernel chose (tests reach every kernel the CPU can run).
std::atomic<int> g_isa{-1};

Isa isa() {
  int i = g_isa.load(std::memory_order_relaxed);
  if (i < 0) {
    i = static_cast<int>(best_isa());
    g_isa.store(i, std::memory_order_relaxed);
  }
  return static_cast<Isa>(i);
}

const char* isa_name(Isa i) {
  switch (i) {
    case Isa::kAvx512: return "avx512f";
    case Isa::kAvx2: return "avx2+fma";
    default: return "generic";
  }
}

template <typename T>
Choice<T> choice() {
#if defined(GX_GEMM_X86)
  if constexpr (std::is_same_v<T, float>) {
    switch (isa()) {
      case Isa::kAvx512: return {ukernel_f32_avx512, 32};
      case Isa::kAvx2: return {ukernel_f32_avx2, 16};
      default: return {ukernel_generic<float, 8>, 8};
    }
  } else {
    switch (isa()) {
      case Isa::kAvx512: return {ukernel_f64_avx512, 16};
      case Isa::kAvx2: return {ukernel_f64_avx2, 8};
      default: return {ukernel_generic<double, 4>, 4};
    }
  }
#else
  if constexpr (std::is_same_v<T, float>) return {ukernel_generic<float, 8>, 8};
  else return {ukernel_generic<double, 4>, 4};
#endif
}

// Block sizes: a KC x NR panel of B stays in L1 (16-32 KiB), an MC x KC block of A in L2, a KC x NC block of B
// in L3 (sized for the 1-2 MiB L2 and tens of MiB L3 of current x86-64 servers).
template <typename T> constexpr int64_t kKC = 256;
template <typename T> constexpr int64_t kMC = std::is_same_v<T, float> ? 144 : 72;
template <typename T> constexpr int64_t kNC = std::is_same_v<T, float> ? 3072 : 2048;

// rows x kc of A (rows <= MC) into MR-tall panels, zero-padded to a whole panel.
template <typename T>
void pack_a(int64_t rows, int64_t kc, const T* a, int64_t rsa, int64_t csa, T* out) {
  for (int64_t r0 = 0; r0 < rows; r0 += kMR) {
    const int64_t h = std::min<int64_t>(kMR, rows - r0);
    const T* src = a + r0 * rsa;
    if (h == kMR && csa == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        for (int i = 0; i < kMR; ++i) out[p * kMR + i] = src[i * rsa + p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int i = 0; i < kMR; ++i) out[p * kMR + i] = i < h ? src[i * rsa + p * csa] : T(0);
      }
    }
    out += kc * kMR;
  }
}

// kc x cols of B, panels [first, last) of NR columns each, zero-padded.
template <typename T>
void pack_b(int64_t kc, int64_t cols, int nr, int64_t first, int64_t last, const T* b, int64_t rsb, int64_t csb,
            T* out) {
  for (int64_t panel = first; panel < last; ++panel) {
    const int64_t c0 = panel * nr;
    const int64_t w = std::min<int64_t>(nr, cols - c0);
    T* dst = out + panel * kc * nr;
    const T* src = b + c0 * csb;
    for (int64_t p = 0; p < kc; ++p) {
      T* d = dst + p * nr;
      const T* s = src + p * rsb;
      if (csb == 1) {
        std::memcpy(d, s, static_cast<size_t>(w) * sizeof(T));
      } else {
        for (int64_t j = 0; j < w; ++j) d[j] = s[j * csb];
      }
      for (int64_t j = w; j < nr; ++j) d[j] = T(0);
    }
  }
}

// A buffer of at least n elements aligned to 64 bytes, kept per thread between calls (the packed blocks are
// megabytes: allocating them each call costs page faults).
template <typename T>
T* scratch(std::vector<T>& v, int64_t n) {
  const size_t want = static_cast<size_t>(n) + 64 / sizeof(T);
  if (v.size() < want) v.assign(want, T(0));
  const uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
  return reinterpret_cast<T*>((p + 63) & ~uintptr_t{63});
}

// NOTE [ Matrix-vector products ]
// A product with one row or one column of C does 1/MR (or 1/NR) of useful work
// in the micro-kernel and packs B (or A) for a single use, so it takes a
// memory-bound path instead: dot products of rows with the vector, or, when
// C's single row runs along B's contiguous rows, a running sum of those rows
// scaled by the vector (axpy form). Both split the outputs between threads.

// y[i * incy] = sum_p A(i, p) x(p) for i < rows: A(i, p) = a[i * rs + p * cs], x(p) = x[p * incx].
template <typename T>
void gemv_dots(int64_t rows, int64_t k, const T* a, int64_t rs, int64_t cs, const T* x, int64_t incx, T* y,
               int64_t incy) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(k, 1));
  gx::parallel_for(0, rows, grain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const T* ai = a + i * rs;
      T sum = 0;
      if (cs == 1 && incx == 1) {
        T acc[8] = {};  // independent partial sums: the compiler vectorizes them (one sum could not be reordered)
        int64_t p = 0;
        for (; p + 8 <= k; p += 8) {
          for (int l = 0; l < 8; ++l) acc[l] += ai[p + l] * x[p + l];
        }
        for (; p < k; ++p) sum += ai[p] * x[p];
        for (int l = 0; l < 8; ++l) sum += acc[l];
      } else {
        for (int64_t p = 0; p < k; ++p) sum += ai[p * cs] * x[p * incx];
      }
      y[i * incy] = sum;
    }
  });
}

// y[j] = sum_p x(p) B(p, j) for j < cols, B's rows contiguous (B(p, j) = b[p * rs + j]), x(p) = x[p * incx].
template <typename T>
void gemv_axpy(int64_t cols, int64_t k, const T* x, int64_t incx, const T* b, int64_t rs, T* y) {
  const int64_t grain = std::max<int64_t>(256, (int64_t{1} << 16) / std::max<int64_t>(k, 1));
  gx::parallel_for(0, cols, grain, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) y[j] = 0;
    for (int64_t p = 0; p < k; ++p) {
      const T xp = x[p * incx];
      const T* bp = b + p * rs;
      for (int64_t j = j0; j < j1; ++j) y[j] += xp * bp[j];
    }
  });
}

}  // namespace

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb,
          int64_t csb, T* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // an empty sum
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  if (n == 1) {  // NOTE [ Matrix-vector products ]
    gemv_dots(m, k, a, rsa, csa, b, rsb, c, ldc);
    return;
  }
  if (m == 1) {
    if (csb == 1) gemv_axpy(n, k, a, csa, b, rsb, c);
    else gemv_dots(n, k, b, csb, rsb, a, csa, c, 1);
    return;
  }
  const Choice<T> ch = choice<T>();  // once per call: the packing and the kernel agree on NR
  const int nr = ch.nr;
  const int64_t KC = kKC<T>, MC = kMC<T>, NC = kNC<T> / nr * nr;
  thread_local std::vector<T> b_buffer;
  const int64_t m_panels = (m + kMR - 1) / kMR;
  for (int64_t jc = 0; jc < n; jc += NC) {
    const int64_t nc = std::min(NC, n - jc);
    const int64_t n_panels = (nc + nr - 1) / nr;
    for (int64_t pc = 0; pc < k; pc += KC) {
      const int64_t kc = std::min(KC, k - pc);
      const bool accumulate = pc > 0;
      T* bp = scratch(b_buffer, n_panels * nr * kc);
      const T* bsrc = b + pc * rsb + jc * csb;
      // Below ~2^17 multiply-adds per chunk, threads cost more than they save.
      const int64_t per_panel = int64_t{kMR} * nc * kc;
      const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 17) / std::max<int64_t>(per_panel, 1));
      gx::parallel_for(0, n_panels, std::max<int64_t>(1, grain * kMR / nr),
                       [&](int64_t p0, int64_t p1) { pack_b(kc, nc, nr, p0, p1, bsrc, rsb, csb, bp); });
      // C's rows [q0, q1) (in MR panels) by this block's columns [j0, j1) (in NR panels).
      const auto run = [&](int64_t q0, int64_t q1, int64_t j0, int64_t j1) {
        thread_local std::vector<T> a_buffer;
        T* ap = scratch(a_buffer, MC * kc);
        alignas(64) T tile[kMR * kMaxNR];
        for (int64_t ic = q0 * kMR; ic < std::min(m, q1 * kMR); ic += MC) {
          const int64_t mc = std::min({MC, m - ic, q1 * kMR - ic});
          pack_a(mc, kc, a + ic * rsa + pc * csa, rsa, csa, ap);
          for (int64_t jr = j0 * nr; jr < std::min(nc, j1 * nr); jr += nr) {
            const int64_t w = std::min<int64_t>(nr, nc - jr);
            const T* bpanel = bp + (jr / nr) * kc * nr;
            for (int64_t ir = 0; ir < mc; ir += kMR) {
              const int64_t h = std::min<int64_t>(kMR, mc - ir);
              T* cij = c + (ic + ir) * ldc + jc + jr;
              const T* apanel = ap + (ir / kMR) * kc * kMR;
              if (h == kMR && w == nr) {
                ch.kernel(kc, apanel, bpanel, cij, ldc, accumulate);
                continue;
              }
              // An edge tile: computed whole into `tile`, then its valid part stored.
              ch.kernel(kc, apanel, bpanel, tile, nr, false);
              for (int64_t i = 0; i < h; ++i) {
                for (int64_t j = 0; j < w; ++j) {
                  cij[i * ldc + j] = accumulate ? cij[i * ldc + j] + tile[i * nr + j] : tile[i * nr + j];
                }
              }
            }
          }
        }
      };
      // Rows are split between threads; when there are too few row panels (a short, wide product), columns are,
      // each thread packing the (small) A block itself.
      const int64_t threads = gx::num_threads();
      if (m_panels < 2 * threads && n_panels >= 2 * threads) {
        const int64_t grain_n = std::max<int64_t>(1, (int64_t{1} << 17) / std::max<int64_t>(m * nr * kc, 1));
        gx::parallel_for(0, n_panels, grain_n, [&](int64_t j0, int64_t j1) { run(0, m_panels, j0, j1); });
      } else {
        gx::parallel_for(0, m_panels, grain, [&](int64_t q0, int64_t q1) { run(q0, q1, 0, n_panels); });
      }
    }
  }
}

template void gemm<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t, int64_t,
                          float*, int64_t);
template void gemm<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*, int64_t,
                           int64_t, double*, int64_t);

const char* kernel_name() { return isa_name(isa()); }

bool set_kernel(const char* name) {
  const Isa best = best_isa();
  for (Isa i : {Isa::kAvx512, Isa::kAvx2, Isa::kGeneric}) {
    if (std::strcmp(name, isa_name(i)) != 0) continue;
    if (static_cast<int>(i) < static_cast<int>(best)) return false;  // the CPU lacks it
    g_isa.store(static_cast<int>(i));
    return true;
  }
  return false;
}

}  // namespace gx::ops::gemm
