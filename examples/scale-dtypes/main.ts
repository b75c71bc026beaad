// One templated kernel over many dtypes: build with
// `npx gpuext build --config examples/scale-dtypes/setup.config.json`.
import * as gx from 'gpuext';

import { scale } from './build/scale_dtypes';

const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
for (const dtype of ['float32', 'float64', 'float16', 'bfloat16', 'int32', 'int8'] as const) {
  using x = gx.arange(0, 6, 1, { dtype, device });
  using y = scale(x, 2, 1);
  console.log(`${dtype.padEnd(8)} ${y}`);
}
