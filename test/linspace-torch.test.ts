// gx.linspace and gx.logspace against torch 2.13 (CPU) bit for bit, on the random
// bounds, step counts, bases and dtypes of test/linspace-torch-figures.ts
// (test/reference/torch_linspace.py writes it). On every device: the CUDA kernel
// computes the same points (NOTE [ Linspace as torch computes it ]); logspace's
// power on CUDA is CUDA's pow, a few ulps from glibc's (logspaceUlps).
import * as gx from '../lib';
import { deviceTest } from './helpers';
import { SPACED_FIGURES } from './linspace-torch-figures';
import { logspaceUlps, numbers, ulpsApart } from './torch-values';

deviceTest('linspace and logspace equal torch\'s values bit for bit, in every dtype', (t, device) => {
  const ops = { linspace: 0, logspace: 0 };
  for (const [op, dtype, start, end, steps, base, indices, want] of SPACED_FIGURES) {
    const d = dtype as gx.DType;
    const r = op === 'linspace' ? gx.linspace(start, end, steps, { dtype: d, device }) : gx.logspace(start, end, steps, base ?? 10, { dtype: d, device });
    try {
      const all = numbers(r);
      t.is(all.length, steps);
      const got = indices === null ? all : indices.map((i) => all[i]);
      // The places that differ (Object.is: -0 is told from 0, NaN equals NaN), none expected but for CUDA's pow in
      // logspace, within logspaceUlps.
      const ulps = op === 'logspace' ? logspaceUlps(device, dtype) : 0;
      const near = (g: number, w: number): boolean => ulps > 0 && ulpsApart(g, w, dtype as 'float32' | 'float64') <= ulps;
      const differ = got.flatMap((g, k) => (Object.is(g, want[k]) || near(g, want[k]) ? [] : [`[${indices === null ? k : indices[k]}] ${g}, torch ${want[k]}`]));
      t.deepEqual(differ, [], `${op}(${start}, ${end}, ${steps}${base === null ? '' : `, base=${base}`}, dtype=${dtype}) on ${device}`);
      ops[op]++;
    } finally {
      r.dispose();
    }
  }
  // The table holds both ops in every dtype (a table cut short would pass).
  t.true(ops.linspace >= 80 && ops.logspace >= 50, JSON.stringify(ops));
});

deviceTest('linspace: the integer bounds into uint8 wrap as torch\'s, and the float ones are refused below 0', (t, device) => {
  // torch.linspace(-1, 0, 3, dtype=torch.uint8) is [255, 127, 0]; (-255, 0, 3) [1, 0, 0]; -256 and -1.5 are refused.
  using a = gx.linspace(-1, 0, 3, { dtype: 'uint8', device });
  t.deepEqual(numbers(a), [255, 127, 0]);
  using b = gx.linspace(-255, 0, 3, { dtype: 'uint8', device });
  t.deepEqual(numbers(b), [1, 0, 0]);
  using c = gx.linspace(0, -1, 1, { dtype: 'uint8', device });
  t.deepEqual(numbers(c), [0]);
  t.throws(() => gx.linspace(-256, 0, 3, { dtype: 'uint8', device }),
    { instanceOf: RangeError, message: 'gx.linspace: start -256 is out of range for uint8 [0, 255] (or -255 to -1, which wrap)' });
  t.throws(() => gx.linspace(-1.5, 0, 3, { dtype: 'uint8', device }), { instanceOf: RangeError, message: /^gx\.linspace: start -1\.5 is out of range for uint8/ });
  t.throws(() => gx.linspace(0, 256, 3, { dtype: 'uint8', device }), { instanceOf: RangeError, message: /^gx\.linspace: end 256 is out of range for uint8/ });
  t.throws(() => gx.linspace(0, -129, 3, { dtype: 'int8', device }), { instanceOf: RangeError, message: 'gx.linspace: end -129 is out of range for int8 [-128, 127]' });
  // torch.logspace(-1, 0, 3, dtype=torch.uint8) is [0, 0, 1] (255 and 127.5 as exponents overflow int64, then wrap).
  using l = gx.logspace(-1, 0, 3, { dtype: 'uint8', device });
  t.deepEqual(numbers(l), [0, 0, 1]);
  t.throws(() => gx.logspace(-256, 0, 3, { dtype: 'uint8', device }), { instanceOf: RangeError, message: /^gx\.logspace: start -256 is out of range for uint8/ });
});
