// gx.optim.LBFGS: limited-memory BFGS, step for step as torch.optim.LBFGS
// (itself after minFunc): the two-loop recursion over the last historySize
// (step, gradient change) pairs for the direction, a fixed step or the strong
// Wolfe line search (line-search.ts) for its length, and torch's termination
// rules. One step runs up to maxIter iterations, calling the closure each
// time it needs the loss and gradient, each line search bounded by the
// maxEval calls less those made so far (torch's max_ls). The parameters are one flat vector
// (flat.ts); the scalars its decisions read (dot products, ro, the Hessian
// scale) are JS numbers rounded as torch's are (NOTE [ L-BFGS scalars ] in
// torch-scalars.ts); the two-loop recursion's stay on the device, in one
// kernel on CUDA for models that fit one block (two-loop.ts).
import { neg, sub, mul } from '../generated/elementwise';
import { copyValues, type Tensor } from '../core/tensor';
import { noGrad } from '../tape/mode';
import { checkOptions, optionKeys } from '../core/options';
import { callClosure, requireClosure, lossValue, releaseLoss, type Loss } from './closure';
import { absMax, absSum, addGrad, cloneParams, dot, gatherFlatGrad, setParams } from './flat';
import { learningRate, number, positiveInt } from './hyper';
import { strongWolfe, type LineSearchResult, type StrongWolfeOptions } from './line-search';
import { twoLoop } from './two-loop';
import { TorchScalars, type Num } from './torch-scalars';
import { Optimizer, own, withDefaults, type ParamGroup, type ParamState } from './optimizer';
import type { Params, ParamGroupSpec } from './params';
import type { StateSpec } from './state-check';

export interface LBFGSOptions {
  /** Learning rate: the step length tried first (default 1). */
  lr?: number;
  /** Most iterations per step() (default 20). */
  maxIter?: number;
  /** Most closure calls per step() (default maxIter * 1.25, rounded down; null too, as torch's max_eval=None). */
  maxEval?: number;
  /** Stop when max |gradient| is at most this (default 1e-7). */
  toleranceGrad?: number;
  /** Stop when the loss or the parameters change less than this (default 1e-9). */
  toleranceChange?: number;
  /** How many past updates approximate the inverse Hessian (default 100). */
  historySize?: number;
  /** 'strong_wolfe' for a line search, or null for fixed steps of lr (default null). */
  lineSearchFn?: 'strong_wolfe' | null;
}

const KEYS = optionKeys<LBFGSOptions>({
  lr: true, maxIter: true, maxEval: true, toleranceGrad: true, toleranceChange: true, historySize: true, lineSearchFn: true,
});

/**
 * L-BFGS (torch.optim.LBFGS). `step(closure)` needs the closure: it zeroes
 * the gradients, computes the loss, calls backward() and returns the loss;
 * step returns the loss of its first call. All parameters share one device
 * and dtype, in one param group. State (on the first parameter, as torch
 * keeps it): funcEvals, nIter, d, t, oldDirs, oldStps, ro, hDiag,
 * prevFlatGrad, prevLoss. Memory: about (2 * historySize + 3) copies of the
 * parameters.
 * @example
 * const opt = new gx.optim.LBFGS([x], { lineSearchFn: 'strong_wolfe' });
 * const loss = opt.step(() => { opt.zeroGrad(); const l = f(x); l.backward(); return l; });
 */
