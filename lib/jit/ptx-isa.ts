// The PTX emitter's instruction selection (emit-ptx.ts prints statements and
// control flow): one typed IR operation at a time, each the instruction
// sequence that computes what lib/jit/LANGUAGE.md says, as the CUDA the C
// emitter prints computes it under the jit's default options (no
// contraction: every add, sub and mul carries an explicit .rn, which ptxas
// never fuses; IEEE division and square root; no flush to zero).
import type { DType } from '../core/dtype';
import { dtypeInfo } from '../generated/dtypes';
import { isFloat, type ScalarDType } from './types';

/** An operation a PTX function cannot print: the kernel then goes through NVRTC (NOTE [ PTX path ] in emit-ptx.ts). */
export class PtxUnsupported extends Error {}

export const unsupported = (what: string): never => {
  throw new PtxUnsupported(what);
};

/** The PTX type of a value of each compute dtype. */
export const PTX_TYPE: Record<Exclude<ScalarDType, 'bool'>, string> = { int32: 's32', int64: 's64', float32: 'f32', float64: 'f64' };
/** The bit type of the same width (moves, parameters, shuffles). */
export const BIT_TYPE: Record<ScalarDType, string> = { bool: 'pred', int32: 'b32', int64: 'b64', float32: 'b32', float64: 'b64' };

/** The register classes of a function: declared once each, numbered. */
export type RegClass = 'pred' | 'b16' | 's32' | 's64' | 'f32' | 'f64';
export const REG_PREFIX: Record<RegClass, string> = { pred: '%p', b16: '%h', s32: '%r', s64: '%rd', f32: '%f', f64: '%fd' };
export const classOf = (d: ScalarDType): RegClass => (d === 'bool' ? 'pred' : (PTX_TYPE[d] as RegClass));

/** What an instruction selector needs of its function: fresh registers, instructions, labels. */
export interface Out {
  reg(c: RegClass): string;
  ins(text: string): void;
  label(): string;
  place(label: string): void;
}

const hex = (v: bigint, bits: number): string => `0x${BigInt.asUintN(bits, v).toString(16).padStart(bits / 4, '0')}`;

/** A literal of `d` as a PTX immediate (floats by their bits: every value, -0 and NaN's included, reads back exactly). */
export function immediate(d: ScalarDType, v: number | bigint | boolean): string {
  switch (d) {
    case 'bool': return v === true || v === 1 || v === 1n ? '1' : '0';
    case 'int32': return hex(BigInt(v), 32);
    case 'int64': return hex(BigInt(v), 64);
    case 'float32': {
      const b = new DataView(new ArrayBuffer(4));
      b.setFloat32(0, Number(v));
      return `0f${b.getUint32(0).toString(16).padStart(8, '0').toUpperCase()}`;
    }
    case 'float64': {
      const b = new DataView(new ArrayBuffer(8));
      b.setFloat64(0, Number(v));
      return `0d${b.getBigUint64(0).toString(16).padStart(16, '0').toUpperCase()}`;
    }
  }
}

/** A register of `d` holding literal `v`. */
export function literal(o: Out, d: ScalarDType, v: number | bigint | boolean): string {
  const r = o.reg(classOf(d));
  if (d === 'bool') o.ins(`setp.ne.u32 ${r}, ${immediate('bool', v)}, 0;`);
  else o.ins(`mov.${BIT_TYPE[d]} ${r}, ${immediate(d, v)};`);
  return r;
}

/** C's conversion of `x` (of `from`) to `to`, with the language's float-to-integer rule (toward zero, saturating, NaN 0). */
export function convert(o: Out, x: string, from: ScalarDType, to: ScalarDType): string {
  if (from === to) return x;
  const r = o.reg(classOf(to));
  if (from === 'bool') {
    const [one, zero] = to === 'bool' ? ['1', '0'] : [immediate(to, 1), immediate(to, 0)];
    o.ins(`selp.${BIT_TYPE[to]} ${r}, ${one}, ${zero}, ${x};`);
    return r;
  }
  const f = PTX_TYPE[from];
  if (to === 'bool') {
    // JS truthiness: nonzero and not NaN (setp.ne is the ordered comparison: false on NaN).
    o.ins(`setp.ne.${f} ${r}, ${x}, ${immediate(from, 0)};`);
    return r;
  }
  const t = PTX_TYPE[to];
  const fromFloat = from === 'float32' || from === 'float64';
  const toFloat = to === 'float32' || to === 'float64';
  if (fromFloat && !toFloat) {
    // cvt.rzi saturates; NaN, which it turns into the most negative integer, is made 0 (LANGUAGE.md "Conversions").
    const nan = o.reg('pred');
    o.ins(`cvt.rzi.${t}.${f} ${r}, ${x};`);
    o.ins(`setp.nan.${f} ${nan}, ${x}, ${x};`);
    o.ins(`selp.${t} ${r}, 0, ${r}, ${nan};`);
    return r;
  }
  if (!fromFloat && toFloat) o.ins(`cvt.rn.${t}.${f} ${r}, ${x};`);
  else if (fromFloat) o.ins(from === 'float64' ? `cvt.rn.f32.f64 ${r}, ${x};` : `cvt.f64.f32 ${r}, ${x};`);
  else o.ins(to === 'int64' ? `cvt.s64.s32 ${r}, ${x};` : `cvt.u32.u64 ${r}, ${x};`);
  return r;
}


