// gx.optim.lrScheduler: learning-rate schedules over an optimizer's param
// groups (their `lr`), as torch.optim.lr_scheduler: StepLR, MultiStepLR,
// ExponentialLR, CosineAnnealingLR, LambdaLR, LinearLR, OneCycleLR (SequentialLR,
// which chains them, in sequential-lr.ts).
//
// NOTE [ Scheduler recursions ]
// torch's step() computes each new lr from the group's current lr (the
// "chainable" form: StepLR multiplies by gamma at a boundary, Cosine uses
// the ratio of consecutive cosines), not from the closed form; the two
// differ in the last bits, and when another scheduler or the user changed
// lr in between. Each get() below is torch's get_lr() line for line, so the
// sequences agree with torch's to the last bit or so (Math.cos and libm's cos
// may round differently). As torch's, a scheduler takes its
// first step when made (lastEpoch 0), and the base lrs are the groups' lrs
// when the first scheduler of the optimizer was made (torch's
// group['initial_lr'], kept here in initialLrs, not in the groups: gx's
// groups hold only their options), so a scheduler made after another, as
// SequentialLR's are, starts from the same base as torch's does.
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue } from '../core/shape';
import type { Optimizer } from './optimizer';
import { checkSameCount, checkSchedulerState, SCHEDULER_KEYS, type SchedulerState } from './scheduler-state';

/** Any optimizer whose groups have an lr (all of gx.optim's). */
type AnyOptimizer = Optimizer<{ lr?: number }>;
type Group = AnyOptimizer['paramGroups'][number];

const S = 'gx.optim.lrScheduler';

/** Each group's lr when the first scheduler of its optimizer was made (torch's group['initial_lr']). */
const initialLrs = new WeakMap<Group, number>();
/** Sets a group's initial lr, as OneCycleLR does (torch writes group['initial_lr'] there, over any earlier). */
function setInitialLr(g: Group, lr: number): void {
  initialLrs.set(g, lr);
}

function positiveInt(v: unknown, fn: string, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new RangeError(`${fn}: argument '${name}' must be an integer > 0, got ${describeValue(v)}`);
  return v;
}

