// gx.einsum against a brute-force plain-JS loop over the whole index space
// (with its own reading of the equation) on small random shapes, on every
// device: explicit and implicit outputs, diagonals (repeated subscripts),
// ellipsis broadcasting, size-1 broadcasting, outer products, full
// reductions to a scalar, chains of several operands, capitals, spaces;
// float and integer dtypes, non-contiguous operands, empty dims; the
// batched-matmul case giving gx.matmul's bits; the greedy contraction order;
// gradients (gradcheck); and errors naming gx.einsum and the argument.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { einsumPath } from '../lib/ops/linalg/einsum';
import { deviceTestSerial } from './helpers';
import { expectClose, noLeaks, noStrayTensors, numelOf, offsetOf, randomTensor, rtolOf, unravel, valuesOf, type Arr } from './linalg-reference';

// --- the reference: its own parse, then every point of the index space --------------------

function refEinsum(equation: string, arrs: readonly Arr[]): Arr {
  const eq = equation.replace(/\s/g, '');
  const [lhs, rhs] = eq.includes('->') ? eq.split('->') : [eq, undefined];
  const terms = lhs.split(',');
  const own = (term: string, k: number): number => arrs[k].shape.length - (term.length - 3);  // dims its '...' covers
  const ell = Math.max(0, ...terms.map((term, k) => (term.includes('...') ? own(term, k) : 0)));
  // Ellipsis dims as the digits '0', '1', ... (right-aligned): no letter collides with them.
  const dots = (n: number): string[] => Array.from({ length: n }, (_, j) => String(ell - n + j));
  const expand = (term: string, n: number): string[] => (term.includes('...') ? [...term.split('...')[0], ...dots(n), ...term.split('...')[1]] : [...term]);
  const subs = terms.map((term, k) => expand(term, term.includes('...') ? own(term, k) : 0));
  let out: string[];
  if (rhs === undefined) {
    const letters = terms.join('').replace(/\./g, '');
    const once = [...new Set(letters)].filter((c) => letters.split(c).length === 2).sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0));
    out = [...(lhs.includes('...') ? dots(ell) : []), ...once];
  } else {
    out = expand(rhs, ell);
  }
  const size = new Map<string, number>();
  subs.forEach((s, k) => s.forEach((c, d) => {
    const n = arrs[k].shape[d];
    if (!size.has(c) || size.get(c) === 1) size.set(c, n);
  }));
  const labels = [...size.keys()];
  const outShape = out.map((c) => size.get(c) as number);
  const values = new Array<number>(numelOf(outShape)).fill(0);
  const total = labels.reduce((p, c) => p * (size.get(c) as number), 1);
  const at = new Map<string, number>();
  for (let i = 0; i < total; i++) {
    let r = i;
    for (const c of labels) {
      const n = size.get(c) as number;
      at.set(c, r % n);
      r = Math.floor(r / n);
    }
    let prod = 1;
    subs.forEach((s, k) => {
      const p = s.map((c, d) => (arrs[k].shape[d] === 1 ? 0 : at.get(c) as number));
      prod *= arrs[k].values[offsetOf(p, arrs[k].shape)];
    });
    values[offsetOf(out.map((c) => at.get(c) as number), outShape)] += prod;
  }
  return { shape: outShape, values };
}

