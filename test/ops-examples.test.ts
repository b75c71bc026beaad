// The built-in ops' examples (examples/ops.ts) on every device: a
// device-agnostic softplus against Math, and the linear regression fitted in
// closed form and by gradient descent, recovering y = 0.5 x + 1.
import * as gx from '../lib';
import * as ex from '../examples/ops';
import { deviceTestSerial } from './helpers';

deviceTestSerial('examples: softplus runs on its input\'s device and matches Math', (t, device) => {
  const r = ex.softplusCheck(device);
  t.is(r.device, device === 'cuda' ? 'cuda:0' : 'cpu');
  t.true(r.maxError <= 1e-12, `max error ${r.maxError}`);
});

deviceTestSerial('examples: linear regression recovers slope 0.5 and intercept 1, closed form and gradient descent', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const { x, y } = ex.regressionData(device);
  try {
    t.is(x.device.type, device);
    const closed = ex.fitClosedForm(x, y);
    t.true(Math.abs(closed.slope - 0.5) < 1e-3 && Math.abs(closed.intercept - 1) < 0.05, JSON.stringify(closed));
    const gd = ex.fitGradientDescent(x, y);
    t.true(Math.abs(gd.slope - closed.slope) < 1e-5 && Math.abs(gd.intercept - closed.intercept) < 1e-3,
      `gradient descent ${JSON.stringify(gd)} vs closed form ${JSON.stringify(closed)}`);
  } finally {
    x.dispose();
    y.dispose();
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});
