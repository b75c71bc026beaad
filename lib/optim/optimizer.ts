// The base of gx.optim's optimizers (torch.optim.Optimizer): param groups,
// per-parameter state, step(closure?), zeroGrad(), stateDict() /
// loadStateDict(), dispose().
//
// NOTE [ Optimizer memory ]
// An optimizer owns its state (momentum buffers, moment estimates, L-BFGS
// history): tensors on each parameter's device and of its dtype, made the
// first time a parameter has a gradient, outside every tidy scope (a step
// taken inside the caller's gx.tidy must not free them), and freed by
// dispose() (or `using`). The parameters and their gradients stay the
// caller's. A step runs inside gx.noGrad and gx.tidy and writes the
// parameters in place (so they keep their identity), freeing its
// intermediates.
import { noGrad } from '../tape/mode';
import { isFloating } from '../ops/promotion';
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import { tidy, untrack } from '../core/tidy';
import { checkOptions } from '../core/options';
import { callClosure, checkClosure, type Loss } from './closure';
import { readParams, type Params, type ParamGroupSpec } from './params';
import { checkStateEntry, type StateSpec } from './state-check';

/** One value of a parameter's state: a tensor, a number (a step count), or a list of them (L-BFGS's history). */
export type StateValue = Tensor | number | null | readonly Tensor[] | readonly number[];

/** A parameter's state, by name (SGD's momentumBuffer, Adam's step, expAvg, expAvgSq, ...). */
export type ParamState = Record<string, StateValue>;

/** A param group: its tensors and the options that apply to them (change them between steps, e.g. lr for a schedule). */
export type ParamGroup<O extends object> = Required<O> & { params: Tensor[] };

/**
 * An optimizer's state as stateDict() gives it: the state of each parameter
 * by its index (counted over the groups in order), and the groups' options
 * with the indices of their parameters (torch's state_dict()).
 */
export interface OptimizerStateDict<O extends object> {
  state: Record<number, ParamState>;
  paramGroups: (Required<O> & { params: number[] })[];
}

/** @internal Keeps a state tensor alive past every tidy scope (NOTE [ Optimizer memory ]). */
export function own<T extends Tensor>(t: T): T {
  untrack(t);
  return t;
}

function disposeValue(v: StateValue | undefined): void {
  if (v instanceof Tensor) {
    if (!v.isDisposed) v.dispose();
  } else if (Array.isArray(v)) {
    for (const t of v as readonly unknown[]) if (t instanceof Tensor && !t.isDisposed) t.dispose();
  }
}

function copyOptions<O extends object>(g: Required<O>): Required<O> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(g)) if (k !== 'params') out[k] = Array.isArray(v) ? v.slice() : v;
  return out as Required<O>;
}

/**
 * @internal `defaults` overridden by the options of `opts` that are not
 * undefined, as a param group's are: null stays, for checkGroup to refuse
 * with the checker every group's options pass (`gx.optim.SGD: lr must be a
 * number, got null`), as torch refuses None for lr; a constructor that filled
 * null in with its default (`o.lr ?? 1e-3`) ran with a value nobody asked for.
 */
export function withDefaults<O extends object>(opts: O | Record<string, unknown>, defaults: Required<O>): Required<O> {
  const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
  return { ...copyOptions(defaults), ...given } as Required<O>;
}

/**
 * The base of the optimizers: it holds the param groups and each
 * parameter's state; a subclass says how to check its options and how to
 * update a group. `step()` updates every parameter that has a .grad, in
 * place, inside gx.noGrad.
 */
export abstract class Optimizer<O extends object = object> implements Disposable {
  /** The param groups: the tensors and their options (lr and the rest may be changed between steps). */
  readonly paramGroups: ParamGroup<O>[] = [];
  readonly #state = new Map<Tensor, ParamState>();
  readonly #name: string;
  readonly #keys: readonly string[];
  readonly #defaults: Required<O>;
  #disposed = false;

