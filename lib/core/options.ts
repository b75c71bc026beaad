// Options objects. Every one gpuext reads is checked against the keys its
// function knows: TypeScript catches a misspelled key at compile time, but JS
// callers (and TS through `any`) get no such help, and an ignored key is a
// silent wrong answer (`x.sum({ dim: 1 })` would sum everything). So an
// unknown key is a TypeError that names the function, the key and the known
// key it most likely meant, PyTorch's and NumPy's spellings included.
import { describeValue } from './shape';

/**
 * The keys of options type T, listed once as an object so that the compiler
 * checks the list against T (a key missing or extra is a compile error).
 * @example const KEYS = optionKeys<OutOptions>({ out: true });
 */
export function optionKeys<T extends object>(keys: { [K in keyof Required<T>]: true }): readonly string[] {
  return Object.freeze(Object.keys(keys));
}

/** PyTorch/NumPy (and snake_case) spellings of gpuext's option keys: the key they usually mean. */
const ALIASES: Readonly<Record<string, string>> = {
  dim: 'axis',
  dims: 'axis',
  axes: 'axis',
  keepdim: 'keepdims',
  keep_dims: 'keepdims',
  keepDims: 'keepdims',
  keepDim: 'keepdims',
  dim1: 'axis1',
  dim2: 'axis2',
  p: 'ord',
  non_blocking: 'nonBlocking',
  full_matrices: 'fullMatrices',
  pin_memory: 'pinned',
  pinMemory: 'pinned',
  shared_mem: 'sharedMem',
  name_expressions: 'nameExpressions',
  extra_cflags: 'cxxFlags',
  extra_cuda_cflags: 'nvccFlags',
  extra_include_paths: 'includeDirs',
  extra_ldflags: 'libraries',
  build_directory: 'buildDirectory',
  cuda_sources: 'cuda',
  cpp_sources: 'cpp',
  n_warmup: 'nWarmup',
  n_repeat: 'nRepeat',
  type: 'dtype',
  output: 'out',
  rounding_mode: 'roundingMode',
  unbiased: 'correction',
  ddof: 'correction',
};

/**
 * Option keys kept for one version under an old spelling: accepted where the
 * key they stand for is (their options types list them, marked @deprecated),
 * never suggested or listed in errors, and warned about once
 * (warnDeprecated).
 */
export const DEPRECATED_KEYS: Readonly<Record<string, string>> = { dim: 'axis' };

function isDeprecatedKey(key: string): boolean {
  return Object.prototype.hasOwnProperty.call(DEPRECATED_KEYS, key);
}

const warned = new Set<string>();

/**
 * A DeprecationWarning, once per process for each old spelling (code
 * GPUEXT_DEP_<SPELLING>), saying the call to write instead.
 * @example warnDeprecated('dim', 'gx.sum', 'gx.sum(x, { axis: 1 })')
 */
export function warnDeprecated(spelling: string, fn: string, instead: string): void {
  if (warned.has(spelling)) return;
  warned.add(spelling);
  process.emitWarning(`${fn}: '${spelling}' is deprecated and will be removed in the next version; write ${instead}`,
    { type: 'DeprecationWarning', code: `GPUEXT_DEP_${spelling.toUpperCase()}` });
}

/** Optimal string alignment distance (Levenshtein plus adjacent swaps: 'dtpye' is one edit from 'dtype'). */
export function editDistance(a: string, b: string): number {
  const m = a.length, n = b.length;
  const d: number[][] = Array.from({ length: m + 1 }, (_, i) => [i, ...new Array<number>(n).fill(0)]);
  for (let j = 1; j <= n; j++) d[0][j] = j;
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[m][n];
}

