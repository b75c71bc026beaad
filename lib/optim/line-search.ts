// The strong Wolfe line search of gx.optim.LBFGS, as torch.optim.lbfgs's
// _strong_wolfe and _cubic_interpolate (ported there from torch7's
// lswolfe.lua and polyinterp.lua): bracket an interval holding a step that
// satisfies the strong Wolfe conditions, then zoom into it by cubic
// interpolation. Written to take the same trial steps as torch's, so that
// L-BFGS results agree step for step: its scalars are torch's, tensors or
// Python floats (NOTE [ L-BFGS scalars ] in torch-scalars.ts).
import type { Tensor } from '../core/tensor';
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
  const search = new WolfeSearch(S, obj, d, f, gtd, { c1, c2, toleranceChange, maxLs });
  try {
    const g0 = own(g.clone());
    search.made.add(g0);
    const b = search.bracket(t, g0);
    const lowPos = search.zoom(b, g0);
    const flatGrad = b.g[lowPos];
    search.keepOnly([flatGrad]);
    search.made.clear();
    return { loss: b.f[lowPos], flatGrad, t: b.t[lowPos].v, evals: search.evals };
  } finally {
    search.keepOnly([]);
  }
}

/** An interval of steps (or the one step found): each end's step, loss, gradient and directional derivative. */
interface Bracket {
  t: Num[];
  f: number[];
  g: Tensor[];
  gtd: Num[];
  /** A step satisfying the strong Wolfe conditions is found. */
  done: boolean;
}

/** The state of one search: the gradients it made, the evaluations and iterations so far. */
class WolfeSearch {
  /** Every gradient made here; those no longer referenced are freed as the search goes. */
  readonly made = new Set<Tensor>();
  evals = 0;
  #lsIter = 0;
  readonly #S: TorchScalars;
  readonly #obj: ObjectiveFn;
  readonly #d: Tensor;
  readonly #f: number;
  readonly #gtd: Num;
  readonly #opts: Required<StrongWolfeOptions>;

  constructor(S: TorchScalars, obj: ObjectiveFn, d: Tensor, f: number, gtd: Num, opts: Required<StrongWolfeOptions>) {
    this.#S = S;
    this.#obj = obj;
    this.#d = d;
    this.#f = f;
    this.#gtd = gtd;
    this.#opts = opts;
  }

  keepOnly(keep: readonly Tensor[]): void {
    for (const x of this.made) {
      if (keep.includes(x)) continue;
      this.made.delete(x);
      x.dispose();
    }
  }

  #evaluate(step: Num): [number, Tensor, Num] {
    const [loss, grad] = this.#obj(step.v);
    this.made.add(grad);
    this.evals++;
    return [loss, grad, this.#S.tensor(dot(grad, this.#d))];
  }

