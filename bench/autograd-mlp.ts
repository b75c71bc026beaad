// The graphed training step of `npm run bench:autograd`: an MLP of 4 Linear
// layers of 256 (ReLU between), batch 64, MSE loss, Adam lr 1e-3, timed per
// step (each closed by a sync) eager (Adam's default: the multi-tensor path on
// CUDA) and captured by gx.cuda.graphStep (Adam capturable), beside torch's
// eager step, its make_graphed_callables step and its whole-step graph
// (bench/torch_autograd.py, the same call). Also checks the graphed step's
// parameters against the eager step's after the same steps.
import * as gx from '../lib';
import { median, perCallNs } from './util';

const WIDTH = 256, DEPTH = 4, BATCH = 64;

function model(device: string): gx.nn.Sequential {
  gx.manualSeed(0);
  const layers: gx.nn.Module<[gx.Tensor], gx.Tensor>[] = [];
  for (let i = 0; i < DEPTH; i++) {
    layers.push(new gx.nn.Linear(WIDTH, WIDTH, { device }));
    if (i < DEPTH - 1) layers.push(new gx.nn.ReLU());
  }
  return new gx.nn.Sequential(...layers);
}

export interface MlpTimes {
  eagerMs: number;
  /** The graphed step (NaN on the CPU, where graphStep runs eagerly). */
  graphedMs: number;
  /** The largest parameter difference, graphed vs eager, after the same 10 steps (NaN on the CPU). */
  maxDiff: number;
}

/** A training setup: the model, its optimizer, static inputs and one step's body. */
function setup(device: string, capturable: boolean): { step: () => gx.Tensor; params: gx.Tensor[]; dispose: () => void } {
  const m = model(device);
  const opt = new gx.optim.Adam(m.parameters(), { lr: 1e-3, capturable });
  const g = new gx.Generator(1);
  const x = gx.randn([BATCH, WIDTH], { generator: g, device }), y = gx.randn([BATCH, WIDTH], { generator: g, device });
  const step = (): gx.Tensor => {
    opt.zeroGrad();
    const loss = gx.nn.functional.mseLoss(m.call(x) as gx.Tensor, y);
    loss.backward();
    opt.step();
    return loss;
  };
  return {
    step, params: m.parameters(),
    dispose: () => { opt.dispose(); for (const p of m.parameters()) { p.grad = null; p.dispose(); } x.dispose(); y.dispose(); },
  };
}

/** Median ms per step, eager and graphed, and the graphed step's agreement with the eager one. */
export function mlpStepTimes(device: string, sync: () => void): MlpTimes {
  const time = (fn: () => void): number => median([0, 1, 2].map(() => perCallNs(fn, 200, 1, { warmup: 20, sync }) / 1e6));
  const eager = setup(device, false);
  const eagerMs = time(() => gx.tidy(() => { eager.step(); }));
  eager.dispose();
  if (device !== 'cuda') return { eagerMs, graphedMs: NaN, maxDiff: NaN };
  const graphed = setup(device, true);
  const step = gx.cuda.graphStep(graphed.step);
  const graphedMs = time(() => { step(); });
  step.dispose();
  graphed.dispose();
  // The same 10 steps both ways, from the same start.
  const a = setup(device, true), b = setup(device, true);
  const gb = gx.cuda.graphStep(b.step);
  for (let i = 0; i < 10; i++) { gx.tidy(() => { a.step(); }); gb(); }
  let maxDiff = 0;
  a.params.forEach((p, i) => { maxDiff = Math.max(maxDiff, gx.tidy(() => gx.max(gx.abs(gx.sub(p, b.params[i]))).item() as number)); });
  gb.dispose();
  a.dispose();
  b.dispose();
  return { eagerMs, graphedMs, maxDiff };
}
