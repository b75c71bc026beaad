// gx.nn.utils: gradient clipping, as torch.nn.utils: clipGradNorm_ scales every
// .grad in place so that their joint norm is at most maxNorm, and returns
// that norm; clipGradValue_ clamps each element. Both run under gx.noGrad.
//
// NOTE [ Clipping without a sync ]
// As torch does, clipGradNorm_ multiplies every gradient by
// min(1, maxNorm / (total + 1e-6)) computed on the device, instead of reading
// the norm back to decide whether to clip: no host round trip per step (only
// errorIfNonfinite reads it, to throw).
import { noGrad } from '../tape/mode';
import { div, add } from '../generated/elementwise';
import { clamp } from '../ops/elementwise/functions';
import { stack } from '../ops/layout/layout';
import { vectorNorm } from '../ops/linalg/norms';
import { zeros } from '../ops/creation/creation';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';

export interface ClipGradNormOptions {
  /** The norm's order: any p > 0, or Infinity (max |g|) (default 2). */
  normType?: number;
  /** Throw when the total norm is NaN or infinite, instead of scaling by it (default false). */
  errorIfNonfinite?: boolean;
}
const CLIP_KEYS = optionKeys<ClipGradNormOptions>({ normType: true, errorIfNonfinite: true });

/** The tensors of a parameters argument (one tensor, or a list or other iterable of them). */
function paramList(parameters: unknown, fn: string): Tensor[] {
  const list = parameters instanceof Tensor ? [parameters]
    : parameters !== null && typeof parameters === 'object' && Symbol.iterator in parameters ? [...(parameters as Iterable<unknown>)] : null;
  if (list === null) throw new TypeError(`${fn}: argument 'parameters' must be a Tensor or an iterable of tensors, got ${describeValue(parameters)}`);
  list.forEach((p, i) => {
    if (!(p instanceof Tensor)) throw new TypeError(`${fn}: parameters[${i}] must be a Tensor, got ${describeValue(p)}`);
  });
  return list as Tensor[];
}

/**
 * Scales the gradients of `parameters` in place so that their total norm (the norm of all of them as one
 * vector) is at most maxNorm; returns the total norm before clipping, a 0-d tensor on the first gradient's
 * device (yours to dispose). As torch.nn.utils.clip_grad_norm_ (NOTE [ Clipping without a sync ]).
 * @example loss.backward(); gx.nn.utils.clipGradNorm_(model.parameters(), 1.0); opt.step();
 */
export function clipGradNorm_(parameters: Tensor | Iterable<Tensor>, maxNorm: number, opts?: ClipGradNormOptions): Tensor {
  const fn = 'gx.nn.utils.clipGradNorm_';
  const params = paramList(parameters, fn);
  if (typeof maxNorm !== 'number' || Number.isNaN(maxNorm)) throw new TypeError(`${fn}: argument 'maxNorm' must be a number, got ${describeValue(maxNorm)}`);
  const o = checkOptions<ClipGradNormOptions>(opts, fn, CLIP_KEYS);
  const p = o.normType ?? 2;
  const errorIfNonfinite = booleanOption(fn, 'errorIfNonfinite', o.errorIfNonfinite, false);
  if (typeof p !== 'number' || !(p > 0)) throw new RangeError(`${fn}: option 'normType' must be a number > 0 or Infinity, got ${describeValue(p)}`);
  const grads = params.map((q) => q.grad).filter((g): g is Tensor => g !== null);
  if (grads.length === 0) return zeros([]);
  const device = grads[0].device;
  const total = noGrad(() => tidy(() => {
    const norms = grads.map((g) => vectorNorm(g, p).to(device));
    return vectorNorm(stack(norms), p);
  }));
  if (errorIfNonfinite) {
    const v = Number(total.item());
    if (!Number.isFinite(v)) {
      total.dispose();
      throw new Error(`${fn}: the total norm of order ${p} of the gradients is non-finite (${v}), so it cannot be clipped; ` +
        'to scale the gradients by it anyway, leave errorIfNonfinite false');
    }
  }
  noGrad(() => tidy(() => {
    const coef = clamp(div(maxNorm, add(total, 1e-6)), undefined, 1);
    for (const g of grads) g.mul_(g.device.equals(device) ? coef : coef.to(g.device));
  }));
  return total;
}

/** Clamps every gradient element of `parameters` to [-clipValue, clipValue], in place (torch.nn.utils.clip_grad_value_). */
export function clipGradValue_(parameters: Tensor | Iterable<Tensor>, clipValue: number): void {
  const fn = 'gx.nn.utils.clipGradValue_';
  const params = paramList(parameters, fn);
  if (typeof clipValue !== 'number' || !(clipValue >= 0)) throw new RangeError(`${fn}: argument 'clipValue' must be a number >= 0, got ${describeValue(clipValue)}`);
  noGrad(() => {
    for (const q of params) q.grad?.clamp_(-clipValue, clipValue);
  });
}