/** Equations and operand shapes: every feature of the grammar. */
const CASES: [string, number[][]][] = [
  ['ij,jk->ik', [[3, 4], [4, 5]]],
  ['ij,jk', [[3, 4], [4, 5]]],                         // implicit: ik
  ['bij,bjk->bik', [[2, 3, 4], [2, 4, 5]]],
  ['ij,kj->ik', [[3, 4], [5, 4]]],                     // a @ b^T
  ['ji,jk->ik', [[4, 3], [4, 5]]],                     // a^T @ b
  ['ii->i', [[4, 4]]],                                 // diagonal
  ['ii', [[4, 4]]],                                    // trace
  ['iij->ij', [[3, 3, 2]]],
  ['bii->b', [[2, 3, 3]]],
  ['iij,kjj->ik', [[3, 3, 4], [2, 4, 4]]],              // diagonals in two operands
  ['i,j->ij', [[3], [4]]],                             // outer product
  ['i,jk->ijk', [[2], [3, 4]]],
  ['ab,cd->abcd', [[2, 3], [4, 2]]],
  ['ij->', [[3, 4]]],                                  // full reduction to a scalar
  ['ij,ij->', [[3, 4], [3, 4]]],
  ['i,i', [[5], [5]]],                                 // dot, implicit scalar
  ['abc,cba->', [[2, 3, 4], [4, 3, 2]]],
  ['ij,ij->ij', [[3, 4], [3, 4]]],                     // Hadamard
  ['ij,j->i', [[3, 4], [4]]],
  ['ij->ji', [[3, 4]]],
  ['ij', [[3, 4]]],
  ['ba', [[3, 4]]],                                    // implicit output sorted: ab
  ['ijk->kij', [[2, 3, 4]]],
  ['ij->j', [[3, 4]]],
  ['...ij,...jk', [[2, 3, 4], [4, 5]]],                // ellipsis broadcast
  ['...ij,...jk->...ik', [[2, 1, 3, 4], [5, 4, 2]]],
  ['...i,...i->...', [[2, 3, 4], [3, 4]]],
  ['...ii->...i', [[2, 3, 3]]],
  ['i...,i...->...', [[3, 2], [3, 1]]],
  ['...,...->...', [[2, 3], [3]]],
  ['b...i,b...i->b', [[2, 3, 4], [2, 3, 4]]],          // an explicit output without '...' sums those dims
  ['i,i->i', [[1], [4]]],                              // size-1 broadcast of a subscript
  ['ij,jk->ik', [[3, 1], [4, 2]]],                     // a summed subscript of size 1 on one side
  ['bij,jk->bik', [[2, 3, 4], [4, 5]]],
  ['ij,jk,kl->il', [[2, 3], [3, 4], [4, 5]]],          // a chain
  ['ijk,jl,lk->i', [[2, 3, 4], [3, 5], [5, 4]]],
  ['ab,ab,ab->a', [[2, 3], [2, 3], [2, 3]]],
  ['i,j,ij->', [[3], [4], [3, 4]]],
  ['ab,bc,cd,da->', [[2, 3], [3, 4], [4, 2], [2, 2]]],  // a ring
  ['Ab,bA->A', [[3, 2], [2, 3]]],                      // capitals
  [' ij , jk -> ki ', [[2, 3], [3, 4]]],               // spaces
  ['iJ,Ji', [[3, 2], [2, 3]]],
];

function operands(shapes: number[][], dtype: gx.DType, device: string, seed: number, transposed = false): { ts: gx.Tensor[]; arrs: Arr[] } {
  const made = shapes.map((s, k) => randomTensor(s, dtype, device, seed + k, { transposed, ...(dtype.startsWith('int') ? { lo: -5, hi: 5 } : {}) }));
  return { ts: made.map((m) => m.t), arrs: made.map((m) => m.arr) };
}

deviceTestSerial('einsum matches the brute-force loop on every equation (float64, float32, float16)', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of ['float64', 'float32', 'float16'] as gx.DType[]) {
      CASES.forEach(([eq, shapes], c) => {
        const { ts, arrs } = operands(shapes, dtype, device, 10 * c);
        const r = gx.einsum(eq, ...ts);
        t.is(r.dtype, dtype);
        expectClose(t, r, refEinsum(eq, arrs), `${dtype} '${eq}'`, rtolOf(dtype) * 10, dtype === 'float64' ? 1e-12 : dtype === 'float32' ? 1e-5 : 2e-2);
      });
    }
  });
});

