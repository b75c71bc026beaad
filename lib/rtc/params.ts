// What elementwise and reduction kernels share: their 'type name' parameter
// lists, the C types of dtypes, and operands' strides seen at a broadcast shape.
import { isDType, type DType } from '../dtype';
import type { Tensor } from '../tensor';

/** C types of the dtypes generated kernels support (float16/bfloat16 not yet). */
export const C_TYPES: Partial<Record<DType, string>> = {
  float32: 'float', float64: 'double', int8: 'signed char', int16: 'short', int32: 'int', int64: 'long long',
  uint8: 'unsigned char', bool: 'bool',
};

export interface Param {
  name: string;
  /** A dtype name, or a placeholder such as 'T'. */
  type: string;
  placeholder: boolean;
}

/** Parses 'float32 x, T y'; errors name `fn` and `what` (inParams/outParams). */
export function parseParams(spec: string, fn: string, what: string): Param[] {
  if (typeof spec !== 'string') throw new TypeError(`${fn}: ${what} must be a string like 'float32 x, T y'`);
  if (spec.trim() === '') return [];
  return spec.split(',').map((part) => {
    const words = part.trim().split(/\s+/);
    if (words.length !== 2 || !/^[A-Za-z_]\w*$/.test(words[0]) || !/^[A-Za-z_]\w*$/.test(words[1])) {
      const hint = words[0] === 'raw' ? ' (raw parameters are not supported yet; use gx.RawKernel)' : '';
      throw new TypeError(`${fn}: ${what}: '${part.trim()}' is not 'type name'${hint}`);
    }
    const [type, name] = words;
    if (isDType(type) && C_TYPES[type] === undefined) {
      throw new TypeError(`${fn}: ${what}: dtype ${type} is not supported in generated kernels yet`);
    }
    return { name, type, placeholder: !isDType(type) };
  });
}

/** Element strides of `t` seen at the broadcast `shape` (0 where it broadcasts). */
export function broadcastStrides(t: Tensor, shape: readonly number[]): number[] {
  const lead = shape.length - t.ndim;
  return shape.map((_, d) => (d < lead || t.shape[d - lead] === 1 ? 0 : t.strides[d - lead]));
}
