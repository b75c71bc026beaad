// The built-in ops on the reference material's examples (`npm run tour:ops`,
// or node dist/examples/ops.js; test/ops-examples.test.ts calls them):
//   - softplus(x) = max(0, x) + log1p(exp(-|x|)), device-agnostic: it runs on
//     whatever device its input is on (the CuPy course's get_array_module
//     example, without the module lookup: the ops dispatch on the input);
//   - a linear regression y = 0.5 x + 1 + noise on 40000 points (the Dask +
//     CuPy article's), fitted on the GPU in closed form (least squares through
//     the normal equations, [X 1]^T [X 1] w = [X 1]^T y, with matmul) and by
//     gradient descent, both recovering the coefficients.
import * as gx from '../lib';

/** log(1 + exp(x)) without overflow, on x's device. */
export function softplus(x: gx.Tensor): gx.Tensor {
  return gx.tidy(() => gx.add(gx.maximum(x, 0), gx.log1p(gx.exp(gx.neg(gx.abs(x))))));
}

/** softplus on `device` against the plain-JS formula; the largest absolute error. */
export function softplusCheck(device: gx.DeviceLike): { device: string; maxError: number } {
  gx.manualSeed(0);
  using r = gx.randn([100_000], { device, dtype: 'float64' });
  using x = gx.mul(r, 30);  // r disposed too: a temporary left to the finalizer would change live counts later
  using y = softplus(x);
  const xs = x.toArraySync() as Float64Array;
  const ys = y.toArraySync() as Float64Array;
  let maxError = 0;
  xs.forEach((v, i) => {
    const ref = Math.max(0, v) + Math.log1p(Math.exp(-Math.abs(v)));
    maxError = Math.max(maxError, Math.abs(ys[i] - ref));
  });
  return { device: y.device.toString(), maxError };
}

export interface Fit {
  slope: number;
  intercept: number;
}

/** x in [0, 1000) and y = 0.5 x + 1 + N(0, 1) noise, 40000 points as [40000, 1] columns, seeded. */
export function regressionData(device: gx.DeviceLike, n = 40_000): { x: gx.Tensor; y: gx.Tensor } {
  gx.manualSeed(42);
  return gx.tidy(() => {
    const x = gx.mul(gx.rand([n, 1], { device, dtype: 'float64' }), 1000);
    const y = gx.add(gx.add(gx.mul(x, 0.5), 1), gx.randn([n, 1], { device, dtype: 'float64' }));
    return { x, y };
  });
}

/** Least squares through the normal equations, on the data's device: (A^T A) w = A^T y with A = [x 1]. */
export function fitClosedForm(x: gx.Tensor, y: gx.Tensor): Fit {
  const [ata, aty] = gx.tidy(() => {
    const a = gx.cat([x, gx.ones(x.shape, { device: x.device, dtype: x.dtype })], 1);  // [n, 2]
    const at = gx.transpose(a, 0, 1);
    return [gx.matmul(at, a), gx.matmul(at, y)];  // [2, 2], [2, 1]
  });
  using m = ata.to('cpu');
  using v = aty.to('cpu');
  ata.dispose();
  aty.dispose();
  const [s11, s12, s21, s22] = m.toArraySync() as Float64Array;
  const [r1, r2] = v.toArraySync() as Float64Array;
  const det = s11 * s22 - s12 * s21;  // the 2 x 2 system, by Cramer's rule
  return { slope: (r1 * s22 - s12 * r2) / det, intercept: (s11 * r2 - s21 * r1) / det };
}

/**
 * Gradient descent on the mean squared error, on the data's device; x is
 * standardized first (raw x up to 1000 would need a tiny step), and the fit
 * is mapped back to the raw scale.
 */
export function fitGradientDescent(x: gx.Tensor, y: gx.Tensor, steps = 500, lr = 0.1): Fit {
  const mu = scalar(() => gx.mean(x));
  const sigma = scalar(() => gx.sqrt(gx.mean(gx.pow(gx.sub(x, mu), 2))));
  using xs = gx.tidy(() => gx.div(gx.sub(x, mu), sigma));
  let w = 0;
  let b = 0;
  for (let s = 0; s < steps; s++) {
    const [gw, gb] = gx.tidy(() => {
      const err = gx.sub(gx.add(gx.mul(xs, w), b), y);  // prediction - y
      return [2 * scalar(() => gx.mean(gx.mul(err, xs))), 2 * scalar(() => gx.mean(err))];
    });
    w -= lr * gw;
    b -= lr * gb;
  }
  return { slope: w / sigma, intercept: b - (w * mu) / sigma };
}

/** The value of a 0-d result, its tensors freed. */
function scalar(f: () => gx.Tensor): number {
  using t = gx.tidy(f);
  return Number(t.item());
}

function main(): void {
  const devices: gx.DeviceLike[] = gx.cuda.isAvailable() ? ['cpu', 'cuda'] : ['cpu'];
  for (const d of devices) {
    const s = softplusCheck(d);
    console.log(`softplus on ${s.device}: max |error| vs Math ${s.maxError.toExponential(2)}`);
  }
  const device = devices[devices.length - 1];
  const { x, y } = regressionData(device);
  const closed = fitClosedForm(x, y);
  const gd = fitGradientDescent(x, y);
  console.log(`linear regression on ${x.device}, y = 0.5 x + 1 + noise, 40000 points:`);
  console.log(`  closed form:      slope ${closed.slope.toFixed(5)}, intercept ${closed.intercept.toFixed(4)}`);
  console.log(`  gradient descent: slope ${gd.slope.toFixed(5)}, intercept ${gd.intercept.toFixed(4)}`);
  x.dispose();
  y.dispose();
}

if (require.main === module) main();