export class LBFGS extends Optimizer<LBFGSOptions> {
  constructor(params: Params<LBFGSOptions>, opts: LBFGSOptions = {}) {
    const fn = 'gx.optim.LBFGS';
    const o = checkOptions<LBFGSOptions>(opts, fn, KEYS);
    const maxIter = o.maxIter === undefined ? 20 : o.maxIter;
    // maxEval null is its default, as torch's max_eval=None; lineSearchFn null is none, its default.
    const maxEval = o.maxEval ?? Math.floor((typeof maxIter === 'number' ? maxIter : 0) * 5 / 4);
    super('LBFGS', params, withDefaults({ ...o, maxEval }, {
      lr: 1, maxIter, maxEval, toleranceGrad: 1e-7, toleranceChange: 1e-9, historySize: 100, lineSearchFn: null,
    }), KEYS);
    if (this.paramGroups.length !== 1) throw new Error(`${fn}: LBFGS doesn't support per-parameter options (parameter groups); pass one list of tensors`);
    const ps = this.paramGroups[0].params;
    ps.forEach((p, i) => {
      if (!p.device.equals(ps[0].device) || p.dtype !== ps[0].dtype) {
        throw new Error(`${fn}: all parameters must be on one device and of one dtype: params[${i}] is ${p.dtype} on ${String(p.device)}, ` +
          `params[0] ${ps[0].dtype} on ${String(ps[0].device)}`);
      }
    });
  }

  protected checkGroup(fn: string, g: Required<LBFGSOptions>): void {
    learningRate(fn, g.lr);
    positiveInt(fn, 'maxIter', g.maxIter);
    positiveInt(fn, 'maxEval', g.maxEval);
    number(fn, 'toleranceGrad', g.toleranceGrad);
    number(fn, 'toleranceChange', g.toleranceChange);
    positiveInt(fn, 'historySize', g.historySize);
    if (g.lineSearchFn !== null && g.lineSearchFn !== 'strong_wolfe') {
      throw new RangeError(`${fn}: lineSearchFn: only 'strong_wolfe' is supported (or null for none), got ${JSON.stringify(g.lineSearchFn)}`);
    }
  }

  /** L-BFGS's state is on the first parameter (as torch keeps it), its vectors flat over all of them. */
  protected override stateSpec(index: number): StateSpec {
    return index === 0 ? LBFGS_STATE : {};
  }

  protected updateGroup(): void {
    throw new Error('unreachable: LBFGS.step does its own iterations');
  }

  /** L-BFGS has one param group (torch's does too). */
  override addParamGroup(_group: ParamGroupSpec<LBFGSOptions>): void {
    throw new Error(`${this.where('addParamGroup')}: LBFGS doesn't support per-parameter options (parameter groups)`);
  }

