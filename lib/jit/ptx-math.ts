// Math.* as PTX instructions, for the functions math-table.ts gives a PTX
// face: those whose CUDA spelling (emit-cuda.ts, cuda-helpers.ts) is a single
// IEEE-exact instruction or a few of them (sqrt, abs, floor, ceil, trunc,
// round, sign, min, max), so both paths compute the same bits. The others
// (exp, sin, pow ...) are library code; a kernel calling one goes through
// NVRTC (NOTE [ PTX path ] in emit-ptx.ts).
import { PTX_TYPE, type Out } from './ptx-isa';

export type FloatD = 'float32' | 'float64';
export type IntD = 'int32' | 'int64';
export type PtxMath = (o: Out, d: FloatD, args: readonly string[]) => string;
export type PtxIntMath = (o: Out, d: IntD, args: readonly string[]) => string;

const cls = (d: FloatD | IntD): 'f32' | 'f64' | 's32' | 's64' => PTX_TYPE[d] as 'f32' | 'f64' | 's32' | 's64';
const one = (d: FloatD): string => (d === 'float32' ? '0f3F800000' : '0d3FF0000000000000');
const half = (d: FloatD): string => (d === 'float32' ? '0f3F000000' : '0d3FE0000000000000');
const minusOne = (d: FloatD): string => (d === 'float32' ? '0fBF800000' : '0dBFF0000000000000');

/** One instruction of one operand: `ins.type r, x`. */
export const unary = (ins: string): PtxMath => (o, d, [x]) => {
  const r = o.reg(cls(d));
  o.ins(`${ins}.${cls(d)} ${r}, ${x};`);
  return r;
};
/** A rounding to an integral float: cvt.<mode>.f32.f32 (floorf, ceilf, truncf). */
export const integral = (mode: 'rmi' | 'rpi' | 'rzi'): PtxMath => (o, d, [x]) => {
  const r = o.reg(cls(d));
  o.ins(`cvt.${mode}.${cls(d)}.${cls(d)} ${r}, ${x};`);
  return r;
};

/** JS's Math.round: floor(x + 0.5), as gx_jit_roundf. */
export const round: PtxMath = (o, d, [x]) => {
  const s = o.reg(cls(d));
  o.ins(`add.rn.${cls(d)} ${s}, ${x}, ${half(d)};`);
  return integral('rmi')(o, d, [s]);
};

/** x > 0 ? 1 : x < 0 ? -1 : x (so NaN and -0 come back), as gx_jit_signf. */
export const sign: PtxMath = (o, d, [x]) => {
  const t = cls(d);
  const gt = o.reg('pred'), lt = o.reg('pred'), r = o.reg(t);
  o.ins(`setp.gt.${t} ${gt}, ${x}, ${d === 'float32' ? '0f00000000' : '0d0000000000000000'};`);
  o.ins(`setp.lt.${t} ${lt}, ${x}, ${d === 'float32' ? '0f00000000' : '0d0000000000000000'};`);
  o.ins(`selp.${t} ${r}, ${minusOne(d)}, ${x}, ${lt};`);
  o.ins(`selp.${t} ${r}, ${one(d)}, ${r}, ${gt};`);
  return r;
};

/** JS's Math.min / Math.max: NaN propagates (as a + b), and -0 is below +0 (gx_jit_minf / gx_jit_maxf). */
export const minMax = (which: 'min' | 'max'): PtxMath => (o, d, [a, b]) => {
  const t = cls(d);
  const nan = o.reg('pred'), first = o.reg('pred'), second = o.reg('pred'), neg = o.reg('pred');
  const sum = o.reg(t), r = o.reg(t), bits = o.reg(d === 'float32' ? 's32' : 's64');
  const rel = which === 'min' ? 'lt' : 'gt';
  o.ins(`setp.nan.${t} ${nan}, ${a}, ${b};`);
  o.ins(`add.rn.${t} ${sum}, ${a}, ${b};`);
  o.ins(`setp.${rel}.${t} ${first}, ${a}, ${b};`);
  o.ins(`setp.${rel}.${t} ${second}, ${b}, ${a};`);
  o.ins(`mov.b${d === 'float32' ? 32 : 64} ${bits}, ${a};`);
  o.ins(`setp.lt.s${d === 'float32' ? 32 : 64} ${neg}, ${bits}, 0;`);
  // Equal operands (a zero of each sign): min takes the negative one, max the other.
  o.ins(which === 'min' ? `selp.${t} ${r}, ${a}, ${b}, ${neg};` : `selp.${t} ${r}, ${b}, ${a}, ${neg};`);
  o.ins(`selp.${t} ${r}, ${b}, ${r}, ${second};`);
  o.ins(`selp.${t} ${r}, ${a}, ${r}, ${first};`);
  o.ins(`selp.${t} ${r}, ${sum}, ${r}, ${nan};`);
  return r;
};

/** Integer min / max (gx_jit_imin / gx_jit_imax). */
export const intMinMax = (which: 'min' | 'max'): PtxIntMath => (o, d, [a, b]) => {
  const r = o.reg(cls(d));
  o.ins(`${which}.${cls(d)} ${r}, ${a}, ${b};`);
  return r;
};

/** Integer abs, wrapping (the most negative value is its own abs), as gx_jit_iabs. */
export const intAbs: PtxIntMath = (o, d, [x]) => {
  const t = cls(d);
  const n = o.reg(t), lt = o.reg('pred'), r = o.reg(t);
  o.ins(`neg.${t} ${n}, ${x};`);
  o.ins(`setp.lt.${t} ${lt}, ${x}, 0;`);
  o.ins(`selp.${t} ${r}, ${n}, ${x}, ${lt};`);
  return r;
};

/** (x > 0) - (x < 0), as gx_jit_isign. */
export const intSign: PtxIntMath = (o, d, [x]) => {
  const t = cls(d);
  const gt = o.reg('pred'), lt = o.reg('pred'), r = o.reg(t);
  o.ins(`setp.gt.${t} ${gt}, ${x}, 0;`);
  o.ins(`setp.lt.${t} ${lt}, ${x}, 0;`);
  o.ins(`selp.${t} ${r}, -1, 0, ${lt};`);
  o.ins(`selp.${t} ${r}, 1, ${r}, ${gt};`);
  return r;
};
