// examples/lltm: the LLTM cell of PyTorch's C++/CUDA extension tutorial, on
// every device. The extension is built here (with nvcc even without a GPU:
// compile-only for sm_90) twice over, by gx.load (what lltm.ts uses) and by its
// setup.config.json; then its two ops, the three ways to differentiate the cell
// (registerAutograd on the forward op, LLTMFunction, the built-in-ops
// reference) against each other in float64, gradcheck, the ops' argument
// checks, and a few steps of training; no tensor left behind.
import test, { type ExecutionContext } from 'ava';
import * as fs from 'fs';
import * as path from 'path';

import * as gx from '../lib';
import { build, type BuildResult } from '../lib/toolkit/build';
import {
  LLTM, LLTM_SCHEMAS, LLTMFunction, loadLltm, lltmForward, lltmFunction, lltmReference, useLltmOps, type LltmImpl, type LltmOps,
} from '../examples/lltm/lltm';
import { deviceTestSerial, type TestDevice } from './helpers';

const root = path.resolve(__dirname, '../..');
const example = path.join(root, 'examples/lltm');
// The archs for the .cu build: the local GPU's, else one real arch (compile-only on CI).
const arch = gx.cuda.isAvailable() ? 'native' : 'sm_90';

let ops: LltmOps;
let cliBuild: BuildResult;

test.before(async () => {
  fs.rmSync(path.join(example, 'build'), { recursive: true, force: true });  // so the build links, and describes the ops
  [ops, cliBuild] = await Promise.all([loadLltm({ arch }), build({ config: path.join(example, 'setup.config.json'), arch })]);
});

type Float = 'float32' | 'float64';

/** The five operands of a cell of batch B, F input features and state size S, drawn from `seed`. */
function operands(B: number, F: number, S: number, dtype: Float, device: TestDevice, seed: number): gx.Tensor[] {
  const generator = new gx.Generator(seed);
  const o = { dtype, device, generator };
  const stdv = 1 / Math.sqrt(S);
  return [
    gx.randn([B, F], o), gx.uniform(-stdv, stdv, [3 * S, F + S], o), gx.uniform(-stdv, stdv, [3 * S], o), gx.randn([B, S], o),
    gx.randn([B, S], o),
  ];
}

/** max |a - b| / max(1, max |b|). */
function relErr(a: gx.Tensor, b: gx.Tensor): number {
  return gx.noGrad(() => gx.tidy(() => {
    const diff = Number(gx.max(gx.abs(gx.sub(a, b))).item());
    return b.numel === 0 ? diff : diff / Math.max(1, Number(gx.max(gx.abs(b)).item()));
  }));
}

function close(t: ExecutionContext, a: gx.Tensor, b: gx.Tensor, tol: number, what: string): void {
  t.deepEqual(a.shape, b.shape, `${what}: shape`);
  const e = a.numel === 0 ? 0 : relErr(a, b);
  t.true(e <= tol, `${what}: relative error ${e} > ${tol}`);
}

const TOL: Record<Float, number> = { float64: 1e-12, float32: 2e-5 };
const IMPLS: LltmImpl[] = ['op', 'function'];
const cellOf = (impl: LltmImpl): typeof lltmForward => (impl === 'op' ? lltmForward : impl === 'function' ? lltmFunction : lltmReference);

test('examples/lltm: setup.config.json builds the extension, with the schemas lltm.ts declares and both devices', (t) => {
  const normal = (s: string): string => s.replace(/\s+/g, ' ').replace(/\s*([(),=?>-])\s*/g, '$1').trim();
  const desc = cliBuild.descriptor;
  t.truthy(desc, 'built and described now');
  t.deepEqual(desc?.ops.map((o) => normal(o.schema)), LLTM_SCHEMAS.map(normal));
  for (const o of desc?.ops ?? []) t.deepEqual([...o.devices].sort(), ['cpu', 'cuda'], o.name);
  const dts = fs.readFileSync(path.join(example, 'build/lltm.d.ts'), 'utf8');
  t.regex(dts, /export declare function lltmForwardElementwise\(gates: Tensor, old_cell: Tensor\): \[Tensor, Tensor, Tensor, Tensor, Tensor\];/);
  t.regex(dts, /grad_candidate_cell\?: Tensor \| null\): \[Tensor, Tensor\];/);
  t.notThrows(() => useLltmOps(ops), 'the same ops again: nothing to do');
  t.throws(() => useLltmOps({ ...ops }), { message: /already loaded/ });
});

