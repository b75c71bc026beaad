// The glibc floor of the prebuilt binaries: linked into gpuext_core.node and
// gx_ops.node only when scripts/prebuild.js builds them (GPUEXT_PREBUILD=1),
// with `-Wl,--wrap=NAME` for every wrapper __wrap_NAME below (scripts/glibc-floor.js
// reads the names from this file: the list is written once, here).
//
// NOTE [ The glibc floor of the prebuilt binaries ]
// A binary linked on a new glibc asks for the newest version of each symbol it
// calls: pthread_* and dl* moved into libc.so.6 at 2.34 with new versions,
// exp/log/pow got new ones at 2.29, stat64 became a function at 2.33, hypot
// at 2.35, and 2.38's headers turn strtol and sscanf into __isoc23_ names;
// and the C++ runtime built there asks for __libc_single_threaded (2.32) and
// arc4random (2.36). The system it loads on then needs that glibc.
// The prebuilds are for the GPU fleet (RHEL 8, Ubuntu 20.04, Amazon Linux
// 2023: glibc 2.28, manylinux_2_28), so:
//   - libstdc++ is linked in (-static-libstdc++, its symbols kept private by
//     --exclude-libs, and -Bsymbolic so the std:: templates our code
//     instantiates bind to our copy, not the process's libstdc++): no
//     GLIBCXX_ version is needed at all. The core and the
//     ops library each hold a copy; they share no C++ object, only the C ABI
//     (csrc/include/gpuext/abi.h), and exceptions stop at that boundary
//     (library.h catches them), so two copies never meet.
//   - libgcc_s stays shared (every glibc system has it): the libgcc_eh.a that
//     -static-libgcc would link, built on glibc >= 2.35, finds unwind tables
//     through _dl_find_object, which no older glibc has and which returns
//     "not found" rather than falling back when shimmed.
//   - every call that would need a version above the floor goes through a
//     wrapper here (the linker's --wrap rewrites the references of our
//     objects and of the static archives, libstdc++.a and libcudart_static.a,
//     alike): GX_PIN jumps to the symbol's baseline version, which every glibc
//     still exports, GX_FORWARD to the older call of another name; the rest
//     are re-implemented on calls the floor has.
// The package check (scripts/check-package.js) reads each binary's needed
// versions and fails above the floor, so a new call that needs more shows.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <sys/random.h>
#include <sys/types.h>
#include <unistd.h>

// The oldest version of the C library's symbols on each architecture.
#if defined(__x86_64__)
#define GX_GLIBC_BASE "GLIBC_2.2.5"
#define GX_GLIBC_DLMOPEN "GLIBC_2.3.4"  // newer than the base here
#define GX_GLIBC_ISOC99 "GLIBC_2.7"
#define GX_JUMP "jmp"
#define GX_PLT "@PLT"
#define GX_STAT_VER 1  // _STAT_VER_LINUX of the x86_64 __xstat64 interface
#elif defined(__aarch64__)
#define GX_GLIBC_BASE "GLIBC_2.17"
#define GX_GLIBC_DLMOPEN "GLIBC_2.17"
#define GX_GLIBC_ISOC99 "GLIBC_2.17"
#define GX_JUMP "b"
#define GX_PLT ""  // the linker routes a branch to a shared symbol through the PLT
#define GX_STAT_VER 0
#else
#error "glibc_floor.cpp: no baseline symbol versions for this architecture"
#endif

