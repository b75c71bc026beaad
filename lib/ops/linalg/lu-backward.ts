// The derivatives of gx.linalg.solve, inv, det and slogdet, as torch's
// (torch/csrc/autograd/FunctionsManual.cpp: linalg_solve, inverse,
// linalg_det_backward, slogdet_backward), for real matrices. Each takes the
// output's gradient and the saved tensors it reads, and runs under gx.noGrad
// (every backward does), calling the unrecorded kernels.
import { eye } from '../creation/like';
import * as E from '../../generated/elementwise';
import type { Tensor } from '../../core/tensor';
import { stack } from '../layout/layout';
import { whereOp } from '../elementwise/elementwise';
import { mT } from './backward-common';
import { matmul } from './matmul';
import { detUnrecorded, invUnrecorded, solveUnrecorded } from './lu-kernels';
import { svd } from './svd';
import { REDUCE, reduceOp } from '../reduce/reduction';

/**
 * X = A^-1 B: gB = A^-T gX and gA = -gB X^T. A vector B (and X) is a one-
 * column matrix here; broadcast batch dims are summed back by the engine.
 */
export function solveBackward(g: Tensor, a: Tensor, x: Tensor, vector: boolean, needA: boolean, needB: boolean, fn: string): [Tensor | null, Tensor | null] {
  const gcol = vector ? g.unsqueeze(-1) : g;
  const gb = solveUnrecorded(mT(a), gcol, fn);
  const ga = needA ? E.neg(matmul(gb, mT(vector ? x.unsqueeze(-1) : x))) : null;
  return [ga, needB ? (vector ? gb.squeeze(-1) : gb) : null];
}

/** Y = A^-1: gA = -Y^T gY Y^T. */
export function invBackward(g: Tensor, y: Tensor): Tensor {
  const yt = mT(y);
  return E.neg(matmul(matmul(yt, g), yt));
}

/** g as [..., 1, 1], to scale whole matrices. */
const perMatrix = (g: Tensor): Tensor => g.unsqueeze(-1).unsqueeze(-1);

/**
 * d = det A: gA = g d A^-T (the cofactor matrix times g). Where some A of
 * the batch is singular (d exactly 0, when A^-1 does not exist), torch's SVD
 * form for the whole batch: A = U diag(S) Vh gives
 * gA = g det(U) det(Vh) U diag(prod_{j != i} S_j) Vh, finite at rank n - 1.
 */
export function detBackward(g: Tensor, a: Tensor, d: Tensor, fn: string): Tensor {
  const dets = d.toArraySync() as ArrayLike<number>;
  if (!Array.prototype.some.call(dets, (v: number) => v === 0)) {
    return E.mul(mT(invUnrecorded(a, fn)), perMatrix(E.mul(g, d)));
  }
  return detBackwardSingular(g, a, fn);
}

/** detBackward's SVD form, one matrix at a time (gx.linalg.svd takes one matrix). */
function detBackwardSingular(g: Tensor, a: Tensor, fn: string): Tensor {
  const n = a.shape[a.ndim - 1];
  const count = g.numel;
  const mats = a.reshape([count, n, n]);
  const gs = g.reshape([count]);
  const parts: Tensor[] = [];
  for (let b = 0; b < count; b++) {
    const { U, S, Vh } = svd(mats.sliceDims(b));
    const alpha = E.mul(E.mul(detUnrecorded(U, fn), detUnrecorded(Vh, fn)), gs.sliceDims(b));
    parts.push(matmul(E.mul(U, E.mul(othersProduct(S), alpha).unsqueeze(-2)), Vh));
  }
  return stack(parts).reshape(a.shape as number[]);
}

/** [..., k] -> [..., k]: element i is the product of the other k - 1 elements (no division: exact with zeros). */
function othersProduct(s: Tensor): Tensor {
  const k = s.shape[s.ndim - 1];
  const onDiagonal = E.ne(eye(k, { dtype: s.dtype, device: s.device }), 0);
  return reduceOp(REDUCE.prod, whereOp(onDiagonal, 1, s.unsqueeze(-2), 'autograd'), -1, undefined, 'autograd');
}

/** (sign, log |det A|): the sign has no gradient; g_logabsdet gives gA = g A^-T (A singular: an Error, no inverse). */
export function slogdetBackward(g: Tensor, a: Tensor, fn: string): Tensor {
  return E.mul(mT(invUnrecorded(a, fn)), perMatrix(g));
}
