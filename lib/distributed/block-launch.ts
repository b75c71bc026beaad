// A RawKernel launched by gx.mapBlocks on every block, checked once: the
// launch plan form of mapBlocks' first argument.
//
// NOTE [ Block launch plans ]
// mapBlocks calling a function that calls kernel.launch checks every launch
// in full: the argument list against the kernel's parameters, each scalar's
// range, the grid and block extents, the options. For thousands of small
// blocks that is most of the host's time per block (with the block's
// allocation). A plan ({ kernel, grid, block, args, out }) is checked in full
// on the first block of each device (an ordinary kernel.launch), which fixes
// which arguments are tensors and the scalars' values; every later block only
// confirms that each tensor argument is a tensor on the block's device and
// each scalar is the value checked (else it takes the full launch again),
// writes the addresses into the staging area and launches through the
// kernel's staged path, on the block's stream. A block that takes the full
// launch again becomes what later blocks are compared with. The checks
// outlive the call: the same plan object passed again (still naming the same
// kernel, functions, extents and output, compared by identity) starts from
// them, so a mapBlocks called in a loop launches every block staged. Within
// a call, the staged launches of each device wait for the call's end, where
// they go out together (NOTE [ Block graphs ] in block-graphs.ts).
import { capturingDevice } from '../core/capture-guard';
import type { Device } from '../core/device';
import { checkOptions, optionKeys } from '../core/options';
import { readDim3, type Dim3, type RawKernel } from '../rtc/raw';
import { STAGED_ARGS, STAGED_DIMS, STAGED_MAX_ARGS, stagingArea } from '../core/staging';
import { Tensor } from '../core/tensor';
import { DeviceLaunches } from './block-graphs';

/** A kernel for gx.mapBlocks to launch on each block (NOTE [ Block launch plans ]). */
export interface BlockLaunch {
  /** The kernel (a gx.RawKernel). */
  kernel: RawKernel;
  /** The grid: fixed, or from the block's arguments (mapBlocks' inputs for this block). */
  grid: Dim3 | ((...blockArgs: never[]) => Dim3);
  /** Threads per block. */
  block: Dim3;
  /**
   * The kernel's arguments from the block's arguments (tensors by device
   * pointer, numbers). Called for each block before the call's launches go
   * out (NOTE [ Block graphs ]): it should compute arguments, not launch work
   * that reads the output blocks of the same call.
   */
  args: (...blockArgs: never[]) => readonly unknown[];
  /** Which of the block's arguments is the output block the kernel writes (returned as the block's result). */
  out: number;
  /** Dynamic shared memory in bytes (default 0). */
  sharedMem?: number;
}

const PLAN_KEYS = optionKeys<BlockLaunch>({ kernel: true, grid: true, block: true, args: true, out: true, sharedMem: true });

/** The parts of a plan its launcher checks once (compared by identity when the plan comes again). */
function partsOf(plan: BlockLaunch): unknown[] {
  return [plan.kernel, plan.grid, plan.block, plan.args, plan.out, plan.sharedMem];
}

/** Launchers by plan: a plan passed to mapBlocks again keeps what its blocks were checked against. */
const launchers = new WeakMap<BlockLaunch, BlockLauncher>();

/** The launcher of `plan`: the one made for it before while the plan holds the same parts, else a new one. */
export function launcherFor(plan: BlockLaunch, fn: string): BlockLauncher {
  const known = launchers.get(plan);
  if (known !== undefined && known.holds(plan)) return known;
  const made = new BlockLauncher(plan, fn);
  launchers.set(plan, made);
  return made;
}

/** What the last full launch on a device fixed. */
interface Checked {
  tensor: boolean[];
  values: unknown[];
}

/** A device's part of a launcher: what its blocks are compared with, and their staged launches. */
interface OnDevice {
  checked: Checked;
  launches: DeviceLaunches;
}

/** A plan checked once per device, launching blocks through the staged path. */
export class BlockLauncher {
  readonly #plan: BlockLaunch;
  /** By device index: what the last full launch there checked, and the device's staged launches. */
  readonly #devices = new Map<number, OnDevice>();
  readonly #dims = new Float64Array(STAGED_DIMS);
  readonly #fn: string;
  readonly #parts: readonly unknown[];
  /** Within a call (begin() to finish()) whose staged launches wait for its end (NOTE [ Block graphs ]). */
  #deferring = false;
  /** Calls of this plan under way: more than one when the plan's args or grid call mapBlocks with it again. */
  #depth = 0;

