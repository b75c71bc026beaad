// Generalized linear models fitted with L-BFGS, as the Dask article fits
// them with Dask-GLM on CuPy arrays (../shared/reference/dask-array-function-cupy.md):
// the linear regression of y = 0.5 x + 1 + noise on 40000 points with x in
// [0, 1000), and a logistic regression of n samples of d features. Each is
// checked against a float64 Newton solve on the CPU (for least squares, one
// Newton step is the normal equations).
//   node dist/examples/glm.js            (on the GPU when there is one)
import * as gx from '../lib';

export interface GlmFit {
  /** Coefficients then the intercept, from L-BFGS. */
  fitted: number[];
  /** The same from Newton's method in float64 on the CPU. */
  newton: number[];
  /** max |fitted - newton| / max(1, |newton|). */
  maxRelDiff: number;
  loss: number;
  newtonLoss: number;
  /** L-BFGS iterations, loss-and-gradient evaluations, and the wall time of the fit (synchronized). */
  iterations: number;
  evaluations: number;
  ms: number;
}

const values = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number>, Number);

/** [X, 1]: the design matrix with a column of ones for the intercept. */
function withOnes(x: gx.Tensor): gx.Tensor {
  return gx.cat([x, gx.ones([x.shape[0], 1], { dtype: x.dtype, device: x.device })], 1);
}

/** Fits beta of [X, 1] beta to minimize loss(Z beta) with L-BFGS (strong Wolfe), beta starting at 0. */
function lbfgs(z: gx.Tensor, loss: (eta: gx.Tensor) => gx.Tensor, opts: { maxIter: number; toleranceGrad: number }):
  { beta: number[]; loss: number; iterations: number; evaluations: number; ms: number } {
  const beta = gx.zeros([z.shape[1], 1], { dtype: z.dtype, device: z.device }).requiresGrad_();
  const opt = new gx.optim.LBFGS([beta], { lineSearchFn: 'strong_wolfe', historySize: 10, maxIter: opts.maxIter, toleranceGrad: opts.toleranceGrad, toleranceChange: 1e-12 });
  const sync = (): void => { if (z.device.type === 'cuda') gx.cuda.synchronize(); };
  sync();
  const t0 = performance.now();
  opt.step(() => {
    opt.zeroGrad();
    const l = loss(gx.matmul(z, beta));
    l.backward();
    return l;
  });
  sync();
  const ms = performance.now() - t0;
  const final = gx.noGrad(() => gx.tidy(() => loss(gx.matmul(z, beta)).item() as number));
  const out = { beta: values(beta), loss: final, iterations: Number(opt.state.get(beta)?.nIter ?? NaN),
    evaluations: Number(opt.state.get(beta)?.funcEvals ?? NaN), ms };
  opt.dispose();
  beta.dispose();
  return out;
}

/** Newton's method in float64 on the CPU: beta <- beta + H^-1 g for the mean log-likelihood; `weights(p)` is the Hessian's diagonal. */
function newton(z: gx.Tensor, y: gx.Tensor, mean: (eta: gx.Tensor) => gx.Tensor, weights: (p: gx.Tensor) => gx.Tensor, steps: number): number[] {
  return gx.tidy(() => {
    const Z = z.astype('float64').cpu();
    const Y = y.astype('float64').cpu();
    let beta: gx.Tensor = gx.zeros([Z.shape[1], 1], { dtype: 'float64' });
    const Zt = Z.transpose(0, 1);
    for (let i = 0; i < steps; i++) {
      const p = mean(gx.matmul(Z, beta));
      const g = gx.matmul(Zt, gx.sub(Y, p));
      const h = gx.matmul(Zt, gx.mul(Z, weights(p)));
      beta = gx.add(beta, gx.linalg.solve(h, g));
    }
    return values(beta);
  });
}

function compare(fit: ReturnType<typeof lbfgs>, newtonBeta: number[], newtonLoss: number): GlmFit {
  const maxRelDiff = Math.max(...fit.beta.map((b, i) => Math.abs(b - newtonBeta[i]) / Math.max(1, Math.abs(newtonBeta[i]))));
  return { fitted: fit.beta, newton: newtonBeta, maxRelDiff, loss: fit.loss, newtonLoss, iterations: fit.iterations, evaluations: fit.evaluations, ms: fit.ms };
}