  /**
   * `name` is the class's name in messages (gx.optim.SGD), `defaults` its
   * options with their defaults filled in, `keys` the option names a param
   * group may override.
   */
  protected constructor(name: string, params: Params<O>, defaults: Required<O>, keys: readonly string[]) {
    const fn = `gx.optim.${name}`;
    this.#name = name;
    this.#keys = keys;
    this.checkGroup(fn, defaults);
    this.#defaults = copyOptions(defaults);
    for (const g of readParams(fn, params, keys)) this.paramGroups.push(this.#group(fn, g.params, g.opts));
  }

  /** Throws when an option of a group is out of range (torch's messages: "Invalid learning rate: -1"). */
  protected abstract checkGroup(fn: string, group: Required<O>): void;

  /** Updates the parameters of one group from their gradients; runs inside gx.noGrad and gx.tidy. */
  protected abstract updateGroup(group: ParamGroup<O>, fn: string): void;

  /**
   * The keys the state of parameter `index` (counted over the groups) may hold, which loadStateDict checks
   * a loaded state against (NOTE [ Loading optimizer state ] in state-check.ts); null (an optimizer of
   * one's own that does not say) takes any.
   */
  protected stateSpec(index: number): StateSpec | null {
    void index;
    return null;
  }

  /** A group of `params` with the optimizer's options, overridden by those of `opts` that are not undefined. */
  #group(fn: string, params: Tensor[], opts: Record<string, unknown>): ParamGroup<O> {
    const group = withDefaults(opts, this.#defaults);
    this.checkGroup(fn, group);
    return Object.assign(group, { params });
  }

  /** The name of a method in messages: SGD.step. */
  protected where(method: string): string {
    return `${this.#name}.${method}`;
  }

  /** Throws, naming `fn`, once the optimizer was disposed. */
  protected checkAlive(fn: string): void {
    if (this.#disposed) throw new Error(`${fn}: the optimizer was disposed`);
  }

  /** Every parameter, over the groups in order. */
  get params(): Tensor[] {
    return this.paramGroups.flatMap((g) => g.params);
  }

  /** Each parameter's state (read-only here; stateDict() / loadStateDict() to save and restore it). */
  get state(): ReadonlyMap<Tensor, Readonly<ParamState>> {
    return this.#state;
  }

  /**
   * Keeps a new state tensor alive past the step's gx.tidy (and the
   * caller's): for subclasses, on every tensor they put in a parameter's
   * state (NOTE [ Optimizer memory ]).
   */
  protected keep<T extends Tensor>(t: T): T {
    return own(t);
  }

  /** A parameter's state (for subclasses), made empty the first time; dispose() frees its tensors. */
  protected stateOf(p: Tensor): ParamState {
    let s = this.#state.get(p);
    if (s === undefined) {
      s = {};
      this.#state.set(p, s);
    }
    return s;
  }

  /** Whether the optimizer was disposed. */
  get isDisposed(): boolean {
    return this.#disposed;
  }

  /**
   * One optimization step over every parameter that has a .grad. With a
   * closure (zero the gradients, compute the loss, call backward(), return
   * the loss), the closure runs first, with grad recording on and inside
   * gx.tidy, and its loss is returned (yours to dispose).
   * @example
   * opt.zeroGrad();
   * gx.tidy(() => lossFn().backward());
   * opt.step();
   */
  step<L extends Loss | undefined = undefined>(closure?: () => L): L {
    const fn = this.where('step');
    this.checkAlive(fn);
    checkClosure(fn, closure, false);
    const loss = closure === undefined ? (undefined as L) : callClosure(fn, closure);
    this.#checkParams(fn);
    noGrad(() => tidy(() => {
      for (const g of this.paramGroups) {
        this.checkGroup(fn, g);
        this.updateGroup(g, fn);
      }
    }));
    return loss;
  }

  /** Throws when a parameter was disposed since the optimizer took it. */
  #checkParams(fn: string): void {
    this.paramGroups.forEach((g, gi) => g.params.forEach((p, i) => {
      if (p.isDisposed) throw new Error(`${fn}: parameter ${i} of param group ${gi} was disposed; dispose the optimizer with its parameters`);
    }));
  }

  /** Clears every parameter's .grad (disposing it), as torch's zero_grad() with its default set_to_none. */
  zeroGrad(): void {
    for (const p of this.params) if (!p.isDisposed && p.grad !== null) p.grad = null;
  }

  /**
   * Adds a param group ({ params, ...options }; options not given take the
   * optimizer's), e.g. layers unfrozen during fine-tuning.
   */
  addParamGroup(group: ParamGroupSpec<O>): void {
    const fn = this.where('addParamGroup');
    this.checkAlive(fn);
    if (group === null || typeof group !== 'object' || group instanceof Tensor || Array.isArray(group)) {
      throw new TypeError(`${fn}: expected a param group ({ params: [tensors], ...options }), got ${describeValue(group)}`);
    }
    const seen = new Set(this.params);
    const [g] = readParams(fn, [group], this.#keys, seen, 'group');
    this.paramGroups.push(this.#group(fn, g.params, g.opts));
  }

  /**
   * The state and the groups' options (torch's state_dict()). The tensors
   * in it are the optimizer's own, not copies: save them (gx.save), or
   * clone() what must outlive the optimizer.
   */
  stateDict(): OptimizerStateDict<O> {
    this.checkAlive(this.where('stateDict'));
    const index = new Map<Tensor, number>();
    this.params.forEach((p, i) => index.set(p, i));
    const state: Record<number, ParamState> = {};
    for (const [p, s] of this.#state) {
      const i = index.get(p);
      if (i === undefined) continue;
      state[i] = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Array.isArray(v) ? v.slice() : v]));
    }
    const paramGroups = this.paramGroups.map((g) => ({ ...copyOptions<O>(g), params: g.params.map((p) => index.get(p) as number) }));
    return { state, paramGroups };
  }

