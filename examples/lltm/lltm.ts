// LLTM, the recurrent cell of PyTorch's "Custom C++ and CUDA Extensions"
// tutorial (pytorch/extension-cpp), as a gpuext extension with autograd.
//
// The cell, for input [B, F], weights [3S, F + S], bias [3S], old_h and
// old_cell [B, S]:
//   X = [old_h, input];  gates = X @ weights^T + bias               (gx.cat, gx.matmul)
//   input_gate = sigmoid(gates[:, :S]), output_gate = sigmoid(gates[:, S:2S]),
//   candidate_cell = elu(gates[:, 2S:]);
//   new_cell = old_cell + candidate_cell * input_gate;  new_h = tanh(new_cell) * output_gate
// The matrix products are gpuext's own (gx.matmul); the elementwise rest, and
// its backward, are the extension's fused kernels (ops/lltm.cu, ops/lltm.cpp).
//
// Three ways to differentiate it, all giving the same gradients:
//   - lltmForward: gx.cat + gx.matmul + the op lltm_forward_elementwise, whose
//     gradient is registered with gx.autograd.registerAutograd: autograd
//     differentiates the matmul and the cat itself (op-level registration,
//     torch.library.register_autograd's way);
//   - LLTMFunction: a gx.autograd.Function whose forward and backward call the
//     ops and the matmuls, as extension-cpp's LLTMFunction (the tutorial's way);
//   - lltmReference: gpuext's built-in ops only, differentiated op by op.
//
//   const ops = await loadLltm();              // builds ops/ on first use (gx.load), then cached
//   using cell = new LLTM(32, 128, { device: 'cuda' });
//   const [h, c] = cell.forward(x, [h0, c0]);  // then gx.sum(h).backward(): cell.weights.grad, ...
import * as fs from 'fs';
import * as path from 'path';

import * as gx from '../../lib';

/**
 * The ops' schemas, as in ops/lltm.cu's m.def() lines (gx.load checks them
 * against the extension); one literal each, so OpsOf can read them.
 */
export const LLTM_SCHEMAS = [
  'lltm_forward_elementwise(Tensor gates, Tensor old_cell) -> (Tensor new_h, Tensor new_cell, Tensor input_gate, Tensor output_gate, Tensor candidate_cell)',
  'lltm_backward_elementwise(Tensor grad_h, Tensor grad_cell, Tensor new_cell, Tensor input_gate, Tensor output_gate, Tensor candidate_cell, Tensor gate_weights, Tensor? grad_input_gate=None, Tensor? grad_output_gate=None, Tensor? grad_candidate_cell=None) -> (Tensor d_gates, Tensor d_old_cell)',
] as const;

/** The extension's ops, typed from their schemas. */
export type LltmOps = gx.OpsOf<typeof LLTM_SCHEMAS>;

/** The extension's source directory: beside this file, or (compiled into dist/examples/lltm) in the repository's examples/lltm. */
export const LLTM_SOURCE_DIR = [path.join(__dirname, 'ops'), path.resolve(__dirname, '../../../examples/lltm/ops')]
  .find((d) => fs.existsSync(path.join(d, 'lltm.cu'))) ?? path.join(__dirname, 'ops');

export interface LoadLltmOptions {
  /** CUDA archs to build for (gx.load's arch: "native" by default; "sm_90" builds without a GPU). */
  arch?: string;
  /** Where the build goes (gx.load's default: the gpuext cache). */
  buildDirectory?: string;
  /** Print the build's commands and compiler output. */
  verbose?: boolean;
}

let loading: Promise<LltmOps> | undefined;
let current: LltmOps | undefined;

/**
 * Builds the extension on first use (gx.load: later calls, in this process or
 * another, run no compiler), registers the gradient of lltm_forward_elementwise,
 * and returns the ops. Every function of this module needs it to have run.
 */
