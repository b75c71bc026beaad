// gx.cuda.graphStep: a whole training step (forward, backward, optimizer
// update) captured once into a CUDA graph and replayed, as torch's
// whole-network capture (torch.cuda.graph around model, loss.backward() and
// optimizer.step(), with static inputs).
//
// NOTE [ Graphed steps ]
// A step is a function that reads its inputs from tensors made beforehand
// (static inputs: copy_ each batch into them), runs the forward pass and
// backward (the tape's backward launches kernels like any op, so it is
// captured with the rest) and steps an optimizer, whose state must exist
// before capture: the first `warmup` calls run the function eagerly (the
// optimizer makes its state; lazily initialized kernels and libraries load).
// The next call captures it (nothing runs during capture) and replays the
// graph once; every later call only replays it. Each call is therefore one
// step, eager or replayed, and the replays run the same kernels on the same
// memory as the capture: the gradients made during capture (zeroGrad() in
// the step sets them to none first, as torch's set_to_none, so backward
// writes fresh ones instead of accumulating into the warmup's), the
// intermediates and the outputs live in the graph's memory, reused by each
// replay. An Adam or AdamW must be { capturable: true } (its step count then
// lives on the device); what cannot be captured is refused during capture,
// naming the call (NOTE [ What a capture refuses ]). Numbers the step reads
// on the host (the learning rate, a schedule's value) are baked into the
// graph's kernels at capture: changing them later changes nothing (torch's
// graphs share this). The outputs the function
// returns (a tensor, an array of them, or nothing) are the step's static
// outputs: overwritten by the next call, freed by dispose(). On the CPU
// (device 'cpu') there is nothing to capture: every call runs the function
// eagerly, with the same contract, so one training loop serves both.
/// <reference lib="esnext.disposable" preserve="true" />  // NOTE [ Self-sufficient declarations ] in tensor.ts
import { parseDevice, type Device, type DeviceLike } from './device';
import { checkDevice } from './gpus';
import { CUDAGraph, graph } from './graph';
import { checkOptions, optionKeys } from './options';
import { describeValue } from './shape';
import { Tensor } from './tensor';
import { tidy, untrack } from './tidy';

/** What a step may return: its static outputs. */
export type StepOutputs = Tensor | readonly Tensor[] | void;

export interface GraphStepOptions {
  /** The device whose work is captured (default 'cuda', the current GPU); 'cpu' runs every call eagerly. */
  device?: DeviceLike;
  /** Eager calls before the capture (default 3; at least 1, so the optimizer's state exists). */
  warmup?: number;
}

const GRAPH_STEP_KEYS = optionKeys<GraphStepOptions>({ device: true, warmup: true });

/** A graphed step: call it for one step; `graph` is its CUDA graph once captured. */
export interface GraphedStep<R extends StepOutputs> extends Disposable {
  (): R;
  /** The captured graph (null during warmup, on the CPU and after dispose()). */
  readonly graph: CUDAGraph | null;
  /** Calls so far (eager and replayed). */
  readonly calls: number;
  /** Frees the graph, its memory and the static outputs. */
  dispose(): void;
}

function outputsOf(fn: string, r: unknown): Tensor[] {
  if (r === undefined) return [];
  if (r instanceof Tensor) return [r];
  if (Array.isArray(r) && r.every((x) => x instanceof Tensor)) return r as Tensor[];
  throw new TypeError(`${fn}: the step must return a tensor, an array of tensors or nothing, got ${describeValue(r)}`);
}

/**
 * Captures a training step in a CUDA graph (NOTE [ Graphed steps ]): the
 * first `warmup` calls run `step` eagerly, the next captures and replays it,
 * later calls only replay. Inputs are static: copy_ each batch into the
 * tensors `step` reads. Adam and AdamW need { capturable: true }.
 * @example
 * const x = gx.zeros([64, 256], { device: 'cuda' }), y = gx.zeros([64, 10], { device: 'cuda' });
 * const opt = new gx.optim.Adam(model.parameters(), { capturable: true });
 * const step = gx.cuda.graphStep(() => {
 *   opt.zeroGrad();
 *   const loss = gx.nn.functional.mseLoss(model.forward(x), y);
 *   loss.backward();
 *   opt.step();
 *   return loss;
 * });
 * for (const [bx, by] of batches) { x.copy_(bx); y.copy_(by); step(); }
 * console.log(step().item());   // the loss of the last step (a static output)
 */
export function graphStep<R extends StepOutputs>(step: () => R, opts: GraphStepOptions = {}): GraphedStep<R> {
  const fn = 'gx.cuda.graphStep';
  if (typeof step !== 'function') throw new TypeError(`${fn}: argument 'step' must be a function, got ${describeValue(step)}`);
  opts = checkOptions<GraphStepOptions>(opts, fn, GRAPH_STEP_KEYS);
  const device: Device = parseDevice(opts.device ?? 'cuda', fn);
  if (device.type === 'cuda') checkDevice(device, fn);
  const warmup = opts.warmup ?? 3;
  if (!Number.isInteger(warmup) || warmup < 1) throw new RangeError(`${fn}: warmup must be an integer >= 1, got ${String(warmup)}`);
  let g: CUDAGraph | null = null;
  let calls = 0;
  let disposed = false;
  let result: R | undefined;
  let outputs: Tensor[] = [];

  /** Runs `step` (in a tidy scope: only its outputs survive), keeping its outputs as the static ones. */
  const run = (): void => {
    const previous = outputs;
    result = tidy(() => {
      const r = step();
      if (r instanceof Promise) throw new TypeError(`${fn}: the step must be synchronous (it returned a Promise)`);
      return r;
    });
    outputs = outputsOf(fn, result);
    for (const t of outputs) untrack(t);
    for (const t of previous) if (!outputs.includes(t) && !t.isDisposed) t.dispose();
  };

  const call = (): R => {
    if (disposed) throw new Error(`${fn}: the graphed step was disposed`);
    calls++;
    if (device.type === 'cpu' || calls <= warmup) {
      run();
    } else {
      if (g === null) g = graph(run, { device });
      g.replay();
    }
    return result as R;
  };
  const dispose = (): void => {
    if (disposed) return;
    disposed = true;
    g?.dispose();
    g = null;
    for (const t of outputs) if (!t.isDisposed) t.dispose();
    outputs = [];
  };
  return Object.defineProperties(Object.assign(call, { dispose, [Symbol.dispose]: dispose }), {
    graph: { get: () => g },
    calls: { get: () => calls },
  }) as GraphedStep<R>;
}
