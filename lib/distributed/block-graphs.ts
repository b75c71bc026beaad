// A launch plan's blocks on one GPU, launched together: one by one, or as a
// CUDA graph when a call repeats a recent one's launches exactly.
//
// NOTE [ Block graphs ]
// A program calls mapBlocks with the same plan on the same chunked tensors
// over and over, and then every call makes the same launches: the same
// kernel, extents, addresses and scalars, block after block. Each launch
// costs the host the driver's launch: on a lent H200 host, launching the
// article's add_broadcast block by block cost 4.3 µs per block, and
// mapBlocks 5.7 µs per block with its own work; one graph replay of a
// device's eight blocks brought mapBlocks to 1.6 µs per block. So a plan's
// call stages every block's launch (NOTE [ Block launch plans ])
// into a record per device instead of launching it, and at the end of the
// call launches each device's record:
//   - as the graph captured of it, when the graph's launches are this
//     record's, bit for bit (addresses, scalars, extents: a -0 is not a 0);
//   - captured into a graph first, when one of the device's last four calls
//     made the same launches (a plan called once never pays a capture, and
//     a program alternating between a few sets of blocks keeps a graph for
//     each). On a lent H200 host, capturing the eight launches of
//     add_broadcast's blocks and replaying the graph once cost the host
//     176-202 µs, launching them 45-55 µs and replaying them 7-9 µs: a
//     graph pays for its capture by its fourth replay. A program making each
//     set of launches two or three times only would pay captures that do
//     not pay off; so once more than two of a device's graphs were dropped
//     before their fourth replay (beyond those that reached it), the device
//     captures only at a fourth call alike;
//   - else one by one, through the kernel's staged path.
// A graph replays on the device's current stream, where the launches would
// have gone, and holds no memory (it launches kernels only). Comparing the
// launches themselves, not the tensors, keeps it exact: a block freed and
// another tensor at its address is the launch the graph makes. What the
// comparison cannot see is a change to the kernel function's attributes
// (gx.RawKernel's setMaxDynamicSharedSize changes the shared memory a block
// asks for, which is compared). Blocks launched at once, in order, as before
// this note: the first of each device (the full, checked launch), any that
// differs from the checks, those of a call within a capture (the capture
// records them), on lanes of several streams, or of a call made from the
// plan's own args or grid within another call of it (which first sends out
// the outer call's waiting launches: the inner call may read what they
// write). A block that takes the full launch first sends out the device's
// waiting ones, so a device's launches keep their order. Only user code
// running between a call's blocks could see that they wait: the plan's args
// and grid functions, which should compute arguments, not launch work that
// reads the call's earlier output blocks. A copy of an argument to the
// block's GPU (y's one block, on cuda:0, for the blocks on cuda:1) stays out
// of the graph, made by mapBlocks before the blocks as a copy between GPUs
// is: a graph holding it as a memcpy node, or waiting for the source's
// stream by an external event's wait node, cost 5-6 and 4-5 µs more per
// replay on the x2 H200 host than the same graph of four kernels alone
// (2.2 µs): about what the copy's own host calls cost, and mapBlocks
// with the copy folded into the graph measured slower on two GPUs.
import type { Device } from '../core/device';
import { graph, type CUDAGraph } from '../core/graph';
import type { RawKernel } from '../rtc/raw';
import { STAGED_ARGS, STAGED_DIMS, stagingArea } from '../core/staging';