deviceTestSerial('einsum: integer operands exactly (in int64, stored in their dtype), transposed operands, the list form', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of ['int32', 'int64', 'int16'] as gx.DType[]) {
      CASES.forEach(([eq, shapes], c) => {
        const { ts, arrs } = operands(shapes, dtype, device, 10 * c + 1);
        const r = gx.einsum(eq, ts);
        t.is(r.dtype, dtype);
        expectClose(t, r, refEinsum(eq, arrs), `${dtype} '${eq}'`);
      });
    }
    CASES.forEach(([eq, shapes], c) => {
      if (shapes.some((s) => s.length < 2)) return;
      const { ts, arrs } = operands(shapes, 'float64', device, 10 * c + 2, true);
      t.true(ts.every((x) => !x.isContiguous() || numelOf(x.shape) <= 1 || x.shape.slice(-2).includes(1)));
      expectClose(t, gx.einsum(eq, ...ts), refEinsum(eq, arrs), `transposed '${eq}'`, 1e-12, 1e-12);
    });
  });
});

deviceTestSerial('einsum with empty dims: sums over nothing are 0, empty outputs are empty', (t, device) => {
  noLeaks(t, device, () => {
    for (const [eq, shapes] of [['ij,jk->ik', [[2, 0], [0, 3]]], ['ij,jk->', [[0, 3], [3, 2]]], ['ij,jk->ik', [[0, 3], [3, 2]]], ['i,j->ij', [[0], [3]]],
      ['ii->i', [[0, 0]]], ['bij,bjk->bik', [[0, 2, 3], [0, 3, 4]]], ['...ij,...jk', [[2, 0, 3], [3, 1]]]] as [string, number[][]][]) {
      for (const dtype of ['float32', 'int64'] as gx.DType[]) {
        const { ts, arrs } = operands(shapes, dtype, device, 3);
        expectClose(t, gx.einsum(eq, ...ts), refEinsum(eq, arrs), `${dtype} '${eq}' ${JSON.stringify(shapes)}`);
      }
    }
  });
});

deviceTestSerial("einsum('bij,bjk->bik') is one gx.matmul: the same bits; einsum('ij->ji') is a view", (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of ['float32', 'float64', 'bfloat16'] as gx.DType[]) {
      const { ts } = operands([[3, 17, 9], [3, 9, 11]], dtype, device, 4);
      t.deepEqual(valuesOf(gx.einsum('bij,bjk->bik', ts[0], ts[1])), valuesOf(gx.matmul(ts[0], ts[1])), dtype);
      t.deepEqual(valuesOf(gx.einsum('ij,jk->ik', ts[0].sliceDims(0), ts[1].sliceDims(1))), valuesOf(gx.matmul(ts[0].sliceDims(0), ts[1].sliceDims(1))), `${dtype} 2-d`);
    }
    // Transposed operands (on CUDA: cuBLAS's transpose flag on the uncopied batch), and x.mT batched.
    const { ts: tt, arrs } = operands([[4, 6, 5], [4, 7, 5], [3, 5]], 'float64', device, 5);
    expectClose(t, gx.einsum('bij,bkj->bik', tt[0], tt[1]), refEinsum('bij,bkj->bik', [arrs[0], arrs[1]]), "'bij,bkj->bik'", 1e-12, 1e-12);
    expectClose(t, gx.einsum('bji,bjk->bik', tt[0], tt[0]), refEinsum('bji,bjk->bik', [arrs[0], arrs[0]]), "'bji,bjk->bik'", 1e-12, 1e-12);
    expectClose(t, gx.einsum('bij,kj->bik', tt[0], tt[2]), refEinsum('bij,kj->bik', [arrs[0], arrs[2]]), "'bij,kj->bik'", 1e-12, 1e-12);
    expectClose(t, gx.matmul(tt[0].mT, tt[0]), refEinsum('bji,bjk->bik', [arrs[0], arrs[0]]), 'x.mT @ x', 1e-12, 1e-12);
    expectClose(t, gx.matmul(tt[1], tt[0].mT), refEinsum('bij,bkj->bik', [arrs[1], arrs[0]]), 'y @ x.mT', 1e-12, 1e-12);
    const a = gx.arange(6, { dtype: 'float32', device }).reshape([2, 3]);
    const v = gx.einsum('ij->ji', a);
    v.fill_(1);
    t.deepEqual(valuesOf(a), [1, 1, 1, 1, 1, 1], 'writes through, as torch');
  });
});

