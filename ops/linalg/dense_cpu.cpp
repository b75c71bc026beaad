// dense_cpu.h: the loaded LAPACK's routine when there is one, else the
// built-in one in double precision. Empty matrices return at once: LAPACK
// rejects a leading dimension of 0 (and reports it through xerbla, which
// prints).
#include "dense_cpu.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include <gpuext/extension.h>

#include "blas.h"
#include "builtin.h"

namespace gx::ops::dense {
namespace {

// The routine `fn` of the loaded LAPACK for T, when there is one and every size fits its int arguments.
template <typename T, typename Fn>
Fn lapack_routine(Fn blas::Lapack<T>::*fn, std::initializer_list<int64_t> sizes) {
  const blas::Lapack<T>* l = blas::lapack<T>();
  if (l == nullptr) return nullptr;
  for (int64_t s : sizes) {
    if (s > INT_MAX) return nullptr;
  }
  return l->*fn;
}

// A workspace size from a LAPACK query's answer, which comes back as a floating-point number (float32 rounds
// large ones down, hence the margin).
int work_size(double query, const char* routine) {
  const double want = std::ceil(query * (1 + 1e-6)) + 1;
  GX_CHECK(want <= INT_MAX, "LAPACK ", routine, " asked for a workspace of ", want,
           " elements, beyond what its 32-bit sizes can address");
  return static_cast<int>(want);
}

void check_info(int info, const char* routine) {
  // Only invalid arguments give info < 0, and the callers pass valid ones: a mismatched LAPACK if ever seen.
  GX_CHECK(info >= 0, "LAPACK ", routine, " rejected argument ", -info, " (a LAPACK with another interface?)");
}

// The column-major rows x cols matrix a (leading dimension lda) as doubles with leading dimension rows, and back.
template <typename T>
std::vector<double> to_double(const T* a, int64_t rows, int64_t cols, int64_t lda) {
  std::vector<double> d(static_cast<size_t>(rows * cols));
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) d[static_cast<size_t>(r + c * rows)] = static_cast<double>(a[r + c * lda]);
  }
  return d;
}

template <typename T>
void from_double(const std::vector<double>& d, T* a, int64_t rows, int64_t cols, int64_t lda) {
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) a[r + c * lda] = static_cast<T>(d[static_cast<size_t>(r + c * rows)]);
  }
}

// fn(a, lda) on the rows x cols matrix a in double precision: a itself when T is double, else a copy written
// back after (when `write_back`).
template <typename T, typename Fn>
int64_t in_double(T* a, int64_t rows, int64_t cols, int64_t lda, bool write_back, Fn fn) {
  if constexpr (std::is_same_v<T, double>) {
    return fn(a, lda);
  } else {
    std::vector<double> d = to_double(a, rows, cols, lda);
    const int64_t r = fn(d.data(), rows);
    if (write_back) from_double(d, a, rows, cols, lda);
    return r;
  }
}

}  // namespace

template <typename T>
void geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau) {
  const int64_t k = std::min(m, n);
  if (k == 0) return;
  if (auto fn = lapack_routine<T>(&blas::Lapack<T>::geqrf, {m, n, lda})) {
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ldai = static_cast<int>(lda);
    int info = 0, lwork = -1;
    T query = 0;
    fn(&mi, &ni, a, &ldai, tau, &query, &lwork, &info);
    check_info(info, "?geqrf");
    lwork = work_size(static_cast<double>(query), "?geqrf");
    std::vector<T> work(static_cast<size_t>(lwork));
    fn(&mi, &ni, a, &ldai, tau, work.data(), &lwork, &info);
    check_info(info, "?geqrf");
    return;
  }
  std::vector<double> t(static_cast<size_t>(k));
  in_double(a, m, n, lda, true, [&](double* d, int64_t ld) {
    builtin::geqrf(m, n, d, ld, t.data());
    return int64_t{0};
  });
  for (int64_t i = 0; i < k; ++i) tau[i] = static_cast<T>(t[static_cast<size_t>(i)]);
}

template <typename T>
void orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau) {
  if (n == 0) return;
  if (auto fn = lapack_routine<T>(&blas::Lapack<T>::orgqr, {m, n, lda})) {
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k), ldai = static_cast<int>(lda);
    int info = 0, lwork = -1;
    T query = 0;
    fn(&mi, &ni, &ki, a, &ldai, tau, &query, &lwork, &info);
    check_info(info, "?orgqr");
    lwork = work_size(static_cast<double>(query), "?orgqr");
    std::vector<T> work(static_cast<size_t>(lwork));
    fn(&mi, &ni, &ki, a, &ldai, tau, work.data(), &lwork, &info);
    check_info(info, "?orgqr");
    return;
  }
  const std::vector<double> t(tau, tau + k);
  in_double(a, m, n, lda, true, [&](double* d, int64_t ld) {
    builtin::orgqr(m, n, k, d, ld, t.data());
    return int64_t{0};
  });
}

