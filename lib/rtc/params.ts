// What elementwise and reduction kernels share: their 'type name' parameter
// lists, the headers the C types of dtypes need (the types themselves are
// the dtype list's KERNEL_C_TYPES), scalar operands,
// and operands' strides seen at a broadcast shape.
import { isDType, type DType } from '../core/dtype';
import type { Tensor } from '../core/tensor';


/**
 * The #includes a kernel using `dtypes` needs first (float16/bfloat16 come
 * from the toolkit's cuda_fp16.h / cuda_bf16.h, whose arithmetic operators
 * work on sm_53+ and sm_80+ respectively; below that, convert to float).
 */
export function typeHeaders(dtypes: Iterable<DType>): string {
  let half = false;
  let bf16 = false;
  for (const d of dtypes) {
    if (d === 'float16') half = true;
    else if (d === 'bfloat16') bf16 = true;
  }
  return `${half ? '#include <cuda_fp16.h>\n' : ''}${bf16 ? '#include <cuda_bf16.h>\n' : ''}`;
}

export interface Param {
  name: string;
  /** A dtype name, or a placeholder such as 'T'. */
  type: string;
  placeholder: boolean;
  /** `raw T x`: the body sees the whole array (`x[j]`, any j < x_size), not the element at i. */
  raw: boolean;
}

const IDENT = /^[A-Za-z_]\w*$/;

/** Parses 'float32 x, T y, raw T z'; errors name `fn` and `what` (inParams/outParams). */
export function parseParams(spec: string, fn: string, what: string): Param[] {
  if (typeof spec !== 'string') throw new TypeError(`${fn}: ${what} must be a string like 'float32 x, T y'`);
  if (spec.trim() === '') return [];
  return spec.split(',').map((part) => {
    const words = part.trim().split(/\s+/);
    const raw = words[0] === 'raw';
    if (raw) words.shift();
    if (words.length !== 2 || !IDENT.test(words[0]) || !IDENT.test(words[1])) {
      throw new TypeError(`${fn}: ${what}: '${part.trim()}' is not 'type name' (or 'raw type name')`);
    }
    const [type, name] = words;
    return { name, type, placeholder: !isDType(type), raw };
  });
}

/** Element strides of `t` seen at the broadcast `shape` (0 where it broadcasts). */
export function broadcastStrides(t: Tensor, shape: readonly number[]): number[] {
  const lead = shape.length - t.ndim;
  return shape.map((_, d) => (d < lead || t.shape[d - lead] === 1 ? 0 : t.strides[d - lead]));
}
