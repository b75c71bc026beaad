// LLTM written as extension-cpp's C++ author wrote it (ops/lltm.cpp: forward
// and backward from the built-in ops, called from C++ through <gpuext/ops.h>),
// and its autograd Function, as extension-cpp's Python LLTMFunction:
//
//   const ops = await loadLltmCpp();                      // builds ops/ on first use (gx.load)
//   const [h, c] = LLTMCppFunction.apply(x, w, b, h0, c0);  // then gx.sum(h).backward() ...
//
// examples/lltm/ is the same cell with its elementwise part as fused kernels
// and its matrix products in TypeScript; test/lltm-cpp.test.ts checks the two
// against each other.
import * as fs from 'fs';
import * as path from 'path';

import * as gx from '../../lib';

/** The ops' schemas, as in ops/lltm.cpp's m.def() lines (gx.load checks them). */
export const LLTM_CPP_SCHEMAS = [
  'lltm_forward(Tensor input, Tensor weights, Tensor bias, Tensor old_h, Tensor old_cell) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)',
  'lltm_backward(Tensor grad_h, Tensor grad_cell, Tensor new_cell, Tensor input_gate, Tensor output_gate, Tensor candidate_cell, Tensor X, Tensor gate_weights, Tensor weights) -> (Tensor, Tensor, Tensor, Tensor, Tensor)',
] as const;

export type LltmCppOps = gx.OpsOf<typeof LLTM_CPP_SCHEMAS>;

/** The extension's sources: beside this file, or (compiled into dist/examples/lltm-cpp) in the repository's. */
export const LLTM_CPP_SOURCE = [path.join(__dirname, 'ops/lltm.cpp'), path.resolve(__dirname, '../../../examples/lltm-cpp/ops/lltm.cpp')]
  .find((f) => fs.existsSync(f)) ?? path.join(__dirname, 'ops/lltm.cpp');

let loading: Promise<LltmCppOps> | undefined;
let current: LltmCppOps | undefined;

/** Builds the extension on first use (gx.load) and returns its ops; LLTMCppFunction needs it to have run. */
export function loadLltmCpp(options: { buildDirectory?: string; verbose?: boolean } = {}): Promise<LltmCppOps> {
  loading ??= gx.load({ name: 'lltm_cpp', sources: [LLTM_CPP_SOURCE], schemas: LLTM_CPP_SCHEMAS, ...options }).then((ops) => {
    current = ops;
    return ops;
  }, (e: unknown) => {
    loading = undefined;  // a failed build may be retried
    throw e;
  });
  return loading;
}

function lltmCppOps(): LltmCppOps {
  if (current === undefined) throw new Error('the C++ LLTM ops are not loaded: await loadLltmCpp() first');
  return current;
}

/**
 * The cell as one autograd node (extension-cpp's LLTMFunction): forward saves
 * what lltm_backward takes; backward returns the gradients of input, weights,
 * bias, old_h and old_cell. Returns [newH, newCell].
 */
export class LLTMCppFunction extends gx.autograd.Function {
  static override forward(ctx: gx.autograd.FunctionContext, input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor,
    oldCell: gx.Tensor): gx.Tensor[] {
    const [newH, newCell, inputGate, outputGate, candidateCell, X, gateWeights] = lltmCppOps().lltmForward(input, weights, bias, oldH, oldCell);
    ctx.saveForBackward(newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights);
    return [newH, newCell];
  }

  static override backward(ctx: gx.autograd.FunctionContext, gradH: gx.Tensor, gradCell: gx.Tensor): (gx.Tensor | null)[] {
    const [newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights] = ctx.savedTensors;
    const [dOldH, dInput, dWeights, dBias, dOldCell] = lltmCppOps().lltmBackward(gradH, gradCell, newCell, inputGate, outputGate,
      candidateCell, X, gateWeights, weights);
    return [dInput, dWeights, dBias.reshape([dBias.numel]), dOldH, dOldCell];
  }
}
