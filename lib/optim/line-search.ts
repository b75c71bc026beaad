// The strong Wolfe line search of gx.optim.LBFGS, as torch.optim.lbfgs's
// _strong_wolfe and _cubic_interpolate (ported there from torch7's
// lswolfe.lua and polyinterp.lua): bracket an interval holding a step that
// satisfies the strong Wolfe conditions, then zoom into it by cubic
// interpolation. Written to take the same trial steps as torch's, so that
// L-BFGS results agree step for step.
import type { Tensor } from '../tensor';
import { absMax, dot } from './flat';
import { own } from './optimizer';

// Python's min and max of two (the first unless the second is strictly
// smaller / larger), which differ from Math.min / Math.max on NaN.
const pyMin = (a: number, b: number): number => (b < a ? b : a);
const pyMax = (a: number, b: number): number => (b > a ? b : a);

/**
 * The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1
 * and g2, clamped to `bounds` (default: between x1 and x2); their midpoint
 * when the cubic has no minimum.
 */
export function cubicInterpolate(x1: number, f1: number, g1: number, x2: number, f2: number, g2: number, bounds?: readonly [number, number]): number {
  const [lo, hi] = bounds ?? (x1 <= x2 ? [x1, x2] : [x2, x1]);
  const d1 = g1 + g2 - (3 * (f1 - f2)) / (x1 - x2);
  const d2Square = d1 ** 2 - g1 * g2;
  if (d2Square >= 0) {
    const d2 = Math.sqrt(d2Square);
    const minPos = x1 <= x2
      ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
      : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return pyMin(pyMax(minPos, lo), hi);
  }
  return (lo + hi) / 2;
}

/** The loss and flat gradient at the parameters moved by t along the direction (and put back). */
export type ObjectiveFn = (t: number) => [number, Tensor];

export interface LineSearchResult {
  /** The loss at the step found. */
  loss: number;
  /** The flat gradient there: a new tensor, the caller's. */
  flatGrad: Tensor;
  /** The step found. */
  t: number;
  /** How many times the objective was evaluated. */
  evals: number;
}

export interface StrongWolfeOptions {
  c1?: number;
  c2?: number;
  toleranceChange?: number;
  maxLs?: number;
}

/**
 * A step t along `d` from loss `f` (gradient `g`, directional derivative
 * `gtd`) satisfying the strong Wolfe conditions, starting from the trial
 * step `t`. `g` stays the caller's; every gradient `obj` returns becomes the
 * search's, and all but the one returned are freed.
 */
