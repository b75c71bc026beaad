// The elements toString() prints, read from the tensor: all of them, or for a
// summarized tensor only those the summary shows (format.ts prints them).
import { contiguousStrides, numelOf } from './shape';
import type { FormatOptions } from './format';
import type { Meta, Tensor } from './tensor';

/**
 * @internal The values toString() prints. Within the threshold: every element. Beyond
 * it, only the ones a summary shows (the first and last `edgeItems` along each
 * long dimension), read block by block through views, so printing a huge
 * tensor (or one element expanded to 2^40) reads a few hundred elements.
 * `shownOnly` tells formatTensor the values are that compact block in C order.
 */
export function shownValues(t: Tensor, m: Meta, opts: Readonly<Required<FormatOptions>>): { values: ArrayLike<number | bigint>; shownOnly: boolean } {
  const n = numelOf(m.shape);
  if (n <= opts.threshold) return { values: t.toArraySync(), shownOnly: false };
  const edge = opts.edgeItems;
  // Per dimension: the index ranges kept, [start, length] each.
  const parts = m.shape.map((s) => (s > 2 * edge ? [[0, edge], [s - edge, edge]] : [[0, s]]));
  const compact = parts.map((p) => p.reduce((acc, [, len]) => acc + len, 0));
  const cstrides = contiguousStrides(compact);
  const total = numelOf(compact);
  const values: (number | bigint)[] = new Array<number | bigint>(total);
  const ndim = m.shape.length;
  const pick = new Array<number>(ndim).fill(0);
  // Every combination of one part per dimension is one strided block.
  for (;;) {
    let offset = m.offset, dst = 0;
    const shape: number[] = [];
    for (let d = 0; d < ndim; d++) {
      const [start, len] = parts[d][pick[d]];
      offset += start * m.strides[d];
      dst += (pick[d] === 0 ? 0 : parts[d][0][1]) * cstrides[d];
      shape.push(len);
    }
    const block = t.asStrided(shape, m.strides, offset);
    let data: ArrayLike<number | bigint>;
    try {
      data = block.toArraySync();
    } finally {
      block.dispose();
    }
    // Scatter the block (C order over `shape`) into the compact array.
    const bstrides = contiguousStrides(shape);
    for (let i = 0; i < data.length; i++) {
      let rest = i, at = dst;
      for (let d = 0; d < ndim; d++) {
        const k = Math.floor(rest / bstrides[d]);
        rest -= k * bstrides[d];
        at += k * cstrides[d];
      }
      values[at] = data[i];
    }
    let d = ndim - 1;
    while (d >= 0 && ++pick[d] === parts[d].length) pick[d--] = 0;
    if (d < 0) break;
  }
  return { values, shownOnly: true };
}
