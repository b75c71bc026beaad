/**
 * nested.ts — turn a nested JS array (e.g. the `data` of `gx.tensor(data)`) into a shape
 * and a flat list of leaf values in C order, with precise error messages.
 *
 * The shape is read from the first element at each level (data, data[0], data[0][0], ...);
 * every other array must then match it. Leaves must all be numbers, all booleans or all
 * bigints. Typed arrays (other than DataView) count as arrays too. Paths such as
 * `data[1][0]` are only built when an error is thrown, so the success path does no
 * per-element string work.
 */

import * as limits from '../generated/limits';

export type Scalar = number | boolean | bigint;

export interface Flattened {
  shape: number[];
  values: Scalar[];
  /** Kind of the leaves; 'empty' when there are none (e.g. `[]` or `[[], []]`). */
  kind: 'number' | 'boolean' | 'bigint' | 'empty';
}

/** Most dimensions a nested array may have: a tensor's (GX_MAX_DIMS in csrc/include/gpuext/limits.h). */
export const MAX_NESTED_DIMS = limits.MAX_DIMS;

type LeafKind = 'number' | 'boolean' | 'bigint';

function isArrayNode(v: unknown): v is ArrayLike<unknown> {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

function leafKind(v: unknown): LeafKind | undefined {
  const t = typeof v;
  return t === 'number' || t === 'boolean' || t === 'bigint' ? t : undefined;
}

function pathOf(indices: readonly number[], depth: number): string {
  let s = 'data';
  for (let i = 0; i < depth; i++) s += `[${indices[i]}]`;
  return s;
}

/** The path of the element that fixed shape[depth - 1]: data[0][0]... (`depth` zeros). */
function firstPath(depth: number): string {
  return 'data' + '[0]'.repeat(depth);
}

/** "a number", "an array", "a string (\"x\")", "null", ... */
function describe(v: unknown): string {
  if (v === null) return 'null';
  if (isArrayNode(v)) return 'an array';
  switch (typeof v) {
    case 'undefined':
      return 'undefined';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'bigint':
      return 'a bigint';
    case 'string': {
      const shown = v.length > 40 ? `${v.slice(0, 40)}...` : v;
      return `a string (${JSON.stringify(shown)})`;
    }
    case 'symbol':
      return `a symbol (${v.toString()})`;
    case 'function':
      return 'a function';
    default: {
      const ctor = (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
      return typeof ctor === 'string' && ctor !== '' && ctor !== 'Object' ? `an object (${ctor})` : 'an object';
    }
  }
}

const PLURAL: Record<LeafKind, string> = { number: 'numbers', boolean: 'booleans', bigint: 'bigints' };

/**
 * Flatten nested arrays into `{ shape, values, kind }`. `fn` is the API name used in
 * error messages (e.g. 'gx.tensor'). A bare scalar gives shape [].
 *
 * Throws TypeError for a leaf that is not a number/boolean/bigint or for mixed leaf kinds,
 * and RangeError for ragged arrays, arrays mixed with scalars at one level, or more than
 * 16 dimensions.
 */
export function flattenNested(data: unknown, fn: string): Flattened {
  // 1. Shape from the first element at each level.
  const { shape, probe } = probeShape(data, fn);
  const ndim = shape.length;

  const values: Scalar[] = [];
  let kind: LeafKind | undefined;
  const indices: number[] = new Array<number>(ndim).fill(0);

  const checkLeaf = (v: unknown, depth: number): void => {
    const k = leafKind(v);
    if (k === undefined) {
      throw new TypeError(`${fn}: ${pathOf(indices, depth)} is ${describe(v)}; expected a number, boolean or bigint`);
    }
    if (kind === undefined) kind = k;
    else if (k !== kind) {
      throw new TypeError(
        `${fn}: ${pathOf(indices, depth)} is ${describe(v)} but earlier elements are ${PLURAL[kind]}; ` +
          'nested arrays must hold one kind of value',
      );
    }
    values.push(v as Scalar);
  };

  if (!isArrayNode(data)) {
    checkLeaf(data, 0);
    return { shape, values, kind: kind ?? 'empty' };
  }

  // 2. Walk everything; `node` is the array at `depth` (0 = data itself).
  const walk = (node: ArrayLike<unknown>, depth: number): void => {
    const len = shape[depth];
    if (node.length !== len) {
      throw new RangeError(
        `${fn}: ragged nested array: ${pathOf(indices, depth)} has length ${node.length} ` +
          `but ${firstPath(depth)} has length ${len}`,
      );
    }
    const child = depth + 1;
    if (child === ndim) {
      // Children are leaves.
      for (let i = 0; i < len; i++) {
        const v = node[i];
        if (kind !== undefined && typeof v === kind) {
          values.push(v as Scalar);
          continue;
        }
        indices[depth] = i;
        if (isArrayNode(v)) {
          throw new RangeError(
            `${fn}: ragged nested array: ${pathOf(indices, child)} is an array but ${firstPath(child)} is ${describe(probe)}`,
          );
        }
        checkLeaf(v, child);
      }
      return;
    }
    for (let i = 0; i < len; i++) {
      const v = node[i];
      indices[depth] = i;
      if (!isArrayNode(v)) {
        throw new RangeError(
          `${fn}: ragged nested array: ${pathOf(indices, child)} is ${describe(v)} but ${firstPath(child)} is an array`,
        );
      }
      walk(v, child);
    }
  };
  walk(data, 0);
  return { shape, values, kind: kind ?? 'empty' };
}

/** The shape read from the first element at each level, and the first leaf (or empty array) it ends on. */
function probeShape(data: unknown, fn: string): { shape: number[]; probe: unknown } {
  const shape: number[] = [];
  let probe: unknown = data;
  while (isArrayNode(probe)) {
    if (shape.length === MAX_NESTED_DIMS) {
      throw new RangeError(
        `${fn}: data has more than ${MAX_NESTED_DIMS} dimensions (arrays nested deeper than ${MAX_NESTED_DIMS} levels)`,
      );
    }
    shape.push(probe.length);
    if (probe.length === 0) break;
    probe = probe[0];
  }
  return { shape, probe };
}

/**
 * The inverse of flattenNested: `values` (C order) as nested arrays of
 * `shape`; a 0-d shape gives the one value itself.
 */
export function nestValues<T>(values: ArrayLike<T>, shape: readonly number[]): T | unknown[] {
  if (shape.length === 0) return values[0];
  let at = 0;
  const build = (depth: number): unknown[] => {
    const n = shape[depth];
    const out = new Array<unknown>(n);
    if (depth === shape.length - 1) {
      for (let i = 0; i < n; i++) out[i] = values[at++];
    } else {
      for (let i = 0; i < n; i++) out[i] = build(depth + 1);
    }
    return out;
  };
  return build(0);
}