template <typename T>
int64_t potrf(bool upper, int64_t n, T* a, int64_t lda) {
  if (n == 0) return 0;
  if (auto fn = lapack_routine<T>(&blas::Lapack<T>::potrf, {n, lda})) {
    const int ni = static_cast<int>(n), ldai = static_cast<int>(lda);
    const char uplo = upper ? 'U' : 'L';
    int info = 0;
    fn(&uplo, &ni, a, &ldai, &info, 1);
    check_info(info, "?potrf");
    return info;
  }
  return in_double(a, n, n, lda, true, [&](double* d, int64_t ld) { return builtin::potrf(upper, n, d, ld); });
}

template <typename T>
int64_t getrf(int64_t n, T* a, int64_t lda, int* ipiv) {
  if (n == 0) return 0;
  if (auto fn = lapack_routine<T>(&blas::Lapack<T>::getrf, {n, lda})) {
    const int ni = static_cast<int>(n), ldai = static_cast<int>(lda);
    int info = 0;
    fn(&ni, &ni, a, &ldai, ipiv, &info);
    check_info(info, "?getrf");
    return info;
  }
  return in_double(a, n, n, lda, true, [&](double* d, int64_t ld) { return builtin::getrf(n, d, ld, ipiv); });
}

template <typename T>
void getrs(bool trans, int64_t n, int64_t nrhs, const T* a, int64_t lda, const int* ipiv, T* b, int64_t ldb) {
  if (n == 0 || nrhs == 0) return;
  if (auto fn = lapack_routine<T>(&blas::Lapack<T>::getrs, {n, nrhs, lda, ldb})) {
    const int ni = static_cast<int>(n), nr = static_cast<int>(nrhs), ldai = static_cast<int>(lda),
              ldbi = static_cast<int>(ldb);
    const char t = trans ? 'T' : 'N';
    int info = 0;
    fn(&t, &ni, &nr, a, &ldai, ipiv, b, &ldbi, &info, 1);
    check_info(info, "?getrs");
    return;
  }
  if constexpr (std::is_same_v<T, double>) {
    builtin::getrs(trans, n, nrhs, a, lda, ipiv, b, ldb);
  } else {
    const std::vector<double> lu = to_double(a, n, n, lda);
    in_double(b, n, nrhs, ldb, true, [&](double* d, int64_t ld) {
      builtin::getrs(trans, n, nrhs, lu.data(), n, ipiv, d, ld);
      return int64_t{0};
    });
  }
}

template <typename T>
int64_t syevd(bool upper, int64_t n, T* a, int64_t lda, T* w) {
  if (n == 0) return 0;
  if (auto fn = lapack_routine<T>(&blas::Lapack<T>::syevd, {n, lda})) {
    const int ni = static_cast<int>(n), ldai = static_cast<int>(lda);
    const char jobz = 'V', uplo = upper ? 'U' : 'L';
    int info = 0, lwork = -1, liwork = -1, iquery = 0;
    T query = 0;
    fn(&jobz, &uplo, &ni, a, &ldai, w, &query, &lwork, &iquery, &liwork, &info, 1, 1);
    check_info(info, "?syevd");
    lwork = work_size(static_cast<double>(query), "?syevd");
    liwork = iquery > 0 ? iquery : 1;
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    fn(&jobz, &uplo, &ni, a, &ldai, w, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
    check_info(info, "?syevd");
    return info;
  }
  std::vector<double> wd(static_cast<size_t>(n));
  const int64_t info = in_double(a, n, n, lda, true, [&](double* d, int64_t ld) {
    return builtin::syevd(upper, n, d, ld, wd.data());
  });
  for (int64_t i = 0; i < n; ++i) w[i] = static_cast<T>(wd[static_cast<size_t>(i)]);
  return info;
}

#define GX_DENSE_INSTANTIATE(T)                                                                             \
  template void geqrf<T>(int64_t, int64_t, T*, int64_t, T*);                                                \
  template void orgqr<T>(int64_t, int64_t, int64_t, T*, int64_t, const T*);                                 \
  template int64_t potrf<T>(bool, int64_t, T*, int64_t);                                                    \
  template int64_t getrf<T>(int64_t, T*, int64_t, int*);                                                    \
  template void getrs<T>(bool, int64_t, int64_t, const T*, int64_t, const int*, T*, int64_t);               \
  template int64_t syevd<T>(bool, int64_t, T*, int64_t, T*);
GX_DENSE_INSTANTIATE(float)
GX_DENSE_INSTANTIATE(double)
#undef GX_DENSE_INSTANTIATE

}  // namespace gx::ops::dense