/** The article's linear regression: 40000 points, y = 0.5 x + 1 + noise, x in [0, 1000). */
export function linearRegressionExample(device: gx.DeviceLike = 'cpu', n = 40_000, seed = 0): GlmFit {
  gx.manualSeed(seed);
  return gx.tidy(() => {
    const x = gx.mul(gx.rand([n, 1], { dtype: 'float64', device }), 1000);
    const y = gx.add(gx.add(gx.mul(x, 0.5), 1), gx.randn([n, 1], { dtype: 'float64', device }));
    // The features scaled to about 1 for the solver (x / 1000), the coefficients scaled back: what an L-BFGS user does.
    const z = withOnes(gx.div(x, 1000));
    const mse = (eta: gx.Tensor): gx.Tensor => { const d = gx.sub(eta, y); return gx.mean(gx.mul(d, d)); };
    const fit = lbfgs(z, mse, { maxIter: 100, toleranceGrad: 1e-10 });
    const exact = newton(z, y, (eta) => eta, (p) => gx.ones(p.shape as number[], { dtype: 'float64' }), 1);
    const nl = gx.tidy(() => mse(gx.matmul(z, gx.tensor(exact, { dtype: 'float64', device }).reshape(2, 1))).item() as number);
    const r = compare(fit, exact, nl);
    // Back to the article's units: slope per unit of x.
    r.fitted = [r.fitted[0] / 1000, r.fitted[1]];
    r.newton = [r.newton[0] / 1000, r.newton[1]];
    return r;
  });
}

/** n samples of d standard-normal features with a column of ones ([n, d + 1]), and labels drawn from a logistic model. */
export function logisticData(device: gx.DeviceLike, n: number, d: number, seed = 0, dtype: 'float32' | 'float64' = 'float32'): { z: gx.Tensor; y: gx.Tensor } {
  gx.manualSeed(seed);
  return gx.tidy(() => {
    const z = withOnes(gx.randn([n, d], { dtype, device }));
    const truth = gx.div(gx.randn([d + 1, 1], { dtype, device }), Math.sqrt(d) / 2);
    const y = gx.lt(gx.rand([n, 1], { dtype, device }), gx.sigmoid(gx.matmul(z, truth))).astype(dtype);
    return { z, y };
  });
}

/** The mean negative log-likelihood of labels y at eta = Z beta: softplus(eta) - y eta. */
const logisticLoss = (y: gx.Tensor) => (eta: gx.Tensor): gx.Tensor => gx.mean(gx.sub(gx.softplus(eta), gx.mul(y, eta)));

/** The L-BFGS fit of fitLogistic alone (no check): what a benchmark times back to back, as torch's fits are. */
export function logisticFitOnly(z: gx.Tensor, y: gx.Tensor): ReturnType<typeof lbfgs> {
  return gx.tidy(() => lbfgs(z, logisticLoss(y), { maxIter: 100, toleranceGrad: 1e-7 }));
}

/** L-BFGS (strong Wolfe, history 10, gradient tolerance 1e-7) on the logistic loss, checked against Newton in float64. */
export function fitLogistic(z: gx.Tensor, y: gx.Tensor): GlmFit {
  return gx.tidy(() => {
    const fit = logisticFitOnly(z, y);
    const exact = newton(z, y, (eta) => gx.sigmoid(eta), (p) => gx.mul(p, gx.sub(1, p)), 8);
    const nl = gx.tidy(() => {
      const Z = z.astype('float64').cpu(), Y = y.astype('float64').cpu();
      return logisticLoss(Y)(gx.matmul(Z, gx.tensor(exact, { dtype: 'float64' }).reshape(z.shape[1], 1))).item() as number;
    });
    return compare(fit, exact, nl);
  });
}

/** A logistic regression of n samples of d features (logisticData), fitted and checked (fitLogistic). */
export function logisticRegressionExample(device: gx.DeviceLike = 'cpu', n = 1_000_000, d = 100, seed = 0, dtype: 'float32' | 'float64' = 'float32'): GlmFit {
  const { z, y } = logisticData(device, n, d, seed, dtype);
  try {
    return fitLogistic(z, y);
  } finally {
    z.dispose();
    y.dispose();
  }
}

function main(): void {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  const lin = linearRegressionExample(device);
  console.log(`linear regression on ${device}: slope ${lin.fitted[0].toFixed(5)}, intercept ${lin.fitted[1].toFixed(4)} ` +
    `(Newton: ${lin.newton[0].toFixed(5)}, ${lin.newton[1].toFixed(4)}; max relative difference ${lin.maxRelDiff.toExponential(1)}), ${lin.iterations} L-BFGS iterations`);
  const small = device === 'cpu';
  const log = logisticRegressionExample(device, small ? 100_000 : 1_000_000, small ? 20 : 100);
  console.log(`logistic regression on ${device}: loss ${log.loss.toFixed(7)} (Newton, float64: ${log.newtonLoss.toFixed(7)}), ` +
    `max relative coefficient difference ${log.maxRelDiff.toExponential(1)}, ${log.iterations} iterations in ${log.ms.toFixed(0)} ms`);
}

if (require.main === module) main();
