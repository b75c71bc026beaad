// A small MLP trained with Adam on synthetic data: y = sin(3 x0) + x1^2 / 2
// plus noise, two inputs, two hidden layers of 64 tanh units. Built from gx
// ops only (matmul, add, tanh, mean), differentiated by gx's autograd; every
// step runs in gx.tidy, so memory stays flat however long it trains.
//   node dist/examples/mlp.js
import * as gx from '../lib';

export interface MlpRun {
  firstLoss: number;
  finalLoss: number;
  steps: number;
  /** Live tensors after training minus before (0: nothing left behind). */
  leaked: number;
  ms: number;
}

/** A dense layer's weight [in, out] (Glorot uniform) and bias [out], both requiring grad. */
function layer(inputs: number, outputs: number, device: gx.DeviceLike): gx.Tensor[] {
  const bound = Math.sqrt(6 / (inputs + outputs));
  const w = gx.tidy(() => gx.rand([inputs, outputs], { device }).mul(2 * bound).sub(bound));
  const b = gx.zeros([outputs], { device });
  return [w.requiresGrad_(), b.requiresGrad_()];
}

export function trainMlp(device: gx.DeviceLike = 'cpu', steps = 500, n = 1024, seed = 0): MlpRun {
  gx.manualSeed(seed);
  const live = gx.memory.stats(device).liveTensors;
  const x = gx.tidy(() => gx.rand([n, 2], { device }).mul(4).sub(2));
  const y = gx.tidy(() => gx.add(gx.add(gx.sin(gx.mul(x.narrow(1, 0, 1), 3)), gx.div(gx.mul(x.narrow(1, 1, 1), x.narrow(1, 1, 1)), 2)),
    gx.randn([n, 1], { device, std: 0.05 })));
  const params = [...layer(2, 64, device), ...layer(64, 64, device), ...layer(64, 1, device)];
  const [w1, b1, w2, b2, w3, b3] = params;
  const forward = (inp: gx.Tensor): gx.Tensor => {
    const h1 = gx.tanh(gx.add(gx.matmul(inp, w1), b1));
    const h2 = gx.tanh(gx.add(gx.matmul(h1, w2), b2));
    return gx.add(gx.matmul(h2, w3), b3);
  };
  const opt = new gx.optim.Adam(params, { lr: 1e-2 });
  const losses: number[] = [];
  const t0 = performance.now();
  for (let s = 0; s < steps; s++) {
    gx.tidy(() => {
      opt.zeroGrad();
      const d = gx.sub(forward(x), y);
      const loss = gx.mean(gx.mul(d, d));
      loss.backward();
      opt.step();
      if (s === 0 || s === steps - 1) losses.push(loss.item() as number);
    });
  }
  const ms = performance.now() - t0;
  opt.dispose();
  for (const t of [x, y, ...params]) t.dispose();
  return { firstLoss: losses[0], finalLoss: losses[losses.length - 1], steps, leaked: gx.memory.stats(device).liveTensors - live, ms };
}

if (require.main === module) {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  const r = trainMlp(device);
  console.log(`MLP on ${device}: mean squared error ${r.firstLoss.toFixed(4)} -> ${r.finalLoss.toFixed(4)} in ${r.steps} Adam steps ` +
    `(${(r.ms / r.steps).toFixed(2)} ms per step); tensors left behind: ${r.leaked}`);
}
