// The strong Wolfe line search of gx.optim.LBFGS, as torch.optim.lbfgs's
// _strong_wolfe and _cubic_interpolate (ported there from torch7's
// lswolfe.lua and polyinterp.lua): bracket an interval holding a step that
// satisfies the strong Wolfe conditions, then zoom into it by cubic
// interpolation. Written to take the same trial steps as torch's, so that
// L-BFGS results agree step for step: its scalars are torch's, tensors or
// Python floats (NOTE [ L-BFGS scalars ] in torch-scalars.ts).
import type { Tensor } from '../tensor';
import { absMax, dot } from './flat';
import { own } from './optimizer';
import type { Num, TorchScalars } from './torch-scalars';

/**
 * The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1
 * and g2, clamped to `bounds` (default: between x1 and x2); their midpoint
 * when the cubic has no minimum. In torch's scalars (NOTE [ L-BFGS scalars ]).
 */
export function cubicInterpolate(S: TorchScalars, x1: Num, f1: number, g1: Num, x2: Num, f2: number, g2: Num, bounds?: readonly [Num, Num]): Num {
  const [lo, hi] = bounds ?? (S.le(x1, x2) ? [x1, x2] : [x2, x1]);
  const d1 = S.sub(S.add(g1, g2), S.div(S.mul(3, S.sub(f1, f2)), S.sub(x1, x2)));
  const d2Square = S.sub(S.mul(d1, d1), S.mul(g1, g2));
  if (S.ge(d2Square, 0)) {
    const d2 = S.sqrt(d2Square);
    const minPos = S.le(x1, x2)
      ? S.sub(x2, S.mul(S.sub(x2, x1), S.div(S.sub(S.add(g2, d2), d1), S.add(S.sub(g2, g1), S.mul(2, d2)))))
      : S.sub(x1, S.mul(S.sub(x1, x2), S.div(S.sub(S.add(g1, d2), d1), S.add(S.sub(g1, g2), S.mul(2, d2)))));
    return S.min(S.max(minPos, lo), hi);
  }
  return S.div(S.add(lo, hi), 2);
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
export function strongWolfe(S: TorchScalars, obj: ObjectiveFn, t: Num, d: Tensor, f: number, g: Tensor, gtd: Num, opts: StrongWolfeOptions = {}): LineSearchResult {
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
  const evaluate = (step: Num): [number, Tensor, Num] => {
    const [loss, grad] = obj(step.v);
    made.add(grad);
    return [loss, grad, S.tensor(dot(grad, d))];
  };
  // f + c1 t gtd < f_new: the Armijo condition fails.
  const armijoFails = (fNew: number, step: Num): boolean => S.gt(fNew, S.add(f, S.mul(S.mul(c1, step), gtd)));
  // |gtd_new| <= -c2 gtd: the curvature condition holds.
  const curvatureHolds = (gtdNew: Num): boolean => S.le(S.abs(gtdNew), S.mul(-c2, gtd));
  try {
    const dNorm = S.tensor(absMax(d));
    const g0 = own(g.clone());
    made.add(g0);
    let [fNew, gNew, gtdNew] = evaluate(t);
    let evals = 1;

    // Bracket an interval containing a point satisfying the Wolfe criteria.
    let tPrev: Num = { v: 0, tensor: false }, fPrev = f, gPrev = g0, gtdPrev = gtd;
    let done = false;
    let lsIter = 0;
    let bracket: Num[] = [], bracketF: number[] = [], bracketG: Tensor[] = [], bracketGtd: Num[] = [];
    while (lsIter < maxLs) {
      if (armijoFails(fNew, t) || (lsIter > 1 && fNew >= fPrev)) {
        [bracket, bracketF, bracketG, bracketGtd] = [[tPrev, t], [fPrev, fNew], [gPrev, gNew], [gtdPrev, gtdNew]];
        break;
      }
      if (curvatureHolds(gtdNew)) {
        [bracket, bracketF, bracketG] = [[t], [fNew], [gNew]];
        done = true;
        break;
      }
      if (S.ge(gtdNew, 0)) {
        [bracket, bracketF, bracketG, bracketGtd] = [[tPrev, t], [fPrev, fNew], [gPrev, gNew], [gtdPrev, gtdNew]];
        break;
      }
      // Interpolate.
      const minStep = S.add(t, S.mul(0.01, S.sub(t, tPrev)));
      const maxStep = S.mul(t, 10);
      const tmp = t;
      t = cubicInterpolate(S, tPrev, fPrev, gtdPrev, t, fNew, gtdNew, [minStep, maxStep]);
      // Next step.
      [tPrev, fPrev, gPrev, gtdPrev] = [tmp, fNew, gNew, gtdNew];
      [fNew, gNew, gtdNew] = evaluate(t);
      evals++;
      lsIter++;
      keepOnly([g0, gPrev, gNew]);
    }
    // Reached the most iterations?
    if (lsIter === maxLs) [bracket, bracketF, bracketG] = [[{ v: 0, tensor: false }, t], [f, fNew], [g0, gNew]];

    // Zoom: refine the bracket until a point satisfies the criteria.
    let insufProgress = false;
    let [lowPos, highPos] = bracketF[0] <= bracketF[bracketF.length - 1] ? [0, 1] : [1, 0];
    while (!done && lsIter < maxLs) {
      // The bracket is too small.
      if (S.lt(S.mul(S.abs(S.sub(bracket[1], bracket[0])), dNorm), toleranceChange)) break;
      t = cubicInterpolate(S, bracket[0], bracketF[0], bracketGtd[0], bracket[1], bracketF[1], bracketGtd[1]);
      // Sufficient progress? A t too close to an end of the bracket (or past
      // it), twice in a row, moves to 0.1 of the bracket's length from it.
      const bMax = S.max(bracket[0], bracket[1]), bMin = S.min(bracket[0], bracket[1]);
      const eps = S.mul(0.1, S.sub(bMax, bMin));
      if (S.lt(S.min(S.sub(bMax, t), S.sub(t, bMin)), eps)) {
        if (insufProgress || S.ge(t, bMax) || S.le(t, bMin)) {
          t = S.lt(S.abs(S.sub(t, bMax)), S.abs(S.sub(t, bMin))) ? S.sub(bMax, eps) : S.add(bMin, eps);
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
      if (armijoFails(fNew, t) || fNew >= bracketF[lowPos]) {
        // Armijo condition not satisfied, or not lower than the lowest point.
        bracket[highPos] = t;
        bracketF[highPos] = fNew;
        bracketG[highPos] = gNew;
        bracketGtd[highPos] = gtdNew;
        [lowPos, highPos] = bracketF[0] <= bracketF[1] ? [0, 1] : [1, 0];
      } else {
        if (curvatureHolds(gtdNew)) {
          done = true;  // the Wolfe conditions hold
        } else if (S.ge(S.mul(gtdNew, S.sub(bracket[highPos], bracket[lowPos])), 0)) {
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
    return { loss: bracketF[lowPos], flatGrad, t: bracket[lowPos].v, evals };
  } finally {
    keepOnly([]);
  }
}