function num(v: unknown, fn: string, name: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${fn}: argument '${name}' must be a finite number, got ${describeValue(v)}`);
  return v;
}

/** The base of the schedulers (torch's LRScheduler): step() advances lastEpoch and sets each group's lr. */
export abstract class LRScheduler {
  readonly optimizer: AnyOptimizer;
  /** The groups' lrs when the scheduler was made (torch's base_lrs). */
  readonly baseLrs: number[];
  /** The steps taken (0 after construction, as torch's last_epoch). */
  lastEpoch = -1;
  #lastLr: number[] = [];
  /** Whether the step in progress is the one the constructor takes (torch's _is_initial). */
  protected initial = false;
  /** step() calls so far, the constructor's included (torch's _step_count). */
  protected stepCount = 0;

  protected constructor(optimizer: AnyOptimizer, fn: string) {
    if (optimizer === null || typeof optimizer !== 'object' || !Array.isArray((optimizer as { paramGroups?: unknown }).paramGroups)) {
      throw new TypeError(`${fn}: argument 'optimizer' must be a gx.optim optimizer, got ${describeValue(optimizer)}`);
    }
    this.optimizer = optimizer;
    this.baseLrs = this.groups.map((g) => {
      const first = initialLrs.get(g);
      if (first !== undefined) return first;
      initialLrs.set(g, g.lr);
      return g.lr;
    });
  }

  /** The optimizer's groups, as records of their options. */
  protected get groups(): Group[] {
    return this.optimizer.paramGroups;
  }

  /** torch's _initial_step: subclasses call it last in their constructor. */
  protected start(): void {
    this.initial = true;
    try {
      this.step();
    } finally {
      this.initial = false;
    }
  }

  /** The lrs of the step just taken (lastEpoch already advanced): torch's get_lr(). */
  protected abstract get(): number[];

  /** The lrs at lastEpoch from the base lrs alone, where the schedule has such a form (torch's _get_closed_form_lr). */
  protected closedForm(): number[] | undefined {
    return undefined;
  }

  /** Advances the schedule one step and writes the new lrs into the groups (call after optimizer.step()). */
  step(): void {
    this.stepCount += 1;
    this.lastEpoch += 1;
    this.apply(this.get());
  }

  /** Writes `lrs` into the groups and keeps them as the last lrs. */
  protected apply(lrs: readonly number[]): void {
    this.groups.forEach((g, i) => { g.lr = lrs[i]; });
    this.#lastLr = this.groups.map((g) => g.lr);
  }

  /**
   * @internal SequentialLR's milestone: the schedule restarts at lastEpoch
   * 0, its lrs in closed form where it has one, else get() (torch's
   * _update_lr(0)); the step count does not advance.
   */
  restartAtZero(): void {
    this.lastEpoch = 0;
    this.apply(this.closedForm() ?? this.get());
  }

  /** @internal SequentialLR's first step of the scheduler meant for step 0 (torch's _initial_step). */
  initialStep(): void {
    this.stepCount = 0;
    this.start();
  }

  /** The lrs the last step set, one per group (torch's get_last_lr()). */
  getLastLr(): number[] {
    return this.#lastLr.slice();
  }

  /** The schedule's position, to restore with loadStateDict (the lambdas of LambdaLR are not saved, as in torch). */
  stateDict(): SchedulerState {
    return { lastEpoch: this.lastEpoch, stepCount: this.stepCount, baseLrs: this.baseLrs.slice(), lastLr: this.#lastLr.slice() };
  }

  /**
   * Restores what stateDict() gave. A key the scheduler does not hold, a missing one, or one of another
   * kind is refused before anything is set, naming the key (NOTE [ Loading scheduler state ]).
   */
  loadStateDict(d: SchedulerState): void {
    const fn = `${this.constructor.name}.loadStateDict`;
    this.checkState(fn, 'state', d);
    this.setState(d);
  }

  /** The keys of the scheduler's state (SequentialLR adds its schedulers'). */
  protected stateKeys(): readonly string[] {
    return SCHEDULER_KEYS;
  }

  /** @internal loadStateDict's check of a loaded state (`where`: its name in errors); SequentialLR's reaches its schedulers'. */
  checkState(fn: string, where: string, d: unknown): asserts d is SchedulerState {
    checkSchedulerState(fn, where, d, this.stateKeys(), this.baseLrs.length, this.constructor.name);
  }

  /** @internal Sets a state checkState accepted. */
  setState(d: SchedulerState): void {
    this.lastEpoch = d.lastEpoch;
    this.stepCount = d.stepCount;
    this.baseLrs.splice(0, this.baseLrs.length, ...d.baseLrs);
    this.#lastLr = d.lastLr.slice();
  }

  /** The groups' current lrs. */
  protected current(): number[] {
    return this.groups.map((g) => g.lr);
  }
}

/** lr times gamma every stepSize steps (torch's StepLR). @example new gx.optim.lrScheduler.StepLR(opt, { stepSize: 30, gamma: 0.1 }) */
export class StepLR extends LRScheduler {
  readonly stepSize: number;
  readonly gamma: number;
  constructor(optimizer: AnyOptimizer, opts: { stepSize: number; gamma?: number }) {
    const fn = `${S}.StepLR`;
    super(optimizer, fn);
    checkOptions(opts, fn, ['stepSize', 'gamma']);
    this.stepSize = positiveInt(opts?.stepSize, fn, 'stepSize');
    this.gamma = num(opts.gamma, fn, 'gamma', 0.1);
    this.start();
  }

  protected get(): number[] {
    if (this.lastEpoch === 0 || this.lastEpoch % this.stepSize !== 0) return this.current();
    return this.groups.map((g) => g.lr * this.gamma);
  }

  protected override closedForm(): number[] {
    return this.baseLrs.map((b) => b * this.gamma ** Math.floor(this.lastEpoch / this.stepSize));
  }
}

/** lr times gamma at each milestone (torch's MultiStepLR; a milestone given n times multiplies by gamma^n). */
export class MultiStepLR extends LRScheduler {
  readonly milestones: ReadonlyMap<number, number>;
  readonly gamma: number;
  constructor(optimizer: AnyOptimizer, opts: { milestones: number[]; gamma?: number }) {
    const fn = `${S}.MultiStepLR`;
    super(optimizer, fn);
    checkOptions(opts, fn, ['milestones', 'gamma']);
    if (!Array.isArray(opts?.milestones)) throw new TypeError(`${fn}: argument 'milestones' must be a list of step counts, got ${describeValue(opts?.milestones)}`);
    const counts = new Map<number, number>();
    for (const m of opts.milestones) counts.set(positiveInt(m, fn, 'milestones'), (counts.get(m) ?? 0) + 1);
    this.milestones = counts;
    this.gamma = num(opts.gamma, fn, 'gamma', 0.1);
    this.start();
  }

  protected get(): number[] {
    const n = this.milestones.get(this.lastEpoch);
    if (n === undefined) return this.current();
    return this.groups.map((g) => g.lr * this.gamma ** n);
  }

  protected override closedForm(): number[] {
    let passed = 0;  // milestones at or before lastEpoch, repeats counted (torch's bisect_right)
    for (const [m, n] of this.milestones) if (m <= this.lastEpoch) passed += n;
    return this.baseLrs.map((b) => b * this.gamma ** passed);
  }
}

/** lr times gamma every step (torch's ExponentialLR). */
export class ExponentialLR extends LRScheduler {
  readonly gamma: number;
  constructor(optimizer: AnyOptimizer, opts: { gamma: number }) {
    const fn = `${S}.ExponentialLR`;
    super(optimizer, fn);
    checkOptions(opts, fn, ['gamma']);
    if (opts?.gamma === undefined) throw new TypeError(`${fn}: argument 'gamma' is required`);
    this.gamma = num(opts.gamma, fn, 'gamma', 0);
    this.start();
  }

  protected get(): number[] {
    if (this.initial) return this.current();
    return this.groups.map((g) => g.lr * this.gamma);
  }

  protected override closedForm(): number[] {
    return this.baseLrs.map((b) => b * this.gamma ** this.lastEpoch);
  }
}

/** etaMin + (base - etaMin)(1 + cos(pi t / tMax)) / 2, by torch's recursion (CosineAnnealingLR). */
export class CosineAnnealingLR extends LRScheduler {
  readonly tMax: number;
  readonly etaMin: number;
  constructor(optimizer: AnyOptimizer, opts: { tMax: number; etaMin?: number }) {
    const fn = `${S}.CosineAnnealingLR`;
    super(optimizer, fn);
    checkOptions(opts, fn, ['tMax', 'etaMin']);
    this.tMax = positiveInt(opts?.tMax, fn, 'tMax');
    this.etaMin = num(opts.etaMin, fn, 'etaMin', 0);
    this.start();
  }

  protected get(): number[] {
    const { lastEpoch: e, tMax: T, etaMin: lo } = this;
    if (this.initial) return this.current();
    if (this.stepCount === 1 && e > 0) return this.baseLrs.map((b) => lo + (b - lo) * (1 + Math.cos(e * Math.PI / T)) / 2);
    if ((e - 1 - T) % (2 * T) === 0) return this.groups.map((g, i) => g.lr + (this.baseLrs[i] - lo) * (1 - Math.cos(Math.PI / T)) / 2);
    return this.groups.map((g) => (1 + Math.cos(Math.PI * e / T)) / (1 + Math.cos(Math.PI * (e - 1) / T)) * (g.lr - lo) + lo);
  }

  protected override closedForm(): number[] {
    return this.baseLrs.map((b) => this.etaMin + (b - this.etaMin) * (1 + Math.cos(Math.PI * this.lastEpoch / this.tMax)) / 2);
  }
}

/** base lr times lambda(step) (torch's LambdaLR); one lambda for all groups or one per group. */
export class LambdaLR extends LRScheduler {
  readonly #lambdas: ((step: number) => number)[];
  constructor(optimizer: AnyOptimizer, lrLambda: ((step: number) => number) | ((step: number) => number)[]) {
    const fn = `${S}.LambdaLR`;
    super(optimizer, fn);
    const list = Array.isArray(lrLambda) ? lrLambda : this.groups.map(() => lrLambda);
    if (list.length !== this.groups.length || list.some((f) => typeof f !== 'function')) {
      throw new TypeError(`${fn}: argument 'lrLambda' must be a function or a list of ${this.groups.length} functions (one per param group)`);
    }
    this.#lambdas = list;
    this.start();
  }

  protected get(): number[] {
    return this.baseLrs.map((b, i) => b * this.#lambdas[i](this.lastEpoch));
  }
}

/** lr scaled from startFactor to endFactor linearly over totalIters steps (torch's LinearLR). */
export class LinearLR extends LRScheduler {
  readonly startFactor: number;
  readonly endFactor: number;
  readonly totalIters: number;
  constructor(optimizer: AnyOptimizer, opts: { startFactor?: number; endFactor?: number; totalIters?: number } = {}) {
    const fn = `${S}.LinearLR`;
    super(optimizer, fn);
    checkOptions(opts, fn, ['startFactor', 'endFactor', 'totalIters']);
    this.startFactor = num(opts.startFactor, fn, 'startFactor', 1 / 3);
    this.endFactor = num(opts.endFactor, fn, 'endFactor', 1);
    if (this.startFactor > 1 || this.startFactor <= 0) throw new RangeError(`${fn}: startFactor must be > 0 and <= 1, got ${this.startFactor}`);
    if (this.endFactor > 1 || this.endFactor < 0) throw new RangeError(`${fn}: endFactor must be in [0, 1], got ${this.endFactor}`);
    this.totalIters = positiveInt(opts.totalIters === undefined ? 5 : opts.totalIters, fn, 'totalIters');  // null is refused, not the default
    this.start();
  }

  protected get(): number[] {
    const { lastEpoch: e, startFactor: s, endFactor: f, totalIters: n } = this;
    if (e === 0) return this.groups.map((g) => g.lr * s);
    if (this.initial || e > n) return this.current();
    return this.groups.map((g) => g.lr * (1 + (f - s) / (n * s + (e - 1) * (f - s))));
  }

  protected override closedForm(): number[] {
    const { startFactor: s, endFactor: f, totalIters: n } = this;
    return this.baseLrs.map((b) => b * (s + (f - s) * Math.min(n, this.lastEpoch) / n));
  }
}

export interface OneCycleOptions {
  /** The peak lr (one for all groups, or one per group). */
  maxLr: number | number[];
  /** The steps of the whole cycle (or give epochs and stepsPerEpoch). */
  totalSteps?: number;
  epochs?: number;
  stepsPerEpoch?: number;
  /** The fraction of the cycle spent rising (default 0.3). */
  pctStart?: number;
  /** 'cos' (default) or 'linear'. */
  annealStrategy?: 'cos' | 'linear';
  /** Cycle momentum (SGD's momentum, Adam's beta1) inversely to the lr (default true). */
  cycleMomentum?: boolean;
  baseMomentum?: number;
  maxMomentum?: number;
  /** initial lr = maxLr / divFactor (default 25). */
  divFactor?: number;
  /** min lr = initial lr / finalDivFactor (default 1e4). */
  finalDivFactor?: number;
  /** A third phase: back down to the initial lr, then to the min (default false). */
  threePhase?: boolean;
}

const ONE_CYCLE_KEYS = optionKeys<OneCycleOptions>({
  maxLr: true, totalSteps: true, epochs: true, stepsPerEpoch: true, pctStart: true, annealStrategy: true, cycleMomentum: true,
  baseMomentum: true, maxMomentum: true, divFactor: true, finalDivFactor: true, threePhase: true,
});

interface Phase { end: number; lr: [string, string]; momentum: [string, string] }

/** What OneCycleLR.stateDict() gives: the position and the cycle's length (torch's total_steps). */
export type OneCycleLRState = SchedulerState & { totalSteps: number };

/** The 1cycle policy (torch's OneCycleLR): up from maxLr / divFactor to maxLr, then down to a tiny min. */
export class OneCycleLR extends LRScheduler {
  readonly totalSteps: number;
  readonly #phases: Phase[];
  readonly #cos: boolean;
  readonly #cycleMomentum: boolean;
  readonly #useBeta1: boolean;
  /** Per group: initialLr, maxLr, minLr, maxMomentum, baseMomentum (torch keeps them in the groups). */
  readonly #points: Record<string, number>[];

  constructor(optimizer: AnyOptimizer, opts: OneCycleOptions) {
    const fn = `${S}.OneCycleLR`;
    const o = checkOptions<OneCycleOptions>(opts, fn, ONE_CYCLE_KEYS);
    const groups: Group[] = Array.isArray(optimizer?.paramGroups) ? optimizer.paramGroups : [];
    const total = o.totalSteps !== undefined ? positiveInt(o.totalSteps, fn, 'totalSteps')
      : o.epochs !== undefined && o.stepsPerEpoch !== undefined ? positiveInt(o.epochs, fn, 'epochs') * positiveInt(o.stepsPerEpoch, fn, 'stepsPerEpoch') : NaN;
    if (Number.isNaN(total)) throw new TypeError(`${fn}: give totalSteps, or epochs and stepsPerEpoch`);
    const pct = num(o.pctStart, fn, 'pctStart', 0.3);
    if (pct < 0 || pct > 1) throw new RangeError(`${fn}: pctStart must be in [0, 1], got ${pct}`);
    const strategy = o.annealStrategy === undefined ? 'cos' : o.annealStrategy;
    if (strategy !== 'cos' && strategy !== 'linear') throw new TypeError(`${fn}: annealStrategy must be 'cos' or 'linear', got ${describeValue(strategy)}`);
    const perGroup = (v: unknown, name: string, dflt?: number): number[] => {
      const list = Array.isArray(v) ? v : groups.map(() => (v === undefined ? dflt : v));
      if (list.length !== groups.length) throw new RangeError(`${fn}: '${name}' has ${list.length} values for ${groups.length} param groups`);
      // maxLr has no default (torch's max_lr is required): missing, every lr was NaN.
      if (dflt === undefined && list.some((x) => x === undefined)) throw new TypeError(`${fn}: give '${name}' (a number, or one per param group)`);
      return list.map((x) => num(x, fn, name, NaN));
    };
    const maxLrs = perGroup(o.maxLr, 'maxLr');
    const div = num(o.divFactor, fn, 'divFactor', 25), finalDiv = num(o.finalDivFactor, fn, 'finalDivFactor', 1e4);
    const points = maxLrs.map((m) => ({ initialLr: m / div, maxLr: m, minLr: m / div / finalDiv, maxMomentum: 0, baseMomentum: 0 }));
    const cycle = booleanOption(fn, 'cycleMomentum', o.cycleMomentum, true);
    const threePhase = booleanOption(fn, 'threePhase', o.threePhase, false);
    let useBeta1 = false;
    if (cycle) {
      const g0 = groups[0] ?? {};
      if (!('momentum' in g0) && !('betas' in g0)) throw new Error(`${fn}: the optimizer has no momentum nor betas; pass cycleMomentum: false`);
      useBeta1 = 'betas' in g0;
      const maxM = perGroup(o.maxMomentum, 'maxMomentum', 0.95), baseM = perGroup(o.baseMomentum, 'baseMomentum', 0.85);
      points.forEach((p, i) => {
        p.maxMomentum = maxM[i];
        p.baseMomentum = baseM[i];
        OneCycleLR.#setMomentum(groups[i], maxM[i], useBeta1);
      });
    }
    // The groups' lr becomes the initial lr before the base class reads it (torch sets initial_lr first).
    groups.forEach((g, i) => { g.lr = points[i].initialLr; setInitialLr(g, points[i].initialLr); });
    super(optimizer, fn);
    this.totalSteps = total;
    this.#cos = strategy === 'cos';
    this.#cycleMomentum = cycle;
    this.#useBeta1 = useBeta1;
    this.#points = points;
    this.#phases = threePhase ? [
      { end: pct * total - 1, lr: ['initialLr', 'maxLr'], momentum: ['maxMomentum', 'baseMomentum'] },
      { end: 2 * pct * total - 2, lr: ['maxLr', 'initialLr'], momentum: ['baseMomentum', 'maxMomentum'] },
      { end: total - 1, lr: ['initialLr', 'minLr'], momentum: ['maxMomentum', 'maxMomentum'] },
    ] : [
      { end: pct * total - 1, lr: ['initialLr', 'maxLr'], momentum: ['maxMomentum', 'baseMomentum'] },
      { end: total - 1, lr: ['maxLr', 'minLr'], momentum: ['baseMomentum', 'maxMomentum'] },
    ];
    this.start();
  }

  /** The position and totalSteps, as torch's state_dict() has total_steps. */
  override stateDict(): OneCycleLRState {
    return { ...super.stateDict(), totalSteps: this.totalSteps };
  }

  /** Restores what stateDict() gave, of a cycle of the same totalSteps (NOTE [ Loading scheduler state ]). */
  override loadStateDict(d: OneCycleLRState): void {
    super.loadStateDict(d);
  }

  protected override stateKeys(): readonly string[] {
    return [...SCHEDULER_KEYS, 'totalSteps'];
  }

  /** @internal The base check, then totalSteps: the scheduler's own (NOTE [ Loading scheduler state ]). */
  override checkState(fn: string, where: string, d: unknown): asserts d is OneCycleLRState {
    super.checkState(fn, where, d);
    checkSameCount(fn, where, d, 'totalSteps', this.totalSteps, 'OneCycleLR');
  }

  static #setMomentum(g: Group, m: number, useBeta1: boolean): void {
    // The groups' momentum options are not in the base type: set by name, as torch does.
    if (useBeta1) Reflect.set(g, 'betas', [m, ...(Reflect.get(g, 'betas') as number[]).slice(1)]);
    else Reflect.set(g, 'momentum', m);
  }

  #anneal(start: number, end: number, pct: number): number {
    return this.#cos ? end + (start - end) / 2 * (Math.cos(Math.PI * pct) + 1) : (end - start) * pct + start;
  }

  protected get(): number[] {
    const step = this.lastEpoch;
    if (step > this.totalSteps) throw new RangeError(`OneCycleLR.step: tried to step ${step} times; totalSteps is ${this.totalSteps}`);
    return this.groups.map((g, gi) => {
      const p = this.#points[gi];
      let start = 0;
      for (let i = 0; i < this.#phases.length; i++) {
        const ph = this.#phases[i];
        if (step <= ph.end || i === this.#phases.length - 1) {
          const pct = (step - start) / (ph.end - start);
          if (this.#cycleMomentum) OneCycleLR.#setMomentum(g, this.#anneal(p[ph.momentum[0]], p[ph.momentum[1]], pct), this.#useBeta1);
          return this.#anneal(p[ph.lr[0]], p[ph.lr[1]], pct);
        }
        start = ph.end;
      }
      return g.lr;
    });
  }
}
