/**
 * format.ts — PyTorch-like printing of tensors, e.g.
 *
 *   tensor([[1.0000, 2.5000],
 *           [3.0000, 4.0000]], shape=[2, 2], dtype=float32, device='cuda:0')
 *
 * Follows torch/_tensor_str.py: the same float formatter (integer mode `1., 2.`, fixed
 * with `precision` decimals, or scientific `1.0000e+10`; numbers rounded half-to-even as
 * Python does), one right-aligned width for all elements, summarization with `...` when
 * numel > threshold, 1-D rows wrapped at lineWidth, nested rows aligned under the first
 * bracket with blank lines between higher-dimensional blocks, and suffixes wrapped onto
 * new lines when the last line would pass lineWidth. House style: shape, dtype and device
 * are always printed.
 */

export interface FormatInput {
  /** All elements in C order: booleans as 0/1 (dtype 'bool'), int64 values as bigint. */
  values: ArrayLike<number | bigint>;
  shape: readonly number[];
  dtype: string;
  device: string;
  /**
   * When true, `values` hold only the elements a summary shows (the first and
   * last edgeItems along each dimension longer than 2 * edgeItems), as one
   * compact block in C order: a huge tensor is printed without reading it all.
   */
  shownOnly?: boolean;
}

export interface FormatOptions {
  /** Summarize (with `...`) when numel > threshold. Default 1000. */
  threshold?: number;
  /** Elements kept at each end of each summarized dimension. Default 3. */
  edgeItems?: number;
  /** Decimals for floating-point values. Default 4. */
  precision?: number;
  /** Characters per line before wrapping. Default 80. */
  lineWidth?: number;
}

export const DEFAULT_FORMAT_OPTIONS: Readonly<Required<FormatOptions>> = Object.freeze({
  threshold: 1000,
  edgeItems: 3,
  precision: 4,
  lineWidth: 80,
});

const PREFIX = 'tensor(';

// ---------------------------------------------------------------------------------------
// Number -> string, the way Python's '{:.Nf}' / '{:.Ne}' do it (round half to even).

const f64 = new Float64Array(1);
const f64u = new Uint32Array(f64.buffer);
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** Whether a * 2 * 10^k is an odd integer, i.e. a lies exactly halfway at 10^-k steps. */
function isExactTie(a: number, k: number): boolean {
  f64[0] = a;
  const hi = f64u[HI];
  const lo = f64u[1 - HI];
  const exp = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (exp === 0) e = -1074;
  else {
    m |= 1n << 52n;
    e = exp - 1075;
  }
  let num = m * 2n;
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  if (k >= 0) num *= 10n ** BigInt(k);
  else den *= 10n ** BigInt(-k);
  return num % den === 0n && (num / den) % 2n === 1n;
}

/** `a.toFixed(p)` for finite a >= 0, but with ties rounded to even. */
function fixedAbs(a: number, p: number): string {
  if (a >= 1e21) {
    // toFixed switches to exponent notation here; such doubles are integers.
    return BigInt(a).toString() + (p > 0 ? '.' + '0'.repeat(p) : '');
  }
  const s = a.toFixed(p);
  if (p >= 100) return s;
  const t = a.toFixed(p + 1);
  if (t.charCodeAt(t.length - 1) !== 53 /* '5' */ || !isExactTie(a, p)) return s;
  // t is exact; JS rounded the tie up (s), Python rounds to even.
  const down = p === 0 ? t.slice(0, -2) : t.slice(0, -1);
  return (down.charCodeAt(down.length - 1) - 48) % 2 === 0 ? down : s;
}

/** Python-style exponent: at least two digits, explicit sign. */
function pyExponent(s: string): string {
  const i = s.indexOf('e');
  const mant = s.slice(0, i);
  const sign = s[i + 1];
  const digits = s.slice(i + 2);
  return `${mant}e${sign}${digits.length < 2 ? '0' + digits : digits}`;
}

