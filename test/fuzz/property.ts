// A fuzz property: a fast-check generator of inputs and a model that plans
// the call (what it must do) for an input on a device. runProperty runs it
// with fast-check (seed, path, run count), checks after every run that the
// live tensor count is back where it was, and reports a failure with the
// seed, the path and the shrunk counterexample, plus the command that replays it.
import fc from 'fast-check';

import { execute, type Plan } from './calls';
import { Failure, liveCounts, Stats, type Ctx } from './harness';
import type { BaseSpec } from './model';

export interface FuzzProperty<I> {
  name: string;
  /** What it covers, one line. */
  about: string;
  arb: fc.Arbitrary<I>;
  /** The call for this input on this device, and the bases its tensors come from. */
  plan?: (input: I, device: string) => { bases: BaseSpec[]; plan: Plan };
  /** Or a body that makes several judged calls itself (random ops, SVD). */
  body?: (input: I, ctx: Ctx) => void;
  /** Runs relative to the others (default 1). */
  weight?: number;
  /** The same on CUDA, where a call costs far more (cuSOLVER: ~20 ms for a tiny SVD); default `weight`. */
  cudaWeight?: number;
}

export interface RunOptions {
  numRuns: number;
  seed: number;
  path?: string;
  strict: boolean;
  /** Inputs to try first (regression cases). */
  examples?: unknown[];
}

export interface Report {
  name: string;
  device: string;
  failed: boolean;
  numRuns: number;
  stats: Stats;
  ms: number;
  seed: number;
  path?: string;
  /** The failure, the shrunk counterexample and how to replay it. */
  message?: string;
}

/** A property with its input type hidden, so a list can hold them all. */
export interface Runnable {
  name: string;
  about: string;
  weight: number;
  /** Runs of a `runs`-sized pass on this device (at least 1). */
  runsOn: (device: string, runs: number) => number;
  run: (device: string, opts: RunOptions) => Report;
}

export function fuzzProperty<I>(p: FuzzProperty<I>): Runnable {
  return {
    name: p.name,
    about: p.about,
    weight: p.weight ?? 1,
    runsOn: (device, runs) => Math.max(1, Math.round(runs * (device === 'cpu' ? p.weight ?? 1 : p.cudaWeight ?? p.weight ?? 1))),
    run: (device, opts) => runProperty(p, device, opts),
  };
}

/** A full collection where the process allows it (ava and scripts/fuzz.js run node with --expose-gc). */
function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function runProperty<I>(p: FuzzProperty<I>, device: string, opts: RunOptions): Report {
  const stats = new Stats();
  const ctx: Ctx = { device, stats, strict: opts.strict };
  // Tensors forgotten before this property are finalized inside collections (NOTE [ Finalizers
  // inside the GC ]): collect them now, or one collected mid-property would move the counts.
  collect();
  const baseline = liveCounts(device);
  const prop = fc.property(p.arb, (input: I) => {
    const before = liveCounts(device);
    if (p.body !== undefined) {
      p.body(input, ctx);
    } else if (p.plan !== undefined) {
      const { bases, plan } = p.plan(input, device);
      execute(ctx, bases, plan);
    }
    const after = liveCounts(device);
    if (after !== before) throw new Failure(`${p.name}: live tensors went from ${before} to ${after} (a leak)`);
  });
  const t0 = performance.now();
  const details = fc.check(prop, {
    numRuns: Math.max(opts.numRuns, opts.examples?.length ?? 0),  // the kept cases always run
    seed: opts.seed,
    ...(opts.path !== undefined ? { path: opts.path, endOnFailure: true } : {}),
    ...(opts.examples !== undefined ? { examples: opts.examples.map((e) => [e as I] as [I]) } : {}),
  });
  const ms = performance.now() - t0;
  const report: Report = { name: p.name, device, failed: details.failed, numRuns: details.numRuns, stats, ms, seed: details.seed };
  if (details.failed) {
    const path = details.counterexamplePath ?? undefined;
    report.path = path;
    const err = details.errorInstance;
    const why = err instanceof Error ? err.message : String(err);
    report.message = [
      `fuzz property '${p.name}' failed on ${device} after ${details.numRuns} runs (${details.numShrinks} shrinks):`,
      `  ${why}`,
      `  counterexample: ${fc.stringify(details.counterexample?.[0])}`,
      `  seed ${details.seed}, path ${path ?? '-'}`,
      `  replay: npm run fuzz -- --only ${p.name} --device ${device} --seed ${details.seed}${path !== undefined ? ` --path ${path}` : ''}`,
      '  keep it: add { property, seed, path } (or the counterexample) to test/fuzz/regressions.ts',
    ].join('\n');
  } else if ((collect(), liveCounts(device)) !== baseline) {
    report.failed = true;
    report.message = `fuzz property '${p.name}' on ${device}: live tensors went from ${baseline} to ${liveCounts(device)}`;
  }
  return report;
}
