// gx.matmul (vectors, batches that broadcast, views, out, TF32) against a
// float64 reference, and gx.linalg.svd checked by what an SVD must be:
// U diag(S) Vh gives back A, S descends and is not negative, U and Vh are
// orthonormal.
import fc from 'fast-check';

import * as gx from '../../../lib';
import type { DType } from '../../../lib';
import { baseOf, cpuArb, dtypeArb, floatDtypeArb, junkArb, limitNumel } from '../arbitraries';
import { aliasing, errorVerdict, freshTensor, deviceOf, type Plan } from '../calls';
import { broadcast, numel, resolveArg, type BaseSpec, type Layout, type ModelTensor, type TensorArg, type ViewStep } from '../model';
import { cast, epsOf, isFloat, type V } from '../semantics';
import type { FuzzProperty } from '../property';

const mostlyFloat = fc.oneof({ weight: 12, arbitrary: floatDtypeArb }, { weight: 1, arbitrary: dtypeArb });

export function isContiguousLayout(l: Layout): boolean {
  if (l.shape.includes(0)) return true;
  let s = 1;
  for (let d = l.shape.length - 1; d >= 0; d--) {
    if (l.shape[d] !== 1 && l.strides[d] !== s) return false;
    s *= l.shape[d];
  }
  return true;
}

// --- matmul ---------------------------------------------------------------------

export interface MatmulInput {
  bases: BaseSpec[];
  a: TensorArg;
  b: TensorArg;
  /** 0: none; 1: fresh of the right layout; 2: fresh, not contiguous; 3: fresh of another dtype; 4: a's memory; 5: b's; 6: junk. */
  out: number;
  outJunk: unknown;
  /** undefined, or an options value of the wrong kind (null, a string). */
  opts?: { junk: unknown };
  allowTf32?: boolean;
}

/** Shapes of a and b: vectors or matrices with batch dims that broadcast, now and then ones that do not fit. */
const matmulShapes = fc.record({
  m: fc.integer({ min: 0, max: 4 }), k: fc.integer({ min: 0, max: 4 }), n: fc.integer({ min: 0, max: 4 }),
  ka: fc.nat(20), vecA: fc.nat(6), vecB: fc.nat(6), batchA: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
  onesB: fc.nat(7), dropB: fc.nat(2), zeroD: fc.nat(25),
}).map((r) => {
  const k2 = r.ka === 0 ? r.k + 1 : r.k;  // an inner size that does not fit
  const bb = r.batchA.slice(r.dropB % (r.batchA.length + 1)).map((s, i) => (((r.onesB >> i) & 1) === 1 ? 1 : s));
  const a = r.zeroD === 0 ? [] : r.vecA === 0 ? [r.k] : [...r.batchA, Math.max(r.m, 1), r.k];
  const b = r.vecB === 0 ? [k2] : [...bb, k2, Math.max(r.n, 1)];
  return [limitNumel(a, 64), limitNumel(b, 64)];
});

export const matmulArb: fc.Arbitrary<MatmulInput> = fc.record({
  shapes: matmulShapes, da: mostlyFloat, otherDtype: fc.nat(15), db: dtypeArb, cpuA: cpuArb, cpuB: cpuArb,
}).chain((r) => fc.record({
  bases: fc.tuple(baseOf(r.da, r.shapes[0], r.cpuA), baseOf(r.otherDtype === 0 ? r.db : r.da, r.shapes[1], r.cpuB)).map((x) => [...x]),
  a: fc.record({ base: fc.constant(0), views: transposeLast(r.shapes[0].length), disposed: fc.nat(60).map((n) => n === 0) }),
  b: fc.record({ base: fc.constant(1), views: transposeLast(r.shapes[1].length), disposed: fc.nat(60).map((n) => n === 0) }),
  out: fc.oneof({ weight: 10, arbitrary: fc.constant(0) }, { weight: 6, arbitrary: fc.integer({ min: 1, max: 6 }) }),
  outJunk: junkArb,
  opts: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'x', 5).map((junk) => ({ junk })) }),
  allowTf32: fc.option(fc.boolean(), { nil: undefined }),
}));

/** No view, or a transpose and back (same shape, not contiguous when the base has two dims > 1). */
function transposeLast(ndim: number): fc.Arbitrary<TensorArg['views']> {
  if (ndim < 2) return fc.constant<ViewStep[]>([]);
  const step: ViewStep = { op: 'transpose', a: ndim - 1, b: ndim - 2, c: 0 };
  return fc.oneof({ weight: 3, arbitrary: fc.constant<ViewStep[]>([]) }, { weight: 1, arbitrary: fc.constant<ViewStep[]>([step, step]) });
}

