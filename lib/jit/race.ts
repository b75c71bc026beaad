// The simulator's race check of shared memory ({ debug: true } kernels): in a
// barrier phase (from one syncthreads() to the next) a thread that reads a
// shared slot another thread of the block wrote, or writes a slot another
// read, is reported with both threads and lines. On the GPU the order of
// those accesses is undefined; the simulator, which runs threads in turns,
// would otherwise give one of the orders silently.
import type { SimArray, SimThread } from './interpret';

interface Slots {
  /** Per slot: the phase of the last write, its thread (linear id) and source position; the same for reads. */
  wPhase: Int32Array; wBy: Int32Array; wAt: Int32Array;
  rPhase: Int32Array; rBy: Int32Array; rAt: Int32Array;
}

export class RaceCheck {
  private phase = 1;
  private slots = new Map<SimArray, Slots>();

  constructor(private readonly text: string, private readonly dims: readonly number[]) {}

  /** A new block: its shared arrays are new. */
  block(): void {
    this.slots.clear();
    this.phase++;
  }

  barrier(): void {
    this.phase++;
  }

  private of(a: SimArray): Slots {
    let s = this.slots.get(a);
    if (s === undefined) {
      const n = a.d.length;
      s = { wPhase: new Int32Array(n), wBy: new Int32Array(n), wAt: new Int32Array(n), rPhase: new Int32Array(n), rBy: new Int32Array(n), rAt: new Int32Array(n) };
      this.slots.set(a, s);
    }
    return s;
  }

  private id(t: SimThread): number {
    return t.tx + this.dims[0] * (t.ty + this.dims[1] * t.tz);
  }

  private thread(id: number): string {
    const bx = this.dims[0], by = this.dims[1];
    return `thread (${id % bx}, ${Math.floor(id / bx) % by}, ${Math.floor(id / (bx * by))})`;
  }

  private line(at: number): number {
    return this.text.slice(0, at).split('\n').length;
  }

  private fail(a: SimArray, off: number, me: number, what: string, at: number, other: number, did: string, otherAt: number): never {
    throw new RangeError(`a race on shared array ${a.label}: ${this.thread(me)} ${what} ${a.label} element ${off} at line ${this.line(at)}, ` +
      `which ${this.thread(other)} ${did} at line ${this.line(otherAt)} with no syncthreads() between`);
  }

  read(a: SimArray, off: number, at: number, t: SimThread): number {
    const s = this.of(a);
    const me = this.id(t);
    if (s.wPhase[off] === this.phase && s.wBy[off] !== me) this.fail(a, off, me, 'reads', at, s.wBy[off], 'wrote', s.wAt[off]);
    s.rPhase[off] = this.phase;
    s.rBy[off] = me;
    s.rAt[off] = at;
    return off;
  }

  write(a: SimArray, off: number, at: number, t: SimThread): number {
    const s = this.of(a);
    const me = this.id(t);
    if (s.rPhase[off] === this.phase && s.rBy[off] !== me) this.fail(a, off, me, 'writes', at, s.rBy[off], 'read', s.rAt[off]);
    s.wPhase[off] = this.phase;
    s.wBy[off] = me;
    s.wAt[off] = at;
    return off;
  }
}