/** `a.toExponential(p)` for finite a >= 0, ties to even, Python exponent style. */
function expAbs(a: number, p: number): string {
  const s = a.toExponential(p);
  if (p >= 100 || a === 0) return pyExponent(s);
  const t = a.toExponential(p + 1);
  const ie = t.indexOf('e');
  if (t.charCodeAt(ie - 1) !== 53 /* '5' */) return pyExponent(s);
  const e10 = Number(t.slice(ie + 1));
  if (!isExactTie(a, p - e10)) return pyExponent(s);
  const mant = p === 0 ? t.slice(0, ie - 2) : t.slice(0, ie - 1);
  if ((mant.charCodeAt(mant.length - 1) - 48) % 2 !== 0) return pyExponent(s);
  return pyExponent(mant + t.slice(ie));
}

function nonFinite(x: number): string {
  return Number.isNaN(x) ? 'nan' : x < 0 ? '-inf' : 'inf';
}

/** Python's f'{x:.{p}f}'. */
export function formatFixed(x: number, p: number): string {
  if (!Number.isFinite(x)) return nonFinite(x);
  const s = fixedAbs(Math.abs(x), p);
  return x < 0 || Object.is(x, -0) ? '-' + s : s;
}

/** Python's f'{x:.{p}e}'. */
export function formatExponential(x: number, p: number): string {
  if (!Number.isFinite(x)) return nonFinite(x);
  const s = expAbs(Math.abs(x), p);
  return x < 0 || Object.is(x, -0) ? '-' + s : s;
}

// ---------------------------------------------------------------------------------------
// Formatters (torch's _Formatter): one width for every element shown.

interface Formatter {
  width: number;
  format(v: number | bigint): string;
}

function isFloatDtype(dtype: string): boolean {
  return dtype.startsWith('float') || dtype.startsWith('bfloat');
}

function padStart(s: string, width: number): string {
  return s.length >= width ? s : ' '.repeat(width - s.length) + s;
}

function floatFormatter(shown: readonly (number | bigint)[], precision: number): Formatter {
  let intMode = true;
  let sciMode = false;
  let maxWidth = 1;
  let min = Infinity;
  let max = 0;
  let count = 0;
  for (const raw of shown) {
    const v = Number(raw);
    if (!Number.isFinite(v) || v === 0) continue;
    count++;
    const a = Math.abs(v);
    if (a < min) min = a;
    if (a > max) max = a;
    if (v !== Math.ceil(v)) intMode = false;
  }
  if (count > 0) {
    sciMode = max / min > 1000 || max > 1e8 || (!intMode && min < 1e-4);
    for (const raw of shown) {
      const v = Number(raw);
      if (!Number.isFinite(v) || v === 0) continue;
      const len = sciMode
        ? formatExponential(v, precision).length
        : intMode
          ? formatFixed(v, 0).length + 1
          : formatFixed(v, precision).length;
      if (len > maxWidth) maxWidth = len;
    }
  }
  return {
    width: maxWidth,
    format(raw: number | bigint): string {
      const v = Number(raw);
      let s: string;
      if (sciMode) s = formatExponential(v, precision);
      else if (intMode) s = Number.isFinite(v) ? formatFixed(v, 0) + '.' : nonFinite(v);
      else s = formatFixed(v, precision);
      return padStart(s, maxWidth);
    },
  };
}

function textFormatter(shown: readonly (number | bigint)[], toText: (v: number | bigint) => string): Formatter {
  let maxWidth = 1;
  for (const v of shown) {
    const len = toText(v).length;
    if (len > maxWidth) maxWidth = len;
  }
  return { width: maxWidth, format: (v) => padStart(toText(v), maxWidth) };
}

const boolText = (v: number | bigint): string => (v === 0 || v === 0n ? 'False' : 'True');
const intText = (v: number | bigint): string => (typeof v === 'bigint' ? v.toString() : Object.is(v, -0) ? '0' : String(v));

// ---------------------------------------------------------------------------------------

function checkInt(name: string, v: number, min: number, max = Infinity): number {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`formatTensor: ${name} must be an integer in [${min}, ${max}], got ${v}`);
  }
  return v;
}

