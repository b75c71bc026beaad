// What the derivative formulas of gx.linalg (./linalg-*-backward.ts) share:
// batched transposes, diagonal matrices, and the division that keeps an
// output nobody used out of the gradient.
//
// NOTE [ Linalg gradients of unused outputs ]
// The engine hands a multi-output node zeros for an output that no loss
// reached (it does not say which), where torch passes an undefined gradient
// and its formulas skip that output's terms. The spectral formulas (eigh,
// svd) divide such terms by eigenvalue (singular value) gaps, which are 0
// where eigenvalues repeat: 0 / 0 would make the well-defined gradient of
// the eigenvalues alone NaN. divUnlessZero keeps 0 / x at 0, so a zero
// gradient adds nothing, as in torch; a nonzero one over a zero gap is
// +-Infinity, as in torch (the eigenvector gradient is not defined there).
import { eye } from '../creation/like';
import * as E from '../../generated/elementwise';
import type { Tensor } from '../../core/tensor';
import { whereOp } from '../elementwise/elementwise';

/** The last two axes swapped: each matrix's transpose (a view). */
export const mT = (t: Tensor): Tensor => t.transpose(-1, -2);

/** a / b, and 0 wherever a is 0, whatever b is (NOTE [ Linalg gradients of unused outputs ]). */
export function divUnlessZero(a: Tensor, b: Tensor): Tensor {
  return whereOp(E.eq(a, 0), 0, E.div(a, b), 'autograd');
}

/** v [..., k] as the diagonal matrices [..., k, k] (torch's diag_embed). */
export function diagEmbed(v: Tensor): Tensor {
  const k = v.shape[v.ndim - 1];
  return E.mul(eye(k, { dtype: v.dtype, device: v.device }), v.unsqueeze(-2));
}

/** A - A^T of each matrix. */
export const skew = (a: Tensor): Tensor => E.sub(a, mT(a));
