// gx.optim.LBFGS bounds each strong Wolfe line search by the closure calls
// left in the step (torch's max_ls = max_eval - current_evals): with small
// maxIter / maxEval it calls the closure as often as torch.optim.LBFGS and
// stops where it stops, on four functions, two steps each.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTestSerial } from './helpers';

type Step = [calls: number, returned: number, after: number, params: number[]];
type Row = [fn: string, maxIter: number, maxEval: number | undefined, steps: Step[]];

// torch 2.13.0+cpu, CPU, float64 (test/reference/torch_lbfgs_bound.py):
// [function, maxIter, maxEval, [[closure calls so far, loss step() returned, loss after, params after], ...two steps]]
const TORCH: Row[] = [
  ['quadratic', 1, undefined, [[2, 3600.0, 3025.0, [0.25, 0.25, 0.25, 0.25]], [4, 3025.0, 0.0, [3.0, 3.0, 3.0, 3.0]]]],
  ['quadratic', 2, undefined, [[3, 3600.0, 100.0, [2.5, 2.5, 2.5, 2.5]], [5, 100.0, 0.0, [3.0, 3.0, 3.0, 3.0]]]],
  ['quadratic', 3, undefined, [[3, 3600.0, 100.0, [2.5, 2.5, 2.5, 2.5]], [5, 100.0, 0.0, [3.0, 3.0, 3.0, 3.0]]]],
  ['quadratic', 1, 3, [[3, 3600.0, 100.0, [2.5, 2.5, 2.5, 2.5]], [5, 100.0, 0.0, [3.0, 3.0, 3.0, 3.0]]]],
  ['quadratic', 2, 2, [[3, 3600.0, 100.0, [2.5, 2.5, 2.5, 2.5]], [5, 100.0, 0.0, [3.0, 3.0, 3.0, 3.0]]]],
  ['quadratic', 4, 3, [[3, 3600.0, 100.0, [2.5, 2.5, 2.5, 2.5]], [5, 100.0, 0.0, [3.0, 3.0, 3.0, 3.0]]]],
  ['quadratic', 3, 7, [[4, 3600.0, 0.0, [3.0, 3.0, 3.0, 3.0]], [5, 0.0, 0.0, [3.0, 3.0, 3.0, 3.0]]]],
  ['rosenbrock', 1, undefined, [[2, 12.5, 12.5, [-1.5, 2.0]], [4, 12.5, 12.5, [-1.5, 2.0]]]],
  ['rosenbrock', 2, undefined, [[3, 12.5, 5.875809972976888, [-1.4172551712244599, 2.026691880250174]], [5, 5.875809972976888, 5.863573595921402, [-1.4200404011339869, 2.024868214861027]]]],
  ['rosenbrock', 3, undefined, [[3, 12.5, 5.875809972976888, [-1.4172551712244599, 2.026691880250174]], [6, 5.875809972976888, 5.861853124644989, [-1.4201365045001701, 2.023710425144713]]]],
  ['rosenbrock', 1, 3, [[3, 12.5, 5.875809972976888, [-1.4172551712244599, 2.026691880250174]], [5, 5.875809972976888, 5.863573595921402, [-1.4200404011339869, 2.024868214861027]]]],
  ['rosenbrock', 2, 2, [[3, 12.5, 5.875809972976888, [-1.4172551712244599, 2.026691880250174]], [5, 5.875809972976888, 5.863573595921402, [-1.4200404011339869, 2.024868214861027]]]],
  ['rosenbrock', 4, 3, [[3, 12.5, 5.875809972976888, [-1.4172551712244599, 2.026691880250174]], [6, 5.875809972976888, 5.861853124644989, [-1.4201365045001701, 2.023710425144713]]]],
  ['rosenbrock', 3, 7, [[5, 12.5, 5.861853124644989, [-1.4201365045001701, 2.023710425144713]], [9, 5.861853124644989, 5.774160143316677, [-1.3967406364678434, 1.933623332355145]]]],
  ['leastSquares', 1, undefined, [[2, 6.183525, 2.9344423098814088, [0.6307052978594976, 0.16487440219157729, 0.39557970005107485]], [4, 2.9344423098814088, 1.4794106259960416, [0.5393225457691428, 0.7599374968230517, -0.09386226694572586]]]],
  ['leastSquares', 2, undefined, [[2, 6.183525, 2.9344423098814088, [0.6307052978594976, 0.16487440219157729, 0.39557970005107485]], [4, 2.9344423098814088, 1.4794106259960416, [0.5393225457691428, 0.7599374968230517, -0.09386226694572586]]]],
  ['leastSquares', 3, undefined, [[3, 6.183525, 1.4794106259960416, [0.5393225457691428, 0.7599374968230517, -0.09386226694572586]], [6, 1.4794106259960416, 1.340686458357613, [0.2719702230729776, 1.0552762647653269, 0.03538501165596965]]]],
  ['leastSquares', 1, 3, [[2, 6.183525, 2.9344423098814088, [0.6307052978594976, 0.16487440219157729, 0.39557970005107485]], [4, 2.9344423098814088, 1.4794106259960416, [0.5393225457691428, 0.7599374968230517, -0.09386226694572586]]]],
  ['leastSquares', 2, 2, [[2, 6.183525, 2.9344423098814088, [0.6307052978594976, 0.16487440219157729, 0.39557970005107485]], [4, 2.9344423098814088, 1.4794106259960416, [0.5393225457691428, 0.7599374968230517, -0.09386226694572586]]]],
  ['leastSquares', 4, 3, [[3, 6.183525, 1.4794106259960416, [0.5393225457691428, 0.7599374968230517, -0.09386226694572586]], [6, 1.4794106259960416, 1.340686458357613, [0.2719702230729776, 1.0552762647653269, 0.03538501165596965]]]],
  ['leastSquares', 3, 7, [[4, 6.183525, 1.4039933419165513, [0.41658431047820943, 0.8585466569480551, -0.09233632318913977]], [8, 1.4039933419165513, 1.3357242301024383, [0.2594883887300454, 1.0969151552241219, 0.10314034258184046]]]],
  ['expSum', 1, undefined, [[2, 15.413411678808021, 7.101972699177983, [1.2107425032961168, -0.2892574967038832]], [4, 7.101972699177983, 4.869783920509059, [0.8435570587876953, -0.0023321419594047876]]]],
  ['expSum', 2, undefined, [[2, 15.413411678808021, 7.101972699177983, [1.2107425032961168, -0.2892574967038832]], [4, 7.101972699177983, 4.869783920509059, [0.8435570587876953, -0.0023321419594047876]]]],
  ['expSum', 3, undefined, [[3, 15.413411678808021, 4.869783920509059, [0.8435570587876953, -0.0023321419594047876]], [6, 4.869783920509059, 3.781883359253417, [0.2422217578430787, 0.2612297693864786]]]],
  ['expSum', 1, 3, [[2, 15.413411678808021, 7.101972699177983, [1.2107425032961168, -0.2892574967038832]], [4, 7.101972699177983, 4.869783920509059, [0.8435570587876953, -0.0023321419594047876]]]],
  ['expSum', 2, 2, [[2, 15.413411678808021, 7.101972699177983, [1.2107425032961168, -0.2892574967038832]], [4, 7.101972699177983, 4.869783920509059, [0.8435570587876953, -0.0023321419594047876]]]],
  ['expSum', 4, 3, [[3, 15.413411678808021, 4.869783920509059, [0.8435570587876953, -0.0023321419594047876]], [6, 4.869783920509059, 3.781883359253417, [0.2422217578430787, 0.2612297693864786]]]],
  ['expSum', 3, 7, [[4, 15.413411678808021, 3.806288284339878, [0.34014320737762005, 0.24797170372518973]], [8, 3.806288284339878, 3.779763251125319, [0.23103015191177934, 0.23083991748304927]]]],
];

