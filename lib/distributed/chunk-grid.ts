// The block grid of a chunked tensor (chunked.ts): where blocks start, their
// indices in C order, and the view of a tensor over one block.
import type { Tensor } from '../core/tensor';

/** Each block's first position along a dimension (a running sum: linear in the blocks). */
export function offsetsOf(sizes: readonly number[]): number[] {
  let at = 0;
  return sizes.map((n) => { const o = at; at += n; return o; });
}

/** Every block index of a grid, in C order. */
export function gridIndices(grid: readonly number[]): number[][] {
  const out: number[][] = [];
  const idx = grid.map(() => 0);
  const total = grid.reduce((a, b) => a * b, 1);
  for (let k = 0; k < total; k++) {
    out.push([...idx]);
    for (let d = grid.length - 1; d >= 0; d--) {
      if (++idx[d] < grid[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/** The view of `t` over the block at `start` of extents `size`. */
export function region(t: Tensor, start: readonly number[], size: readonly number[]): Tensor {
  let v = t;
  for (let d = 0; d < size.length; d++) {
    const next = v.narrow(d, start[d], size[d]);
    if (v !== t) v.dispose();
    v = next;
  }
  return v === t ? t.view(t.shape as number[]) : v;
}

