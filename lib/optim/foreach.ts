// The multi-tensor path of gx.optim.SGD, Adam and AdamW (torch's foreach
// implementations): the parameters of a group that can share one kernel are
// bucketed, and each bucket is updated by one call of a multi-tensor op
// (ops/optim/foreach.h), a few launches for the whole bucket.
//
// NOTE [ Multi-tensor steps ]
// A bucket holds parameters of one device and dtype (float32, float64,
// float16, bfloat16) whose parameter and gradient are contiguous and of that
// dtype, and whose state is in the same phase (SGD: a momentum buffer or not
// yet; Adam: the same step count, as the step's scalars are per call). Any
// other parameter takes the per-parameter path. Both paths give the same
// values, bit for bit (NOTE [ Multi-tensor steps round as the per-parameter
// path ] in ops/optim/foreach.h). The default, as torch's: the multi-tensor
// path when every parameter of the group is on a GPU (per launch saved, the
// CPU gains nothing from it). The kernels write the tensors' storage
// directly, so the versions autograd checks saved tensors by are bumped here.
import { bumpVersion } from '../tape/graph';
import { capturingDevice } from '../core/capture-guard';
import type { NativeTensor } from '../core/native';
import type { Tensor } from '../core/tensor';
import { booleanOption } from '../core/options';

const FLOATING = new Set(['float32', 'float64', 'float16', 'bfloat16']);

/** The foreach / fused options, as torch's: undefined (null) picks the default. */
export interface ForeachOptions {
  /** The multi-tensor path (default: when every parameter of the group is on a GPU). */
  foreach?: boolean | null;
  /** The same multi-tensor kernels (one fused kernel per launch here); may not be true with foreach. */
  fused?: boolean | null;
}

/** Checks foreach and fused (booleans or null, not both true), with torch's message. */
export function checkForeach(fn: string, g: { foreach: boolean | null; fused: boolean | null }): void {
  if (g.foreach !== null) booleanOption(fn, 'foreach', g.foreach);
  if (g.fused !== null) booleanOption(fn, 'fused', g.fused);
  if (g.foreach === true && g.fused === true) throw new RangeError(`${fn}: \`fused\` and \`foreach\` cannot be \`true\` together.`);
}

/** Whether a group takes the multi-tensor path (NOTE [ Multi-tensor steps ]). */
export function useForeach(g: { foreach: boolean | null; fused: boolean | null; params: readonly Tensor[] }): boolean {
  if (g.foreach !== null || g.fused !== null) return g.foreach === true || g.fused === true;
  return g.params.length > 0 && g.params.every((p) => p.device.type === 'cuda');
}

/** Whether `p` (with gradient `grad`) may share a multi-tensor kernel. */
export function foreachable(p: Tensor, grad: Tensor): boolean {
  return FLOATING.has(p.dtype) && grad.dtype === p.dtype && grad.device.equals(p.device) && grad.numel === p.numel &&
    p.isContiguous() && grad.isContiguous();
}

/** Tensors bucketed by a key (their device and dtype first: NOTE [ Multi-tensor steps ]). */
export class Buckets<E> {
  readonly #map = new Map<string, E[]>();

  add(p: Tensor, phase: string, entry: E): void {
    const key = `${p.device}|${p.dtype}|${phase}`;
    const list = this.#map.get(key);
    if (list === undefined) this.#map.set(key, [entry]);
    else list.push(entry);
  }

  get lists(): IterableIterator<E[]> {
    return this.#map.values();
  }
}

/** The native handles of a list of tensors, for a multi-tensor op. */
export function handles(fn: string, ts: readonly Tensor[]): NativeTensor[] {
  return ts.map((t) => t.handle(fn));
}

/** Marks the tensors a multi-tensor op wrote (NOTE [ Autograd and in-place ops ]). */
export function written(...lists: readonly (readonly Tensor[])[]): void {
  for (const list of lists) for (const t of list) bumpVersion(t);
}

/** Refuses to make optimizer state while a graph is captured: its fill would be replayed every step. */
export function checkNotCapturing(fn: string, p: Tensor): void {
  if (capturingDevice() !== null) {
    throw new Error(`${fn}: a parameter of shape [${p.shape.join(', ')}] has no optimizer state yet; it is made on the ` +
      'first step, which a CUDA graph cannot capture: take a step before capturing (gx.cuda.graphStep\'s warmup does)');
  }
}