  /**
   * Up to maxIter L-BFGS iterations. `closure` is required: it zeroes the
   * gradients, computes the loss, calls backward() and returns the loss (a
   * one-element tensor or a number). It runs inside gx.tidy with grad
   * recording on; the loss of its first call is returned (yours to
   * dispose), those of later calls are read and freed.
   */
  override step<L extends Loss>(closure: () => L): L;
  /** Without a closure: an error (L-BFGS evaluates the loss many times per step). */
  override step(closure?: undefined): never;
  override step<L extends Loss>(closure?: () => L): L {
    const fn = this.where('step');
    this.checkAlive(fn);
    requireClosure(fn, closure);
    const group = this.paramGroups[0];
    this.checkGroup(fn, group);
    group.params.forEach((p, i) => {
      if (p.isDisposed) throw new Error(`${fn}: params[${i}] was disposed; dispose the optimizer with its parameters`);
    });
    const origLoss = noGrad(() => callClosure(fn, closure));
    try {
      noGrad(() => this.#iterate(fn, group, closure, lossValue(fn, origLoss)));
    } catch (e) {
      releaseLoss(origLoss);
      throw e;
    }
    return origLoss;
  }

  #iterate(fn: string, group: ParamGroup<LBFGSOptions>, closure: () => Loss, firstLoss: number): void {
    const { lr, maxIter, maxEval, toleranceGrad, toleranceChange, lineSearchFn, historySize } = group;
    const params = group.params;
    // L-BFGS's state is global; it lives with the first parameter, as torch's does.
    const st = this.stateOf(params[0]) as LBFGSState;
    const S = new TorchScalars(params[0].dtype);
    st.funcEvals ??= 0;
    st.nIter ??= 0;
    const evaluate = (): number => evaluateLoss(fn, closure);

    let loss = firstLoss;
    let currentEvals = 1;
    st.funcEvals += 1;
    let flatGrad = gatherFlatGrad(params);
    try {
      let optCond = S.le(S.tensor(absMax(flatGrad)), toleranceGrad);
      if (optCond) return;  // optimal already

      let t = st.t ?? lr;
      let hDiag = st.hDiag ?? 1;
      let nIter = 0;
      try {
        while (nIter < maxIter) {
          nIter++;
          st.nIter++;

          hDiag = this.#direction(S, st, flatGrad, loss, t, hDiag, historySize);
          const d = st.d as Tensor;
          const prevLoss = loss;

          // The step length: the first ever is scaled to the gradient (torch's min(1, 1 / sum |g|) * lr, a tensor).
          const t0: Num = st.nIter === 1 ? S.mul(S.min(1, S.div(1, S.tensor(absSum(flatGrad)))), lr) : { v: lr, tensor: false };
          t = t0.v;
          // The directional derivative; below tolerance, stop.
          const gtd = S.tensor(dot(flatGrad, d));
          if (S.gt(gtd, -toleranceChange)) break;

          let lsFuncEvals = 0;
          if (lineSearchFn !== null) {
            // Bounded by the closure calls left in this step, as torch's (max_ls = max_eval - current_evals):
            // at none left it still evaluates its first trial step and keeps the better of it and t = 0.
            const r = lineSearch(S, params, evaluate, t0, d, loss, flatGrad, gtd, { toleranceChange, maxLs: maxEval - currentEvals });
            flatGrad.dispose();
            ({ loss, flatGrad, t, evals: lsFuncEvals } = r);
            addGrad(params, t, d);
            optCond = S.le(S.tensor(absMax(flatGrad)), toleranceGrad);
          } else {
            // A fixed step; the loss and gradient are evaluated again unless this is the last iteration.
            addGrad(params, t, d);
            if (nIter !== maxIter) {
              loss = evaluate();
              const next = gatherFlatGrad(params);
              flatGrad.dispose();
              flatGrad = next;
              optCond = S.le(S.tensor(absMax(flatGrad)), toleranceGrad);
              lsFuncEvals = 1;
            }
          }
          currentEvals += lsFuncEvals;
          st.funcEvals += lsFuncEvals;

          // Stop at the limits, at an optimum, or for lack of progress.
          if (nIter === maxIter || currentEvals >= maxEval || optCond) break;
          if (noProgress(S, d, t, loss, prevLoss, toleranceChange)) break;
        }
      } finally {
        st.t = t;
        st.hDiag = hDiag;
      }
    } finally {
      flatGrad.dispose();
    }
  }

  /**
   * The descent direction into st.d: the gradient's negative at the first
   * iteration, else the two-loop recursion over the history (updated first);
   * keeps this gradient and loss for the next. Returns the Hessian scale.
   */
  #direction(S: TorchScalars, st: LBFGSState, flatGrad: Tensor, loss: number, t: number, hDiag: number, historySize: number): number {
    if (st.nIter === 1) {
      setTensor(st, 'd', neg(flatGrad));
      clearHistory(st);
      hDiag = 1;
    } else {
      hDiag = this.#updateHistory(S, st, flatGrad, t, hDiag, historySize);
      setTensor(st, 'd', twoLoop(st.oldStps as Tensor[], st.oldDirs as Tensor[], st.ro as number[], flatGrad, hDiag));
    }
    if (st.prevFlatGrad == null) setTensor(st, 'prevFlatGrad', flatGrad.clone());
    else copyValues(st.prevFlatGrad, flatGrad, this.where('step'));
    st.prevLoss = loss;
    return hDiag;
  }

  /** Adds the last step and gradient change to the history (when the curvature is positive); returns the new Hessian scale. */
  #updateHistory(S: TorchScalars, st: LBFGSState, flatGrad: Tensor, t: number, hDiag: number, historySize: number): number {
    const y = own(sub(flatGrad, st.prevFlatGrad as Tensor));
    const s = own(mul(st.d as Tensor, t));
    const ys = S.tensor(dot(y, s));
    if (!S.gt(ys, 1e-10)) {
      y.dispose();
      s.dispose();
      return hDiag;
    }
    const oldDirs = st.oldDirs as Tensor[], oldStps = st.oldStps as Tensor[], ro = st.ro as number[];
    if (oldDirs.length === historySize) {
      // Shift the history by one (limited memory).
      oldDirs.shift()?.dispose();
      oldStps.shift()?.dispose();
      ro.shift();
    }
    oldDirs.push(y);
    oldStps.push(s);
    ro.push(S.div(1, ys).v);
    return S.div(ys, S.tensor(dot(y, y))).v;
  }
}

