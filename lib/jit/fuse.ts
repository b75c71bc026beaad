// gx.fuse's face: the fuser (fuse-kernel.ts, with acorn, the typer and the
// ops' functor table) is loaded at the first gx.fuse(), not with gpuext
// (NOTE [ Translation cache ]: a program that never fuses pays nothing for it).
import type { Tensor } from '../core/tensor';
import type { ElementwiseKernel } from '../rtc/elementwise';
import type { ReductionKernel } from '../rtc/reduction';
import type { FusedFunction, FuseOptions } from './fuse-kernel';

export type { FusedFunction, FuseOptions };

// eslint-disable-next-line @typescript-eslint/no-require-imports
const fuser = (): typeof import('./fuse-kernel') => require('./fuse-kernel') as typeof import('./fuse-kernel');

/** @internal The kernel a fused function runs for these arguments (any device; undefined when unfused): for tests, which compile its source without a GPU. */
export function fusedKernel(f: object, ...args: (Tensor | number)[]): ElementwiseKernel | ReductionKernel | undefined {
  return fuser().fusedKernel(f, ...args);
}

/**
 * Fuses a function of gx elementwise ops (and at most a final reduction)
 * into one kernel, compiled per input dtypes (cupy.fuse).
 * @example
 * const f = gx.fuse((x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) => gx.add(gx.sin(x), gx.div(gx.cos(y), gx.sqrt(z))));
 * const squaredDiffSum = gx.fuse((x, y) => gx.sum(gx.mul(gx.sub(x, y), gx.sub(x, y))));
 */
export function fuse<F extends (...args: never[]) => Tensor>(fn: F, options: FuseOptions = {}): FusedFunction<F> {
  return fuser().fuse(fn, options);
}
