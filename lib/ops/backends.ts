// gx.backends(): which libraries and kernels the ops use on this machine, for
// users asking why a matmul is slow (and for `gpuext doctor`). The CPU matmul
// uses a system BLAS loaded on first use (ops/linalg/blas.h: GPUEXT_BLAS, then
// OpenBLAS, MKL, BLIS, FlexiBLAS, the reference BLAS), else the built-in GEMM;
// the CPU SVD uses LAPACK's gesdd when loaded, else a Jacobi SVD.
import * as ops from '../generated/ops';

export interface CpuBackends {
  /** The BLAS library the CPU matmul calls (its path), or 'built-in kernel (why)'. */
  blas: string;
  /** The LAPACK library the CPU SVD and gx.linalg's decompositions call (its path), or 'built-in Jacobi SVD (why)'. */
  lapack: string;
  /** The instruction set of the built-in GEMM's micro-kernel on this CPU: 'avx512f', 'avx2+fma' or 'generic'. */
  gemmKernel: string;
}

export interface Backends {
  cpu: CpuBackends;
}

/**
 * What the CPU linear algebra runs on (loads the BLAS if it is not loaded yet).
 * @example
 * console.log(gx.backends().cpu.blas);  // '/usr/lib/x86_64-linux-gnu/libopenblas.so.0 (cblas)' or 'built-in kernel (...)'
 */
export function backends(): Backends {
  const fn = 'gx.backends';
  const text = ops.backends(fn);
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) fields.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return { cpu: { blas: fields.get('gemm') ?? '', lapack: fields.get('lapack') ?? '', gemmKernel: fields.get('kernel') ?? '' } };
}

/**
 * Internal (tests and benchmarks): whether the CPU matmul and SVD may use the
 * loaded BLAS / LAPACK; false runs the built-in kernels. Returns the previous
 * setting. GPUEXT_BLAS=none does the same for a whole process.
 */
export function setCpuBlasEnabled(on: boolean): boolean {
  return ops.setCpuBlasEnabled('gx.setCpuBlasEnabled', { on });
}

/**
 * Internal (tests and benchmarks): makes the built-in CPU GEMM use the named
 * micro-kernel ('avx512f', 'avx2+fma', 'generic'; the CPU must support it;
 * '' keeps it) and returns the previous one.
 */
export function setGemmKernel(name: string): string {
  const fn = 'gx.setGemmKernel';
  const was = ops.setGemmKernel(fn, { name: '' });
  ops.setGemmKernel(fn, { name });
  return was;
}

/** The micro-kernels this CPU can run, best first (tried one by one; the one in use is kept). */
export function gemmKernelsAvailable(): string[] {
  const fn = 'gx.gemmKernelsAvailable';
  const now = ops.setGemmKernel(fn, { name: '' });
  const ok: string[] = [];
  try {
    for (const name of ['avx512f', 'avx2+fma', 'generic']) {
      try {
        ops.setGemmKernel(fn, { name });
        ok.push(name);
      } catch {
        // the CPU lacks it
      }
    }
  } finally {
    ops.setGemmKernel(fn, { name: now });
  }
  return ok;
}