export function loadLltm(options: LoadLltmOptions = {}): Promise<LltmOps> {
  loading ??= gx.load({
    name: 'lltm',
    sources: [path.join(LLTM_SOURCE_DIR, 'lltm.cu'), path.join(LLTM_SOURCE_DIR, 'lltm.cpp')],
    schemas: LLTM_SCHEMAS,
    ...options,
  }).then((ops) => {
    useLltmOps(ops);
    return ops;
  }, (e: unknown) => {
    loading = undefined;  // a failed build may be retried
    throw e;
  });
  return loading;
}

/**
 * Uses ops loaded another way, e.g. the module `gpuext build --config
 * examples/lltm/setup.config.json` generates (examples/lltm/build/lltm.js),
 * instead of loadLltm's.
 */
export function useLltmOps(ops: LltmOps): void {
  if (current === ops) return;
  if (current !== undefined) throw new Error('useLltmOps: the LLTM ops are already loaded (one extension named lltm per process)');
  registerLltmAutograd(ops);
  current = ops;
}

/** The loaded ops. */
export function lltmOps(): LltmOps {
  if (current === undefined) throw new Error('the LLTM ops are not loaded: await loadLltm() first');
  return current;
}

/** `t` itself when contiguous, else a contiguous copy: gradients may arrive as views (of a sum's broadcast, say). */
const contiguous = (t: gx.Tensor): gx.Tensor => (t.isContiguous() ? t : t.contiguous());

/**
 * The gradient of lltm_forward_elementwise (torch.library.register_autograd's
 * shape): it saves its input gates and its outputs, and its backward is the op
 * lltm_backward_elementwise. The gradients of all five outputs go in (those of
 * the gates are zeros unless the caller used them), so the registered
 * gradient is the op's whole Jacobian, not only through new_h and new_cell.
 */
function registerLltmAutograd(ops: LltmOps): void {
  gx.autograd.registerAutograd(ops.lltmForwardElementwise, {
    setupContext(ctx, inputs, output) {
      const [gates] = inputs as [gx.Tensor, gx.Tensor];
      const [, newCell, inputGate, outputGate, candidateCell] = output as gx.Tensor[];
      ctx.saveForBackward(newCell, inputGate, outputGate, candidateCell, gates);
    },
    backward(ctx, gradH, gradCell, gradInputGate, gradOutputGate, gradCandidateCell) {
      const [newCell, inputGate, outputGate, candidateCell, gates] = ctx.savedTensors;
      const [dGates, dOldCell] = ops.lltmBackwardElementwise(contiguous(gradH), contiguous(gradCell), newCell, inputGate,
        outputGate, candidateCell, gates, contiguous(gradInputGate), contiguous(gradOutputGate), contiguous(gradCandidateCell));
      return [ctx.needsInputGrad[0] ? dGates : null, ctx.needsInputGrad[1] ? dOldCell : null];
    },
  });
}

/** The state size S after checking the five operands' shapes against each other (with `fn` in the message). */
function checkCell(fn: string, input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor, oldCell: gx.Tensor): number {
  const shape = (t: gx.Tensor): string => `[${t.shape.join(', ')}]`;
  if (input.ndim !== 2) throw new RangeError(`${fn}: input must be [batch, features], got ${shape(input)}`);
  if (oldCell.ndim !== 2) throw new RangeError(`${fn}: oldCell must be [batch, state], got ${shape(oldCell)}`);
  const [B, F] = input.shape;
  const S = oldCell.shape[1];
  const want: [string, gx.Tensor, number[]][] = [
    ['weights', weights, [3 * S, F + S]], ['bias', bias, [3 * S]], ['oldH', oldH, [B, S]], ['oldCell', oldCell, [B, S]],
  ];
  for (const [name, t, s] of want) {
    if (t.shape.length !== s.length || t.shape.some((n, i) => n !== s[i])) {
      throw new RangeError(`${fn}: ${name} must be [${s.join(', ')}] for input ${shape(input)} and state size ${S}, got ${shape(t)}`);
    }
  }
  return S;
}

/** X = [oldH, input] and gates = X @ weights^T + bias (what both forwards start with). */
function gatesOf(input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor): { X: gx.Tensor; gates: gx.Tensor } {
  const X = gx.cat([oldH, input], 1);
  const gates = gx.add(gx.matmul(X, weights.transpose(0, 1)), bias);
  return { X, gates };
}

