// L-BFGS works on all the parameters as one flat vector (torch's LBFGS does
// the same): the gradients gathered into one 1-d tensor, a step along a flat
// direction written back into each parameter, and the reductions it reads
// as JS numbers. Each helper frees its intermediates; the tensors it returns
// are outside every tidy scope (the caller frees them).
import { zeros } from '../ops/creation/creation';
import { mul } from '../generated/elementwise';
import { cat } from '../ops/layout/layout';
import { sum } from '../ops/reduce/functions';
import { vectorNorm } from '../ops/linalg/norms';
import { copyValues, type Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { own } from './optimizer';

/** Every parameter's .grad (zeros where there is none), flattened and joined: a new tensor. */
export function gatherFlatGrad(params: readonly Tensor[]): Tensor {
  // One parameter (a GLM's coefficients): one copy, without cat's bookkeeping.
  if (params.length === 1 && params[0].grad !== null) return own(tidy(() => (params[0].grad as Tensor).reshape(-1).clone()));
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
  params.forEach((p, i) => copyValues(p, values[i], 'Tensor.copy_'));
}

/**
 * The dot product of two flat vectors. sum(mul): gx.dot's one kernel saves
 * less than its checks and matmul's bookkeeping cost for vectors this short.
 */
export function dot(a: Tensor, b: Tensor): number {
  return tidy(() => Number(sum(mul(a, b)).item()));
}

/** max |a| (torch's a.abs().max()), in one reduction. */
export function absMax(a: Tensor): number {
  return tidy(() => Number(vectorNorm(a, Infinity).item()));
}

/** sum |a|, in one reduction. */
export function absSum(a: Tensor): number {
  return tidy(() => Number(vectorNorm(a, 1).item()));
}
