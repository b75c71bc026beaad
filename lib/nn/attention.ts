// MultiheadAttention (torch.nn.MultiheadAttention), with torch's parameter
// names and layout (in_proj_weight [3E, E] and in_proj_bias [3E], or
// q/k/v_proj_weight when kdim or vdim differ from embedDim; out_proj a Linear)
// so that a torch state dict loads as it is. The heads attend through the
// core of gx.nn.functional.scaledDotProductAttention (the built-in softmax).
import { add } from '../generated/elementwise';
import { mean } from '../ops/reduce/functions';
import { permute, slice } from '../ops/layout/layout';
import { named, type Named } from '../ops/named';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { floatingArg } from './args';
import { attend, causalBias, maskBias, probabilityArg } from './attention-functional';
import { linear } from './functional';
import { constant_, xavierUniform_ } from './init';
import { Linear, param, size, type FactoryOptions } from './layers';
import { Module } from './module';

export interface MultiheadAttentionOptions extends FactoryOptions {
  /** Dropout on the attention weights while training (default 0). */
  dropout?: number;
  /** Learn the input and output projections' biases (default true). */
  bias?: boolean;
  /** Inputs and output as [batch, length, features] (default false: [length, batch, features], as torch). */
  batchFirst?: boolean;
  /** The key's features (default embedDim). */
  kdim?: number | null;
  /** The value's features (default embedDim). */
  vdim?: number | null;
}
const MHA_KEYS = optionKeys<MultiheadAttentionOptions>({ dropout: true, bias: true, batchFirst: true, kdim: true, vdim: true, device: true, dtype: true });

export interface MultiheadAttentionForwardOptions {
  /** [batch, S] (or [S] unbatched): bool, true masks the key out; or float, added to the scores. */
  keyPaddingMask?: Tensor | null;
  /** [L, S] or [batch * numHeads, L, S]: bool, true masks out (torch's MultiheadAttention convention); or float, added. */
  attnMask?: Tensor | null;
  /** Return the attention weights (default true). */
  needWeights?: boolean;
  /** Average the returned weights over the heads (default true). */
  averageAttnWeights?: boolean;
  /** Mask out key j > query i; with an attnMask, torch's hint that attnMask is that mask (attnMask is used). */
  isCausal?: boolean;
}
const FORWARD_KEYS = optionKeys<MultiheadAttentionForwardOptions>({
  keyPaddingMask: true, attnMask: true, needWeights: true, averageAttnWeights: true, isCausal: true,
});

/** `{ output, weights }`, which also destructures as `[output, weights]` (NOTE [ Named results ]); weights null unless asked for. */
export type AttentionResult = Named<{ output: Tensor; weights: Tensor | null }, [Tensor, Tensor | null]>;

type MhaIn = [Tensor, Tensor, Tensor, MultiheadAttentionForwardOptions?];

/**
 * Attention of numHeads heads over embedDim features (torch.nn.MultiheadAttention): call it with
 * (query, key, value, { keyPaddingMask, attnMask, needWeights, averageAttnWeights, isCausal }) for
 * `[output, weights]`. Inputs are [L, N, E] (or [N, L, E] with batchFirst, or [L, E] unbatched).
 * @example const mha = new gx.nn.MultiheadAttention(64, 8, { batchFirst: true }); const [y, w] = mha.call(x, x, x);
 */
