// The limits of rank 0's store, apart from the store itself: InitOptions
// names this type, and the public declarations must not pull in Node's
// types (net, Buffer) through it.

/** Limits of rank 0's store (InitOptions.store). */
export interface StoreOptions {
  /** A request's JSON header, in bytes (default 1 MiB). */
  maxHeaderBytes?: number;
  /** A value's bytes (default 1 GiB): the largest CPU tensor a collective can move. */
  maxPayloadBytes?: number;
  /** How long a new connection has to prove it holds the job's secret (default 10 s). */
  authTimeoutMs?: number;
  /** How long one frame may take to arrive once its first byte did (default 60 s); a slower sender is closed. */
  frameTimeoutMs?: number;
}

export const STORE_DEFAULTS: Readonly<Required<StoreOptions>> = {
  maxHeaderBytes: 1 << 20, maxPayloadBytes: 1 << 30, authTimeoutMs: 10_000, frameTimeoutMs: 60_000,
};