/** The known key `key` most likely means, or undefined when none is close. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const alias = ALIASES[key];
  if (alias !== undefined && known.includes(alias)) return alias;
  const lower = key.toLowerCase().replace(/_/g, '');
  let best: string | undefined, bestDist = Infinity;
  for (const k of known) {
    if (isDeprecatedKey(k)) continue;
    const dist = editDistance(lower, k.toLowerCase());
    if (dist < bestDist) [best, bestDist] = [k, dist];
  }
  // Close enough to be a typo: at most a third of the word (and at least one edit) away.
  return best !== undefined && bestDist <= Math.max(1, Math.floor(Math.max(key.length, best.length) / 3)) ? best : undefined;
}

/** The TypeError for an unknown key of an options object. */
export function unknownOption(fn: string, key: string, known: readonly string[], what = 'option'): TypeError {
  const guess = closestKey(key, known);
  const hint = guess !== undefined ? `; did you mean '${guess}'?` : '';
  const shown = known.filter((k) => !isDeprecatedKey(k));
  const list = shown.length === 0 ? 'it takes none' : `known: ${shown.join(', ')}`;
  return new TypeError(`${fn}: unknown ${what} '${key}'${hint} (${list})`);
}

/** Throws unknownOption for the first key of `opts` not in `known`. */
export function checkKeys(opts: object, fn: string, known: readonly string[], what = 'option'): void {
  for (const key in opts) {
    if (Object.prototype.hasOwnProperty.call(opts, key) && !known.includes(key)) throw unknownOption(fn, key, known, what);
  }
}

/** How an options argument may look besides an object of known keys. */
export interface OptionsForm {
  /** An example for the error message, e.g. "{ dtype: 'float32', device: 'cuda' }" (default: the known keys). */
  like?: string;
  /** Whether null means no options, as undefined does (default true). */
  nullIsEmpty?: boolean;
}

/**
 * An options argument, checked: undefined (and null, unless form says
 * otherwise) gives {}; anything but a plain object, and any key not in
 * `known`, is a TypeError naming `fn`.
 */
export function checkOptions<T extends object>(opts: unknown, fn: string, known: readonly string[], form: OptionsForm = {}): Partial<T> {
  if (opts === undefined || (opts === null && form.nullIsEmpty !== false)) return {};
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    const shown = known.filter((k) => !isDeprecatedKey(k));
    const shape = form.like !== undefined ? `like ${form.like}` : `(${shown.length ? `with ${shown.join(', ')}` : 'empty'})`;
    throw new TypeError(`${fn}: options must be an object ${shape}, got ${describeValue(opts)}`);
  }
  checkKeys(opts, fn, known);
  return opts as Partial<T>;
}

/**
 * A boolean option or argument, checked: `fallback` when undefined (when a
 * fallback is given), else true or false; anything else (null, 0, 'false') is
 * a TypeError naming `fn` and `name`, since a value read by truthiness, or by
 * `=== true`, is a silent answer that differs from one option to the next
 * (Linear made a bias for { bias: 0 }, maxPool2d took { ceilMode: 1 } as
 * false). null is refused as torch refuses None for a bool.
 * @example const descending = booleanOption('gx.sort', 'descending', o.descending, false);
 */
export function booleanOption(fn: string, name: string, value: unknown, fallback?: boolean): boolean {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${describeValue(value)}`);
  return value;
}

/**
 * Throws for a call given arguments past the ones `fn` takes: `extra` how
 * many (arguments.length minus the count it takes), `first` the first of
 * them. The calling idiom, `if (arguments.length > n) tooManyArguments(fn,
 * form, arguments.length - n, arguments[n])`, reads the arguments object
 * without allocating it, so hot paths can afford it. test/arity.test.ts walks
 * every export with one argument more than its sample call, and again with
 * one after empty options (where the sample leaves its options out).
 */
export function tooManyArguments(fn: string, form: string, extra: number, first: unknown): never {
  throw new TypeError(`${fn}: takes ${form}; it takes no further argument or options (got ${describeValue(first)}` +
    `${extra > 1 ? ` and ${extra - 1} more` : ''})`);
}