/** Whether two records hold the same launches, compared bit for bit (NOTE [ Block graphs ]): each seen as 32-bit words. */
function sameLaunches(a: Uint32Array, b: Uint32Array, words: number): boolean {
  if (a.length !== words) return false;
  for (let i = 0; i < words; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A record a device's calls made lately, and the graph of it once a call repeated it. */
interface Seen {
  /** The record's launches, as 32-bit words. */
  launches: Uint32Array;
  graph: CUDAGraph | undefined;
  /** Replays of the graph, the one right after its capture included. */
  replays: number;
  /** Calls that made these launches, since they were first kept. */
  calls: number;
}

/** How many records (and graphs) a device keeps per plan: a program alternating between a few sets of blocks keeps each's graph. */
const KEPT = 4;
/** The replays (the one right after the capture included) by which a graph has paid for its capture (NOTE [ Block graphs ]). */
const PAID_OFF = 4;

/** One GPU's launches of a plan: the current call's record, and the records (with their graphs) of recent calls. */
export class DeviceLaunches {
  /** Per block: its STAGED_DIMS extents (grid, block, shared memory), then its `args` staged arguments. */
  #record = new Float64Array(64);
  /** The same memory as 32-bit words, for comparing records bit for bit. */
  #words = new Uint32Array(this.#record.buffer);
  #length = 0;
  /** Most recent first; at most KEPT. */
  readonly #seen: Seen[] = [];
  /** Set when a capture failed: the device's records are launched one by one from then on. */
  #noGraphs = false;
  /** Graphs that reached PAID_OFF replays, and graphs dropped before it (NOTE [ Block graphs ]: the capture's cost). */
  #paidOff = 0;
  #wasted = 0;
  readonly #dims = new Float64Array(STAGED_DIMS);
  /** A block's slots in the record. */
  readonly #width: number;
  /** How many of this device's records went out as a graph (the tests read it). */
  replays = 0;

  constructor(readonly device: Device, readonly kernel: RawKernel, args: number) {
    this.#width = STAGED_DIMS + args;
  }

  /** Adds a block's launch, its extents in `dims` and its arguments staged from STAGED_ARGS on. */
  add(dims: Float64Array): void {
    const w = this.#width;
    if (this.#length + w > this.#record.length) {
      const grown = new Float64Array(this.#record.length * 2);
      grown.set(this.#record);
      this.#record = grown;
      this.#words = new Uint32Array(grown.buffer);
    }
    const r = this.#record, at = this.#length, st = stagingArea();
    for (let k = 0; k < STAGED_DIMS; k++) r[at + k] = dims[k];
    for (let k = STAGED_DIMS; k < w; k++) r[at + k] = st[STAGED_ARGS + k - STAGED_DIMS];
    this.#length = at + w;
  }

  /** Launches the waiting blocks one by one (a block that takes the full launch goes after them). */
  flush(): void {
    this.#launchEach(this.#length);
    this.#length = 0;
  }

  /** Launches the call's record: by its graph, by capturing one when a recent call made it too, else one by one (NOTE [ Block graphs ]). */
  finish(): void {
    const n = this.#length;
    if (n === 0) return;
    this.#length = 0;
    const seen = this.#seen, words = this.#words;
    let i = 0;
    while (i < seen.length && !sameLaunches(seen[i].launches, words, 2 * n)) i++;
    if (i === seen.length) {
      this.#launchEach(n);
      seen.unshift({ launches: words.slice(0, 2 * n), graph: undefined, replays: 0, calls: 1 });
      const dropped = seen.length > KEPT ? seen.pop() : undefined;
      if (dropped?.graph !== undefined) {
        if (dropped.replays < PAID_OFF) this.#wasted++;
        dropped.graph.dispose();
      }
      return;
    }
    const s = seen[i];
    s.calls++;
    if (i > 0) seen.unshift(...seen.splice(i, 1));
    if (s.graph === undefined) {
      if (this.#noGraphs || (this.#wasted > this.#paidOff + 2 && s.calls < PAID_OFF)) {
        this.#launchEach(n);
        return;
      }
      try {
        s.graph = graph(() => this.#launchEach(n), { device: this.device });
      } catch (e) {
        // The driver refused the capture (one that cannot capture, say): launch as without graphs, from now on.
        // Any other error is a fault of ours, and silently losing the graphs would hide it.
        if ((e as { code?: unknown }).code !== 'GX_CUDA') throw e;
        this.#noGraphs = true;
        this.#launchEach(n);
        return;
      }
    }
    s.graph.replay();
    this.replays++;
    if (++s.replays === PAID_OFF) this.#paidOff++;
  }

  /** Drops the waiting blocks (the call failed before its end). */
  abandon(): void {
    this.#length = 0;
  }

  #launchEach(n: number): void {
    const r = this.#record, w = this.#width, dims = this.#dims, st = stagingArea();
    for (let at = 0; at < n; at += w) {
      for (let k = 0; k < STAGED_DIMS; k++) dims[k] = r[at + k];
      for (let k = STAGED_DIMS; k < w; k++) st[STAGED_ARGS + k - STAGED_DIMS] = r[at + k];
      this.kernel.launchStaged(this.device, dims);
    }
  }
}