/** The keys of LBFGSState (NOTE [ Loading optimizer state ]). */
const LBFGS_STATE: StateSpec = {
  funcEvals: { kind: 'count' }, nIter: { kind: 'count' }, d: { kind: 'flat' }, t: { kind: 'number' }, oldDirs: { kind: 'flatList' },
  oldStps: { kind: 'flatList' }, ro: { kind: 'numbers' }, hDiag: { kind: 'number' }, prevFlatGrad: { kind: 'flat' }, prevLoss: { kind: 'number' },
};

/** L-BFGS's state, as kept on the first parameter (and given by stateDict()). */
type LBFGSState = ParamState & {
  funcEvals: number;
  nIter: number;
  d?: Tensor;
  t?: number;
  oldDirs?: Tensor[];
  oldStps?: Tensor[];
  ro?: number[];
  hDiag?: number;
  prevFlatGrad?: Tensor;
  prevLoss?: number;
};

/** Calls the closure for its loss, as a number; the loss tensor is released. */
function evaluateLoss(fn: string, closure: () => Loss): number {
  const l = callClosure(fn, closure);
  try {
    return lossValue(fn, l);
  } finally {
    releaseLoss(l);
  }
}

/** The strong-Wolfe search along d from the parameters as they are, which it leaves as it found them. */
function lineSearch(S: TorchScalars, params: Tensor[], evaluate: () => number, t0: Num, d: Tensor, loss: number, flatGrad: Tensor,
  gtd: Num, opts: StrongWolfeOptions): LineSearchResult {
  const xInit = cloneParams(params);
  try {
    const obj = (step: number): [number, Tensor] => {
      addGrad(params, step, d);
      try {
        return [evaluate(), gatherFlatGrad(params)];
      } finally {
        setParams(params, xInit);
      }
    };
    return strongWolfe(S, obj, t0, d, loss, flatGrad, gtd, opts);
  } finally {
    for (const x of xInit) x.dispose();
  }
}

/** torch's d.mul(t).abs().max() <= tolerance (rounding is monotonic, so it is max |d| times t, rounded), or a loss change below it. */
function noProgress(S: TorchScalars, d: Tensor, t: number, loss: number, prevLoss: number, toleranceChange: number): boolean {
  return S.le(S.mul(S.tensor(absMax(d)), t), toleranceChange) || Math.abs(loss - prevLoss) < toleranceChange;
}

function setTensor(st: LBFGSState, key: 'd' | 'prevFlatGrad', value: Tensor): void {
  const prev = st[key];
  if (prev !== undefined && prev !== value && !prev.isDisposed) prev.dispose();
  st[key] = own(value);
}

function clearHistory(st: LBFGSState): void {
  for (const x of [...(st.oldDirs ?? []), ...(st.oldStps ?? [])]) if (!x.isDisposed) x.dispose();
  st.oldDirs = [];
  st.oldStps = [];
  st.ro = [];
}