/**
 * Render a tensor the way `print(torch_tensor)` does, with shape, dtype and device always
 * appended, e.g. `tensor([1, 2, 3], shape=[3], dtype=int64, device='cpu')`.
 */
export function formatTensor(t: FormatInput, opts: FormatOptions = {}): string {
  const threshold = opts.threshold ?? DEFAULT_FORMAT_OPTIONS.threshold;
  if (typeof threshold !== 'number' || Number.isNaN(threshold)) {
    throw new RangeError(`formatTensor: threshold must be a number, got ${String(threshold)}`);
  }
  const edge = checkInt('edgeItems', opts.edgeItems ?? DEFAULT_FORMAT_OPTIONS.edgeItems, 0);
  const precision = checkInt('precision', opts.precision ?? DEFAULT_FORMAT_OPTIONS.precision, 0, 100);
  const lineWidth = checkInt('lineWidth', opts.lineWidth ?? DEFAULT_FORMAT_OPTIONS.lineWidth, 1);
  const layout = valueLayout(t, threshold, edge);
  const body = layout.numel === 0 ? '[]' : new Printer(t, layout, edge, lineWidth).render(precision);
  const { shape, dtype, device } = t;
  return withSuffixes(PREFIX + body, [`shape=[${shape.join(', ')}]`, `dtype=${dtype}`, `device='${device}'`], lineWidth);
}

/** Where a tensor's values sit, and whether it is summarized (more than `threshold` elements). */
interface ValueLayout {
  numel: number;
  summarize: boolean;
  /** The values are those of the shown block only (FormatInput.shownOnly), in C order over it. */
  shownOnly: boolean;
  /** The values' strides: C order over the full shape, or over the shown block. */
  vstrides: number[];
}

function valueLayout(t: FormatInput, threshold: number, edge: number): ValueLayout {
  const { shape, values } = t;
  const ndim = shape.length;
  const strides = new Array<number>(ndim);
  let numel = 1;
  for (let d = ndim - 1; d >= 0; d--) {
    const n = shape[d];
    if (!Number.isInteger(n) || n < 0) {
      throw new RangeError(`formatTensor: shape [${shape.join(', ')}] has an invalid size at dim ${d}`);
    }
    strides[d] = numel;
    numel *= n;
  }
  const summarize = numel > threshold;
  const shownOnly = t.shownOnly === true && summarize;
  const vstrides = strides.slice();
  let needed = numel;
  if (shownOnly) {
    needed = 1;
    for (let d = ndim - 1; d >= 0; d--) {
      vstrides[d] = needed;
      needed *= shape[d] > 2 * edge ? 2 * edge : shape[d];
    }
  }
  if (values.length < needed) {
    throw new RangeError(
      `formatTensor: shape [${shape.join(', ')}] needs ${needed} values but ${values.length} were given`,
    );
  }
  return { numel, summarize, shownOnly, vstrides };
}

/** torch's _add_suffixes: wrap a suffix onto its own line when it would pass lineWidth. */
function withSuffixes(text: string, suffixes: readonly string[], lineWidth: number): string {
  let out = text;
  let lastLineLen = out.length - out.lastIndexOf('\n') + 1;
  for (const suffix of suffixes) {
    if (lastLineLen + suffix.length + 2 > lineWidth) {
      out += ',\n' + ' '.repeat(PREFIX.length) + suffix;
      lastLineLen = PREFIX.length + suffix.length;
    } else {
      out += ', ' + suffix;
      lastLineLen += suffix.length + 2;
    }
  }
  return out + ')';
}

/** The nested brackets of a non-empty tensor, summarized past the threshold as torch's _tensor_str. */
class Printer {
  readonly #values: FormatInput['values'];
  readonly #shape: readonly number[];
  readonly #layout: ValueLayout;
  readonly #edge: number;
  readonly #lineWidth: number;
  readonly #dtype: FormatInput['dtype'];

