// gx.cuda.graphStep (lib/core/graph-step.ts, NOTE [ Graphed steps ]) and the
// capture's refusals (lib/core/capture-guard.ts): on the GPU a graphed MLP
// training step (forward, backward, capturable Adam) gives the eager step's
// parameters after several steps, with new inputs copied in each step; an
// SGD-with-momentum step bit for bit; what cannot be captured is refused
// naming the call, and the process goes on. On the CPU every call runs
// eagerly, with the same results as a plain loop.
import test from 'ava';

import * as gx from '../lib';
import { capturingDevice, whileCapturing } from '../lib/core/capture-guard';
import { native } from '../lib/core/native';
import { cudaTest } from './helpers';

const D_IN = 16, HIDDEN = 32, BATCH = 8;

function mlp(device: string, seed: number): gx.nn.Sequential {
  gx.manualSeed(seed);
  return new gx.nn.Sequential(
    new gx.nn.Linear(D_IN, HIDDEN, { device }), new gx.nn.ReLU(),
    new gx.nn.Linear(HIDDEN, HIDDEN, { device }), new gx.nn.ReLU(),
    new gx.nn.Linear(HIDDEN, 1, { device }));
}

/** Batch i: inputs and targets from a seeded generator, on the CPU (copied in like a data loader's). */
function batch(i: number): [gx.Tensor, gx.Tensor] {
  const g = new gx.Generator(1000 + i);
  return [gx.randn([BATCH, D_IN], { generator: g }), gx.randn([BATCH, 1], { generator: g })];
}

interface Run { params: number[][]; losses: number[] }

/** `steps` training steps; `graphed`: through graphStep, else a plain loop. Parameters and losses after. */
function train(device: string, steps: number, graphed: boolean, makeOpt: (ps: gx.Tensor[]) => gx.optim.Optimizer<object>): Run {
  const model = mlp(device, 5);
  const opt = makeOpt(model.parameters());
  const x = gx.zeros([BATCH, D_IN], { device }), y = gx.zeros([BATCH, 1], { device });
  const body = (): gx.Tensor => {
    opt.zeroGrad();
    const loss = gx.nn.functional.mseLoss(model.call(x) as gx.Tensor, y);
    loss.backward();
    opt.step();
    return loss;
  };
  const step = graphed ? gx.cuda.graphStep(body, { device, warmup: 2 }) : null;
  const losses: number[] = [];
  for (let i = 0; i < steps; i++) {
    const [bx, by] = batch(i);
    x.copy_(bx);
    y.copy_(by);
    bx.dispose();
    by.dispose();
    if (step !== null) {
      losses.push(Number(step().item()));
    } else {
      const loss = gx.tidy(body);
      losses.push(Number(loss.item()));
      loss.dispose();
    }
  }
  const params = model.parameters().map((p) => Array.from(p.toArraySync() as Float32Array));
  if (step !== null) {
    if (device === 'cuda') {
      if (step.graph === null) throw new Error('graphStep captured no graph');
    } else if (step.graph !== null) {
      throw new Error('graphStep captured a graph on the CPU');
    }
    step.dispose();
  }
  opt.dispose();
  for (const p of model.parameters()) p.grad = null;
  x.dispose();
  y.dispose();
  return { params, losses };
}

/** Within 1e-5 relative: cuBLAS may pick another algorithm inside a capture than outside it. */
function close(t: import('ava').ExecutionContext, a: Run, b: Run, what: string): void {
  const near = (x: number, y: number): boolean => Math.abs(x - y) <= 1e-5 * Math.max(1, Math.abs(y));
  t.true(a.losses.every((v, i) => near(v, b.losses[i])), `${what}: losses ${a.losses} vs ${b.losses}`);
  a.params.forEach((p, i) => t.true(p.every((v, j) => near(v, b.params[i][j])), `${what}: parameter ${i}`));
}

const adam = (ps: gx.Tensor[]): gx.optim.Optimizer<object> => new gx.optim.Adam(ps, { lr: 1e-2, capturable: true });
const sgd = (ps: gx.Tensor[]): gx.optim.Optimizer<object> => new gx.optim.SGD(ps, { lr: 0.05, momentum: 0.9 });

cudaTest('a graphed MLP training step (Adam, capturable) gives the eager step\'s parameters and losses after 6 steps', (t) => {
  const eager = train('cuda', 6, false, adam), graphed = train('cuda', 6, true, adam);
  close(t, graphed, eager, 'Adam');
  t.true(eager.losses[5] !== eager.losses[0], 'the losses change');
});

cudaTest('a graphed SGD-with-momentum step equals the eager one, and replays reuse the capture\'s memory', (t) => {
  const eager = train('cuda', 5, false, sgd), graphed = train('cuda', 5, true, sgd);
  close(t, graphed, eager, 'SGD');
  // Replays allocate nothing: the bytes in use stay put across calls.
  const model = mlp('cuda', 1);
  const opt = sgd(model.parameters());
  const x = gx.randn([BATCH, D_IN], { device: 'cuda' });
  const step = gx.cuda.graphStep(() => {
    opt.zeroGrad();
    const loss = gx.sum(model.call(x) as gx.Tensor);
    loss.backward();
    opt.step();
    return loss;
  }, { warmup: 1 });
  step();
  step();
  // Counted by allocations, not bytes in use: a tensor of the runs above left to the garbage collector may be
  // freed by its finalizer during the replays (16 KiB once on an H200), which lowers the bytes but allocates nothing.
  const before = gx.memory.stats('cuda');
  for (let i = 0; i < 5; i++) step();
  const after = gx.memory.stats('cuda');
  t.is(after.numAllocs, before.numAllocs, 'replays allocate nothing');
  t.true(after.allocatedBytes <= before.allocatedBytes, `bytes in use ${before.allocatedBytes} -> ${after.allocatedBytes}`);
  step.dispose();
  opt.dispose();
  x.dispose();
});

