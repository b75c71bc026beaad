// What a learning-rate scheduler's state holds, by key, and the check
// LRScheduler.loadStateDict makes of a loaded state against it.
//
// NOTE [ Loading scheduler state ]
// A scheduler's state is its position: lastEpoch, stepCount, baseLrs and
// lastLr (SequentialLR adds its schedulers' states). loadStateDict read those
// keys and ignored the others, so torch's spelling (`last_epoch`, `base_lrs`)
// or a misspelled key loaded nothing of it, silently; a missing stepCount
// became undefined (NaN steps later), a missing lastLr a TypeError naming
// `slice`, and baseLrs of strings went into the lrs. As the optimizer's
// (NOTE [ Loading optimizer state ] in state-check.ts), every key is checked
// before anything is set: known to the scheduler, present, and of its kind;
// the error names the scheduler and the key. torch's load_state_dict checks
// nothing (it updates the object's __dict__).
//
// A scheduler made from a count holds it in its state too, as torch's
// OneCycleLR holds total_steps. torch's load takes the saved total_steps
// with the phases made from it (_schedule_phases); this state has no phases
// (they come from the constructor's options), so a loaded count must be the
// scheduler's own: a state of a 100-step cycle loaded into a 50-step one
// would go on along the 50-step curve, or stop at step 51, where the saved
// schedule had 49 steps more.
import { describeValue } from '../core/shape';

/** What LRScheduler.stateDict() gives (SequentialLR's adds `schedulers`). */
export interface SchedulerState {
  lastEpoch: number;
  stepCount: number;
  baseLrs: number[];
  lastLr: number[];
}

/** The keys of every scheduler's state, in stateDict()'s order. */
export const SCHEDULER_KEYS: readonly string[] = ['lastEpoch', 'stepCount', 'baseLrs', 'lastLr'];

/**
 * Checks that `d` is an object with exactly the keys `keys` (each required), and that the base keys hold
 * their kinds: lastEpoch a whole number >= -1, stepCount one >= 0, baseLrs and lastLr `groups` finite
 * numbers. `where` names the state in errors ('state', 'state.schedulers[1]'), `owner` the scheduler.
 */
export function checkSchedulerState(fn: string, where: string, d: unknown, keys: readonly string[], groups: number, owner: string): asserts d is SchedulerState {
  if (d === null || typeof d !== 'object' || Array.isArray(d)) {
    throw new TypeError(`${fn}: ${where} must be what ${owner}.stateDict() returns (an object of ${keys.join(', ')}), got ${describeValue(d)}`);
  }
  const holds = `it holds ${keys.join(', ')}`;
  for (const k of Object.keys(d)) {
    if (!keys.includes(k)) throw new Error(`${fn}: ${where} has the key '${k}', which ${owner}'s state does not hold (${holds})`);
  }
  const r = d as Record<string, unknown>;
  for (const k of keys) {
    if (r[k] === undefined) throw new Error(`${fn}: ${where} lacks '${k}', which ${owner}'s state needs (${holds})`);
  }
  const whole = (k: string, min: number): void => {
    const v = r[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new Error(`${fn}: ${where}.${k} must be a whole number >= ${min}, got ${describeValue(v)}`);
  };
  whole('lastEpoch', -1);
  whole('stepCount', 0);
  for (const k of ['baseLrs', 'lastLr']) {
    const v = r[k];
    if (!Array.isArray(v) || v.length !== groups || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new Error(`${fn}: ${where}.${k} must be a list of ${groups} finite numbers (one per param group), got ${describeValue(v)}`);
    }
  }
}

/** Checks that `d[key]` (present: checkSchedulerState saw to it) is the scheduler's own count `own`. */
export function checkSameCount(fn: string, where: string, d: object, key: string, own: number, owner: string): void {
  const v: unknown = Reflect.get(d, key);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new Error(`${fn}: ${where}.${key} must be a whole number >= 1, got ${describeValue(v)}`);
  if (v !== own) {
    throw new Error(`${fn}: ${where}.${key} is ${v}, where this ${owner} has ${own}: the state is of another schedule (make the ${owner} with ${key} ${v} to load it)`);
  }
}
