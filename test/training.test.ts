// Training with gx's autograd and optimizers, on every device: the Dask
// article's linear regression (y = 0.5 x + 1 + noise) and a logistic
// regression fitted with L-BFGS, against a float64 Newton solve on the CPU;
// an MLP trained with Adam for 1000 steps lowers its loss and leaves no
// tensor behind.
import * as glm from '../examples/glm';
import { trainMlp } from '../examples/mlp';
import { deviceTestSerial } from './helpers';

deviceTestSerial('examples: linear regression by L-BFGS recovers slope 0.5 and intercept 1, as the normal equations do', (t, device) => {
  const r = glm.linearRegressionExample(device);
  t.true(Math.abs(r.fitted[0] - 0.5) < 1e-3 && Math.abs(r.fitted[1] - 1) < 0.05, JSON.stringify(r.fitted));
  t.true(r.maxRelDiff < 1e-7, `L-BFGS vs the normal equations: ${r.maxRelDiff}`);
  t.true(r.iterations > 0 && r.iterations < 100);
});

deviceTestSerial('examples: logistic regression by L-BFGS matches Newton\'s method in float64', (t, device) => {
  const r64 = glm.logisticRegressionExample(device, 20_000, 10, 1, 'float64');
  t.true(r64.maxRelDiff < 1e-6, `float64: ${r64.maxRelDiff}`);
  t.true(Math.abs(r64.loss - r64.newtonLoss) < 1e-12, `${r64.loss} vs ${r64.newtonLoss}`);
  const r32 = glm.logisticRegressionExample(device, 50_000, 20, 2, 'float32');
  t.true(r32.maxRelDiff < 2e-3, `float32: ${r32.maxRelDiff}`);
  t.true(Math.abs(r32.loss - r32.newtonLoss) < 1e-6, `loss ${r32.loss} vs Newton ${r32.newtonLoss}`);
});

deviceTestSerial('examples: an MLP trained by Adam for 1000 steps lowers its loss; live tensors back to the baseline', (t, device) => {
  const r = trainMlp(device, 1000, 512);
  t.true(r.finalLoss < r.firstLoss / 50, `${r.firstLoss} -> ${r.finalLoss}`);
  t.is(r.leaked, 0);
});
