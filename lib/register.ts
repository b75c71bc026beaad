// The one step that gives Tensor its methods beyond the class (NOTE [ Tensor methods ] in
// ops/install.ts) and the tape its recorders: each family exports a table, and this installs
// them, once. lib/index.ts runs it; a program that imports a module of lib/ directly, past the
// entry, calls it itself. Nothing in lib/ installs anything as a side effect of being imported.
import { installGetters, installMethods } from './ops/install';
import { SOFTMAX_METHODS } from './ops/softmax/methods';
import { SORT_METHODS } from './ops/sort/methods';
import { LINALG_METHODS } from './ops/linalg/methods';
import { RESHAPE_METHODS } from './ops/layout/reshape-methods';
import { SHAPE_GETTERS, SHAPE_METHODS } from './ops/layout/shape-methods';
import { LAYOUT_METHODS } from './ops/layout/methods';
import { TO_METHODS } from './ops/creation/tensor-to';
import { INDEXING_METHODS } from './ops/indexing/methods';
import { ELEMENTWISE_METHODS } from './ops/elementwise/methods';
import { STATISTICS_METHODS } from './ops/reduce/methods';
import { LERP_METHODS } from './ops/elementwise/lerp';
import { installTapeHooks } from './tape/graph';
import { installRecorders } from './autograd/functions';
import { installAutogradMethods } from './autograd/tensor-methods';

let registered = false;

/** Installs every Tensor method family and the autograd recorders; later calls do nothing. */
export function registerAll(): void {
  if (registered) return;
  registered = true;
  installMethods(SOFTMAX_METHODS);
  installMethods(SORT_METHODS);
  installMethods(LINALG_METHODS);
  installMethods(RESHAPE_METHODS);
  installGetters(SHAPE_GETTERS);
  installMethods(SHAPE_METHODS);
  installMethods(LAYOUT_METHODS);
  installMethods(TO_METHODS);
  installMethods(INDEXING_METHODS);
  installMethods(ELEMENTWISE_METHODS);
  installMethods(STATISTICS_METHODS);
  installMethods(LERP_METHODS);
  installTapeHooks();
  installRecorders();
  installAutogradMethods();
}