export class MultiheadAttention extends Module<MhaIn, AttentionResult> {
  readonly embedDim: number;
  readonly numHeads: number;
  readonly headDim: number;
  readonly kdim: number;
  readonly vdim: number;
  readonly dropout: number;
  readonly batchFirst: boolean;
  constructor(embedDim: number, numHeads: number, opts?: MultiheadAttentionOptions) {
    super();
    const fn = 'gx.nn.MultiheadAttention';
    const o = checkOptions<MultiheadAttentionOptions>(opts, fn, MHA_KEYS);
    this.embedDim = size(embedDim, fn, 'embedDim');
    this.numHeads = size(numHeads, fn, 'numHeads');
    if (this.embedDim % this.numHeads !== 0) throw new RangeError(`${fn}: embedDim (${embedDim}) must be divisible by numHeads (${numHeads})`);
    this.headDim = this.embedDim / this.numHeads;
    this.kdim = o.kdim === undefined || o.kdim === null ? this.embedDim : size(o.kdim, fn, 'kdim');
    this.vdim = o.vdim === undefined || o.vdim === null ? this.embedDim : size(o.vdim, fn, 'vdim');
    this.dropout = probabilityArg(o.dropout ?? 0, fn, 'dropout');
    this.batchFirst = booleanOption(fn, 'batchFirst', o.batchFirst, false);
    const E = this.embedDim;
    // torch's registration order, so named parameters and state dicts list as torch's.
    if (this.sameEmbedDim) {
      this.registerParameter('in_proj_weight', param([3 * E, E], o));
    } else {
      this.registerParameter('q_proj_weight', param([E, E], o));
      this.registerParameter('k_proj_weight', param([E, this.kdim], o));
      this.registerParameter('v_proj_weight', param([E, this.vdim], o));
    }
    const bias = booleanOption(fn, 'bias', o.bias, true);
    this.registerParameter('in_proj_bias', bias ? param([3 * E], o) : null);
    this.registerModule('out_proj', new Linear(E, E, { bias, device: o.device, dtype: o.dtype }));
    this.resetParameters();
  }

  /** Whether key and value have embedDim features (one packed in_proj_weight, as torch's _qkv_same_embed_dim). */
  get sameEmbedDim(): boolean {
    return this.kdim === this.embedDim && this.vdim === this.embedDim;
  }

  get inProjWeight(): Tensor | null {
    return this.sameEmbedDim ? this.param('in_proj_weight') : null;
  }

  get inProjBias(): Tensor | null {
    return this.param('in_proj_bias');
  }

  get outProj(): Linear {
    return this.sub<Linear>('out_proj');
  }

  /** torch's _reset_parameters: xavierUniform_ projections, zero biases (out_proj's weight keeps Linear's init). */
  resetParameters(): void {
    for (const n of this.sameEmbedDim ? ['in_proj_weight'] : ['q_proj_weight', 'k_proj_weight', 'v_proj_weight']) xavierUniform_(this.param(n) as Tensor);
    const b = this.inProjBias;
    if (b !== null) constant_(b, 0);
    const ob = this.outProj.bias;
    if (ob !== null) constant_(ob, 0);
  }

