// Printing like PyTorch, through toString() and util.inspect.
import { inspect } from 'util';

import * as gx from '../lib';
import { deviceTest } from './helpers';

deviceTest('toString() shows values, shape, dtype and device', (t, device) => {
  const dev = device === 'cpu' ? 'cpu' : 'cuda:0';
  using a = gx.tensor([[1, 2.5], [3, 4]], { device });
  t.is(a.toString(), `tensor([[1.0000, 2.5000],\n        [3.0000, 4.0000]], shape=[2, 2], dtype=float32, device='${dev}')`);
  using i = gx.arange(3, { device });
  t.is(String(i), `tensor([0, 1, 2], shape=[3], dtype=int64, device='${dev}')`);
  using s = gx.tensor(3.5, { dtype: 'float64', device });
  t.is(`${s}`, `tensor(3.5000, shape=[], dtype=float64, device='${dev}')`);
  using e = gx.zeros([0, 3], { device });
  t.is(e.toString(), `tensor([], shape=[0, 3], dtype=float32, device='${dev}')`);
});

deviceTest('util.inspect and console.log print the tensor, summarized when large', (t, device) => {
  using b = gx.tensor([true, false], { device });
  t.regex(inspect(b), /^tensor\(\[ True, False\], shape=\[2\], dtype=bool/);
  using big = gx.arange(10_000, { device });
  const text = inspect(big);
  t.regex(text, /^tensor\(\[   0,    1,    2,  \.\.\., 9997, 9998, 9999\], shape=\[10000\], dtype=int64/);
  using h = gx.tensor([0.5, -1], { dtype: 'float16', device });
  t.regex(inspect(h), /tensor\(\[ 0\.5000, -1\.0000\], shape=\[2\], dtype=float16/);
});
