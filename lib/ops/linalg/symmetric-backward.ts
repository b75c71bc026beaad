// The derivatives of gx.linalg.cholesky and eigh, as torch's
// (torch/csrc/autograd/FunctionsManual.cpp: cholesky_backward,
// linalg_eig_backward for Hermitian input), for real matrices. Both read one
// triangle of A but, as torch's, return the gradient of the symmetric matrix
// A stands for: a full, unmasked gA (symmetric for cholesky).
import * as E from '../../generated/elementwise';
import type { Tensor } from '../../core/tensor';
import { matmul } from './matmul';
import { diagEmbed, divUnlessZero, mT, skew } from './backward-common';
import { invUnrecorded } from './lu-kernels';
import { tril } from './products';

/**
 * A = L L^T (Iain Murray, arXiv 1602.07527): with P = tril(L^T gL) made
 * symmetric from its lower triangle (its diagonal once, halved),
 * gA = L^-T P L^-1. `upper`: the factor is U = L^T and gU = gL^T.
 */
export function choleskyBackward(g: Tensor, factor: Tensor, upper: boolean, fn: string): Tensor {
  const L = upper ? mT(factor) : factor;
  const gL = upper ? mT(g) : g;
  const lower = tril(matmul(mT(L), gL));
  const p = E.mul(E.add(lower, mT(tril(lower, -1))), 0.5);
  const li = invUnrecorded(L, fn);  // L^-1 by LU: exact pivots on a triangular matrix, well within gradcheck's tolerance
  return matmul(matmul(mT(li), p), li);
}

/**
 * A = V diag(w) V^T: gA = V (skew(V^T gV) / 2 / E + diag(gw)) V^T with
 * E_ij = w_j - w_i. Where eigenvalues repeat, the eigenvectors (and their
 * gradient) are not unique: a nonzero eigenvector gradient there is
 * +-Infinity, as torch's; the eigenvalues' own gradient stays finite
 * (NOTE [ Linalg gradients of unused outputs ]).
 */
export function eighBackward(gw: Tensor, gv: Tensor, w: Tensor, v: Tensor): Tensor {
  const projected = E.mul(skew(matmul(mT(v), gv)), 0.5);
  const gaps = E.sub(w.unsqueeze(-2), w.unsqueeze(-1));
  const inner = E.add(divUnlessZero(projected, gaps), diagEmbed(gw));
  return matmul(matmul(v, inner), mT(v));
}
