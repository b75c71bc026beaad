// The derivative of gx.linalg.svd, torch's svd_backward
// (torch/csrc/autograd/FunctionsManual.cpp) for real matrices A = U diag(S) Vh
// [..., m, n], k = min(m, n), reduced factors:
//   gA = U [ (skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS) ] Vh
//        + (I_m - U U^T) gU S^-1 Vh      (m > n)
//        + U S^-1 gVh (I_n - V V^T)      (m < n)
// with skew(X) = X - X^T and E_ij = S_j^2 - S_i^2. S alone is always
// differentiable (gA = U diag(gS) Vh); U and Vh are defined only up to the
// sign of each singular pair, and their gradient only where the singular
// values are distinct (and nonzero, for the S^-1 terms): a loss that depends
// on those signs has no gradient, and repeated singular values give
// +-Infinity (NOTE [ Linalg gradients of unused outputs ]), as torch's. (For
// complex inputs torch also checks that the loss ignores the phases; real
// singular vectors have only signs, which a continuous loss cannot see
// through finite steps, so there is nothing to check here.)
// With full matrices, the columns of U past k (the rows of Vh past k) are
// any orthonormal completion: their gradient is ignored, as torch's.
import * as E from '../../generated/elementwise';
import type { Tensor } from '../../core/tensor';
import { matmul } from './matmul';
import { diagEmbed, divUnlessZero, mT, skew } from './backward-common';
import { narrow } from '../layout/layout';

/** The first k columns of each matrix (k rows with `rows`). */
const firstK = (t: Tensor, k: number, rows = false): Tensor => narrow(t, t.ndim - (rows ? 2 : 1), 0, k);

/** gA from the gradients of U, S, Vh (zeros for an unused output) and the saved U, S, Vh. */
export function svdBackward(gU: Tensor, gS: Tensor, gVh: Tensor, U: Tensor, S: Tensor, Vh: Tensor): Tensor {
  const m = U.shape[U.ndim - 2], n = Vh.shape[Vh.ndim - 1], k = S.shape[S.ndim - 1];
  const [u, gu, vh, gvh] = [firstK(U, k), firstK(gU, k), firstK(Vh, k, true), firstK(gVh, k, true)];
  const uhgu = skew(matmul(mT(u), gu));
  const vhgv = skew(matmul(vh, mT(gvh)));
  const s2 = E.mul(S, S);
  const gaps = E.sub(s2.unsqueeze(-2), s2.unsqueeze(-1));
  const inner = E.add(divUnlessZero(E.add(E.mul(uhgu, S.unsqueeze(-2)), E.mul(S.unsqueeze(-1), vhgv)), gaps), diagEmbed(gS));
  if (m > n) {
    // [U inner + (I - U U^T) gU S^-1] Vh
    const guSinv = divUnlessZero(gu, S.unsqueeze(-2));
    return matmul(E.add(matmul(u, inner), E.sub(guSinv, matmul(u, matmul(mT(u), guSinv)))), vh);
  }
  if (m < n) {
    // U [inner Vh + S^-1 gVh (I - V V^T)]
    const sinvGvh = divUnlessZero(gvh, S.unsqueeze(-1));
    return matmul(u, E.add(matmul(inner, vh), E.sub(sinvGvh, matmul(matmul(sinvGvh, mT(vh)), vh))));
  }
  return matmul(u, matmul(inner, vh));
}