deviceTestSerial('einsum disposes every intermediate it makes', (t, device) => {
  const calls: Record<string, () => gx.Tensor> = {};
  const keep: gx.Tensor[] = [];
  try {
    CASES.forEach(([eq, shapes], c) => {
      for (const dtype of ['float32', 'int32'] as gx.DType[]) {
        const { ts } = operands(shapes, dtype, device, c);
        keep.push(...ts);
        calls[`${dtype} '${eq}'`] = () => gx.einsum(eq, ...ts);
      }
    });
    noStrayTensors(t, device, calls);
  } finally {
    for (const x of keep) x.dispose();
  }
});

// --- the contraction order -------------------------------------------------------------------------

deviceTestSerial("einsum contracts in opt_einsum's greedy order", (t) => {
  // (b c) first: its result [100, 1] is smaller than (a b)'s [2, 100].
  t.deepEqual(einsumPath('ij,jk,kl->il', [[2, 100], [100, 100], [100, 1]]), [[1, 2], [0, 1]]);
  // (a b) first when a is the thin one.
  t.deepEqual(einsumPath('ij,jk,kl->il', [[1, 100], [100, 100], [100, 50]]), [[0, 1], [0, 1]]);
  // Pairs sharing a subscript before outer products: j with ij, then i.
  t.deepEqual(einsumPath('i,j,ij->', [[3], [4], [3, 4]]), [[1, 2], [0, 1]]);
  // Subscripts of one operand only are summed first and take no step.
  t.deepEqual(einsumPath('ijk,k->i', [[2, 3, 4], [4]]), [[0, 1]]);
  t.deepEqual(einsumPath('ii', [[3, 3]]), []);
  // A ring of four: the cheap neighbours first.
  t.is(einsumPath('ab,bc,cd,da->', [[2, 50], [50, 2], [2, 50], [50, 2]]).length, 3);
}, ['cpu']);

// --- gradients ------------------------------------------------------------------------------------------

deviceTestSerial('einsum gradients: gradcheck through matmul, diagonals, ellipsis, outer products and chains', (t, device) => {
  noLeaks(t, device, () => {
    for (const [eq, shapes] of [['ij,jk->ik', [[2, 3], [3, 2]]], ['bij,bjk->bik', [[2, 2, 3], [2, 3, 2]]], ['ii->i', [[3, 3]]], ['ii', [[3, 3]]],
      ['i,j->ij', [[2], [3]]], ['...ij,...jk', [[2, 2, 3], [3, 2]]], ['ijk,jl,lk->i', [[2, 3, 2], [3, 2], [2, 2]]], ['ij->', [[2, 3]]],
      ['iij,j->i', [[2, 2, 3], [3]]], ['i,i->i', [[1], [3]]]] as [string, number[][]][]) {
      const inputs = shapes.map((s, k) => randomTensor(s, 'float64', device, 60 + k).t.requiresGrad_());
      t.true(gx.autograd.gradcheck((...xs) => gx.einsum(eq, ...xs), inputs).ok, eq);
    }
  });
});

// --- errors -------------------------------------------------------------------------------------------

function throwsNamed(t: ExecutionContext, fn: () => unknown, cls: typeof Error, re: RegExp): void {
  const e = t.throws(fn);
  t.true(e instanceof cls, `expected ${cls.name}, got ${e?.constructor.name}: ${e?.message}`);
  t.regex(e?.message ?? '', re);
}