function matmulPlan(inp: MatmulInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const a = resolveArg(inp.a, bases), b = resolveArg(inp.b, bases);
  let outT: ModelTensor | undefined;
  const decide = (): { verdict: Plan['verdict']; writes?: ModelTensor } => {
    // null options are no options (as for the other ops); a string or number is a TypeError naming gx.matmul.
    if (inp.opts !== undefined && typeof inp.opts.junk !== 'object') return { verdict: errorVerdict('options of the wrong kind') };
    if (a.disposed || b.disposed) return { verdict: errorVerdict('a disposed operand') };
    const sa = a.layout.shape, sb = b.layout.shape;
    if (sa.length === 0 || sb.length === 0) return { verdict: errorVerdict('a 0-d operand') };
    if (a.dtype !== b.dtype) return { verdict: errorVerdict('dtypes differ') };
    if (!isFloat(a.dtype)) return { verdict: errorVerdict(`matmul of ${a.dtype}`) };
    if (deviceOf(a, device) !== deviceOf(b, device)) return { verdict: errorVerdict('operands on two devices') };
    const as = sa.length === 1 ? [1, sa[0]] : sa, bs = sb.length === 1 ? [sb[0], 1] : sb;
    const [m, k] = as.slice(-2), [k2, n] = bs.slice(-2);
    if (k !== k2) return { verdict: errorVerdict('inner sizes differ') };
    const batch = broadcast([as.slice(0, -2), bs.slice(0, -2)]);
    if (batch === undefined) return { verdict: errorVerdict('batch dims that do not broadcast') };
    const shape = [...batch, ...(sa.length === 1 ? [] : [m]), ...(sb.length === 1 ? [] : [n])];
    const dtype = a.dtype;
    let target: ModelTensor | undefined;
    const useOut = inp.opts === undefined || (typeof inp.opts.junk === 'object' && inp.opts.junk !== null);
    if (useOut && inp.out === 6 && inp.outJunk !== undefined) return { verdict: errorVerdict('out of the wrong kind') };
    if (useOut && inp.out >= 1 && inp.out <= 5) {
      target = inp.out === 4 ? a : inp.out === 5 ? b
        : freshTensor(bases, inp.out === 3 ? (dtype === 'float32' ? 'float64' : 'float32') : dtype, shape, inp.out === 2 ? 1 : 0);
      outT = target;
      const ts = target.layout.shape;
      if (target.disposed) return { verdict: errorVerdict('out is disposed') };
      if (target.dtype !== dtype || !isContiguousLayout(target.layout) || ts.length !== shape.length || ts.some((s, i) => s !== shape[i])
        || deviceOf(target, device) !== deviceOf(a, device)) {
        return { verdict: errorVerdict('out of another dtype, shape or layout') };
      }
    }
    // float64 reference, batch by batch.
    const bi = (full: readonly number[], own: readonly number[]) => {
      const lead = full.length - own.length;
      return (idx: number[]): number => {
        let o = 0;
        for (let d = 0; d < own.length; d++) o = o * own[d] + (own[d] === 1 ? 0 : idx[lead + d]);
        return o;
      };
    };
    const ba = bi(batch, as.slice(0, -2)), bb = bi(batch, bs.slice(0, -2));
    const av = a.values.map(Number), bv = b.values.map(Number);
    const values: (V | undefined)[] = [];
    const atol: number[] = [];
    const big = dtype === 'float64' ? Number.MAX_VALUE : 3.4e38;
    const tiny = { float64: 5e-324, float32: 1.5e-45, bfloat16: 9.2e-41, float16: 6e-8 }[dtype as 'float64'] ?? 0;
    const tf32 = dtype === 'float32' && device !== 'cpu' && (inp.allowTf32 ?? gx.getFloat32MatmulPrecision() === 'high');
    const eps = dtype === 'float64' ? 2 ** -53 : tf32 ? 2 ** -11 : 2 ** -24;
    const flushTf32 = (v: number): number => (tf32 && Math.abs(v) <= 2 ** -137 ? 0 : v);
    const nb = numel(batch);
    for (let t = 0; t < nb; t++) {
      const idx: number[] = [];
      let rest = t;
      for (let d = batch.length - 1; d >= 0; d--) {
        idx[d] = rest % batch[d];
        rest = Math.floor(rest / batch[d]);
      }
      const oa = ba(idx) * m * k, ob = bb(idx) * k * n;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let s = 0, abs = 0, inputs = 0, unsure = false;
          for (let l = 0; l < k; l++) {
            // TF32 has no value below half its subnormal spacing (2^-136): such an input is 0 there.
            const x = flushTf32(av[oa + i * k + l]), y = flushTf32(bv[ob + l * n + j]);
            const p = x * y;
            s += p;
            if (Number.isFinite(p)) abs += Math.abs(p);
            if (Number.isFinite(x) && Number.isFinite(y)) inputs += Math.abs(x) + Math.abs(y);
            // An infinity times a TF32-flushed tiny input: NaN, or +-inf where cuBLAS picks a kernel without TF32.
            const raw = [av[oa + i * k + l], bv[ob + l * n + j]];
            if (tf32 && raw.some((v) => !Number.isFinite(v)) && raw.some((v) => v !== 0 && Math.abs(v) <= 2 ** -137)) unsure = true;
            // Finite factors whose product overflows: a fused multiply-add (BLAS kernels, cuBLAS) keeps the
            // product exact and adds it to the sum, so an infinity elsewhere in the sum wins (+-inf) where
            // rounding the product first gives inf - inf = NaN. No promise on that element either.
            if (Number.isFinite(x) && Number.isFinite(y) && !Number.isFinite(p)) unsure = true;
          }
          // Finite products that may overflow the accumulator in some order: no promise on that element.
          values.push(abs > big / 4 || unsure ? undefined : cast(s, dtype));
          // TF32 keeps 10 mantissa bits in subnormals too: its spacing there is 2^-136.
          // TF32 rounds a subnormal input to a multiple of 2^-136, an error the other factor scales.
          atol.push((k + 2) * eps * abs + (k + 1) * (tf32 ? 2 ** -135 * (inputs + 1) : tiny));
        }
      }
    }
    const al = aliasing(target, [a, b], false);
    return {
      verdict: { kind: 'ok', expect: { dtype, shape, values, rtol: 2 * epsOf(dtype), atol: (i) => atol[i] }, ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}) },
      writes: target,
    };
  };
  const d = decide();
  return {
    bases,
    plan: {
      names: ['gx.matmul'],
      verdict: d.verdict,
      writes: d.writes,
      prepare: (pool) => {
        const ta = pool.tensor(a), tb = pool.tensor(b);
        let opts: unknown;
        let returns: gx.Tensor | undefined;
        if (inp.opts !== undefined) {
          opts = inp.opts.junk;
        } else {
          const o: Record<string, unknown> = {};
          if (inp.allowTf32 !== undefined) o.allowTf32 = inp.allowTf32;
          if (inp.out === 6) o.out = inp.outJunk;
          else if (inp.out >= 1 && outT !== undefined) {
            const out = inp.out === 4 ? ta : inp.out === 5 ? tb : pool.tensor(outT);
            o.out = out;
            returns = out;
          }
          opts = o;
        }
        return { call: () => gx.matmul(ta, tb, opts as gx.MatmulOptions), returns };
      },
    },
  };
}