/** `a op b` of two operands of `d` (already converted). */
export function arith(o: Out, op: string, d: ScalarDType, a: string, b: string): string {
  if (d === 'bool') return unsupported(`${op} on bool`);
  const t = PTX_TYPE[d];
  const r = o.reg(classOf(d));
  const float = isFloat(d);
  const bits = d === 'int64' ? 64 : 32;
  switch (op) {
    case '+': o.ins(float ? `add.rn.${t} ${r}, ${a}, ${b};` : `add.${t} ${r}, ${a}, ${b};`); return r;
    case '-': o.ins(float ? `sub.rn.${t} ${r}, ${a}, ${b};` : `sub.${t} ${r}, ${a}, ${b};`); return r;
    case '*': o.ins(float ? `mul.rn.${t} ${r}, ${a}, ${b};` : `mul.lo.${t} ${r}, ${a}, ${b};`); return r;
    case '/':
      if (!float) return unsupported('integer division');
      o.ins(`div.rn.${t} ${r}, ${a}, ${b};`);
      return r;
    case '%': {
      if (float) return unsupported('fmod');
      // C's remainder; by 0 and by -1 (INT_MIN % -1 traps) it is 0 (LANGUAGE.md).
      const z = o.reg('pred'), m = o.reg('pred'), safe = o.reg(classOf(d));
      o.ins(`setp.eq.${t} ${z}, ${b}, 0;`);
      o.ins(`setp.eq.or.${t} ${m}, ${b}, -1, ${z};`);
      o.ins(`selp.${t} ${safe}, 1, ${b}, ${m};`);
      o.ins(`rem.${t} ${r}, ${a}, ${safe};`);
      o.ins(`selp.${t} ${r}, 0, ${r}, ${m};`);
      return r;
    }
    case '&': case '|': case '^': {
      if (float) return unsupported(`${op} on floats`);
      const name = op === '&' ? 'and' : op === '|' ? 'or' : 'xor';
      o.ins(`${name}.b${bits} ${r}, ${a}, ${b};`);
      return r;
    }
    case '<<': case '>>': case '>>>': {
      if (float) return unsupported(`${op} on floats`);
      // The count is masked to the width first, as JS and the C emitter do (PTX would clamp it instead).
      const n = o.reg('s32');
      o.ins(d === 'int64' ? `cvt.u32.u64 ${n}, ${b};` : `mov.b32 ${n}, ${b};`);
      o.ins(`and.b32 ${n}, ${n}, ${bits - 1};`);
      const ins = op === '<<' ? `shl.b${bits}` : op === '>>' ? `shr.s${bits}` : `shr.u${bits}`;
      o.ins(`${ins} ${r}, ${a}, ${n};`);
      return r;
    }
    case '**':
      if (d !== 'int32' && d !== 'int64') return unsupported('pow');
      return intPow(o, d, a, b);
    default: return unsupported(`the operator ${op}`);
  }
}