  constructor(t: FormatInput, layout: ValueLayout, edge: number, lineWidth: number) {
    this.#values = t.values;
    this.#shape = t.shape;
    this.#layout = layout;
    this.#edge = edge;
    this.#lineWidth = lineWidth;
    this.#dtype = t.dtype;
  }

  render(precision: number): string {
    // Values that will be printed (torch's get_summarized_data) decide the format.
    const shown = this.#shown();
    const fmt: Formatter = isFloatDtype(this.#dtype)
      ? floatFormatter(shown, precision)
      : textFormatter(shown, this.#dtype === 'bool' ? boolText : intText);
    return this.#render(fmt, 0, 0, PREFIX.length);
  }

  /** Indices shown along a dimension of `size` (null: all of them). */
  #shownRange(size: number): number[] | null {
    const edge = this.#edge;
    if (!this.#layout.summarize || size <= 2 * edge) return null;
    const idx: number[] = [];
    for (let i = 0; i < edge; i++) idx.push(i);
    for (let i = size - edge; i < size; i++) idx.push(i);
    return idx;
  }

  #shown(): (number | bigint)[] {
    const values = this.#values;
    const { summarize, shownOnly, vstrides, numel } = this.#layout;
    if (!summarize) return Array.from({ length: numel }, (_, i) => values[i]);
    const shown: (number | bigint)[] = [];
    const ndim = this.#shape.length;
    const collect = (offset: number, dim: number): void => {
      if (dim === ndim) {
        shown.push(values[offset]);
        return;
      }
      const size = this.#shape[dim];
      const idx = this.#shownRange(size);
      if (idx === null) for (let i = 0; i < size; i++) collect(offset + i * vstrides[dim], dim + 1);
      else for (let k = 0; k < idx.length; k++) collect(offset + (shownOnly ? k : idx[k]) * vstrides[dim], dim + 1);
    };
    collect(0, 0);
    return shown;
  }

  #render(fmt: Formatter, offset: number, dim: number, indent: number): string {
    const rest = this.#shape.length - dim;
    if (rest === 0) return fmt.format(this.#values[offset]);
    const edge = this.#edge;
    const size = this.#shape[dim];
    const stride = this.#layout.vstrides[dim];
    const idx = this.#shownRange(size);
    if (rest === 1) return this.#row(fmt, offset, size, stride, idx, indent);
    const slices: string[] = [];
    if (idx === null) {
      for (let i = 0; i < size; i++) slices.push(this.#render(fmt, offset + i * stride, dim + 1, indent + 1));
    } else {
      for (let k = 0; k < idx.length; k++) {
        if (k === edge) slices.push('...');
        slices.push(this.#render(fmt, offset + this.#at(idx, k) * stride, dim + 1, indent + 1));
      }
      if (edge === 0) slices.push('...');
    }
    return '[' + slices.join(',' + '\n'.repeat(rest - 1) + ' '.repeat(indent + 1)) + ']';
  }

  /** The k-th shown index's position in the values. */
  #at(idx: number[], k: number): number {
    return this.#layout.shownOnly ? k : idx[k];
  }

  /** The innermost dimension: its items, as many on a line as lineWidth allows. */
  #row(fmt: Formatter, offset: number, size: number, stride: number, idx: number[] | null, indent: number): string {
    const values = this.#values;
    const edge = this.#edge;
    let items: string[];
    if (this.#layout.summarize && edge === 0) items = ['...'];
    else if (idx === null) {
      items = new Array<string>(size);
      for (let i = 0; i < size; i++) items[i] = fmt.format(values[offset + i * stride]);
    } else {
      items = [];
      for (let k = 0; k < idx.length; k++) {
        if (k === edge) items.push(' ...');
        items.push(fmt.format(values[offset + this.#at(idx, k) * stride]));
      }
    }
    const perLine = Math.max(1, Math.floor((this.#lineWidth - indent) / (fmt.width + 2)));
    const lines: string[] = [];
    for (let i = 0; i < items.length; i += perLine) lines.push(items.slice(i, i + perLine).join(', '));
    return '[' + lines.join(',\n' + ' '.repeat(indent + 1)) + ']';
  }
}
