// What one translation shares between the functions it types and emits: the
// device functions typed per argument types, gx.fuse's op table, the helpers
// and device functions the CUDA source needs before the kernel, and the
// access sites of { debug: true } kernels.
import type { FnIR } from './ir';
import type { ParsedFunction } from './source';
import type { Lookup } from './closure';
import type { FunctionInfo } from './translation-cache';
import type { Ty, Val } from './types';

/** gx.jit.device functions, marked so a caller's translation finds them. */
export const DEVICE = Symbol('gx.jit.device');
export interface DeviceFunctionInfo {
  /** The user's function. */
  readonly fn: Function;
  /** Parsed when first read (a translation that hits the cache never reads it). */
  readonly parsed: ParsedFunction;
  lookup(): Lookup;
  /** Its parameters and the chains it reads, for the translation cache's key. */
  info(): FunctionInfo;
}
export function deviceInfo(v: unknown): DeviceFunctionInfo | undefined {
  return typeof v === 'function' ? (v as { [DEVICE]?: DeviceFunctionInfo })[DEVICE] : undefined;
}

/** An op call's options object, written as literals in the fused function ({ roundingMode: 'floor' }). */
export type OpOptions = Readonly<Record<string, string | number | boolean | null>>;

/**
 * A rule the eager op applies to some of its number operands (their places
 * among the op's operands): why their values are refused (the eager op's
 * message, after its name), or undefined (NOTE [ Argument facts in fused functions ] in fuse-facts.ts).
 */
export interface OperandFact {
  /** The op as errors name it: gx.hardtanh. */
  readonly op: string;
  readonly operands: readonly number[];
  fault(values: readonly FactValue[]): string | undefined;
}

/** A number operand's value as the typed IR computes it on the host (interpret.ts: int64 as a BigInt). */
export type FactValue = number | bigint | boolean;

/** How gx.fuse's translation calls gx ops on elements (fuse.ts fills it). */
export interface OpCalls {
  /** `gx.sin(x)` or `x.sin()`: the value for an op by its function or method name (with the facts of its number operands), or undefined when it is not one. */
  call(name: string, args: Val[], node: { start: number; end: number }, options?: OpOptions): (Val & { facts?: readonly OperandFact[] }) | undefined;
  /** The op name of a gx function value, if it is one. */
  nameOf(value: unknown): string | undefined;
}

/** A tensor access that { debug: true } checks: its array and where it is written. */
export interface AccessSite {
  label: string;
  line: number;
}

/** What a translation produces beside its function: device functions, helpers, debug sites. */
export class Module {
  /** Emitted device functions (C), callees first. */
  readonly functions: string[] = [];
  readonly helpers = new Set<string>();
  readonly sites: AccessSite[] = [];
  /** Device functions typed so far, by function and argument types. */
  readonly specs = new Map<DeviceFunctionInfo, Map<string, FnIR>>();
  /** Device functions being typed (a call of one of them is recursion). */
  readonly active = new Set<DeviceFunctionInfo>();
  /** Functions already emitted into `functions`. */
  readonly emitted = new Set<FnIR>();
  count = 0;

  constructor(readonly debug: boolean, readonly ops?: OpCalls) {}

  /** The key of argument types of a device function's specialization. */
  static key(args: readonly Ty[]): string {
    return args.map((t) => `${t.dtype}${t.weak ? '?' : ''}`).join(',');
  }

  /** The helpers and device functions, to put before the kernel. */
  preamble(): string {
    return [...this.helpers].join('') + this.functions.join('');
  }
}