deviceTestSerial('einsum errors name gx.einsum and what is wrong', (t, device) => {
  noLeaks(t, device, () => {
    const m = gx.ones([2, 3], { device }), s = gx.ones([3, 3], { device });
    throwsNamed(t, () => gx.einsum('ij,jk', m), RangeError, /^gx\.einsum: equation 'ij,jk' has 2 input terms but 1 operand was given/);
    throwsNamed(t, () => gx.einsum('ij', m, m), RangeError, /^gx\.einsum: equation 'ij' has 1 input term but 2 operands were given/);
    throwsNamed(t, () => gx.einsum('i1', m), SyntaxError, /^gx\.einsum: equation: invalid subscript '1' at index 1 \(the term of operands\[0\]\)/);
    throwsNamed(t, () => gx.einsum('ij->i2', m), SyntaxError, /^gx\.einsum: equation: invalid subscript '2' at index 5 \(the output\)/);
    throwsNamed(t, () => gx.einsum('i.j', m), SyntaxError, /^gx\.einsum: equation: '\.' at index 1 is not part of an ellipsis/);
    throwsNamed(t, () => gx.einsum('...i...', m), SyntaxError, /^gx\.einsum: equation: the term of operands\[0\] has more than one ellipsis/);
    throwsNamed(t, () => gx.einsum('ij->i->j', m), SyntaxError, /^gx\.einsum: equation 'ij->i->j' has more than one '->'/);
    throwsNamed(t, () => gx.einsum('ijk', m), RangeError, /^gx\.einsum: the term 'ijk' of operands\[0\] has 3 subscripts but the operand has 2 dimensions/);
    throwsNamed(t, () => gx.einsum('i', m), RangeError, /^gx\.einsum: the term 'i' of operands\[0\] has 1 subscript but the operand has 2 dimensions/);
    throwsNamed(t, () => gx.einsum('ij...k', m), RangeError, /^gx\.einsum: the term 'ij...k' of operands\[0\] has 3 subscripts but the operand has only 2 dimensions/);
    throwsNamed(t, () => gx.einsum('ij->k', m), RangeError, /^gx\.einsum: output subscript 'k' does not appear in any input term/);
    throwsNamed(t, () => gx.einsum('ij->ii', m), RangeError, /^gx\.einsum: output subscript 'i' appears more than once in the output/);
    throwsNamed(t, () => gx.einsum('ii->i', m), RangeError, /^gx\.einsum: subscript 'i' is repeated in the term of operands\[0\] but its dims have different sizes, 2 and 3/);
    throwsNamed(t, () => gx.einsum('ij,ij->ij', m, s), RangeError, /^gx\.einsum: subscript 'i' has different sizes: 2 and 3 in operands\[1\]/);
    throwsNamed(t, () => gx.einsum('...,...', gx.ones([2], { device }), gx.ones([3], { device })), RangeError, /^gx\.einsum: the broadcast dims of \.\.\. do not broadcast: 2 and 3 in operands\[1\]/);
    throwsNamed(t, () => gx.einsum('ij,jk', m, gx.ones([3, 2], { dtype: 'float64', device })), TypeError, /^gx\.einsum: operands must share one dtype; operands\[0\] is float32 but operands\[1\] is float64/);
    throwsNamed(t, () => gx.einsum('i', gx.ones([2], { dtype: 'bool', device })), TypeError, /^gx\.einsum: dtype bool is not supported/);
    throwsNamed(t, () => gx.einsum('ij', m, 3 as never), TypeError, /^gx\.einsum: argument 'operands\[1\]' must be a Tensor/);
    throwsNamed(t, () => gx.einsum(3 as never, m), TypeError, /^gx\.einsum: equation must be a string, got number 3/);
    throwsNamed(t, () => gx.einsum('ij'), RangeError, /^gx\.einsum: needs at least one operand after the equation/);
  });
});
