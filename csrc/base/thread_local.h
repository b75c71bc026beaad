#pragma once
// NOTE [ Thread-locals of the core ]: the core is a shared library loaded at
// run time, so its thread_locals live in dynamic TLS, and GCC's default model
// for them (global-dynamic) makes every access a call to __tls_get_addr: a
// one-element op made 34 such calls (5% of its time on the CPU). The
// local-dynamic model, right for variables only this library sees, finds the
// library's TLS block once per function and reaches each variable at a fixed
// offset from it. Every thread_local of the core is declared with this macro.
// (A global -ftls-model=local-dynamic would also apply to libstdc++'s own
// thread_locals, which the linker then cannot resolve.)
#define GX_THREAD_LOCAL __attribute__((tls_model("local-dynamic"))) thread_local

namespace gx::core {

// `v`'s address, computed once where it is called: GCC otherwise recomputes a
// thread_local's address (a __tls_get_addr call) at each use, even through a
// reference; the empty asm makes the pointer opaque, so it stays in a register.
template <typename T>
inline T& tls_once(T& v) {
  T* p = &v;
  asm("" : "+r"(p));
  return *p;
}

}  // namespace gx::core