/**
 * The cell through the op with a registered gradient: returns [newH, newCell].
 * Autograd records the cat, the matmul, the bias add and the op, so backward()
 * reaches every operand that requires grad.
 */
export function lltmForward(input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor, oldCell: gx.Tensor): [gx.Tensor, gx.Tensor] {
  const ops = lltmOps();
  checkCell('lltmForward', input, weights, bias, oldH, oldCell);
  return gx.tidy(() => {
    const { gates } = gatesOf(input, weights, bias, oldH);
    const [newH, newCell] = ops.lltmForwardElementwise(gates, oldCell);
    return [newH, newCell];
  });
}

/**
 * The cell as one autograd node, as extension-cpp's LLTMFunction: forward runs
 * the cat, the matmul and the forward op and saves what backward needs;
 * backward runs the backward op and the matmuls of the gradients. Call it
 * through lltmFunction (or inside gx.tidy): forward's intermediates are left to
 * the enclosing tidy once saved.
 */
export class LLTMFunction extends gx.autograd.Function {
  static override forward(ctx: gx.autograd.FunctionContext, input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor,
    oldCell: gx.Tensor): gx.Tensor[] {
    const { X, gates } = gatesOf(input, weights, bias, oldH);
    const [newH, newCell, inputGate, outputGate, candidateCell] = lltmOps().lltmForwardElementwise(gates, oldCell);
    ctx.saveForBackward(newCell, inputGate, outputGate, candidateCell, X, gates, weights);
    return [newH, newCell];
  }

  static override backward(ctx: gx.autograd.FunctionContext, gradH: gx.Tensor, gradCell: gx.Tensor): (gx.Tensor | null)[] {
    const [newCell, inputGate, outputGate, candidateCell, X, gates, weights] = ctx.savedTensors;
    const [needInput, needWeights, needBias, needOldH, needOldCell] = ctx.needsInputGrad;
    const [dGates, dOldCell] = lltmOps().lltmBackwardElementwise(contiguous(gradH), contiguous(gradCell), newCell, inputGate,
      outputGate, candidateCell, gates);
    const S = newCell.shape[1];
    const dX = needInput || needOldH ? gx.matmul(dGates, weights) : null;
    return [
      needInput && dX !== null ? gx.narrow(dX, 1, S, dX.shape[1] - S) : null,
      needWeights ? gx.matmul(dGates.transpose(0, 1), X) : null,
      needBias ? gx.sum(dGates, 0) : null,
      needOldH && dX !== null ? gx.narrow(dX, 1, 0, S) : null,
      needOldCell ? dOldCell : null,
    ];
  }
}

/** LLTMFunction.apply in a tidy scope: returns [newH, newCell], every intermediate freed (or kept by the tape). */
export function lltmFunction(input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor, oldCell: gx.Tensor): [gx.Tensor, gx.Tensor] {
  lltmOps();
  checkCell('lltmFunction', input, weights, bias, oldH, oldCell);
  return gx.tidy(() => {
    const [newH, newCell] = LLTMFunction.apply(input, weights, bias, oldH, oldCell);
    return [newH, newCell];
  });
}

/**
 * elu with alpha = 1 from built-in ops: z where z > 0, else exp(z) - 1, its
 * derivative 1 at z = 0 from both sides. The exp sees 0 where z > 0, so a large
 * z makes no inf for where's backward to multiply by 0 (and not min(z, 0),
 * whose gradient splits in half at the tie z = 0).
 */
function elu(z: gx.Tensor): gx.Tensor {
  const positive = gx.noGrad(() => gx.gt(z, 0));
  return gx.where(positive, z, gx.sub(gx.exp(gx.where(positive, 0, z)), 1));
}

/**
 * The cell from gpuext's built-in ops only, differentiated by autograd op by
 * op: the reference the extension is checked against. Returns [newH, newCell];
 * with `intermediates`, also [inputGate, outputGate, candidateCell].
 */