  /** f + c1 t gtd < f_new: the Armijo condition fails. */
  #armijoFails(fNew: number, step: Num): boolean {
    const S = this.#S;
    return S.gt(fNew, S.add(this.#f, S.mul(S.mul(this.#opts.c1, step), this.#gtd)));
  }

  /** |gtd_new| <= -c2 gtd: the curvature condition holds. */
  #curvatureHolds(gtdNew: Num): boolean {
    const S = this.#S;
    return S.le(S.abs(gtdNew), S.mul(-this.#opts.c2, this.#gtd));
  }

  /** Brackets an interval containing a point satisfying the Wolfe criteria, from the trial step t. */
  bracket(t: Num, g0: Tensor): Bracket {
    const S = this.#S;
    const maxLs = this.#opts.maxLs;
    let [fNew, gNew, gtdNew] = this.#evaluate(t);
    let tPrev: Num = { v: 0, tensor: false }, fPrev = this.#f, gPrev = g0, gtdPrev = this.#gtd;
    while (this.#lsIter < maxLs) {
      if (this.#armijoFails(fNew, t) || (this.#lsIter > 1 && fNew >= fPrev)) {
        return { t: [tPrev, t], f: [fPrev, fNew], g: [gPrev, gNew], gtd: [gtdPrev, gtdNew], done: false };
      }
      if (this.#curvatureHolds(gtdNew)) return { t: [t], f: [fNew], g: [gNew], gtd: [], done: true };
      if (S.ge(gtdNew, 0)) return { t: [tPrev, t], f: [fPrev, fNew], g: [gPrev, gNew], gtd: [gtdPrev, gtdNew], done: false };
      // Interpolate.
      const minStep = S.add(t, S.mul(0.01, S.sub(t, tPrev)));
      const maxStep = S.mul(t, 10);
      const tmp = t;
      t = cubicInterpolate(S, tPrev, fPrev, gtdPrev, t, fNew, gtdNew, [minStep, maxStep]);
      // Next step.
      [tPrev, fPrev, gPrev, gtdPrev] = [tmp, fNew, gNew, gtdNew];
      [fNew, gNew, gtdNew] = this.#evaluate(t);
      this.#lsIter++;
      this.keepOnly([g0, gPrev, gNew]);
    }
    // Reached the most iterations.
    return { t: [{ v: 0, tensor: false }, t], f: [this.#f, fNew], g: [g0, gNew], gtd: [], done: false };
  }

  /** Refines the bracket until a point satisfies the criteria; returns the index of its low end. */
  zoom(b: Bracket, g0: Tensor): number {
    const S = this.#S;
    const { toleranceChange, maxLs } = this.#opts;
    const dNorm = S.tensor(absMax(this.#d));
    let insufProgress = false;
    let [lowPos, highPos] = b.f[0] <= b.f[b.f.length - 1] ? [0, 1] : [1, 0];
    while (!b.done && this.#lsIter < maxLs) {
      // The bracket is too small.
      if (S.lt(S.mul(S.abs(S.sub(b.t[1], b.t[0])), dNorm), toleranceChange)) break;
      let t = cubicInterpolate(S, b.t[0], b.f[0], b.gtd[0], b.t[1], b.f[1], b.gtd[1]);
      [t, insufProgress] = this.#safeguard(t, b, insufProgress);
      const [fNew, gNew, gtdNew] = this.#evaluate(t);
      this.#lsIter++;
      if (this.#armijoFails(fNew, t) || fNew >= b.f[lowPos]) {
        // Armijo condition not satisfied, or not lower than the lowest point.
        setEnd(b, highPos, t, fNew, gNew, gtdNew);
        [lowPos, highPos] = b.f[0] <= b.f[1] ? [0, 1] : [1, 0];
      } else {
        if (this.#curvatureHolds(gtdNew)) {
          b.done = true;  // the Wolfe conditions hold
        } else if (S.ge(S.mul(gtdNew, S.sub(b.t[highPos], b.t[lowPos])), 0)) {
          // The old high becomes the new low.
          setEnd(b, highPos, b.t[lowPos], b.f[lowPos], b.g[lowPos], b.gtd[lowPos]);
        }
        // The new point becomes the new low.
        setEnd(b, lowPos, t, fNew, gNew, gtdNew);
      }
      this.keepOnly([g0, ...b.g]);
    }
    return lowPos;
  }

  /**
   * Sufficient progress? A t too close to an end of the bracket (or past
   * it), twice in a row, moves to 0.1 of the bracket's length from it.
   */
  #safeguard(t: Num, b: Bracket, insufProgress: boolean): [Num, boolean] {
    const S = this.#S;
    const bMax = S.max(b.t[0], b.t[1]), bMin = S.min(b.t[0], b.t[1]);
    const eps = S.mul(0.1, S.sub(bMax, bMin));
    if (!S.lt(S.min(S.sub(bMax, t), S.sub(t, bMin)), eps)) return [t, false];
    if (insufProgress || S.ge(t, bMax) || S.le(t, bMin)) {
      return [S.lt(S.abs(S.sub(t, bMax)), S.abs(S.sub(t, bMin))) ? S.sub(bMax, eps) : S.add(bMin, eps), false];
    }
    return [t, true];
  }
}

function setEnd(b: Bracket, at: number, t: Num, f: number, g: Tensor, gtd: Num): void {
  b.t[at] = t;
  b.f[at] = f;
  b.g[at] = g;
  b.gtd[at] = gtd;
}