  /**
   * Restores what stateDict() gave (of an optimizer of this kind over
   * parameters of the same shapes, in the same groups): the groups' options,
   * and copies of the state's tensors on each parameter's device (floating
   * ones in its dtype). The dict stays the caller's.
   */
  loadStateDict(dict: OptimizerStateDict<O>): void {
    const fn = this.where('loadStateDict');
    this.checkAlive(fn);
    if (dict === null || typeof dict !== 'object' || typeof dict.state !== 'object' || dict.state === null || !Array.isArray(dict.paramGroups)) {
      throw new TypeError(`${fn}: expected what stateDict() returns ({ state, paramGroups }), got ${describeValue(dict)}`);
    }
    if (dict.paramGroups.length !== this.paramGroups.length) {
      throw new Error(`${fn}: the state dict has ${dict.paramGroups.length} param groups, the optimizer ${this.paramGroups.length}`);
    }
    const groups = dict.paramGroups.map((saved, gi) => {
      const { params, ...opts } = checkOptions<Record<string, unknown>>(saved, `${fn} paramGroups[${gi}]`, [...this.#keys, 'params']);
      const mine = this.paramGroups[gi].params;
      if (!Array.isArray(params) || params.length !== mine.length) {
        throw new Error(`${fn}: param group ${gi} of the state dict has ${Array.isArray(params) ? params.length : 'no'} parameters, the optimizer's ${mine.length}`);
      }
      const merged = { ...copyOptions(this.#defaults), ...copyOptions(opts as Required<O>) } as Required<O>;
      this.checkGroup(fn, merged);
      return merged;
    });
    const params = this.params;
    const made: Tensor[] = [];
    const copy = (v: unknown, p: Tensor, where: string): StateValue => {
      if (v instanceof Tensor) {
        const t = own(v.to({ device: p.device, dtype: isFloating(v.dtype) ? p.dtype : v.dtype, copy: true }));
        made.push(t);
        return t;
      }
      if (Array.isArray(v)) return v.map((x, i) => copy(x, p, `${where}[${i}]`)) as Tensor[] | number[];
      if (v === null || typeof v === 'number') return v;
      throw new TypeError(`${fn}: ${where} must be a tensor, a number, null or an array of them, got ${describeValue(v)}`);
    };
    const state = new Map<Tensor, ParamState>();
    const flatNumel = params.reduce((n, p) => n + p.numel, 0);
    try {
      for (const [key, s] of Object.entries(dict.state)) {
        const i = Number(key);
        const p = params[i];
        if (!Number.isInteger(i) || p === undefined) throw new RangeError(`${fn}: state[${key}] names no parameter (the optimizer has ${params.length})`);
        const spec = this.stateSpec(i);
        if (spec !== null) checkStateEntry(fn, `state[${key}]`, s, spec, { param: p, flatNumel }, this.#name);
        const entry: ParamState = {};
        for (const [k, v] of Object.entries(s)) if (spec === null || v !== null) entry[k] = copy(v, p, `state[${key}].${k}`);
        state.set(p, entry);
      }
    } catch (e) {
      for (const t of made) t.dispose();
      throw e;
    }
    this.#clearState();
    for (const [p, s] of state) this.#state.set(p, s);
    groups.forEach((g, gi) => Object.assign(this.paramGroups[gi], g));
  }

  #clearState(): void {
    for (const s of this.#state.values()) for (const v of Object.values(s)) disposeValue(v);
    this.#state.clear();
  }

  /** Frees the optimizer's state (NOTE [ Optimizer memory ]); the parameters stay. Calling it again does nothing. */
  dispose(): void {
    if (this.#disposed) return;
    this.#clearState();
    this.#disposed = true;
  }

  /** `using opt = new gx.optim.Adam(...)` disposes it at the end of the scope. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** @internal Replaces a state tensor, freeing the one it held. */
export function replaceState(s: ParamState, key: string, value: Tensor): void {
  const prev = s[key];
  if (prev !== value) disposeValue(prev);
  s[key] = own(value);
}