// The same functions in gx ops (test/reference/torch_lbfgs_bound.py has torch's).
const X = [[1, 2, -1], [0.5, -1, 2], [-1.5, 0.3, 1], [2, 1, 0.5]];
const Y = [1, -2, 0.5, 3];
const FUNCTIONS: Record<string, { f: (w: gx.Tensor) => gx.Tensor; w0: number[] }> = {
  quadratic: { f: (w) => gx.mul(100, gx.sum(gx.pow(gx.sub(w, 3), 2))), w0: [0, 0, 0, 0] },
  rosenbrock: {
    f: (w) => {
      const [x, y] = [w.slice(0, 0, 1), w.slice(0, 1, 2)];
      return gx.add(gx.pow(gx.sub(1, x), 2), gx.mul(100, gx.pow(gx.sub(y, gx.mul(x, x)), 2))).sum();
    },
    w0: [-1.5, 2],
  },
  leastSquares: {
    f: (w) => {
      const x = gx.tensor(X, { dtype: w.dtype, device: w.device }), y = gx.tensor(Y, { dtype: w.dtype, device: w.device });
      return gx.mean(gx.pow(gx.sub(gx.sum(gx.mul(x, w), 1), y), 2));
    },
    w0: [0.5, -0.3, 0.8],
  },
  expSum: {
    f: (w) => {
      const coupling = gx.mul(0.5, gx.pow(gx.sub(w.slice(0, 0, 1), w.slice(0, 1, 2)), 2)).sum();
      return gx.add(gx.sum(gx.add(gx.exp(w), gx.exp(gx.mul(-2, w)))), coupling);
    },
    w0: [1.5, -1],
  },
};

function near(t: ExecutionContext, got: readonly number[], want: readonly number[], what: string): void {
  const worst = Math.max(...want.map((w, i) => Math.abs(got[i] - w) / Math.max(1, Math.abs(w))));
  t.true(got.length === want.length && worst <= 1e-9, `${what}: got ${got.join(', ')}, want ${want.join(', ')}`);
}

deviceTestSerial('optim: LBFGS bounds each line search by the closure calls left, as torch.optim.LBFGS', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  for (const [name, maxIter, maxEval, steps] of TORCH) {
    const { f, w0 } = FUNCTIONS[name];
    const w = gx.tensor(w0, { dtype: 'float64', device }).requiresGrad_();
    const opt = new gx.optim.LBFGS([w], { maxIter, maxEval, lineSearchFn: 'strong_wolfe' });
    let calls = 0;
    const closure = (): gx.Tensor => {
      calls++;
      opt.zeroGrad();
      const loss = f(w);
      loss.backward();
      return loss;
    };
    steps.forEach(([wantCalls, returned, after, params], i) => {
      const what = `${name}, maxIter ${maxIter}, maxEval ${maxEval ?? 'default'}, step ${i}`;
      const got = opt.step(closure);
      const loss = gx.tidy(() => Number(gx.noGrad(() => f(w)).item()));
      t.is(calls, wantCalls, `${what}: closure calls as torch's`);
      near(t, [Number(got.item()), loss], [returned, after], `${what}: the loss returned and the loss after`);
      near(t, Array.from(w.toArraySync() as Float64Array), params, `${what}: the parameters`);
      got.dispose();
    });
    opt.dispose();
    w.dispose();
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});