cudaTest('what cannot be captured is refused naming the call; non-capturable Adam too; the process goes on', (t) => {
  const x = gx.randn([4], { device: 'cuda' });
  t.throws(() => gx.cuda.graph(() => { gx.sum(gx.mul(x, 2)).item(); }), { message: /gx\.cuda\.graph: Tensor\.toArraySync \/ Tensor\.item .*cannot be captured/ });
  t.throws(() => gx.cuda.graph(() => { gx.cuda.synchronize(); }), { message: /gx\.cuda\.graph: gx\.cuda\.synchronize cannot be captured/ });
  t.throws(() => gx.cuda.graph(() => { gx.tensor([1, 2], { device: 'cuda' }); }), { message: /gx\.tensor from host data on a GPU/ });
  const w = gx.randn([4], { device: 'cuda' }).requiresGrad_();
  const opt = new gx.optim.Adam([w]);
  const step = gx.cuda.graphStep(() => { opt.zeroGrad(); gx.sum(gx.mul(w, x)).backward(); opt.step(); }, { warmup: 1 });
  step();
  t.throws(() => step(), { message: /Adam\.step: attempting CUDA graph capture of step\(\) with capturable false/ });
  // Nothing is left half-captured: a graph still captures and replays.
  const y = gx.zerosLike(x);
  const g = gx.cuda.graph(() => { gx.mul(x, 3, { out: y }); });
  g.replay();
  t.deepEqual(Array.from(y.toArraySync() as Float32Array), Array.from(x.toArraySync() as Float32Array).map((v) => Math.fround(v * 3)));
  g.dispose();
  step.dispose();
  opt.dispose();
});

test('graphStep on the CPU runs each call eagerly, as a plain loop does', (t) => {
  const eager = train('cpu', 4, false, adam), stepped = train('cpu', 4, true, adam);
  t.deepEqual(stepped.params, eager.params);
  t.deepEqual(stepped.losses, eager.losses);
});

test('graphStep: the previous call\'s outputs are freed; bad arguments are refused naming the argument', (t) => {
  const x = gx.randn([3]);
  const step = gx.cuda.graphStep(() => gx.mul(x, 2), { device: 'cpu' });
  const first = step();
  const second = step();
  t.true(first.isDisposed);
  t.false(second.isDisposed);
  t.is(step.calls, 2);
  step.dispose();
  t.true(second.isDisposed);
  t.throws(() => step(), { message: 'gx.cuda.graphStep: the graphed step was disposed' });
  t.throws(() => gx.cuda.graphStep(5 as unknown as () => void), { instanceOf: TypeError, message: /gx\.cuda\.graphStep: argument 'step' must be a function/ });
  t.throws(() => gx.cuda.graphStep(() => undefined, { device: 'cpu', warmup: 0 }), { instanceOf: RangeError, message: /warmup must be an integer >= 1, got 0/ });
  const bad = gx.cuda.graphStep(() => 3 as unknown as gx.Tensor, { device: 'cpu' });
  t.throws(() => bad(), { instanceOf: TypeError, message: /gx\.cuda\.graphStep: the step must return a tensor, an array of tensors or nothing/ });
  if (!gx.cuda.isAvailable()) t.throws(() => gx.cuda.graphStep(() => undefined), { message: /gx\.cuda\.graphStep: .*CUDA is not available/ });
});

test('during a capture the core\'s host syncs are refused naming the call, CPU work is not, and all is restored after', (t) => {
  const before = { ...native };
  const cpu = gx.tensor([1, 2, 3]);
  const result = whileCapturing(new gx.Device('cuda', 0), () => {
    t.deepEqual(Array.from(cpu.toArraySync() as Float32Array), [1, 2, 3], 'a CPU read runs');
    t.throws(() => native.fromBytes(new Float32Array(2), [2], 0, 1, 0), { message: /gx\.cuda\.graph: gx\.tensor from host data on a GPU .*cannot be captured.*copy_ into it/ });
    t.throws(() => native.cudaSynchronize(0), { message: /gx\.cuda\.graph: gx\.cuda\.synchronize cannot be captured/ });
    t.throws(() => whileCapturing(new gx.Device('cuda', 0), () => 0), { message: /a capture is already running/ });
    t.not(capturingDevice(), null);
    return 7;
  });
  t.is(result, 7);
  t.is(capturingDevice(), null);
  for (const k of ['readSync', 'read', 'fromBytes', 'toDevice', 'copy', 'cudaSynchronize', 'streamSynchronize', 'eventSynchronize'] as const) {
    t.is(native[k], before[k], `${k} restored`);
  }
  // Restored when the capture's function throws too.
  t.throws(() => whileCapturing(new gx.Device('cuda', 0), () => { throw new Error('inside'); }), { message: 'inside' });
  t.is(native.fromBytes, before.fromBytes);
  cpu.dispose();
});