export const matmulProperty: FuzzProperty<MatmulInput> = {
  name: 'matmul', about: 'gx.matmul: vectors, broadcast batches, views, out, allowTf32', arb: matmulArb, plan: matmulPlan, weight: 0.7,
};

// --- svd ------------------------------------------------------------------------

export interface SvdInput {
  bases: BaseSpec[];
  a: TensorArg;
  full?: boolean;
  junkOpts: boolean;
}

export const svdArb: fc.Arbitrary<SvdInput> = fc.record({
  m: fc.integer({ min: 0, max: 6 }), n: fc.integer({ min: 0, max: 6 }), d: fc.oneof({ weight: 8, arbitrary: fc.constantFrom<DType>('float32', 'float64') },
    { weight: 1, arbitrary: dtypeArb }), rank: fc.nat(12),
}).chain((r) => {
  const shape = r.rank === 0 ? [r.m] : r.rank === 1 ? [2, r.m, r.n] : [r.m, r.n];
  return fc.record({
    bases: baseOf(r.d, shape).map((b) => [b]),
    a: fc.record({ base: fc.constant(0), views: transposeLast(shape.length), disposed: fc.nat(60).map((n) => n === 0) }),
    full: fc.option(fc.boolean(), { nil: undefined }),
    junkOpts: fc.nat(30).map((n) => n === 0),
  });
});

type Mat = number[][];

function matOf(t: gx.Tensor): Mat {
  const [r, c] = t.shape;
  const v = Array.from(t.toArraySync() as ArrayLike<number>);
  return Array.from({ length: r }, (_, i) => v.slice(i * c, (i + 1) * c));
}