  /** The projection weight and bias of 0 (q), 1 (k) or 2 (v). */
  #projection(i: 0 | 1 | 2): { w: Tensor; b: Tensor | null } {
    const E = this.embedDim;
    const w = this.sameEmbedDim ? slice(this.param('in_proj_weight') as Tensor, 0, i * E, (i + 1) * E) : this.param(['q_proj_weight', 'k_proj_weight', 'v_proj_weight'][i]) as Tensor;
    const b = this.inProjBias;
    return { w, b: b === null ? null : slice(b, 0, i * E, (i + 1) * E) };
  }

  override forward(query: Tensor, key: Tensor, value: Tensor, opts?: MultiheadAttentionForwardOptions): AttentionResult {
    const fn = 'MultiheadAttention.forward';
    const o = checkOptions<MultiheadAttentionForwardOptions>(opts, fn, FORWARD_KEYS);
    const needWeights = booleanOption(fn, 'needWeights', o.needWeights, true);
    const average = booleanOption(fn, 'averageAttnWeights', o.averageAttnWeights, true);
    const causal = booleanOption(fn, 'isCausal', o.isCausal, false);
    const r = tidy(() => {
      const { q, k, v, batched } = this.#inputs(query, key, value, fn);
      const [L, N] = [q.shape[0], q.shape[1]], S = k.shape[0];
      const H = this.numHeads, hd = this.headDim, E = this.embedDim;
      const bias = this.#bias(o, causal, batched, L, S, N, q, fn);
      // [len, N, E] → [N, H, len, hd]
      const heads = (t: Tensor, i: 0 | 1 | 2): Tensor => {
        const { w, b } = this.#projection(i);
        return permute(linear(t, w, b).reshape([t.shape[0], N, H, hd]), [1, 2, 0, 3]);
      };
      const p = this.training ? this.dropout : 0;
      const a = attend(heads(q, 0), heads(k, 1), heads(v, 2), 1 / Math.sqrt(hd), bias, p);
      let output = this.outProj.call(permute(a.output, [2, 0, 1, 3]).reshape([L, N, E]));  // [L, N, E]
      if (this.batchFirst && batched) output = permute(output, [1, 0, 2]);
      if (!batched) output = output.reshape([L, E]);
      let weights: Tensor | null = null;
      if (needWeights) {
        weights = average ? mean(a.weights, 1) : a.weights;  // [N, L, S] or [N, H, L, S]
        if (!batched) weights = weights.reshape(weights.shape.slice(1));
      }
      return { output, weights };
    });
    return named(r, ['output', 'weights']);
  }

  /** query, key, value checked and laid out as [len, N, features]; whether they were batched. */
  #inputs(query: Tensor, key: Tensor, value: Tensor, fn: string): { q: Tensor; k: Tensor; v: Tensor; batched: boolean } {
    const x = [floatingArg(query, fn, 'query'), floatingArg(key, fn, 'key'), floatingArg(value, fn, 'value')];
    const batched = x[0].ndim === 3;
    const names = ['query', 'key', 'value'], dims = [this.embedDim, this.kdim, this.vdim];
    x.forEach((t, i) => {
      if (t.ndim !== (batched ? 3 : 2) || t.shape[t.ndim - 1] !== dims[i]) {
        throw new RangeError(`${fn}: argument '${names[i]}' must be ${batched ? (this.batchFirst ? '[N, len, ' : '[len, N, ') : '[len, '}${dims[i]}], got ${formatShape(t.shape)}`);
      }
    });
    const laid = x.map((t) => (!batched ? t.reshape([t.shape[0], 1, t.shape[1]]) : this.batchFirst ? permute(t, [1, 0, 2]) : t));
    if (laid[1].shape[0] !== laid[2].shape[0] || laid[1].shape[1] !== laid[0].shape[1] || laid[2].shape[1] !== laid[0].shape[1]) {
      throw new RangeError(`${fn}: key and value must have the same length and query, key and value the same batch, got ${x.map((t) => formatShape(t.shape)).join(', ')}`);
    }
    return { q: laid[0], k: laid[1], v: laid[2], batched };
  }

  /** The additive bias of the masks (NOTE [ Attention masks ]), broadcasting to [N, H, L, S], or null. */
  #bias(o: Partial<MultiheadAttentionForwardOptions>, causal: boolean, batched: boolean, L: number, S: number, N: number, like: Tensor, fn: string): Tensor | null {
    let bias: Tensor | null = null;
    const attnMask = o.attnMask ?? null, kpm = o.keyPaddingMask ?? null;
    if (attnMask !== null) {
      const m = maskBias(attnMask, true, like, fn, 'attnMask');
      if (m.ndim === 2 && m.shape[0] === L && m.shape[1] === S) bias = m;
      else if (m.ndim === 3 && m.shape[0] === N * this.numHeads && m.shape[1] === L && m.shape[2] === S) bias = m.reshape([N, this.numHeads, L, S]);
      else throw new RangeError(`${fn}: option 'attnMask' must be [${L}, ${S}] or [${N * this.numHeads}, ${L}, ${S}], got ${formatShape(attnMask.shape)}`);
    } else if (causal) {
      bias = causalBias(L, S, like);
    }
    if (kpm !== null) {
      const m = maskBias(kpm, true, like, fn, 'keyPaddingMask');
      const want = batched ? [N, S] : [S];
      if (formatShape(m.shape) !== formatShape(want)) throw new RangeError(`${fn}: option 'keyPaddingMask' must be ${formatShape(want)}, got ${formatShape(kpm.shape)}`);
      const b = m.reshape([N, 1, 1, S]);
      bias = bias === null ? b : add(bias, b);
    }
    return bias;
  }

  override extraRepr(): string {
    return `embedDim=${this.embedDim}, numHeads=${this.numHeads}, dropout=${this.dropout}, batchFirst=${this.batchFirst}`;
  }
}
