// The derivatives of gx.scatterReduce's 'amax', 'amin' and 'prod', as
// torch's scatter_reduce_backward (torch/csrc/autograd/FunctionsManual.cpp):
// - amax / amin: the gradient of each place goes to the values that reached
//   its extremum (self's own, and src's), split evenly between ties (with
//   includeSelf false self is no candidate at the scattered places, where
//   torch still counts it in the split when it equals the result);
// - prod: each value gets the product of the others that went into its place,
//   computed without dividing by a zero: self's zeros through the product
//   of the others (self masked to 1), a src zero alone in its place through
//   the product with it masked to 1; with two zeros or more in a place, each
//   one's gradient is 0.
// With includeSelf false, self's scattered places get no gradient. `src` is
// the part of src the op read (index's shape); the caller pads its gradient.
import * as E from '../../generated/elementwise';
import type { Tensor } from '../../core/tensor';
import { allocate } from '../creation/creation';
import { whereOp } from '../elementwise/elementwise';
import { gatherRaw, SCATTER_ADD, SCATTER_ASSIGN, scatterRaw } from './indexing';

const fn = 'autograd';

/** A copy of self with src reduced into it as the forward did (scatter-family.ts owns the reduction). */
export type ReduceCopy = (self: Tensor, src: Tensor) => Tensor;

/** t with 0 at the places index sends src to (self's share when includeSelf is false). */
function zeroAtIndex(t: Tensor, axis: number, index: Tensor): Tensor {
  const zeros = allocate(index.shape, t.dtype, t.device, undefined, fn).fill_(0);
  return scatterRaw(t, axis, index, zeros, SCATTER_ASSIGN, fn);
}

const picked = (t: Tensor, axis: number, index: Tensor): Tensor => gatherRaw(t, axis, index, false, fn);

/** [gSelf, gSrc] of amax / amin. */
export function scatterExtremumBackward(g: Tensor, self: Tensor, src: Tensor, index: Tensor, out: Tensor, axis: number,
  includeSelf: boolean): [Tensor, Tensor] {
  // Without self, self's value at a scattered place is no candidate even when it equals the result (torch still counts
  // it there, giving a lone src half its gradient: finite differences say the whole).
  const hit = E.eq(self, out).astype(g.dtype);
  const selfHit = includeSelf ? hit : zeroAtIndex(hit, axis, index);
  const srcHit = E.eq(src, picked(out, axis, index)).astype(g.dtype);
  const share = E.div(g, scatterRaw(selfHit, axis, index, srcHit, SCATTER_ADD, fn));
  const gSelf = E.mul(selfHit, share);
  return [gSelf, E.mul(srcHit, picked(share, axis, index))];
}

/** [gSelf, gSrc] of prod. */
export function scatterProdBackward(g: Tensor, self: Tensor, src: Tensor, index: Tensor, out: Tensor, axis: number,
  includeSelf: boolean, reduce: ReduceCopy): [Tensor, Tensor] {
  const maskedSelf = whereOp(E.eq(self, 0), 1, self, fn);
  const gSelf = E.div(E.mul(g, reduce(maskedSelf, src)), maskedSelf);
  const srcZero = E.eq(src, 0);
  const zeros = allocate(self.shape, g.dtype, g.device, undefined, fn).fill_(0);
  const zerosInPlace = picked(scatterRaw(zeros, axis, index, srcZero.astype(g.dtype), SCATTER_ADD, fn), axis, index);
  const lone = E.logicalAnd(srcZero, E.eq(zerosInPlace, 1));
  const othersOfLone = picked(E.mul(g, reduce(self, whereOp(lone, 1, src, fn))), axis, index);
  const gSrc = whereOp(lone, othersOfLone, E.div(picked(E.mul(g, out), axis, index), whereOp(srcZero, 1, src, fn)), fn);
  return [includeSelf ? gSelf : zeroAtIndex(gSelf, axis, index), gSrc];
}