export function strongWolfe(obj: ObjectiveFn, t: number, d: Tensor, f: number, g: Tensor, gtd: number, opts: StrongWolfeOptions = {}): LineSearchResult {
  const { c1 = 1e-4, c2 = 0.9, toleranceChange = 1e-9, maxLs = 25 } = opts;
  // Every gradient made here; those no longer referenced are freed as the search goes.
  const made = new Set<Tensor>();
  const keepOnly = (keep: readonly Tensor[]): void => {
    for (const x of made) {
      if (keep.includes(x)) continue;
      made.delete(x);
      x.dispose();
    }
  };
  const evaluate = (step: number): [number, Tensor, number] => {
    const [loss, grad] = obj(step);
    made.add(grad);
    return [loss, grad, dot(grad, d)];
  };
  try {
    const dNorm = absMax(d);
    const g0 = own(g.clone());
    made.add(g0);
    let [fNew, gNew, gtdNew] = evaluate(t);
    let evals = 1;

    // Bracket an interval containing a point satisfying the Wolfe criteria.
    let tPrev = 0, fPrev = f, gPrev = g0, gtdPrev = gtd;
    let done = false;
    let lsIter = 0;
    let bracket: number[] = [], bracketF: number[] = [], bracketG: Tensor[] = [], bracketGtd: number[] = [];
    while (lsIter < maxLs) {
      if (fNew > f + c1 * t * gtd || (lsIter > 1 && fNew >= fPrev)) {
        [bracket, bracketF, bracketG, bracketGtd] = [[tPrev, t], [fPrev, fNew], [gPrev, gNew], [gtdPrev, gtdNew]];
        break;
      }
      if (Math.abs(gtdNew) <= -c2 * gtd) {
        [bracket, bracketF, bracketG] = [[t], [fNew], [gNew]];
        done = true;
        break;
      }
      if (gtdNew >= 0) {
        [bracket, bracketF, bracketG, bracketGtd] = [[tPrev, t], [fPrev, fNew], [gPrev, gNew], [gtdPrev, gtdNew]];
        break;
      }
      // Interpolate.
      const minStep = t + 0.01 * (t - tPrev);
      const maxStep = t * 10;
      const tmp = t;
      t = cubicInterpolate(tPrev, fPrev, gtdPrev, t, fNew, gtdNew, [minStep, maxStep]);
      // Next step.
      [tPrev, fPrev, gPrev, gtdPrev] = [tmp, fNew, gNew, gtdNew];
      [fNew, gNew, gtdNew] = evaluate(t);
      evals++;
      lsIter++;
      keepOnly([g0, gPrev, gNew]);
    }
    // Reached the most iterations?
    if (lsIter === maxLs) [bracket, bracketF, bracketG] = [[0, t], [f, fNew], [g0, gNew]];

    // Zoom: refine the bracket until a point satisfies the criteria.
    let insufProgress = false;
    let [lowPos, highPos] = bracketF[0] <= bracketF[bracketF.length - 1] ? [0, 1] : [1, 0];
    while (!done && lsIter < maxLs) {
      // The bracket is too small.
      if (Math.abs(bracket[1] - bracket[0]) * dNorm < toleranceChange) break;
      t = cubicInterpolate(bracket[0], bracketF[0], bracketGtd[0], bracket[1], bracketF[1], bracketGtd[1]);
      // Sufficient progress? A t too close to an end of the bracket (or past
      // it), twice in a row, moves to 0.1 of the bracket's length from it.
      const bMax = pyMax(bracket[0], bracket[1]), bMin = pyMin(bracket[0], bracket[1]);
      const eps = 0.1 * (bMax - bMin);
      if (pyMin(bMax - t, t - bMin) < eps) {
        if (insufProgress || t >= bMax || t <= bMin) {
          t = Math.abs(t - bMax) < Math.abs(t - bMin) ? bMax - eps : bMin + eps;
          insufProgress = false;
        } else {
          insufProgress = true;
        }
      } else {
        insufProgress = false;
      }
      [fNew, gNew, gtdNew] = evaluate(t);
      evals++;
      lsIter++;
      if (fNew > f + c1 * t * gtd || fNew >= bracketF[lowPos]) {
        // Armijo condition not satisfied, or not lower than the lowest point.
        bracket[highPos] = t;
        bracketF[highPos] = fNew;
        bracketG[highPos] = gNew;
        bracketGtd[highPos] = gtdNew;
        [lowPos, highPos] = bracketF[0] <= bracketF[1] ? [0, 1] : [1, 0];
      } else {
        if (Math.abs(gtdNew) <= -c2 * gtd) {
          done = true;  // the Wolfe conditions hold
        } else if (gtdNew * (bracket[highPos] - bracket[lowPos]) >= 0) {
          // The old high becomes the new low.
          bracket[highPos] = bracket[lowPos];
          bracketF[highPos] = bracketF[lowPos];
          bracketG[highPos] = bracketG[lowPos];
          bracketGtd[highPos] = bracketGtd[lowPos];
        }
        // The new point becomes the new low.
        bracket[lowPos] = t;
        bracketF[lowPos] = fNew;
        bracketG[lowPos] = gNew;
        bracketGtd[lowPos] = gtdNew;
      }
      keepOnly([g0, ...bracketG]);
    }
    const flatGrad = bracketG[lowPos];
    keepOnly([flatGrad]);
    made.clear();
    return { loss: bracketF[lowPos], flatGrad, t: bracket[lowPos], evals };
  } finally {
    keepOnly([]);
  }
}