deviceTestSerial('examples/lltm: the forward op, lltmForward, LLTMFunction and LLTM match the built-in-ops reference', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  for (const dtype of ['float64', 'float32'] as const) {
    for (const [B, F, S] of [[3, 4, 5], [7, 13, 33], [1, 1, 1], [2, 3, 300]]) {
      gx.tidy(() => {
        const what = `${dtype} B=${B} F=${F} S=${S}`;
        const [x, w, b, h, c] = operands(B, F, S, dtype, device, B * 1000 + S);
        const want = lltmReference(x, w, b, h, c, { intermediates: true });
        // The op alone, on the reference's gates: all five outputs.
        const gates = gx.add(gx.matmul(gx.cat([h, x], 1), w.transpose(0, 1)), b);
        const got = ops.lltmForwardElementwise(gates, c);
        ['new_h', 'new_cell', 'input_gate', 'output_gate', 'candidate_cell'].forEach((name, i) => {
          t.is(got[i].device.type, device);
          t.is(got[i].dtype, dtype);
          close(t, got[i], want[i], TOL[dtype], `${what} op ${name}`);
        });
        for (const impl of IMPLS) {
          const [newH, newCell] = cellOf(impl)(x, w, b, h, c);
          close(t, newH, want[0], TOL[dtype], `${what} ${impl} new_h`);
          close(t, newCell, want[1], TOL[dtype], `${what} ${impl} new_cell`);
          t.false(newH.requiresGrad, 'nothing requires grad: nothing recorded');
        }
        const [fh, fc] = LLTMFunction.apply(x, w, b, h, c);
        close(t, fh, want[0], TOL[dtype], `${what} LLTMFunction.apply new_h`);
        close(t, fc, want[1], TOL[dtype], `${what} LLTMFunction.apply new_cell`);
      });
    }
  }
  // The module: its parameters' shapes and range, and its three cells agreeing.
  gx.tidy(() => {
    using cell = new LLTM(6, 10, { dtype: 'float64', device, generator: new gx.Generator(7) });
    t.deepEqual(cell.weights.shape, [30, 16]);
    t.deepEqual(cell.bias.shape, [30]);
    t.true(cell.weights.requiresGrad && cell.bias.requiresGrad && cell.weights.isLeaf);
    t.true(Number(gx.max(gx.abs(cell.weights)).item()) <= 1 / Math.sqrt(10));
    const [x, , , h, c] = operands(4, 6, 10, 'float64', device, 3);
    cell.impl = 'reference';
    const [rh, rc] = cell.forward(x, [h, c]);
    for (const impl of IMPLS) {
      cell.impl = impl;
      const [nh, nc] = cell.forward(x, [h, c]);
      t.is(nh.gradFn, impl === 'op' ? 'lltmForwardElementwise' : 'LLTMFunction');
      close(t, nh, rh, 1e-12, `LLTM ${impl} new_h`);
      close(t, nc, rc, 1e-12, `LLTM ${impl} new_cell`);
    }
  });
  // An empty batch runs no kernel and returns empty results.
  gx.tidy(() => {
    const [x, w, b, h, c] = operands(0, 3, 4, 'float64', device, 1);
    const [nh, nc] = lltmFunction(x, w, b, h, c);
    t.deepEqual([nh.shape, nc.shape], [[0, 4], [0, 4]]);
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

/** The gradients of the five operands (those in `need`; null elsewhere) of loss = sum(newH^T * wh^T) + sum(newCell * wc). */
function gradients(cell: typeof lltmForward, inputs: gx.Tensor[], need: boolean[], wh: gx.Tensor, wc: gx.Tensor | null): (gx.Tensor | null)[] {
  return gx.tidy(() => {
    const leaves = inputs.map((x, i) => (need[i] ? x.detach().requiresGrad_() : x));
    const [newH, newCell] = cell(leaves[0], leaves[1], leaves[2], leaves[3], leaves[4]);
    // Through a transpose, so the gradient of newH reaches the cell as a non-contiguous view.
    let loss = gx.sum(gx.mul(gx.transpose(newH, 0, 1), gx.transpose(wh, 0, 1)));
    if (wc !== null) loss = gx.add(loss, gx.sum(gx.mul(newCell, wc)));
    loss.backward();
    return leaves.map((l, i) => (need[i] ? (l.grad as gx.Tensor).clone() : null));
  });
}

deviceTestSerial('examples/lltm: the gradients of all five operands match the reference\'s, through either registration', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const names = ['input', 'weights', 'bias', 'oldH', 'oldCell'];
  for (const dtype of ['float64', 'float32'] as const) {
    for (const [B, F, S] of [[3, 4, 5], [9, 17, 40]]) {
      gx.tidy(() => {
        const inputs = operands(B, F, S, dtype, device, 77 + S);
        const g = new gx.Generator(5);
        const wh = gx.randn([B, S], { dtype, device, generator: g });
        const wc = gx.randn([B, S], { dtype, device, generator: g });
        for (const [need, useCell] of [[[true, true, true, true, true], true], [[false, true, false, false, true], false],
          [[true, false, true, true, false], true]] as [boolean[], boolean][]) {
          const what = `${dtype} B=${B} F=${F} S=${S} need=${need.map(Number).join('')}${useCell ? '' : ' (newCell unused)'}`;
          const want = gradients(lltmReference, inputs, need, wh, useCell ? wc : null);
          for (const impl of IMPLS) {
            const got = gradients(cellOf(impl), inputs, need, wh, useCell ? wc : null);
            got.forEach((gi, i) => {
              if (!need[i]) return;
              close(t, gi as gx.Tensor, want[i] as gx.Tensor, 10 * TOL[dtype], `${what} ${impl} d${names[i]}`);
            });
          }
        }
      });
    }
  }
  // Gates at exactly 0 (elu's kink: derivative 1 from both sides here), tiny negatives, and saturating magnitudes.
  gx.tidy(() => {
    const S = 8;
    const x = gx.zeros([2, 3], { dtype: 'float64', device });
    const w = gx.zeros([3 * S, 3 + S], { dtype: 'float64', device });
    const bias = [0, -1e-20, 1e-20, -30, 30, -700, 0.5, -0.5];
    const b = gx.tensor([...bias, ...bias.map((v) => -v), ...bias], { dtype: 'float64', device });
    const h = gx.zeros([2, S], { dtype: 'float64', device });
    const c = gx.tensor(Array.from({ length: 2 * S }, (_, i) => (i % 3) - 1), { dtype: 'float64', device }).reshape(2, S);
    const wh = gx.ones([2, S], { dtype: 'float64', device });
    const need = [true, true, true, true, true];
    const want = gradients(lltmReference, [x, w, b, h, c], need, wh, wh);
    for (const impl of IMPLS) {
      const got = gradients(cellOf(impl), [x, w, b, h, c], need, wh, wh);
      got.forEach((gi, i) => close(t, gi as gx.Tensor, want[i] as gx.Tensor, 1e-12, `extreme gates ${impl} d${names[i]}`));
    }
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('examples/lltm: gradcheck (float64, B=3 F=4 S=5) of lltmForward, LLTMFunction and the forward op\'s five outputs', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const inputs = operands(3, 4, 5, 'float64', device, 11).map((x) => x.requiresGrad_());
    const cell = (impl: LltmImpl) => (...a: gx.Tensor[]): gx.Tensor[] => cellOf(impl)(a[0], a[1], a[2], a[3], a[4]);
    for (const impl of IMPLS) {
      const r = gx.autograd.gradcheck(cell(impl), inputs);
      t.true(r.ok && r.worstExcess <= 1e-5, `${impl}: ${JSON.stringify(r)}`);
    }
    // The op on its own: the registered gradient is its whole Jacobian, through the three gates it returns too.
    const gates = gx.noGrad(() => gx.add(gx.matmul(gx.cat([inputs[3], inputs[0]], 1), inputs[1].transpose(0, 1)), inputs[2])).requiresGrad_();
    const r = gx.autograd.gradcheck((g, c) => ops.lltmForwardElementwise(g, c), [gates, inputs[4]]);
    t.true(r.ok, JSON.stringify(r));
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('examples/lltm: the ops check their arguments, naming the op and the argument', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const f64 = { dtype: 'float64', device } as const;
    const gates = gx.zeros([3, 15], f64);
    const cell = gx.zeros([3, 5], f64);
    const fwd = /^lltm::lltm_forward_elementwise: /;
    const bwd = /^lltm::lltm_backward_elementwise: /;
    const msg = (op: RegExp, rest: string): RegExp => new RegExp(op.source + rest);
    t.throws(() => ops.lltmForwardElementwise(gx.zeros([3, 14], f64), cell), { message: msg(fwd, 'gates: expected shape \\[B, 15\\] \\(three gates of the state size 5\\), got \\[3, 14\\]') });
    t.throws(() => ops.lltmForwardElementwise(gates, gx.zeros([4, 5], f64)), { message: msg(fwd, 'old_cell: expected shape \\[3, 5\\], got \\[4, 5\\]') });
    t.throws(() => ops.lltmForwardElementwise(gates, gx.zeros([15], f64)), { message: msg(fwd, 'old_cell: expected a 2-d tensor \\[B, S\\], got shape \\[15\\]') });
    t.throws(() => ops.lltmForwardElementwise(gates.astype('float16'), cell.astype('float16')), { message: msg(fwd, 'gates: expected float32 or float64, got float16') });
    t.throws(() => ops.lltmForwardElementwise(gates, cell.astype('float32')), { message: msg(fwd, 'old_cell: expected float64 \\(the dtype of gates\\), got float32') });
    t.throws(() => ops.lltmForwardElementwise(gates, gx.zeros([5, 3], f64).transpose(0, 1)), { message: msg(fwd, 'old_cell: expected a contiguous tensor \\(call .contiguous\\(\\)\\)') });
    t.throws(() => ops.lltmForwardElementwise(gx.zeros([15, 3], f64).transpose(0, 1), cell), { message: msg(fwd, 'gates: expected a contiguous tensor') });
    const [, nc, ig, og, cc] = ops.lltmForwardElementwise(gates, cell);
    t.throws(() => ops.lltmBackwardElementwise(gx.zeros([3, 4], f64), cell, nc, ig, og, cc, gates), { message: msg(bwd, 'grad_h: expected shape \\[3, 5\\], got \\[3, 4\\]') });
    t.throws(() => ops.lltmBackwardElementwise(cell, cell, nc, ig, og, cc, gates, null, cell.astype('float32')), { message: msg(bwd, 'grad_output_gate: expected float64 \\(the dtype of gates\\), got float32') });
    t.throws(() => ops.lltmBackwardElementwise(cell, cell, nc, ig, og, cc, gx.zeros([3, 5], f64)), { message: msg(bwd, 'gate_weights: expected shape \\[B, 15\\]') });
    const [dGates, dOldCell] = ops.lltmBackwardElementwise(cell, cell, nc, ig, og, cc, gates, null, null, cell);
    t.deepEqual([dGates.shape, dOldCell.shape], [[3, 15], [3, 5]]);
    if (device === 'cuda') {
      t.throws(() => ops.lltmForwardElementwise(gates, gx.zeros([3, 5], { dtype: 'float64' })), { message: /cuda|cpu|device/ });
    }
    // The TypeScript cells check the operands' shapes against each other first.
    const [x, w, b, h, c] = operands(3, 4, 5, 'float64', device, 1);
    t.throws(() => lltmForward(x, w.transpose(0, 1), b, h, c), { instanceOf: RangeError, message: 'lltmForward: weights must be [15, 9] for input [3, 4] and state size 5, got [9, 15]' });
    t.throws(() => lltmFunction(x, w, gx.zeros([1, 15], f64), h, c), { message: /^lltmFunction: bias must be \[15\]/ });
    t.throws(() => lltmReference(x, w, b, gx.zeros([2, 5], f64), c), { message: /^lltmReference: oldH must be \[3, 5\]/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('examples/lltm: SGD on the LLTM module fits a target, each cell taking the reference\'s steps', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const [B, F, S, steps, lr] = [6, 4, 8, 40, 0.5];
  const data = operands(B, F, S, 'float64', device, 21);
  const [x, , , h, c] = data;
  const target = gx.uniform(-0.5, 0.5, [B, S], { dtype: 'float64', device, generator: new gx.Generator(22) });
  const curves = new Map<LltmImpl, number[]>();
  for (const impl of ['reference', ...IMPLS] as LltmImpl[]) {
    using cell = new LLTM(F, S, { dtype: 'float64', device, impl, generator: new gx.Generator(23) });
    const losses: number[] = [];
    for (let i = 0; i < steps; i++) {
      losses.push(gx.tidy(() => {
        cell.zeroGrad();
        const [newH] = cell.forward(x, [h, c]);
        const loss = gx.mean(gx.mul(gx.sub(newH, target), gx.sub(newH, target)));
        loss.backward();
        cell.sgdStep(lr);
        return Number(loss.item());
      }));
    }
    cell.zeroGrad();
    curves.set(impl, losses);
    t.true(losses[steps - 1] < 0.5 * losses[0], `${impl}: loss ${losses[0]} -> ${losses[steps - 1]}`);
    t.true(losses.every((l, i) => i === 0 || l <= losses[i - 1] + 1e-12), `${impl}: the loss never rises (${losses.join(', ')})`);
  }
  const ref = curves.get('reference') as number[];
  for (const impl of IMPLS) {
    const worst = Math.max(...(curves.get(impl) as number[]).map((l, i) => Math.abs(l - ref[i]) / ref[i]));
    t.true(worst < 1e-10, `${impl}: losses differ from the reference's by ${worst} (relative)`);
  }
  for (const v of [...data, target]) v.dispose();
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});