export function lltmReference(input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor, oldCell: gx.Tensor): [gx.Tensor, gx.Tensor];
export function lltmReference(input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor, oldCell: gx.Tensor,
  options: { intermediates: true }): [gx.Tensor, gx.Tensor, gx.Tensor, gx.Tensor, gx.Tensor];
export function lltmReference(input: gx.Tensor, weights: gx.Tensor, bias: gx.Tensor, oldH: gx.Tensor, oldCell: gx.Tensor,
  options: { intermediates?: boolean } = {}): gx.Tensor[] {
  const S = checkCell('lltmReference', input, weights, bias, oldH, oldCell);
  return gx.tidy(() => {
    const { gates } = gatesOf(input, weights, bias, oldH);
    const inputGate = gx.sigmoid(gx.narrow(gates, 1, 0, S));
    const outputGate = gx.sigmoid(gx.narrow(gates, 1, S, S));
    const candidateCell = elu(gx.narrow(gates, 1, 2 * S, S));
    const newCell = gx.add(oldCell, gx.mul(candidateCell, inputGate));
    const newH = gx.mul(gx.tanh(newCell), outputGate);
    return options.intermediates === true ? [newH, newCell, inputGate, outputGate, candidateCell] : [newH, newCell];
  });
}

export type LltmImpl = 'function' | 'op' | 'reference';

export interface LLTMOptions {
  dtype?: 'float32' | 'float64';
  device?: gx.DeviceLike;
  /** Which cell forward() runs: LLTMFunction (default, as the tutorial), the op with a registered gradient, or the reference. */
  impl?: LltmImpl;
  /** Draws the initial parameters from this generator. */
  generator?: gx.Generator;
}

/**
 * The tutorial's LLTM module: weights [3S, F + S] and bias [3S], both
 * requiring grad, drawn uniformly from [-1/sqrt(S), 1/sqrt(S)).
 * `using` (or dispose()) frees the parameters and their gradients; make it
 * outside gx.tidy (or return it from the tidy), which would free them too.
 */
export class LLTM {
  readonly weights: gx.Tensor;
  readonly bias: gx.Tensor;
  impl: LltmImpl;

  constructor(readonly inputFeatures: number, readonly stateSize: number, options: LLTMOptions = {}) {
    const stdv = 1 / Math.sqrt(stateSize);
    const opts = { dtype: options.dtype ?? 'float32', device: options.device, generator: options.generator };
    this.weights = gx.uniform(-stdv, stdv, [3 * stateSize, inputFeatures + stateSize], opts).requiresGrad_();
    try {
      this.bias = gx.uniform(-stdv, stdv, [3 * stateSize], opts).requiresGrad_();
    } catch (e) {
      this.weights.dispose();
      throw e;
    }
    this.impl = options.impl ?? 'function';
  }

  parameters(): gx.Tensor[] {
    return [this.weights, this.bias];
  }

  /** One step of the cell: [newH, newCell] from input [B, F] and the state [h, c], each [B, S]. */
  forward(input: gx.Tensor, state: readonly [gx.Tensor, gx.Tensor]): [gx.Tensor, gx.Tensor] {
    const [h, c] = state;
    switch (this.impl) {
      case 'function': return lltmFunction(input, this.weights, this.bias, h, c);
      case 'op': return lltmForward(input, this.weights, this.bias, h, c);
      case 'reference': return lltmReference(input, this.weights, this.bias, h, c);
    }
  }

  /** Clears the parameters' gradients (disposing them). */
  zeroGrad(): void {
    for (const p of this.parameters()) p.grad = null;
  }

  /** Plain SGD: p -= lr * p.grad for each parameter with a gradient, outside autograd. */
  sgdStep(lr: number): void {
    gx.noGrad(() => {
      for (const p of this.parameters()) {
        const g = p.grad;
        if (g === null) continue;
        using step = gx.mul(g, lr);
        p.sub_(step);
      }
    });
  }

  dispose(): void {
    this.weights.dispose();
    this.bias.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