function svdCheck(a: readonly number[], m: number, n: number, dtype: DType, full: boolean) {
  return (r: unknown): string | undefined => {
    if (typeof r !== 'object' || r === null) return 'did not return { U, S, Vh }';
    const { U, S, Vh } = r as Record<string, unknown>;
    if (!(U instanceof gx.Tensor) || !(S instanceof gx.Tensor) || !(Vh instanceof gx.Tensor)) return 'U, S or Vh is not a Tensor';
    const k = Math.min(m, n);
    const want: [gx.Tensor, number[]][] = [[U, full ? [m, m] : [m, k]], [S, [k]], [Vh, full ? [n, n] : [k, n]]];
    for (const [t, s] of want) {
      if (t.dtype !== dtype) return `dtype ${t.dtype}, expected ${dtype}`;
      if (t.shape.length !== s.length || t.shape.some((v, i) => v !== s[i])) return `a result of shape [${t.shape}], expected [${s}]`;
    }
    // No promise beyond the shapes for non-finite entries, or singular values past the dtype's range.
    const norm = Math.sqrt(a.reduce((acc, v) => acc + v * v, 0));
    if (a.some((v) => !Number.isFinite(v)) || norm > (dtype === 'float64' ? 1e307 : 1.7e38)) return undefined;
    const s = Array.from(S.toArraySync() as ArrayLike<number>);
    const u = matOf(U), vh = matOf(Vh);
    const scale = Math.max(1e-300, ...a.map(Math.abs));
    // Relative to A's largest entry, plus an absolute floor at the dtype's smallest normal number: below it the
    // spacing of representable values is absolute (a subnormal A's S underflows by a whole subnormal step), as
    // LAPACK's error bounds add an underflow term.
    const tol = (dtype === 'float64' ? 1e-11 : 2e-5) * Math.max(m, n, 1) * scale + Math.max(m, n, 1) * (dtype === 'float64' ? 2 ** -1022 : 2 ** -126);
    for (let i = 0; i < k; i++) {
      if (!(s[i] >= 0)) return `S[${i}] = ${s[i]} is negative`;
      if (i > 0 && s[i] > s[i - 1] + tol) return `S is not descending: ${s}`;
    }
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let x = 0;
        for (let l = 0; l < k; l++) x += u[i][l] * s[l] * vh[l][j];
        if (!(Math.abs(x - a[i * n + j]) <= tol)) return `U diag(S) Vh [${i}, ${j}] is ${x}, A holds ${a[i * n + j]} (tol ${tol})`;
      }
    }
    const orth = (rows: Mat, byColumns: boolean, what: string): string | undefined => {
      const cnt = byColumns ? (rows[0]?.length ?? 0) : rows.length;
      const len = byColumns ? rows.length : (rows[0]?.length ?? 0);
      const at = (p: number, q: number): number => (byColumns ? rows[q][p] : rows[p][q]);
      const utol = dtype === 'float64' ? 1e-10 : 1e-4;
      for (let p = 0; p < cnt; p++) {
        for (let q = 0; q <= p; q++) {
          let x = 0;
          for (let l = 0; l < len; l++) x += at(p, l) * at(q, l);
          if (!(Math.abs(x - (p === q ? 1 : 0)) <= utol * Math.max(len, 1))) return `${what} is not orthonormal (${p}, ${q}: ${x})`;
        }
      }
      return undefined;
    };
    // Columns of U and rows of Vh that go with nonzero singular values are determined; all must be orthonormal.
    return orth(u, true, 'U') ?? orth(vh, false, 'Vh');
  };
}

function svdPlan(inp: SvdInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const a = resolveArg(inp.a, bases);
  const verdict = ((): Plan['verdict'] => {
    if (a.disposed) return errorVerdict('a disposed input');
    if (a.layout.shape.length !== 2) return errorVerdict('not a matrix');
    if (a.dtype !== 'float32' && a.dtype !== 'float64') return errorVerdict(`svd of ${a.dtype}`);
    if (deviceOf(a, device) !== device) return { kind: 'value', check: () => undefined };
    const [m, n] = a.layout.shape;
    const full = inp.junkOpts ? true : inp.full ?? true;
    // NaN or infinity: an Error naming gx.linalg.svd, as torch (cuSOLVER never returned for some).
    if (!inp.junkOpts && a.values.some((v) => !Number.isFinite(Number(v)))) return errorVerdict('a non-finite input');
    return {
      kind: 'value', check: svdCheck(a.values.map(Number), m, n, a.dtype, full),
      ...(inp.junkOpts ? { mayThrow: 'options of the wrong kind' } : {}),
    };
  })();
  return {
    bases,
    plan: {
      names: ['gx.linalg.svd'],
      verdict,
      prepare: (pool) => {
        const t = pool.tensor(a);
        const opts: unknown = inp.junkOpts ? 'opts' : inp.full === undefined ? undefined : { fullMatrices: inp.full };
        return { call: () => gx.linalg.svd(t, opts as { fullMatrices?: boolean }) };
      },
    },
  };
}

export const svdProperty: FuzzProperty<SvdInput> = {
  name: 'svd', about: 'gx.linalg.svd: reconstruction, order, orthonormality', arb: svdArb, plan: svdPlan, weight: 0.3, cudaWeight: 0.02,
};