/** Integer power, wrapping; a negative exponent gives the truncated real power (gx_jit_ipow: 1 and -1 keep a value, all else 0). */
function intPow(o: Out, d: 'int32' | 'int64', b: string, e: string): string {
  const t = PTX_TYPE[d];
  const r = o.reg(classOf(d)), x = o.reg(classOf(d)), n = o.reg(classOf(d)), bit = o.reg(classOf(d));
  const neg = o.reg('pred'), odd = o.reg('pred'), done = o.reg('pred'), one = o.reg('pred'), minus = o.reg('pred');
  const loop = o.label(), negative = o.label(), end = o.label();
  o.ins(`setp.lt.${t} ${neg}, ${e}, 0;`);
  o.ins(`@${neg} bra ${negative};`);
  o.ins(`mov.${t} ${r}, 1;`);
  o.ins(`mov.${t} ${x}, ${b};`);
  o.ins(`mov.${t} ${n}, ${e};`);
  o.place(loop);
  o.ins(`setp.eq.${t} ${done}, ${n}, 0;`);
  o.ins(`@${done} bra ${end};`);
  o.ins(`and.b${d === 'int64' ? 64 : 32} ${bit}, ${n}, 1;`);
  o.ins(`setp.ne.${t} ${odd}, ${bit}, 0;`);
  o.ins(`@${odd} mul.lo.${t} ${r}, ${r}, ${x};`);
  o.ins(`mul.lo.${t} ${x}, ${x}, ${x};`);
  o.ins(`shr.s${d === 'int64' ? 64 : 32} ${n}, ${n}, 1;`);
  o.ins(`bra.uni ${loop};`);
  o.place(negative);
  o.ins(`and.b${d === 'int64' ? 64 : 32} ${bit}, ${e}, 1;`);
  o.ins(`setp.ne.${t} ${odd}, ${bit}, 0;`);
  o.ins(`setp.eq.${t} ${one}, ${b}, 1;`);
  o.ins(`setp.eq.${t} ${minus}, ${b}, -1;`);
  o.ins(`selp.${t} ${r}, -1, 1, ${odd};`);
  o.ins(`selp.${t} ${r}, ${r}, 0, ${minus};`);
  o.ins(`selp.${t} ${r}, 1, ${r}, ${one};`);
  o.place(end);
  return r;
}

const CMP: Record<string, string> = { '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge', '==': 'eq', '!=': 'ne' };

/** A comparison of two operands of `d`: floats as C compares them (ordered, but != is true on NaN). */
export function compare(o: Out, op: string, d: ScalarDType, a: string, b: string): string {
  const r = o.reg('pred');
  if (d === 'bool') {
    if (op !== '==' && op !== '!=') return unsupported(`${op} on bools`);
    o.ins(`xor.pred ${r}, ${a}, ${b};`);
    if (op === '==') o.ins(`not.pred ${r}, ${r};`);
    return r;
  }
  const c = op === '!=' && isFloat(d) ? 'neu' : CMP[op];
  if (c === undefined) return unsupported(`the comparison ${op}`);
  o.ins(`setp.${c}.${PTX_TYPE[d]} ${r}, ${a}, ${b};`);
  return r;
}

/** The load / store type of an element of `d`, from the dtype list's kind and size (float16 / bfloat16 and bool then convert through a register of their own). */
export function elementType(d: DType): string {
  const { kind, itemsize } = dtypeInfo(d);
  const bits = itemsize * 8;
  return kind === 'f' ? (bits === 16 ? 'b16' : `f${bits}`) : kind === 'i' ? `s${bits}` : `u${bits}`;
}

export const elementSize = (d: DType): number => dtypeInfo(d).itemsize;

/** An element of dtype `d` at `addr` (in `space`: '' generic, '.shared', '.local') in its compute type `c`. */
export function loadElement(o: Out, space: string, d: DType, c: ScalarDType, addr: string): string {
  if (d === 'float16' || d === 'bfloat16') {
    const h = o.reg('b16'), r = o.reg('f32');
    o.ins(`ld${space}.b16 ${h}, [${addr}];`);
    if (d === 'float16') o.ins(`cvt.f32.f16 ${r}, ${h};`);
    else {
      // A bfloat16 is the high half of the float32 it stands for.
      const w = o.reg('s32');
      o.ins(`cvt.u32.u16 ${w}, ${h};`);
      o.ins(`shl.b32 ${w}, ${w}, 16;`);
      o.ins(`mov.b32 ${r}, ${w};`);
    }
    return r;
  }
  if (d === 'bool') {
    const w = o.reg('s32'), p = o.reg('pred');
    o.ins(`ld${space}.u8 ${w}, [${addr}];`);
    o.ins(`setp.ne.s32 ${p}, ${w}, 0;`);
    return p;
  }
  const r = o.reg(classOf(c));
  o.ins(`ld${space}.${elementType(d)} ${r}, [${addr}];`);
  return r;
}

/** Stores `x` (of the element's compute type) as an element of dtype `d` at `addr`: float16 / bfloat16 rounded to nearest even, integers truncated to their width. */
export function storeElement(o: Out, space: string, d: DType, x: string, addr: string): void {
  if (d === 'float16' || d === 'bfloat16') {
    const h = o.reg('b16');
    o.ins(`cvt.rn.${d === 'float16' ? 'f16' : 'bf16'}.f32 ${h}, ${x};`);
    o.ins(`st${space}.b16 [${addr}], ${h};`);
    return;
  }
  if (d === 'bool') {
    const w = o.reg('s32');
    o.ins(`selp.u32 ${w}, 1, 0, ${x};`);
    o.ins(`st${space}.u8 [${addr}], ${w};`);
    return;
  }
  o.ins(`st${space}.${elementType(d)} [${addr}], ${x};`);
}
