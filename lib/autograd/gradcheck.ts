// gx.autograd.gradcheck: the analytic Jacobian (one backward per output
// element) against central finite differences (two calls per input
// element), as torch.autograd.gradcheck, with the worst element reported;
// inputs not in float64 draw a warning (NOTE [ gradcheck precision ]).
import { tensor } from '../ops/creation/creation';
import { checkOptions, optionKeys } from '../core/options';
import { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { noGrad } from '../tape/mode';

export interface GradcheckOptions {
  /** Finite-difference step (default 1e-6). */
  eps?: number;
  /** Absolute tolerance (default 1e-5). */
  atol?: number;
  /** Relative tolerance (default 1e-3). */
  rtol?: number;
  /** Throw on a mismatch (default true); else return the report. */
  raiseException?: boolean;
}

/** Where analytic and numeric gradients differ most. */
export interface GradcheckReport {
  ok: boolean;
  /** The largest |analytic - numeric| - rtol |numeric| over every checked element (<= atol when ok). */
  worstExcess: number;
  /** The worst element: which input (its flat index), which output (its flat index), both values. */
  worst?: { input: number; index: number; output: number; outIndex: number; analytic: number; numeric: number };
}

const KEYS = optionKeys<GradcheckOptions>({ eps: true, atol: true, rtol: true, raiseException: true });

type Fn = (...inputs: Tensor[]) => Tensor | Tensor[];

const values = (t: Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number>, Number);

function outputsOf(r: Tensor | Tensor[], api: string): Tensor[] {
  const list = Array.isArray(r) ? r : [r];
  list.forEach((o, i) => { if (!(o instanceof Tensor)) throw new TypeError(`${api}: fn's output ${i} is not a Tensor`); });
  return list;
}

// NOTE [ gradcheck precision ]
// Central differences with eps 1e-6 lose about half the digits of the
// dtype: in float64 some 1e-10 of error, in float32 (7 digits) errors of
// order 1e-1 to 1, far past any tolerance, so a float32 check fails on a
// correct backward. As torch's gradcheck, say so: a warning once per
// process at the first call with such inputs, and the same words in a
// mismatch's error, where the cause is most likely the dtype.
let warnedPrecision = false;

/** Why the inputs that require grad may fail the check for their dtype ('' when all are float64). */
function precisionHint(inputs: readonly Tensor[], checked: readonly number[]): string {
  const low = checked.filter((i) => inputs[i].dtype !== 'float64');
  if (low.length === 0) return '';
  const which = low.map((i) => `input ${i} is ${inputs[i].dtype}`).join(', ');
  return `${which}: finite differences need float64 inputs (in lower precision a correct gradient will likely fail the check); ` +
    'pass x.astype(\'float64\')';
}

/**
 * Checks fn's gradients with respect to its inputs that require grad (use
 * float64) against finite differences.
 * @example gx.autograd.gradcheck((x, w) => gx.matmul(x, w), [x.requiresGrad_(), w.requiresGrad_()]);
 */
export function gradcheck(fn: Fn, inputs: readonly Tensor[], options: GradcheckOptions = {}): GradcheckReport {
  const api = 'gx.autograd.gradcheck';
  const o = checkOptions<GradcheckOptions>(options, api, KEYS);
  const eps = o.eps ?? 1e-6, atol = o.atol ?? 1e-5, rtol = o.rtol ?? 1e-3;
  if (typeof fn !== 'function') throw new TypeError(`${api}: fn must be a function`);
  if (!Array.isArray(inputs) || inputs.some((x) => !(x instanceof Tensor))) throw new TypeError(`${api}: inputs must be an array of Tensors`);
  const checked = inputs.map((x, i) => (x.requiresGrad ? i : -1)).filter((i) => i >= 0);
  if (checked.length === 0) throw new TypeError(`${api}: no input requires grad (call requiresGrad_() on those to check)`);
  const precision = precisionHint(inputs, checked);
  if (precision !== '' && !warnedPrecision) {
    warnedPrecision = true;
    process.emitWarning(`${api}: ${precision}`, { code: 'GPUEXT_GRADCHECK_PRECISION' });
  }
  const report: GradcheckReport = { ok: true, worstExcess: -Infinity };
  const consider = (input: number, index: number, output: number, outIndex: number, analytic: number, numeric: number): void => {
    const excess = Math.abs(analytic - numeric) - rtol * Math.abs(numeric);
    if (!(excess <= report.worstExcess) || Number.isNaN(excess)) {
      report.worstExcess = Number.isNaN(excess) ? Infinity : excess;
      report.worst = { input, index, output, outIndex, analytic, numeric };
    }
  };
  tidy(() => {
    // Analytic: a row of the Jacobian per output element, from one backward with a one-hot gradient.
    const outs = outputsOf(fn(...inputs), api);
    const analytic = outs.map((out) => Array.from({ length: out.numel }, (_, j) => {
      const onehot = new Array<number>(out.numel).fill(0);
      onehot[j] = 1;
      const saved = checked.map((i) => inputs[i].grad);
      checked.forEach((i) => { if (inputs[i].ag) inputs[i].ag.grad = null; });
      if (out.requiresGrad) out.backward(tensor(onehot, { dtype: out.dtype, device: out.device }).reshape(out.shape as number[]), { retainGraph: true });
      const rows = checked.map((i) => (inputs[i].grad === null ? new Array<number>(inputs[i].numel).fill(0) : values(inputs[i].grad as Tensor)));
      checked.forEach((i, k) => { inputs[i].grad = saved[k]; });
      return rows;
    }));
    // Numeric: each input element moved by +-eps.
    checked.forEach((i, k) => {
      const x = inputs[i];
      const base = values(x);
      for (let e = 0; e < base.length; e++) {
        const at = (d: number): number[][] => noGrad(() => tidy(() => {
          const v = base.slice();
          v[e] += d;
          const moved = inputs.slice();
          moved[i] = tensor(v, { dtype: x.dtype, device: x.device }).reshape(x.shape as number[]);
          return outputsOf(fn(...moved), api).map(values);
        }));
        const plus = at(eps), minus = at(-eps);
        plus.forEach((po, oi) => po.forEach((p, j) => consider(i, e, oi, j, analytic[oi][j][k][e], (p - minus[oi][j]) / (2 * eps))));
      }
    });
  });
  report.ok = report.worstExcess <= atol;
  if (!report.ok && o.raiseException !== false) {
    const w = report.worst;
    throw new Error(`${api}: the gradient of output ${w?.output} (element ${w?.outIndex}) with respect to input ${w?.input} (element ${w?.index}) is ` +
      `${w?.analytic} analytically but ${w?.numeric} by finite differences (tolerances atol ${atol}, rtol ${rtol})` +
      (precision === '' ? '' : `; ${precision}`));
  }
  return report;
}
