// Op schemas read by the type checker: OpsOf<['scale(Tensor x, float s) -> Tensor']>
// is { scale(x: Tensor, s: number): Tensor }, the same types `gpuext build`
// generates (both read the one schema type table, lib/generated/schema-types.ts), for gx.load and
// gx.loadInline's `schemas` option. The grammar is the schema subset of
// docs/DESIGN.md decision 3: positional arguments, `*` then keyword-only ones (an options
// object), defaults, `Type?` optional, one return or a tuple. An op whose
// schema these types cannot read (a default holding a comma, a type they do
// not know) is typed as an untyped OpFunction rather than wrongly.
import type { SchemaArgTypes as ArgTypes, SchemaReturnTypes as ReturnTypes } from '../generated/schema-types';

type Trim<S extends string> = S extends ` ${infer R}` ? Trim<R> : S extends `${infer R} ` ? Trim<R> : S;

type SplitComma<S extends string> = S extends `${infer H},${infer T}` ? [Trim<H>, ...SplitComma<T>] : Trim<S> extends '' ? [] : [Trim<S>];

/** add_gpu -> addGpu, as camelCase() in extension.ts. */
export type CamelCase<S extends string> = S extends `${infer H}_${infer T}`
  ? T extends '' ? S : `${H}${Capitalize<CamelCase<T>>}`
  : S;

/** Marks a schema these types cannot read. */
declare const unreadable: unique symbol;
type Unreadable = typeof unreadable;

/** One argument, `Type name` or `Type name=default`: its parts, or Unreadable. */
type Arg<A extends string> = A extends `${infer T} ${infer Rest}`
  ? Trim<Rest> extends `${infer N}=${string}` ? ArgOf<T, Trim<N>, true> : ArgOf<T, Trim<Rest>, false>
  : Unreadable;

type ArgOf<T extends string, N extends string, HasDefault extends boolean> =
  N extends `${string} ${string}` ? Unreadable
  : T extends `${infer B}?` ? B extends keyof ArgTypes ? { name: N; type: ArgTypes[B] | null; optional: true } : Unreadable
  : T extends keyof ArgTypes ? { name: N; type: ArgTypes[T]; optional: HasDefault }
  : Unreadable;

interface ParsedArg {
  name: string;
  type: unknown;
  optional: boolean;
}

type ParseArgs<L extends string[]> = { [I in keyof L]: Arg<L[I]> };

/** The positional arguments (before `*`) and the keyword-only ones (after it). */
type Sections<L extends string[], Pos extends string[] = []> = L extends [infer H extends string, ...infer T extends string[]]
  ? H extends '*' ? [Pos, T] : Sections<T, [...Pos, H]>
  : [Pos, []];

type AllOptional<A> = A extends [infer H, ...infer T] ? H extends { optional: true } ? AllOptional<T> : false : true;

/** A parameter tuple: a parameter is optional when it and every later one are (as codegen's renderArgs). */
type Params<A> = A extends [infer H extends ParsedArg, ...infer T]
  ? H['optional'] extends true
    ? AllOptional<T> extends true ? [H['type']?, ...Params<T>] : [H['type'], ...Params<T>]
    : [H['type'], ...Params<T>]
  : [];

type KeywordObject<A extends ParsedArg[]> =
  & { [E in A[number] as E['optional'] extends true ? never : E['name']]: E['type'] }
  & { [E in A[number] as E['optional'] extends true ? E['name'] : never]?: E['type'] };

/** The options object of the keyword-only arguments: required when one of them has no default. */
type KeywordParams<A extends ParsedArg[]> = A extends [] ? []
  : AllOptional<A> extends true ? [options?: KeywordObject<A>] : [options: KeywordObject<A>];

type ReturnOne<R extends string> = R extends keyof ReturnTypes ? ReturnTypes[R]
  : R extends `${infer T} ${string}` ? T extends keyof ReturnTypes ? ReturnTypes[T] : Unreadable
  : Unreadable;

type ReturnTuple<L extends string[]> = { [I in keyof L]: ReturnOne<L[I]> };

type Returns<R extends string> = R extends '()' ? void
  : R extends `(${infer L})` ? ReturnTuple<SplitComma<L>>
  : ReturnOne<R>;

/** Whether a parsed part (a tuple of them, or one) holds something unreadable. */
type HasUnreadable<T> = Unreadable extends (T extends readonly unknown[] ? T[number] : T) ? true : false;

type OpFn<P extends string[], K extends string[], R> =
  ParseArgs<P> extends infer PA extends ParsedArg[]
    ? ParseArgs<K> extends infer KA extends ParsedArg[]
      ? (...args: [...Params<PA>, ...KeywordParams<KA>]) => R
      : (...args: unknown[]) => unknown
    : (...args: unknown[]) => unknown;

/**
 * The function type of one op schema. An op that is not readable here (see
 * the file's head) is `(...args: unknown[]) => unknown`.
 * @example OpSignature<'scale(Tensor x, float s=1) -> Tensor'>  // (x: Tensor, s?: number) => Tensor
 */
export type OpSignature<S extends string> = S extends `${string}(${infer Args})${infer Tail}`
  ? Trim<Tail> extends `->${infer Ret}` ? Signature<Args, Ret> : (...args: unknown[]) => unknown
  : (...args: unknown[]) => unknown;

type Signature<Args extends string, Ret extends string> =
  Sections<SplitComma<Args>> extends [infer P extends string[], infer K extends string[]]
    ? [HasUnreadable<ParseArgs<P>>, HasUnreadable<ParseArgs<K>>, HasUnreadable<Returns<Trim<Ret>>>] extends [false, false, false]
      ? OpFn<P, K, Returns<Trim<Ret>>>
      : (...args: unknown[]) => unknown
    : (...args: unknown[]) => unknown;

/** An op's name in its schema (`ns::` dropped), camelCased as the functions are named. */
export type OpName<S extends string> = S extends `${infer N}(${string}`
  ? CamelCase<Trim<N> extends `${string}::${infer B}` ? B : Trim<N>>
  : never;

/**
 * The ops of an extension typed from its schema strings, by camelCase name
 * (schemas known only as `string` give the untyped record).
 * @example type MyOps = OpsOf<['add_gpu(Tensor a, Tensor b) -> Tensor']>;  // { addGpu(a: Tensor, b: Tensor): Tensor }
 */
export type OpsOf<S extends readonly string[]> = string extends S[number]
  ? Readonly<Record<string, (...args: unknown[]) => unknown>>
  : { readonly [K in S[number] as OpName<K>]: OpSignature<K> };