  constructor(plan: BlockLaunch, fn: string) {
    checkOptions<BlockLaunch>(plan, fn, PLAN_KEYS);
    this.#plan = plan;
    this.#parts = partsOf(plan);
    this.#fn = fn;
    if (typeof plan.args !== 'function') throw new TypeError(`${fn}: the launch plan's args must be a function of the block's arguments`);
    if (typeof plan.kernel?.launchStaged !== 'function') throw new TypeError(`${fn}: the launch plan's kernel must be a gx.RawKernel`);
    if (!Number.isInteger(plan.out) || plan.out < 0) throw new RangeError(`${fn}: the launch plan's out must be the index of an argument, got ${String(plan.out)}`);
  }

  /** Whether `plan` still holds what this launcher checked (the same kernel, functions, extents and output). */
  holds(plan: BlockLaunch): boolean {
    const now = partsOf(plan);
    return now.every((p, i) => p === this.#parts[i]);
  }

  /**
   * Starts a mapBlocks call. With `wait`, staged launches wait for finish()
   * (NOTE [ Block graphs ]); they go out at once inside a capture (which
   * records them) and within another call of this plan, whose waiting
   * launches go out first (the inner call may read what they write).
   */
  begin(wait: boolean): void {
    if (this.#depth++ > 0) {
      for (const d of this.#devices.values()) d.launches.flush();
      return;
    }
    this.#deferring = wait && capturingDevice() === null;
  }

  /** Ends the call begun: every device's waiting launches go out (the outermost call's). */
  finish(): void {
    if (--this.#depth > 0) return;
    const deferred = this.#deferring;
    this.#deferring = false;
    if (!deferred) return;
    try {
      for (const d of this.#devices.values()) d.launches.finish();
    } finally {
      for (const d of this.#devices.values()) d.launches.abandon();  // those after a launch that failed
    }
  }

  /** @internal How many device records of this plan's calls went out as a graph (NOTE [ Block graphs ]). */
  get graphReplays(): number {
    let n = 0;
    for (const d of this.#devices.values()) n += d.launches.replays;
    return n;
  }

  /** Ends a call that failed: its waiting launches are dropped (the outermost call's; an inner call has none). */
  abandon(): void {
    if (--this.#depth > 0) return;
    if (this.#deferring) for (const d of this.#devices.values()) d.launches.abandon();
    this.#deferring = false;
  }

  /** Launches the plan on one block (its arguments on `device`) and returns the output block. */
  run(device: Device, blockArgs: readonly unknown[]): Tensor {
    const fn = this.#fn, plan = this.#plan;
    const out = blockArgs[plan.out];
    if (!(out instanceof Tensor)) throw new TypeError(`${fn}: the launch plan's out (${plan.out}) must name a tensor argument`);
    if (device.type !== 'cuda') throw new TypeError(`${fn}: a launch plan runs RawKernels on CUDA blocks; a block is on ${device}`);
    const call = plan.args as (...a: readonly unknown[]) => readonly unknown[];
    const args = call(...blockArgs);
    const grid = typeof plan.grid === 'function' ? (plan.grid as (...a: readonly unknown[]) => Dim3)(...blockArgs) : plan.grid;
    const on = this.#devices.get(device.index);
    if (on !== undefined && this.#stage(on.checked, device, args, grid)) {
      if (!this.#deferring || this.#depth > 1) plan.kernel.launchStaged(device, this.#dims);
      else on.launches.add(this.#dims);
      return out;
    }
    on?.launches.flush();  // the device's waiting launches go first
    plan.kernel.launch(grid, plan.block, args, plan.sharedMem === undefined ? undefined : { sharedMem: plan.sharedMem });
    // What this launch checked is what later blocks (of this call or a later one) are compared with.
    if (Array.isArray(args) && args.length <= STAGED_MAX_ARGS) {
      const checked = { tensor: args.map((a) => a instanceof Tensor), values: args.slice() };
      // The kernel fixes the argument count, so a device's staged launches keep their record's width.
      if (on !== undefined) on.checked = checked;
      else this.#devices.set(device.index, { checked, launches: new DeviceLaunches(device, plan.kernel, args.length) });
    }
    return out;
  }

  /** Stages a block's launch like the checked one (extents in #dims, arguments in the staging area); false when it differs. */
  #stage(c: Checked, device: Device, args: readonly unknown[], grid: Dim3): boolean {
    if (!Array.isArray(args) || args.length !== c.tensor.length) return false;
    const dims = this.#dims;
    readDim3(grid, dims, 0, this.#fn, 'grid');
    readDim3(this.#plan.block, dims, 3, this.#fn, 'block');
    dims[6] = this.#plan.sharedMem ?? 0;
    const st = stagingArea();
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (c.tensor[i]) {
        if (!(a instanceof Tensor)) return false;
        const d = a.device;
        if (d !== device && !d.equals(device)) return false;
        st[STAGED_ARGS + i] = a.address(this.#fn);
      } else if (a === c.values[i] && typeof a === 'number') {
        st[STAGED_ARGS + i] = a;
      } else {
        return false;
      }
    }
    return true;
  }
}
