// Fuzz cases kept for good: every run of the suite tries them first, on
// every device. Two kinds:
//  - an explicit input (the counterexample a failure prints, as plain data),
//    which keeps working when the generators change;
//  - a { seed, path } a failure printed: it replays that very case while the
//    generators stay as they were (prefer the explicit input for long-lived
//    cases).
// Cases of a known bug (known.ts) pass, counted as known, until the bug is
// fixed; `npm run fuzz -- --strict` or GPUEXT_FUZZ_STRICT=1 make them fail.
// The issue 14 cases below were fixed before the suite landed.

export interface Regression {
  property: string;
  /** What it caught, and where it is tracked. */
  note: string;
  input?: unknown;
  seed?: number;
  path?: string;
}

const i64 = (xs: number[]): bigint[] => xs.map((x) => BigInt(x));
const zeros = (n: number): number[] => new Array<number>(n).fill(0);
const t = (base: number, views: { op: string; a: number; b: number; c: number }[] = []): unknown =>
  ({ kind: 'tensor', arg: { base, views } });

export const REGRESSIONS: readonly Regression[] = [
  {
    property: 'random',
    note: 'the test: float16 normal draws on CUDA and on the CPU, close in float32, rounded to neighbouring float16 values (0.77734375 and 0.77685546875), were refused',
    input: { op: 'randn', shape: [3], dtype: 'float16', seed: 1517802411, gen: 0, low: 0, high: 0, mean: undefined, std: undefined, junkOpts: false },
  },
  {
    property: 'unary',
    note: 'the reference: erf by its Taylor series was 7 ulps off at 2.3006 (26 near 2.44), and the op, right, was refused',
    input: {
      op: 'erf', form: 'fn',
      bases: [{ dtype: 'float64', shape: [2], data: [2.300649452127958, Number.NaN] }],
      x: { kind: 'tensor', arg: { base: 0, views: [], disposed: false } }, out: { kind: 'none' }, opts: undefined,
    },
  },
  {
    property: 'unary',
    note: 'the reference: gelu of a large negative int32 (erfc far out, its exp factors 0 and inf)',
    input: {
      op: 'gelu', form: 'fn', bases: [{ dtype: 'int32', shape: [], data: [-7485985] }],
      x: { kind: 'tensor', arg: { base: 0, views: [], disposed: false } }, out: { kind: 'none' }, opts: undefined,
    },
  },
  {
    property: 'svd',
    note: 'the reference: a float32 A of subnormal entries gives S a whole subnormal step off (S underflows), which a tolerance relative to A alone refused',
    input: {
      bases: [{ dtype: 'float32', shape: [1, 4], data: [0, 1.401298464324817e-45, 1.401298464324817e-45, -0] }],
      a: { base: 0, views: [], disposed: false }, full: undefined, junkOpts: false,
    },
  },
  {
    property: 'stats',
    note: 'the reference: std with no degrees of freedom of values that differ by a subnormal amount may be inf (its own sum of squares underflowed to 0)',
    input: {
      op: 'std', method: false, style: 2,
      bases: [{ dtype: 'float64', shape: [4, 5, 2, 1], data: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2.222758749485078e-162, Number.NaN, ...new Array<number>(24).fill(0)] }],
      x: { kind: 'tensor', arg: { base: 0, views: [{ op: 'narrow', a: 5, b: 1, c: 17 }], disposed: false } },
      axis: { kind: 'list', axes: [1] }, fit: false, keepdims: false, correction: 2, out: { kind: 'none' },
    },
  },
  {
    property: 'binary',
    note: 'issue 14 item 3: a.narrow(0, 1, 5).add_(a.narrow(0, 0, 5)) on arange(6) gave [0,1,3,6,10,15]',
    input: {
      op: 'add', form: 'inplace', bases: [{ dtype: 'int64', shape: [6], data: i64([0, 1, 2, 3, 4, 5]) }],
      self: t(0, [{ op: 'narrow', a: 0, b: 1, c: 5 }]), other: t(0, [{ op: 'narrow', a: 0, b: 0, c: 5 }]), out: { kind: 'none' },
    },
  },
  {
    property: 'binary',
    note: 'issue 14 item 3: gx.add(m, 0, { out: m.transpose(0, 1) }) gave [0,1,2,1,4,5,2,5,8]',
    input: {
      op: 'add', form: 'fn', bases: [{ dtype: 'int64', shape: [3, 3], data: i64([0, 1, 2, 3, 4, 5, 6, 7, 8]) }],
      self: t(0), other: { kind: 'scalar', value: 0 },
      out: { kind: 'alias', arg: { base: 0, views: [{ op: 'transpose', a: 0, b: 1, c: 0 }] } },
    },
  },
  {
    property: 'binary',
    note: 'issue 14 item 4: gx.minimum(tensor([1], uint8), tensor(-1, int16)) gave [255] (torch: 1)',
    input: {
      op: 'minimum', form: 'fn',
      bases: [{ dtype: 'uint8', shape: [1], data: [1] }, { dtype: 'int16', shape: [], data: [-1] }],
      self: t(0), other: t(1), out: { kind: 'none' },
    },
  },
  {
    property: 'binary',
    note: 'issue 14 item 4: gx.eq(tensor([94], uint8), tensor(-8610, int16)) gave false (torch: true)',
    input: {
      op: 'eq', form: 'fn',
      bases: [{ dtype: 'uint8', shape: [1], data: [94] }, { dtype: 'int16', shape: [], data: [-8610] }],
      self: t(0), other: t(1), out: { kind: 'none' },
    },
  },
  {
    property: 'binary',
    note: 'issue 14 item 4: gx.remainder(tensor([221], uint8), tensor(815421721, int32)) gave 221 (torch: 21)',
    input: {
      op: 'remainder', form: 'fn',
      bases: [{ dtype: 'uint8', shape: [1], data: [221] }, { dtype: 'int32', shape: [], data: [815421721] }],
      self: t(0), other: t(1), out: { kind: 'none' },
    },
  },
  {
    property: 'create',
    note: 'issue 14 item 5: gx.tensor([1 + 2 ** -11 + 2 ** -40], { dtype: float16 }) gave 1.0009765625 (through float32: 1)',
    input: {
      op: 'tensor', kind: 'nested', shape: [1], vdtype: 'float32', values: [1 + 2 ** -11 + 2 ** -40], dtype: 'float16', reshape: 0,
      nums: [0, 0, 0], scalar: 0, badShape: 0, junkOpts: false,
    },
  },
  {
    property: 'create',
    note: 'gx.full([1, 1, 1], 2n ** 63n - 1n, { dtype: float16 }) is inf, as torch.full (its conversion checks only float32)',
    input: {
      op: 'full', kind: 'typed', shape: [1, 1, 1], vdtype: 'bfloat16', values: [0], dtype: 'float16', reshape: 2,
      nums: [0, 0, 0], scalar: 9223372036854775807n, badShape: 0, junkOpts: false,
    },
  },
  {
    property: 'methods',
    note: 'Tensor.fill_(2n ** 63n - 1n) of a float16 tensor is inf, as torch\'s fill_ (its conversion checks only float32)',
    input: {
      op: 'fill_', bases: [{ dtype: 'float16', shape: [1], data: [1] }, { dtype: 'float16', shape: [4], data: [1, 0, 0, 0] }],
      x: { base: 0, views: [], disposed: false }, src: { base: 0, views: [{ op: 'transpose', a: 0, b: 0, c: 0 }], disposed: false },
      value: 9223372036854775807n, device: 'cpu',
    },
  },
  {
    property: 'create',
    note: 'gx.linspace(0, 4, 4) is [0, 1.3333334, 2.6666665, 4] as torch\'s (float32 steps, a fused multiply-add; the double formula gave 2.6666667)',
    input: {
      op: 'linspace', kind: 'scalar', shape: [3, 2], vdtype: 'float32', values: [0, 0, 0, 0, 0, 0], dtype: 'float32', reshape: 2,
      nums: [0, 4, 4], scalar: undefined, badShape: 0, junkOpts: false,
    },
  },
  {
    property: 'create',
    note: 'gx.full([2], -1, { dtype: uint8 }) is [255, 255], as torch.full\'s checked conversion wraps it (it was refused)',
    input: {
      op: 'full', kind: 'scalar', shape: [2], vdtype: 'float32', values: [0, 0], dtype: 'uint8', reshape: 0,
      nums: [0, 0, 0], scalar: -1, badShape: 0, junkOpts: false,
    },
  },
  {
    property: 'create',
    note: 'gx.linspace(0, -1, 0, { dtype: uint8 }) is empty, as torch\'s: torch checks no bound for 0 steps (the oracle refused it)',
    input: {
      op: 'linspace', kind: 'typed', shape: [2, 3, 2], vdtype: 'int8', values: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype: 'uint8', reshape: 2,
      nums: [0, -1, 0], scalar: 0, badShape: 0, junkOpts: false,
    },
  },
  {
    property: 'binary',
    note: 'KNOWN fuzz 1: gx.logicalAnd(tensor([1], uint8), tensor(256, int16)) gives [true] (torch: false)',
    input: {
      op: 'logicalAnd', form: 'fn',
      bases: [{ dtype: 'uint8', shape: [1], data: [1] }, { dtype: 'int16', shape: [], data: [256] }],
      self: t(0), other: t(1), out: { kind: 'none' },
    },
  },
  {
    property: 'reduce',
    note: 'KNOWN fuzz 2: gx.sum(tensor([1e300, -1e300], float64), { dtype: float32 }) gives 0 (torch: NaN)',
    input: {
      op: 'sum', method: false, style: 2, bases: [{ dtype: 'float64', shape: [2], data: [1e300, -1e300] }], x: t(0),
      axis: { kind: 'none' }, fit: true, keepdims: false, dtype: 'float32', dtypeAnyway: false, out: { kind: 'none' }, junk: 'x',
    },
  },
  {
    property: 'stats',
    note: 'KNOWN fuzz 3: gx.var(tensor([NaN]), { correction: 0 }) gives 0 (torch: NaN)',
    input: {
      op: 'var', method: false, style: 2, bases: [{ dtype: 'float32', shape: [1], data: [Number.NaN] }], x: t(0),
      axis: { kind: 'none' }, fit: true, keepdims: false, correction: 0, out: { kind: 'none' },
    },
  },
  {
    property: 'methods',
    note: 'KNOWN fuzz 8: m.copy_(m.transpose(0, 1)) on arange(9).view(3, 3) is not the transpose',
    input: {
      op: 'copy_', bases: [{ dtype: 'int64', shape: [3, 3], data: i64([0, 1, 2, 3, 4, 5, 6, 7, 8]) }, { dtype: 'int64', shape: [1], data: [1n] }],
      x: { base: 0, views: [] }, src: { base: 0, views: [{ op: 'transpose', a: 0, b: 1, c: 0 }] }, value: 0, device: 'cpu',
    },
  },
  {
    property: 'matmul',
    note: 'the reference: 1e300 * 1e300 beside -inf in one dot product is -inf with a fused multiply-add (the product kept exact, as the batched CPU kernel and cuBLAS do), NaN with the product rounded first',
    input: {
      bases: [
        { dtype: 'float64', shape: [1, 3, 4, 4], data: [0.5, 1, 0, 1e300, 0, 0, 0, 0, 0, Number.NaN, ...zeros(19), Number.NaN, ...zeros(18)] },
        { dtype: 'float64', shape: [1, 3, 4, 3], data: [0, 0, 0, Number.NaN, Number.NEGATIVE_INFINITY, 0, 0, 0, 0, 0, 1e300, ...zeros(9), Number.NaN, ...zeros(15)] },
      ],
      a: { base: 0, views: [], disposed: false }, b: { base: 1, views: [], disposed: false },
      out: 0, outJunk: undefined, opts: undefined, allowTf32: undefined,
    },
  },
];

/** The explicit inputs kept for a property. */
export function examplesFor(property: string): unknown[] {
  return REGRESSIONS.filter((r) => r.property === property && r.input !== undefined).map((r) => r.input);
}
