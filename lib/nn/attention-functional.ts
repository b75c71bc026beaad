// gx.nn.functional.scaledDotProductAttention (torch.nn.functional.
// scaled_dot_product_attention) and the attention core that MultiheadAttention
// shares with it: softmax(q k^T * scale + bias) v, with the built-in softmax
// (one fused kernel per call, its derivative beside it) and composite
// otherwise, so gradients come from the ops'.
//
// NOTE [ Attention masks ]
// torch has two conventions for a bool mask and both are kept, each where
// torch has it: in scaled_dot_product_attention a true element TAKES PART in
// the attention; in MultiheadAttention (attn_mask, key_padding_mask) a true
// element is MASKED OUT. A float mask is added to the scores in both. Each is
// turned into one additive bias (0 or -inf) before the softmax; a row that
// is masked out entirely gives NaN, as in torch.
import { add, gt, mul } from '../generated/elementwise';
import { where } from '../ops/elementwise/functions';
import { arange } from '../ops/creation/creation';
import { checkTensor } from '../ops/common';
import { matmul } from '../ops/linalg/matmul';
import { transpose } from '../ops/layout/layout';
import type { Generator } from '../ops/random/random';
import { dropoutOp } from '../ops/random/sampling';
import { softmax } from '../ops/softmax/softmax';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue, formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { floatingArg, normDtype, normResultDtype } from './args';

const F = 'gx.nn.functional';

export interface ScaledDotProductAttentionOptions {
  /** Shape `[..., L, S]`; bool (true takes part, torch's convention here) or float (added to the scores). */
  attnMask?: Tensor | null;
  /** Dropout on the attention weights (default 0; applied whenever > 0, as torch's functional form). */
  dropoutP?: number;
  /** Mask out key j > query i (the top-left causal mask); refused together with attnMask, as torch. */
  isCausal?: boolean;
  /** The scores' scale (default 1 / sqrt(E), E the last dim of query). */
  scale?: number | null;
  /** Draw the dropout mask from this generator. */
  generator?: Generator;
}
const SDPA_KEYS = optionKeys<ScaledDotProductAttentionOptions>({ attnMask: true, dropoutP: true, isCausal: true, scale: true, generator: true });

/** @internal The additive bias of a mask: a float mask itself, a bool one 0 where it lets through and -inf elsewhere. */
export function maskBias(mask: Tensor, trueMasks: boolean, like: Tensor, fn: string, name: string): Tensor {
  const m = checkTensor(mask, fn, name);
  if (m.dtype === 'bool') return trueMasks ? where(m, -Infinity, 0).astype(like.dtype) : where(m, 0, -Infinity).astype(like.dtype);
  floatingArg(m, fn, name);
  return m;
}

/** @internal The causal bias of L queries over S keys: -inf where key j > query i. */
export function causalBias(L: number, S: number, like: Tensor): Tensor {
  return tidy(() => {
    const later = gt(arange(S, { dtype: 'int64', device: like.device }).reshape([1, S]), arange(L, { dtype: 'int64', device: like.device }).reshape([L, 1]));
    return where(later, -Infinity, 0).astype(like.dtype);
  });
}

/**
 * @internal softmax(q k^T scale + bias) (dropped out with p) and its product with v:
 * q [..., L, E], k [..., S, E], v [..., S, Ev]; bias broadcasts to [..., L, S] or is null.
 */
export function attend(q: Tensor, k: Tensor, v: Tensor, scale: number, bias: Tensor | null, p: number, generator?: Generator): { output: Tensor; weights: Tensor } {
  const scores = mul(matmul(q, transpose(k, -2, -1)), scale);
  let weights = softmax(bias === null ? scores : add(scores, bias), -1);
  if (p > 0) weights = dropoutOp(weights, p, generator);
  return { output: matmul(weights, v), weights };
}

/** @internal A dropout probability in [0, 1]. */
export function probabilityArg(p: unknown, fn: string, name: string): number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new RangeError(`${fn}: argument '${name}' must be a probability in [0, 1], got ${describeValue(p)}`);
  return p;
}

/**
 * softmax(q k^T * scale + mask) v over the last two dims (torch.nn.functional.scaled_dot_product_attention):
 * query [..., L, E], key [..., S, E], value [..., S, Ev] → [..., L, Ev]. The softmax is the built-in op.
 * A bool attnMask marks what takes part (NOTE [ Attention masks ]).
 * @example gx.nn.functional.scaledDotProductAttention(q, k, v, { isCausal: true })
 */
export function scaledDotProductAttention(query: Tensor, key: Tensor, value: Tensor, opts?: ScaledDotProductAttentionOptions): Tensor {
  const fn = `${F}.scaledDotProductAttention`;
  const q = floatingArg(query, fn, 'query'), k = floatingArg(key, fn, 'key'), v = floatingArg(value, fn, 'value');
  const o = checkOptions<ScaledDotProductAttentionOptions>(opts, fn, SDPA_KEYS);
  for (const [name, t] of [['query', q], ['key', k], ['value', v]] as const) {
    if (t.ndim < 2) throw new RangeError(`${fn}: argument '${name}' must have at least 2 dims [..., length, features], got ${formatShape(t.shape)}`);
  }
  const E = q.shape[q.ndim - 1], L = q.shape[q.ndim - 2], S = k.shape[k.ndim - 2];
  if (k.shape[k.ndim - 1] !== E) throw new RangeError(`${fn}: query ${formatShape(q.shape)} and key ${formatShape(k.shape)} must end in the same number of features`);
  if (v.shape[v.ndim - 2] !== S) throw new RangeError(`${fn}: key ${formatShape(k.shape)} and value ${formatShape(v.shape)} must have the same length (dim -2)`);
  const p = probabilityArg(o.dropoutP ?? 0, fn, 'dropoutP');
  const causal = booleanOption(fn, 'isCausal', o.isCausal, false);
  const mask = o.attnMask ?? null;
  if (causal && mask !== null) throw new TypeError(`${fn}: give attnMask or isCausal, not both (as torch)`);
  const scale = o.scale ?? 1 / Math.sqrt(E);
  if (typeof scale !== 'number' || !Number.isFinite(scale)) throw new TypeError(`${fn}: option 'scale' must be a finite number, got ${describeValue(scale)}`);
  const out = normResultDtype(q, k, v, mask !== null && mask.dtype !== 'bool' ? mask : null);
  return tidy(() => {
    // torch's math path computes float16 and bfloat16 inputs in float32 and rounds the output once (as the
    // norms do: NOTE [ Norms of half inputs ] in args.ts); in the inputs' dtype a bfloat16 attention was off
    // by 2e-2 of its largest value, torch's by 2e-3.
    const [qc, kc, vc] = [q, k, v].map((t) => (t.dtype === normDtype(t) ? t : t.astype(normDtype(t))));
    const bias = causal ? causalBias(L, S, qc) : mask === null ? null : maskBias(mask, false, qc, fn, 'attnMask');
    const y = attend(qc, kc, vc, scale, bias, p, o.generator).output;
    return y.dtype === out ? y : y.astype(out);
  });
}
