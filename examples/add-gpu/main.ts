// The AddGPU extension, called from TypeScript through its generated, typed
// binding. Build and run: `npm run demo` (from the repository root).
import * as gx from 'gpuext';

import { addGpu } from './build/add_gpu';

const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
console.log(`add_gpu on ${device}${device === 'cpu' ? ` (no GPU: ${gx.cuda.unavailableReason()})` : ''}`);

using a = gx.tensor([[1, 2, 3], [4, 5, 6]], { device });
using b = gx.full([2, 3], 0.5, { device });
using c = addGpu(a, b);
console.log(c.toString());

// Shapes are checked by the op itself (GX_CHECK), with a message that names it.
using d = gx.ones([3], { device });
try {
  addGpu(a, d);
} catch (err) {
  console.log(`as expected: ${(err as Error).message}`);
}
