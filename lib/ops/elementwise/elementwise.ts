// Elementwise built-in ops: binary ops with broadcasting, type promotion and
// JS numbers as scalars; unary ops; where, clamp, astype. Each checks its
// arguments, decides shapes and dtypes (promotion.ts), allocates the result
// (or takes `out`, or self in place) and calls its op in ops/ through the
// generated typed calls (lib/generated/ops.ts, from ops/op-list.js; NOTE
// [ Calling convention of the built-in ops ] in ops/ops.h).
import type { Device } from '../../core/device';
import { checkedInteger, checkedIntegerArgument, DEFAULT_FLOAT, FLOAT_MAX, integerRangeText, parseDType } from '../../core/dtype';
import type { DType, IntegerDType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { derivativeNotImplemented, recorders, shouldRecord } from '../../tape/graph';
import { Tensor } from '../../core/tensor';
import {
  broadcastShapes, checkOperand, checkTensor, commonDevice, computeNew, computeResult, describeOperand, optionsOf, OUT_KEYS,
  writesNewResult, type OutOptions,
} from '../common';
import { optionKeys, tooManyArguments } from '../../core/options';
import { isFloating, isIntegral, resultType, type ScalarOperand } from '../promotion';

// --- scalars ------------------------------------------------------------------


/**
 * A JS scalar as the two schema arguments the kernels take: its value as a
 * double (floating compute types) and as an integer (integer ones). For an
 * integer common dtype the integer is the dtype's element the value converts to
 * by torch's checked rule (checkedInteger, NOTE [ Integers into integer dtypes ]
 * in lib/core/dtype.ts): -1 is uint8's 255, so that uint8 x == -1 and x // -1
 * compute as torch's (the kernels compute in int64). A value the rule refuses is
 * refused (`checkRange`; the logical ops read the number as nonzero and take any):
 * torch's checked ops (where, clamp, pow) refuse it too, while its arithmetic and
 * comparisons wrap any integer into the dtype (uint8 x + 256 adds 0, x < 256 is
 * false); gx refuses rather than compute with a number it silently changed.
 */
function scalarArgs(v: ScalarOperand, common: DType, fn: string, checkRange: boolean): [number, number | bigint] {
  if (typeof v === 'boolean') return [v ? 1 : 0, v ? 1 : 0];
  if (!isIntegral(common) && common !== 'bool') return [Number(v), 0];
  if (typeof v === 'number' && !Number.isInteger(v)) return [v, 0]; // logical ops only: read as nonzero
  const i = checkedInteger(BigInt(v), integerDTypeOf(common));
  if (i !== undefined) return [Number(v), i];
  if (checkRange) throw new RangeError(`${fn}: ${numberOperandFault(v, common)}`);
  return [Number(v), 1n]; // a logical op's number, nonzero
}

/** The integer dtype an op computing in integer dtype `common` takes its numbers in (bool computes in int64's). */
const integerDTypeOf = (common: DType): IntegerDType => (isIntegral(common) ? common as IntegerDType : 'int64');

/**
 * @internal Why a JS number operand is refused by an op computing in `common`
 * (one torch's checked conversion into the integer dtype it computes in refuses,
 * scalarArgs; the logical ops read numbers as nonzero and take any), or undefined.
 * gx.fuse checks its numbers by it (NOTE [ Argument facts in fused functions ] in
 * lib/jit/fuse-facts.ts).
 */
export function numberOperandFault(v: number | bigint, common: DType): string | undefined {
  if ((!isIntegral(common) && common !== 'bool') || (typeof v === 'number' && !Number.isInteger(v))) return undefined;
  const d = integerDTypeOf(common);
  if (checkedInteger(BigInt(v), d) !== undefined) return undefined;
  return `the number ${String(v)} is out of range for ${common} ${integerRangeText(d)}, the dtype this op computes in; ` +
    'convert the tensor with .astype() first';
}

/** @internal Whether `self ** other` of a number `other` is refused: an integer dtype to a negative power, as torch. gx.fuse asks it too. */
export function negativeIntegerPower(spec: BinarySpec, common: DType, other: number | bigint): boolean {
  return spec.name === 'pow' && isIntegral(common) && other < 0;
}

// --- binary ops ---------------------------------------------------------------

/** The binary ops by gx name, each with its dtype rule (ops/op-list.js). */
export const BINARY = ops.BINARY;
export type BinarySpec = ops.BinaryOp;
export type BinaryName = keyof typeof BINARY;

/** div's rounding of the quotient, as torch.div's rounding_mode: toward -inf or toward 0; absent or null, true division. */
export type RoundingMode = 'floor' | 'trunc';

/** gx.div's options: `out`, and roundingMode (NOTE [ Rounding modes of div ] in ops/op-list.js). */
export interface DivOptions<D extends DType = DType> extends OutOptions<D> {
  roundingMode?: RoundingMode | null;
}

const DIV_KEYS = optionKeys<DivOptions>({ out: true, roundingMode: true });
const DIV_INPLACE_KEYS = DIV_KEYS.filter((k) => k !== 'out');

/**
 * The spec gx.div computes with under `opts`' roundingMode (NOTE [ Rounding modes of div ] in ops/op-list.js):
 * div's own for true division, else the mode's entry (its kernel, dtype rule and derivative); and `out`.
 */
function divMode(spec: BinarySpec, opts: unknown, fn: string, inplace: boolean): { spec: BinarySpec; out: Tensor | undefined } {
  const { out, roundingMode: mode } = optionsOf<DivOptions>(opts, fn, inplace ? DIV_INPLACE_KEYS : DIV_KEYS);
  if (mode === undefined || mode === null) return { spec, out };
  if (mode !== 'floor' && mode !== 'trunc') {
    throw new TypeError(`${fn}: roundingMode must be 'floor', 'trunc' or null (true division), got ${describeOperand(mode)}`);
  }
  return { spec: ops.DIV_ROUNDING[mode], out };
}

/** @internal self `op` other into a new tensor, `opts.out`, or self (`inplace`). `fn` names the API in errors. */
export function binaryOp(given: BinarySpec, a: unknown, b: unknown, fn: string, opts?: unknown, inplace = false): Tensor {
  // div's options hold its roundingMode (in place too), which picks the spec; the other ops take `out` only.
  let spec = given, out: Tensor | undefined;
  if (given === BINARY.div && opts !== undefined) ({ spec, out } = divMode(given, opts, fn, inplace));
  else ({ out } = optionsOf<OutOptions>(opts, fn, OUT_KEYS));
  const x = checkOperand(a, fn, 'self');
  const y = checkOperand(b, fn, 'other');
  // In place, the out-of-place twin that computeResult calls when the write must be recorded (outOfPlace) checks it.
  if (spec.derivativeNotImplemented && !inplace) derivativeNotImplemented(fn, x, y);
  const tx = x instanceof Tensor, ty = y instanceof Tensor;
  if (!tx && !ty) {
    throw new TypeError(`${fn}: needs at least one Tensor operand, got ${describeOperand(x)} and ${describeOperand(y)}`);
  }
  let common = resultType(x, y);
  if (spec.kind === 'div' && !isFloating(common)) common = DEFAULT_FLOAT; // true division
  if (spec.noBool !== undefined && common === 'bool') {
    throw new TypeError(`${fn}: bool operands are not supported (got ${describeOperand(x)} and ${describeOperand(y)})${spec.noBool}`);
  }
  if (!ty && (typeof y === 'number' || typeof y === 'bigint') && negativeIntegerPower(spec, common, y)) {
    throw new RangeError(`${fn}: integers to negative integer powers are not allowed (got ${describeOperand(x)} ** ${String(y)})`);
  }
  const resDtype: DType = spec.kind === 'compare' || spec.kind === 'logical' ? 'bool' : common;
  let shape: readonly number[];
  let device: Device;
  if (tx && ty) {
    device = commonDevice([x, y], ['self', 'other'], fn);
    shape = broadcastShapes([x, y], fn);
  } else {
    const t = (tx ? x : y) as Tensor;
    device = t.device;
    shape = t.shape;
  }
  if (inplace && !tx) throw new TypeError(`${fn}: in-place ops need a Tensor self`);
  let compute: (r: Tensor) => void;
  if (tx && ty) {
    compute = (r) => spec.tensor(fn, { self: x.handle(fn), other: y.handle(fn), dtype: common, out: r.handle(fn) });
  } else {
    const t = (tx ? x : y) as Tensor;
    const [f, i] = scalarArgs((tx ? y : x) as ScalarOperand, common, fn, spec.kind !== 'logical');
    compute = (r) => spec.scalar(fn, { self: t.handle(fn), other: f, otherInt: i, reverse: !tx, dtype: common, out: r.handle(fn) });
  }
  let result: Tensor;
  if (writesNewResult(out, inplace)) {
    result = computeNew(shape, resDtype, device, fn, compute);  // the common call: no target to describe
  } else {
    // In place, the op out of place is what autograd records when it must (NOTE [ Autograd and in-place ops ]).
    const outOfPlace = inplace ? (self: Tensor): Tensor => binaryOp(given, self, y, fn, opts) : undefined;
    const target = { out, inplace: inplace ? (x as Tensor) : undefined, inputs: [x, y], elementwise: true, outOfPlace };
    result = computeResult(shape, resDtype, device, fn, target, compute);
  }
  if (!inplace && shouldRecord(x, y)) recorders.binary?.(spec.name, x, y, result);
  return result;
}

type AnyBinary = (self: unknown, other: unknown, opts?: unknown) => Tensor;

/** @internal The gx function of a binary op (lib/generated/elementwise.ts gives each its type). */
export function binaryFunction(name: BinaryName): AnyBinary {
  const spec = BINARY[name];
  const fn = `gx.${name}`;
  // A function, not an arrow: it counts its arguments (one after the options was dropped).
  const f: AnyBinary = function (a, b, opts) {
    if (arguments.length > 3) tooManyArguments(fn, '(self, other, options?)', arguments.length - 3, arguments[3]);
    return binaryOp(spec, a, b, fn, opts);
  };
  Object.defineProperty(f, 'name', { value: name });
  return f;
}

// --- unary ops ----------------------------------------------------------------

/** The unary ops by gx name, each with its dtype rule (ops/op-list.js): float (integer and bool inputs give float32) or keep. */
export const UNARY = ops.UNARY;
export type UnarySpec = ops.UnaryOp;
export type UnaryName = keyof typeof UNARY;

/** A unary op's parameter values in order (NOTE [ Parameters of elementwise ops ] in ops/op-list.js); undefined: the default. */
export type UnaryParams = readonly (number | null | undefined)[];

/** @internal op(x) into a new tensor, `opts.out`, or x (`inplace`); `params` the op's number parameters, if it has any. */
export function unaryOp(spec: UnarySpec, a: unknown, fn: string, opts?: unknown, inplace = false, params: UnaryParams = []): Tensor {
  const { out } = optionsOf<OutOptions>(opts, fn, OUT_KEYS);
  const x = checkTensor(a, fn, 'self');
  if (spec.derivativeNotImplemented && !inplace) derivativeNotImplemented(fn, x);
  const dt = x.dtype;
  let common: DType;
  if (spec.kind === 'float') {
    common = isFloating(dt) ? dt : DEFAULT_FLOAT;
  } else {
    if (dt === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)})`);
    common = dt;
  }
  const values = spec.name === 'nan_to_num' ? nanToNumDefaults(params, common) : params;
  const fault = unaryParamsFault(spec, values);
  if (fault !== undefined) throw new RangeError(`${fn}: ${fault}`);
  const compute = (r: Tensor): void => spec.call(fn, { self: x.handle(fn), dtype: common, out: r.handle(fn), params: values });
  let result: Tensor;
  if (writesNewResult(out, inplace)) {
    result = computeNew(x.shape, common, x.device, fn, compute);  // the common call: no target to describe
  } else {
    const outOfPlace = inplace ? (self: Tensor): Tensor => unaryOp(spec, self, fn, undefined, false, params) : undefined;
    result = computeResult(x.shape, common, x.device, fn, { out, inplace: inplace ? x : undefined, inputs: [x], elementwise: true, outOfPlace }, compute);
  }
  if (!inplace && shouldRecord(x)) recorders.unary?.(spec.name, x, result, paramRecord(spec, values));
  return result;
}

/** @internal Whether unaryParamsFault refuses any values of `spec`'s parameters (the op list states a fact of them). */
export const hasParamFacts = (spec: UnarySpec): boolean => spec.ordered !== undefined;

/**
 * @internal Why a unary op's parameter values are refused by the facts the op
 * list states of them (`ordered`: hardtanh's minVal <= maxVal, as torch's
 * check), or undefined; undefined values are the defaults. gx.fuse checks its
 * numbers by it (NOTE [ Argument facts in fused functions ] in lib/jit/fuse-facts.ts).
 */
export function unaryParamsFault(spec: UnarySpec, values: UnaryParams): string | undefined {
  if (spec.ordered === undefined) return undefined;
  const [i, j] = spec.ordered;
  const a = spec.params[i], b = spec.params[j];
  const lo = values[i] ?? a.default, hi = values[j] ?? b.default;
  if (lo === null || hi === null || !(lo > hi)) return undefined;
  return `${a.name} cannot be greater than ${b.name}, got ${a.name} ${lo} and ${b.name} ${hi}`;
}

/**
 * nanToNum's absent posinf / neginf as torch's: the result dtype's largest and lowest finite
 * values; the functor knows float's and double's, float16 and bfloat16 need their own.
 */
function nanToNumDefaults(params: UnaryParams, common: DType): UnaryParams {
  if (common !== 'float16' && common !== 'bfloat16') return params;
  const max = FLOAT_MAX[common];
  return [params[0], params[1] ?? max, params[2] ?? -max];
}

/** The parameters by name for a derivative formula (the defaults filled in, absent ones left out). */
function paramRecord(spec: UnarySpec, values: UnaryParams): Record<string, number> {
  const r: Record<string, number> = {};
  spec.params.forEach((p, i) => {
    const v = values[i] ?? p.default;
    if (v !== null) r[p.name] = v;
  });
  return r;
}

function paramValue(v: unknown, fn: string, name: string, nullable: boolean): number | null | undefined {
  if (v === undefined || (nullable && v === null) || typeof v === 'number') return v;
  throw new TypeError(`${fn}: ${name} must be a number${nullable ? ' or null' : ''}, got ${describeOperand(v)}`);
}

/**
 * A unary call's arguments after x as its parameters and options: numbers first (paramStyle
 * positional), or the options object's keys (paramStyle options). @internal
 */
export function unaryArgs(spec: UnarySpec, rest: readonly unknown[], fn: string): { params: UnaryParams; opts: unknown } {
  const ps = spec.params;
  if (spec.paramStyle === 'options') {
    if (rest.length > 1) throw new TypeError(`${fn}: takes (x, options?), got ${rest.length + 1} arguments`);
    const keys = [...OUT_KEYS, ...ps.map((p) => p.name)];
    const o = optionsOf<Record<string, unknown>>(rest[0], fn, keys);
    const params = ps.map((p) => paramValue(o[p.name], fn, p.name, p.default === null));
    return { params, opts: o.out === undefined ? undefined : { out: o.out } };
  }
  let k = 0;
  const params: (number | null | undefined)[] = [];
  for (; k < ps.length && k < rest.length; k++) {
    const v = rest[k];
    if (v !== null && typeof v === 'object') break;  // the options object, the parameters left at their defaults
    params.push(paramValue(v, fn, ps[k].name, ps[k].default === null));
  }
  if (rest.length > k + 1) throw new TypeError(`${fn}: takes (x, ${[...ps.map((p) => p.name), 'options'].join(', ')}), got ${rest.length + 1} arguments`);
  return { params, opts: rest[k] };
}

type AnyUnary = (x: unknown, ...rest: unknown[]) => Tensor;

/** @internal The gx function of a unary op (lib/generated/elementwise.ts gives each its type). */
export function unaryFunction(name: UnaryName): AnyUnary {
  const spec = UNARY[name];
  const fn = `gx.${name}`;
  const f: AnyUnary = spec.params.length === 0
    ? function (x, opts) {
      if (arguments.length > 2) tooManyArguments(fn, '(x, options?)', arguments.length - 2, arguments[2]);
      return unaryOp(spec, x, fn, opts);
    }
    : (x, ...rest) => {
      const { params, opts } = unaryArgs(spec, rest, fn);
      return unaryOp(spec, x, fn, opts, false, params);
    };
  Object.defineProperty(f, 'name', { value: name });
  return f;
}

// --- where, clamp, astype -----------------------------------------------------

/** @internal where(condition, a, b): a where condition is true, else b; a and b may be JS scalars. */
export function whereOp(condition: unknown, a: unknown, b: unknown, fn: string, opts?: unknown): Tensor {
  const { out } = optionsOf<OutOptions>(opts, fn, OUT_KEYS);
  const cond = checkTensor(condition, fn, 'condition');
  if (cond.dtype !== 'bool') {
    throw new TypeError(`${fn}: condition must be a bool tensor, got ${describeOperand(cond)}; compare first, e.g. x.gt(0)`);
  }
  const x = checkOperand(a, fn, 'self');
  const y = checkOperand(b, fn, 'other');
  const tensors: Tensor[] = [cond];
  const names = ['condition'];
  if (x instanceof Tensor) { tensors.push(x); names.push('self'); }
  if (y instanceof Tensor) { tensors.push(y); names.push('other'); }
  const device = commonDevice(tensors, names, fn);
  const shape = broadcastShapes(tensors, fn);
  const common = resultType(x, y);
  const [xf, xi] = x instanceof Tensor ? [0, 0] : scalarArgs(x, common, fn, true);
  const [yf, yi] = y instanceof Tensor ? [0, 0] : scalarArgs(y, common, fn, true);
  const result = computeResult(shape, common, device, fn, { out, inputs: tensors, elementwise: true }, (r) =>
    ops.where(fn, {
      condition: cond.handle(fn), self: x instanceof Tensor ? x.handle(fn) : null, other: y instanceof Tensor ? y.handle(fn) : null,
      selfScalar: xf, selfInt: xi, otherScalar: yf, otherInt: yi, dtype: common, out: r.handle(fn),
    }));
  if (shouldRecord(x, y)) recorders.where?.(cond, x, y, result);
  return result;
}

function bound(v: unknown, fn: string, name: string): number | bigint | undefined {
  if (v === undefined || v === null) return undefined;
  if ((typeof v === 'number' && !Number.isNaN(v)) || typeof v === 'bigint') return v;
  throw new TypeError(`${fn}: ${name} must be a number or bigint (or undefined), got ${describeOperand(v)}`);
}

/** clamp's bounds by name, as torch's keywords: gx.clamp(x, { min: 0 }). */
export interface ClampOptions<D extends DType = DType> extends OutOptions<D> {
  min?: number | bigint | null;
  max?: number | bigint | null;
}

const CLAMP_KEYS = optionKeys<ClampOptions>({ min: true, max: true, out: true });

/** Whether clamp's second argument is its options object (the bounds by name) rather than min. */
const isClampOptions = (v: unknown): v is object => v !== null && typeof v === 'object' && !(v instanceof Tensor);

/**
 * @internal clamp(x, min, max) with JS-number bounds, either may be absent;
 * or clamp(x, { min, max, out }).
 */
export function clampOp(a: unknown, minArg: unknown, maxArg: unknown, fn: string, optsArg?: unknown, inplace = false): Tensor {
  let min = minArg, max = maxArg, opts = optsArg;
  if (isClampOptions(minArg)) {
    if (maxArg !== undefined || optsArg !== undefined) throw new TypeError(`${fn}: takes (x, { min, max }) or (x, min, max, options), not both`);
    const o = optionsOf<ClampOptions>(minArg, fn, inplace ? CLAMP_KEYS.filter((k) => k !== 'out') : CLAMP_KEYS);
    ({ min, max } = o);
    opts = o.out === undefined ? undefined : { out: o.out };
  }
  const { out } = optionsOf<OutOptions>(opts, fn, OUT_KEYS);
  const x = checkTensor(a, fn, 'self');
  const lo = bound(min, fn, 'min'), hi = bound(max, fn, 'max');
  if (lo === undefined && hi === undefined) throw new TypeError(`${fn}: needs min or max (or both)`);
  const bounds = [lo, hi].filter((v): v is number | bigint => v !== undefined);
  const common = resultType(x, ...bounds);
  if (common === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)})`);
  // An integer dtype takes each bound as torch's checked conversion does (NOTE [ Integers into integer dtypes ] in
  // lib/core/dtype.ts): a uint8 min of -1 is 255; 256, or 200 for int8, is refused (compared in int64 it clamped
  // every element to a value the dtype then wrapped: int8 x.clamp(200) gave -56).
  const asInt = (v: number | bigint | undefined, name: string): bigint => {
    if (v === undefined || !isIntegral(common)) return 0n;
    return checkedIntegerArgument(v, common as IntegerDType, fn, name);
  };
  const minInt = asInt(lo, 'min'), maxInt = asInt(hi, 'max');
  const outOfPlace = inplace ? (self: Tensor): Tensor => clampOp(self, lo, hi, fn) : undefined;
  const result = computeResult(x.shape, common, x.device, fn, { out, inplace: inplace ? x : undefined, inputs: [x], elementwise: true, outOfPlace },
    (r) => ops.clamp(fn, {
      self: x.handle(fn), min: lo === undefined ? null : Number(lo), max: hi === undefined ? null : Number(hi),
      minInt, maxInt, dtype: common, out: r.handle(fn),
    }));
  if (!inplace && shouldRecord(x)) recorders.clamp?.(x, lo === undefined ? undefined : Number(lo), hi === undefined ? undefined : Number(hi), result);
  return result;
}

/** @internal A copy of x converted to `dtype`, into `out` when given (checked as every op's out). */
export function astypeOp(a: unknown, dtype: unknown, fn: string, out?: Tensor): Tensor {
  const x = checkTensor(a, fn, 'self');
  const d = parseDType(dtype, fn);
  const result = computeResult(x.shape, d, x.device, fn, { out, inputs: out === undefined ? [] : [x], elementwise: true },
    (r) => ops.astype(fn, { self: x.handle(fn), out: r.handle(fn) }));
  if (shouldRecord(x)) recorders.astype?.(x, result);
  return result;
}
