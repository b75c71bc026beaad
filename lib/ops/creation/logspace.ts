// gx.logspace: base to the powers of evenly spaced exponents, as torch.logspace.
//
// NOTE [ Logspace as torch computes it ]
// torch's CPU logspace (aten/src/ATen/native/RangeFactories.cpp) converts start
// and end to the result's dtype (checked, as linspace's bounds: spacedBounds),
// takes their difference in that dtype (float32 arithmetic for float32, c10::Half
// for float16, int for an integer dtype), and steps the exponent in double from
// there: step = (double)(end - start) / (steps - 1), start + step * i for the
// first half, end - step * (steps - 1 - i) for the rest, each product and sum
// rounded on its own (that file is not compiled with FMA, unlike linspace's
// kernel: NOTE [ Linspace as torch computes it ] in csrc/base/linspace_points.h).
// Then std::pow(double base, exponent), converted to the dtype. So a float32
// logspace(-3.3, 2.7) raises 10 to -3.2999999523... (the float32 start) but its
// inner exponents are doubles, not float32 values. Here the host works out the
// bounds and the step as torch does, and float64 ops on the device (arange, mul,
// add, where: one rounding each) give the exponents, the same on every device; one
// step is base^start, from start itself. An integer result goes through int64 (a
// uint8 logspace(0, 10, 3) is [1, 160, 0], the int64 values wrapped, as torch's
// on the CPU) so both devices agree; NaN (a negative base to a fractional power)
// becomes what the conversion gives (the lowest int64 on the CPU, as torch's).
import { checkOptions, optionKeys, tooManyArguments } from '../../core/options';
import { DEFAULT_FLOAT, parseDType, roundToDType, type DType } from '../../core/dtype';
import { parseDevice } from '../../core/device';
import { checkDevice } from '../../core/gpus';
import { dtypeInfo } from '../../generated/dtypes';
import type { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { describeOperand } from '../common';
import { astypeOp, BINARY, binaryOp, whereOp } from '../elementwise/elementwise';
import { arange, full, spacedBounds, type TensorOptions } from './creation';

export interface LogspaceOptions<D extends DType = DType> extends TensorOptions<D> {
  /** The base raised to each exponent (default 10), as torch.logspace's base. */
  base?: number;
}

const LOGSPACE_KEYS = optionKeys<LogspaceOptions>({ base: true, dtype: true, device: true });

/**
 * `steps` values base^e for e evenly spaced from start to end inclusive (float32
 * by default), as torch.logspace (NOTE [ Logspace as torch computes it ]): the
 * bounds in the result's dtype, the exponents and the power in float64. The base comes fourth or
 * in the options (default 10). Not for bool; a bound the dtype cannot hold is
 * refused, as linspace's.
 * @example gx.logspace(0, 3, 4) // [1, 10, 100, 1000]; gx.logspace(-1, 1, 3, 2) // [0.5, 1, 2]
 */
export function logspace<D extends DType = 'float32'>(start: number, end: number, steps: number, base?: number | LogspaceOptions<D>,
  opts?: LogspaceOptions<D>): Tensor<D> {
  const fn = 'gx.logspace';
  if (arguments.length > 5) tooManyArguments(fn, '(start, end, steps, base?, opts?)', arguments.length - 5, arguments[5]);
  const inPlace = typeof base === 'object' && base !== null;
  if (inPlace && arguments.length > 4) tooManyArguments(fn, '(start, end, steps, opts?)', arguments.length - 4, arguments[4]);
  const o = checkOptions<LogspaceOptions<D>>(inPlace ? base : opts, fn, LOGSPACE_KEYS);
  if (!inPlace && o.base !== undefined) {
    throw new TypeError(`${fn}: base given twice (the fourth argument and the options' base)`);
  }
  const b = inPlace ? o.base ?? 10 : base ?? 10;
  if (typeof b !== 'number') throw new TypeError(`${fn}: base must be a number, got ${describeOperand(b)}`);
  if (typeof steps !== 'number' || !Number.isSafeInteger(steps) || steps < 0) {
    throw new RangeError(`${fn}: steps must be a non-negative integer, got ${String(steps)}`);
  }
  const { base: _base, ...rangeOpts } = o;
  const dtype = parseDType(rangeOpts.dtype ?? DEFAULT_FLOAT, fn) as D;
  const device = parseDevice(rangeOpts.device, fn);
  checkDevice(device, fn);
  if (dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (torch.logspace has no bool kernel)`);
  for (const [name, v] of [['start', start], ['end', end]] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${fn}: ${name} must be a finite number, got ${describeOperand(v)}`);
  }
  // The bounds as the dtype holds them (an integer dtype's come converted; a floating dtype's are rounded here).
  const [first, last] = spacedBounds(start, end, steps, dtype, fn).map((v) => roundToDType(v, dtype));
  const integer = dtypeInfo(dtype).kind !== 'f';
  // The difference in the dtype's arithmetic, then the step in double (NOTE [ Logspace as torch computes it ]).
  const step = steps > 1 ? roundToDType(last - first, dtype) / (steps - 1) : 0;
  const half = Math.floor(steps / 2);
  return tidy(() => {
    let e: Tensor;
    if (steps === 1) {
      e = full([1], start, { dtype: 'float64', device });
    } else {
      const i = arange(0, steps, 1, { dtype: 'float64', device });
      const up = binaryOp(BINARY.add, binaryOp(BINARY.mul, i, step, fn), first, fn);
      const down = binaryOp(BINARY.sub, last, binaryOp(BINARY.mul, binaryOp(BINARY.sub, steps - 1, i, fn), step, fn), fn);
      e = whereOp(binaryOp(BINARY.lt, i, half, fn), up, down, fn);
    }
    const powers = binaryOp(BINARY.pow, b, e, fn);
    const wide = integer && dtype !== 'int64' ? astypeOp(powers, 'int64', fn) : powers;
    return (wide.dtype === dtype ? wide : astypeOp(wide, dtype, fn)) as Tensor<D>;
  });
}

