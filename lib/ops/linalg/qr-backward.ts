// The derivative of gx.linalg.qr in its reduced form, as torch's
// linalg_qr_backward (torch/csrc/autograd/FunctionsManual.cpp), for real
// matrices A = Q R [..., m, n] (Walter & Lehmann; Liao et al., arXiv
// 1903.09650). With copyltu(M) = tril(M) + tril(M, -1)^T (M's lower
// triangle mirrored):
//   m >= n: gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q;
//   m < n:  A = Q [X | Y], R = [U | V] (U square): gY = Q gV, and gX as the
//           square case for (Q, U) with gQ + Y gV^T in place of gQ.
// R must be invertible (A of full rank), as torch's formula needs.
import * as E from '../../generated/elementwise';
import type { Tensor } from '../../core/tensor';
import { cat, narrow } from '../layout/layout';
import { matmul } from './matmul';
import { mT } from './backward-common';
import { solveUnrecorded } from './lu-kernels';
import { tril } from './products';

/** tril(M) + tril(M, -1)^T. */
const copyltu = (m: Tensor): Tensor => E.add(tril(m), mT(tril(m, -1)));

/** The m >= n case: gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T. */
function tallBackward(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor, fn: string): Tensor {
  const m = E.sub(matmul(R, mT(gR)), matmul(mT(gQ), Q));
  const b = E.add(gQ, matmul(Q, copyltu(m)));
  return mT(solveUnrecorded(R, mT(b), fn));  // b R^-T = (R^-1 b^T)^T
}

/** gA from the gradients of Q and R (zeros for an unused one) and the saved Q, R of the reduced QR. */
export function qrBackward(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor, fn: string): Tensor {
  const m = Q.shape[Q.ndim - 2], n = R.shape[R.ndim - 1];
  if (m >= n) return tallBackward(gQ, gR, Q, R, fn);
  const last = R.ndim - 1;
  const gU = narrow(gR, last, 0, m), gV = narrow(gR, last, m, n - m);
  const V = narrow(R, last, m, n - m);
  const Y = matmul(Q, V);
  const gX = tallBackward(E.add(gQ, matmul(Y, mT(gV))), gU, Q, narrow(R, last, 0, m), fn);
  return cat([gX, matmul(Q, gV)], last);
}