// __wrap_FROM: a hidden function that jumps to TO@VERSION (a tail jump:
// arguments, variadic ones included, and the return pass through untouched).
#define GX_FORWARD(from, to, version)                                       \
  __asm__(".symver gx_pinned_" #from ", " #to "@" version "\n"              \
          ".globl __wrap_" #from "\n"                                       \
          ".hidden __wrap_" #from "\n"                                      \
          ".type __wrap_" #from ", @function\n"                             \
          ".text\n"                                                         \
          "__wrap_" #from ":\n"                                             \
          "  " GX_JUMP " gx_pinned_" #from GX_PLT "\n"                      \
          ".size __wrap_" #from ", . - __wrap_" #from "\n")
#define GX_PIN_AT(sym, version) GX_FORWARD(sym, sym, version)
#define GX_PIN(sym) GX_PIN_AT(sym, GX_GLIBC_BASE)

// The dynamic loader's interface (libdl.so.2 before 2.34).
GX_PIN(dlopen);
GX_PIN(dlsym);
GX_PIN(dlvsym);
GX_PIN(dlclose);
GX_PIN(dlerror);
GX_PIN(dladdr);
GX_PIN_AT(dlmopen, GX_GLIBC_DLMOPEN);
// Threads (libpthread.so.0 before 2.34).
GX_PIN(pthread_create);
GX_PIN(pthread_join);
GX_PIN(pthread_detach);
GX_PIN(pthread_kill);
GX_PIN(pthread_once);
GX_PIN(pthread_key_create);
GX_PIN(__pthread_key_create);
GX_PIN(pthread_key_delete);
GX_PIN(pthread_getspecific);
GX_PIN(pthread_setspecific);
GX_PIN(pthread_mutex_trylock);
GX_PIN(pthread_mutexattr_init);
GX_PIN(pthread_mutexattr_destroy);
GX_PIN(pthread_mutexattr_settype);
GX_PIN(pthread_mutexattr_setpshared);
GX_PIN(pthread_condattr_setpshared);
GX_PIN(pthread_rwlock_init);
GX_PIN(pthread_rwlock_destroy);
GX_PIN(pthread_rwlock_rdlock);
GX_PIN(pthread_rwlock_wrlock);
GX_PIN(pthread_rwlock_tryrdlock);
GX_PIN(pthread_rwlock_trywrlock);
GX_PIN(pthread_rwlock_timedrdlock);
GX_PIN(pthread_rwlock_timedwrlock);
GX_PIN(pthread_rwlock_unlock);
GX_PIN(pthread_rwlockattr_init);
GX_PIN(pthread_rwlockattr_destroy);
GX_PIN(pthread_rwlockattr_setpshared);
GX_PIN(pthread_spin_init);
GX_PIN(pthread_spin_destroy);
GX_PIN(pthread_spin_lock);
GX_PIN(pthread_spin_trylock);
GX_PIN(pthread_spin_unlock);
GX_PIN(sem_init);
GX_PIN(sem_destroy);
GX_PIN(sem_post);
GX_PIN(sem_wait);
GX_PIN(sem_trywait);
GX_PIN(sem_timedwait);
// Real-time and shared memory (librt.so.1 before 2.34).
GX_PIN(shm_open);
GX_PIN(shm_unlink);
// libm: new versions at 2.29 (exp, exp2, log, log2, pow) and 2.35 (hypot).
GX_PIN(exp);
GX_PIN(exp2);
GX_PIN(log);
GX_PIN(log2);
GX_PIN(pow);
GX_PIN(hypot);
GX_PIN(hypotf);
// glibc 2.38's headers, under _GNU_SOURCE (which g++ always defines), call
// C23's strtol family and scanf family (they read 0b101 too); before, the
// same calls went to these. Only binary literals parse differently.
GX_FORWARD(__isoc23_strtol, strtol, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_strtoul, strtoul, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_strtoll, strtoll, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_strtoull, strtoull, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_strtoimax, strtoimax, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_strtoumax, strtoumax, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_wcstol, wcstol, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_wcstoul, wcstoul, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_wcstoll, wcstoll, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_wcstoull, wcstoull, GX_GLIBC_BASE);
GX_FORWARD(__isoc23_sscanf, __isoc99_sscanf, GX_GLIBC_ISOC99);
GX_FORWARD(__isoc23_vsscanf, __isoc99_vsscanf, GX_GLIBC_ISOC99);
GX_FORWARD(__isoc23_fscanf, __isoc99_fscanf, GX_GLIBC_ISOC99);
GX_FORWARD(__isoc23_vfscanf, __isoc99_vfscanf, GX_GLIBC_ISOC99);
GX_FORWARD(__isoc23_scanf, __isoc99_scanf, GX_GLIBC_ISOC99);

extern "C" {

// libstdc++ skips atomic reference counts while this is non-zero (glibc 2.32
// sets it in a process that has one thread). Zero: always atomic, right
// everywhere, as libstdc++ behaves on glibcs without it.
__attribute__((visibility("hidden"))) char __wrap___libc_single_threaded = 0;

// stat64/fstat64 became functions at 2.33; before, the headers called these.
int gx_xstat64(int, const char*, void*);
int gx_fxstat64(int, int, void*);
__asm__(".symver gx_xstat64, __xstat64@" GX_GLIBC_BASE);
__asm__(".symver gx_fxstat64, __fxstat64@" GX_GLIBC_BASE);
__attribute__((visibility("hidden"))) int __wrap_stat64(const char* path, void* buf) {
  return gx_xstat64(GX_STAT_VER, path, buf);
}
__attribute__((visibility("hidden"))) int __wrap_fstat64(int fd, void* buf) {
  return gx_fxstat64(GX_STAT_VER, fd, buf);
}
__attribute__((visibility("hidden"))) int __wrap_stat(const char* path, void* buf) {
  return gx_xstat64(GX_STAT_VER, path, buf);
}
__attribute__((visibility("hidden"))) int __wrap_fstat(int fd, void* buf) {
  return gx_fxstat64(GX_STAT_VER, fd, buf);
}

// std::random_device's source on glibc 2.36; getrandom is 2.25.
__attribute__((visibility("hidden"))) uint32_t __wrap_arc4random(void) {
  uint32_t v = 0;
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t n = getrandom(reinterpret_cast<char*>(&v) + got, sizeof v - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
    else if (errno != EINTR) break;  // no entropy source: the bytes read so far
  }
  return v;
}

}  // extern "C"
