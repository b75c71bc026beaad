// gx.logspace: base to the powers gx.linspace spaces, as torch.logspace.
//
// NOTE [ Logspace as torch computes it ]
// torch's logspace kernel converts start and end to the result's dtype (checked,
// as linspace's bounds), steps the exponent in that dtype (in double for an
// integer dtype, from the truncated bounds), and takes std::pow(double base,
// exponent) in double before converting to the dtype. So a float32
// logspace(-3.3, 2.7) raises 10 to float32 exponents (10^-3.2999999523...), not
// to -3.3: the exponents here are gx.linspace in the dtype (float64 for integers),
// and the power is taken in float64. An integer result goes through int64 (a
// uint8 logspace(0, 10, 3) is [1, 160, 0], the int64 values wrapped, as torch's
// on the CPU) so both devices agree; NaN (a negative base to a fractional power)
// becomes what the conversion gives (the lowest int64 on the CPU, as torch's).
import { checkOptions, optionKeys, tooManyArguments } from '../../core/options';
import { DEFAULT_FLOAT, type DType } from '../../core/dtype';
import { DTYPE_INFO } from '../../generated/dtypes';
import type { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { describeOperand } from '../common';
import { astypeOp, BINARY, binaryOp } from '../elementwise/elementwise';
import { checkSpacedBounds, linspace, type TensorOptions } from './creation';

export interface LogspaceOptions<D extends DType = DType> extends TensorOptions<D> {
  /** The base raised to each exponent (default 10), as torch.logspace's base. */
  base?: number;
}

const LOGSPACE_KEYS = optionKeys<LogspaceOptions>({ base: true, dtype: true, device: true });

/**
 * `steps` values base^e for e evenly spaced from start to end inclusive (float32
 * by default), as torch.logspace (NOTE [ Logspace as torch computes it ]): the
 * exponents in the result's dtype, the power in float64. The base comes fourth or
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
  const dtype = (rangeOpts.dtype ?? DEFAULT_FLOAT) as D;
  if (dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (torch.logspace has no bool kernel)`);
  for (const [name, v] of [['start', start], ['end', end]] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${fn}: ${name} must be a finite number, got ${describeOperand(v)}`);
  }
  // Before linspace: for an integer dtype the exponents are spaced in float64, which holds any bound.
  checkSpacedBounds(start, end, steps, dtype, fn);
  const integer = DTYPE_INFO[dtype].kind !== 'f';
  return tidy(() => {
    const e = integer
      ? linspace(Math.trunc(start), Math.trunc(end), steps, { ...rangeOpts, dtype: 'float64' })
      : linspace(start, end, steps, { ...rangeOpts, dtype });
    const powers = binaryOp(BINARY.pow, b, e.dtype === 'float64' ? e : astypeOp(e, 'float64', fn), fn);
    const wide = integer && dtype !== 'int64' ? astypeOp(powers, 'int64', fn) : powers;
    return (wide.dtype === dtype ? wide : astypeOp(wide, dtype, fn)) as Tensor<D>;
  });
}
