// What a collective returns: a Work to await (torch.distributed's Work),
// whichever backend started it.
/** A collective's completion on a device: poll it, or wait for it without blocking the event loop. */
export interface Completion {
  query(): boolean;
  wait(): Promise<void>;
}

/** A pending collective: await it (or its wait()) before reading the tensors it writes. */
export class Work implements PromiseLike<void> {
  #done = false;
  #p: Promise<void> | undefined;
  readonly #completion: Completion | undefined;

  /** @internal A promise (started now), or a device's completion, waited for only when asked. */
  constructor(p: Promise<void> | Completion) {
    if (p instanceof Promise) {
      this.#completion = undefined;
      this.#p = Work.#settled(p, this);
    } else {
      this.#completion = p;
    }
  }

  static #settled(p: Promise<void>, w: Work): Promise<void> {
    const done = p.then(() => {
      w.#done = true;
    });
    // An error is the awaiting caller's; one nobody awaits is not a crash.
    done.catch(() => undefined);
    return done;
  }

  /** A Work that fails with `e` when awaited (a call that could not start is not a throw into a loop of awaits). */
  static failed(e: unknown): Work {
    return new Work(Promise.reject(e));
  }

  isCompleted(): boolean {
    if (!this.#done && this.#completion?.query()) this.#done = true;
    return this.#done;
  }

  wait(): Promise<void> {
    return (this.#p ??= Work.#settled((this.#completion as Completion).wait(), this));
  }

  then<A = void, B = never>(ok?: ((v: void) => A | PromiseLike<A>) | null, bad?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.wait().then(ok, bad);
  }
}
