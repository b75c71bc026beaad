// L-BFGS works on all the parameters as one flat vector (torch's LBFGS does
// the same): the gradients gathered into one 1-d tensor, a step along a flat
// direction written back into each parameter, and the reductions it reads
// as JS numbers. Each helper frees its intermediates; the tensors it returns
// are outside every tidy scope (the caller frees them).
import { zeros } from '../creation';
import { abs, mul } from '../generated/elementwise';
import { max, sum } from '../ops/index';
import { cat } from '../ops/layout';
import type { Tensor } from '../tensor';
import { tidy } from '../tidy';
import { own } from './optimizer';

/** Every parameter's .grad (zeros where there is none), flattened and joined: a new tensor. */
export function gatherFlatGrad(params: readonly Tensor[]): Tensor {
  return own(tidy(() => cat(params.map((p) => (p.grad === null
    ? zeros([p.numel], { dtype: p.dtype, device: p.device })
    : p.grad.reshape(-1))))));
}

/** p += t * d[its slice], for each parameter in order. */
export function addGrad(params: readonly Tensor[], t: number, d: Tensor): void {
  let offset = 0;
  for (const p of params) {
    const n = p.numel;
    tidy(() => {
      p.add_(mul(d.slice(0, offset, offset + n).reshape(p.shape as number[]), t));
    });
    offset += n;
  }
}

/** Copies of the parameters (to come back to after a trial step). */
export function cloneParams(params: readonly Tensor[]): Tensor[] {
  return params.map((p) => own(p.clone()));
}

/** Writes saved values back into the parameters. */
export function setParams(params: readonly Tensor[], values: readonly Tensor[]): void {
  params.forEach((p, i) => p.copy_(values[i]));
}

/** The dot product of two flat vectors. */
export function dot(a: Tensor, b: Tensor): number {
  return tidy(() => Number(sum(mul(a, b)).item()));
}

/** max |a| (torch's a.abs().max()). */
export function absMax(a: Tensor): number {
  return tidy(() => Number(max(abs(a)).item()));
}

/** sum |a|. */
export function absSum(a: Tensor): number {
  return tidy(() => Number(sum(abs(a)).item()));
}

/** max |a * t| (torch's d.mul(t).abs().max()). */
export function scaledAbsMax(a: Tensor, t: number): number {
  return tidy(() => Number(max(abs(mul(a, t))).item()));
}
