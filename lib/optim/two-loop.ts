// L-BFGS's two-loop recursion (Nocedal and Wright, Algorithm 7.4; torch's
// LBFGS.step): the direction -H g from the last m (step s_i, gradient change
// y_i, ro_i = 1 / y_i.s_i) pairs and the initial Hessian scale.
//
// NOTE [ Two-loop in one launch ]
// Written with ops, each pair costs two dot products and two updates, about
// eleven small kernels: for a model of a few hundred parameters (the GLMs of
// the Dask article) that is a hundred launches an iteration, each far longer
// to issue than to run. On CUDA, when the parameters fit one block's loop
// (ONE_BLOCK_MAX), one kernel does the whole recursion instead: a block of
// THREADS threads, each dot product a shared-memory reduction, the pairs in
// order, in the parameters' dtype as the ops compute (float32 or float64).
// The CPU and larger models take the ops. The kernel is a gx.jit kernel, so
// the CPU simulator runs the same code in the tests.
import { empty, tensor } from '../ops/creation/creation';
import { neg, sub, mul } from '../generated/elementwise';
import { rawkernel, sharedArray, syncthreads, threadIdx, type Array1d, type Array2d, type JitKernel } from '../jit/namespace';
import { sum } from '../ops/reduce/functions';
import { stack } from '../ops/layout/layout';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';

const THREADS = 256;
const HALF = THREADS >> 1;
/** The most parameters the one-block kernel takes (each thread walks n / THREADS of them per pass). */
export const ONE_BLOCK_MAX = 1 << 16;

/** @internal The kernel for one dtype (exported for the tests, which compile its CUDA source). */
export function twoLoopKernel(dtype: 'float32' | 'float64'): JitKernel {
  return rawkernel(function lbfgs_two_loop(S: Array2d, Y: Array2d, ro: Array1d, g: Array1d, al: Array1d, r: Array1d, hDiag: number) {
    const red = sharedArray(THREADS, dtype);
    const tid = threadIdx.x;
    const m = S.shape[0];
    const n = S.shape[1];
    for (let j = tid; j < n; j += THREADS) r[j] = -g[j];
    syncthreads();
    for (let i = m - 1; i >= 0; i--) {
      // al_i = ro_i s_i.q; q -= al_i y_i
      let p = 0.0;
      for (let j = tid; j < n; j += THREADS) p += S[i][j] * r[j];
      red[tid] = p;
      syncthreads();
      for (let w = HALF; w > 0; w = w >> 1) {
        if (tid < w) red[tid] += red[tid + w];
        syncthreads();
      }
      const a = red[0] * ro[i];
      if (tid === 0) al[i] = a;
      for (let j = tid; j < n; j += THREADS) r[j] -= Y[i][j] * a;
      syncthreads();
    }
    for (let j = tid; j < n; j += THREADS) r[j] = r[j] * hDiag;
    syncthreads();
    for (let i = 0; i < m; i++) {
      // be_i = ro_i y_i.r; r += (al_i - be_i) s_i
      let p = 0.0;
      for (let j = tid; j < n; j += THREADS) p += Y[i][j] * r[j];
      red[tid] = p;
      syncthreads();
      for (let w = HALF; w > 0; w = w >> 1) {
        if (tid < w) red[tid] += red[tid + w];
        syncthreads();
      }
      const c = al[i] - red[0] * ro[i];
      for (let j = tid; j < n; j += THREADS) r[j] += S[i][j] * c;
      syncthreads();
    }
  }, { name: `lbfgs_two_loop_${dtype}` });
}

const kernels = new Map<string, JitKernel>();

/** The recursion by one kernel (NOTE [ Two-loop in one launch ]); on a CPU tensor it runs on the simulator. */
export function twoLoopOneLaunch(oldStps: readonly Tensor[], oldDirs: readonly Tensor[], ro: readonly number[], flatGrad: Tensor, hDiag: number): Tensor {
  const dtype = flatGrad.dtype as 'float32' | 'float64';
  let k = kernels.get(dtype);
  if (k === undefined) kernels.set(dtype, (k = twoLoopKernel(dtype)));
  const kernel = k;
  return tidy(() => {
    const { device } = flatGrad;
    const r = empty([flatGrad.numel], { dtype, device });
    kernel([1], [THREADS], [stack(oldStps), stack(oldDirs), tensor(ro as number[], { dtype, device }), flatGrad,
      empty([ro.length], { dtype, device }), r, hDiag]);
    return r;
  });
}

/**
 * The recursion by ops, a few kernels per pair. Its scalars (alpha_i, beta_i)
 * stay on the device as 0-d tensors, as torch's do: no read back to JS waits
 * for the GPU.
 */
export function twoLoopOps(oldStps: readonly Tensor[], oldDirs: readonly Tensor[], ro: readonly number[], flatGrad: Tensor, hDiag: number): Tensor {
  const n = oldDirs.length;
  return tidy(() => {
    const al = new Array<Tensor>(n);
    const q = neg(flatGrad);
    for (let i = n - 1; i >= 0; i--) {
      al[i] = mul(sum(mul(oldStps[i], q)), ro[i]);
      q.sub_(mul(oldDirs[i], al[i]));
    }
    // Multiply by the initial Hessian; r is the direction.
    const r = mul(q, hDiag);
    for (let i = 0; i < n; i++) {
      const be = mul(sum(mul(oldDirs[i], r)), ro[i]);
      r.add_(mul(oldStps[i], sub(al[i], be)));
    }
    return r;
  });
}

/** The direction: one launch on CUDA where it fits (NOTE [ Two-loop in one launch ]), else by ops. */
export function twoLoop(oldStps: readonly Tensor[], oldDirs: readonly Tensor[], ro: readonly number[], flatGrad: Tensor, hDiag: number): Tensor {
  const oneLaunch = flatGrad.device.type === 'cuda' && oldStps.length > 0 && flatGrad.numel <= ONE_BLOCK_MAX &&
    (flatGrad.dtype === 'float32' || flatGrad.dtype === 'float64');
  return (oneLaunch ? twoLoopOneLaunch : twoLoopOps)(oldStps, oldDirs, ro, flatGrad, hDiag);
}
