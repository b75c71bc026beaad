// gx.optim.lrScheduler.SequentialLR: schedulers taking turns at milestones
// (torch.optim.lr_scheduler.SequentialLR), the usual warm-up-then-decay:
//   const warm = new LinearLR(opt, { startFactor: 0.1, totalIters: 5 });
//   const decay = new CosineAnnealingLR(opt, { tMax: 95 });
//   const sched = new SequentialLR(opt, { schedulers: [warm, decay], milestones: [5] });
// As torch's: made, it puts the groups' lrs back to their initial lrs, undoes
// the first step each scheduler took when made, and takes that step again for
// the scheduler of step 0 only; at a milestone the next scheduler restarts at
// its step 0 in closed form (torch's step(0)), between milestones the current
// one steps as it would alone.
import { describeValue } from '../core/shape';
import { checkOptions } from '../core/options';
import { LRScheduler } from './lr-scheduler';
import { SCHEDULER_KEYS, type SchedulerState } from './scheduler-state';
import type { Optimizer } from './optimizer';

type AnyOptimizer = Optimizer<{ lr?: number }>;

/** The options of SequentialLR: schedulers of one optimizer, and the steps where each after the first takes over. */
export interface SequentialLROptions {
  schedulers: LRScheduler[];
  /** Increasing step counts, one fewer than the schedulers. */
  milestones: number[];
}

/** What SequentialLR.stateDict() gives: its own position and each scheduler's state. */
export type SequentialLRState = SchedulerState & { schedulers: SchedulerState[] };

/** Schedulers one after another, switching at the milestones (torch's SequentialLR). */
export class SequentialLR extends LRScheduler {
  readonly schedulers: readonly LRScheduler[];
  readonly milestones: readonly number[];

  constructor(optimizer: AnyOptimizer, opts: SequentialLROptions) {
    const fn = 'gx.optim.lrScheduler.SequentialLR';
    super(optimizer, fn);
    checkOptions(opts, fn, ['schedulers', 'milestones']);
    const { schedulers, milestones } = opts;
    if (!Array.isArray(schedulers) || schedulers.length === 0 || !schedulers.every((s) => s instanceof LRScheduler)) {
      throw new TypeError(`${fn}: argument 'schedulers' must be a non-empty list of gx.optim.lrScheduler schedulers, got ${describeValue(schedulers)}`);
    }
    schedulers.forEach((s, i) => {
      if (s.optimizer !== optimizer) throw new RangeError(`${fn}: scheduler ${i} (${s.constructor.name}) belongs to another optimizer; all must belong to this one`);
    });
    if (!Array.isArray(milestones) || milestones.length !== schedulers.length - 1) {
      throw new RangeError(`${fn}: argument 'milestones' must list ${schedulers.length - 1} step counts (one fewer than the schedulers), got ${describeValue(milestones)}`);
    }
    milestones.forEach((m, i) => {
      if (!Number.isInteger(m) || m <= 0 || (i > 0 && m <= milestones[i - 1])) {
        throw new RangeError(`${fn}: argument 'milestones' must be increasing integers > 0, got ${describeValue(milestones)}`);
      }
    });
    this.schedulers = schedulers.slice();
    this.milestones = milestones.slice();
    this.lastEpoch = 0;
    // Back to the initial lrs, each scheduler's first step undone, then taken again by the one of step 0 alone.
    this.apply(this.baseLrs);
    undoFirstStep(this.schedulers);
    const first = this.schedulers[this.index(0)];
    first.initialStep();
    this.apply(first.getLastLr());
  }

  /** The scheduler in charge at step `epoch` (torch's bisect_right over the milestones). */
  private index(epoch: number): number {
    let i = 0;
    while (i < this.milestones.length && this.milestones[i] <= epoch) i++;
    return i;
  }

  protected get(): number[] {
    return this.current();
  }

  /** The sequence's position and each scheduler's own state (torch's state_dict keeps `_schedulers` too). */
  override stateDict(): SequentialLRState {
    return { ...super.stateDict(), schedulers: this.schedulers.map((s) => s.stateDict()) };
  }

  /** Restores what stateDict() gave, the schedulers' states included (each checked before anything is set). */
  override loadStateDict(d: SequentialLRState): void {
    super.loadStateDict(d);
  }

  protected override stateKeys(): readonly string[] {
    return [...SCHEDULER_KEYS, 'schedulers'];
  }

  /** @internal Its own state's check, then each scheduler's (NOTE [ Loading scheduler state ]). */
  override checkState(fn: string, where: string, d: unknown): asserts d is SequentialLRState {
    super.checkState(fn, where, d);
    const inner = (d as { schedulers?: unknown }).schedulers;
    if (!Array.isArray(inner) || inner.length !== this.schedulers.length) {
      throw new Error(`${fn}: ${where}.schedulers must be a list of the states of ${this.schedulers.length} schedulers, got ${describeValue(inner)}`);
    }
    this.schedulers.forEach((s, i) => s.checkState(fn, `${where}.schedulers[${i}]`, inner[i]));
  }

  /** @internal Sets its own state and its schedulers'. */
  override setState(d: SchedulerState): void {
    super.setState(d);
    const inner = (d as SequentialLRState).schedulers;
    this.schedulers.forEach((s, i) => s.setState(inner[i]));
  }

  /** One step: the scheduler in charge steps, or restarts at its step 0 on its milestone. */
  override step(): void {
    this.stepCount += 1;
    this.lastEpoch += 1;
    const i = this.index(this.lastEpoch);
    const s = this.schedulers[i];
    if (i > 0 && this.milestones[i - 1] === this.lastEpoch) s.restartAtZero();
    else s.step();
    this.apply(s.getLastLr());
  }
}

/** Each scheduler's lastEpoch one back, into nested SequentialLRs (torch's recursive_undo). */
function undoFirstStep(list: readonly LRScheduler[]): void {
  for (const s of list) {
    if (s instanceof SequentialLR) undoFirstStep(s.schedulers);
    else s.lastEpoch -= 1;
  }
}
