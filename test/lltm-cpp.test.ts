// examples/lltm-cpp: extension-cpp's lltm.cpp ported to gpuext (its ops call
// the built-in ops from C++ through <gpuext/ops.h>), built by gx.load, checked
// on every device against the TypeScript LLTM made of built-in ops
// (examples/lltm's lltmReference) in float64: the forward's seven outputs,
// the backward's five gradients against autograd's, and gradcheck of the
// autograd Function around the two ops.
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { lltmReference } from '../examples/lltm/lltm';
import { LLTMCppFunction, loadLltmCpp, type LltmCppOps } from '../examples/lltm-cpp/lltm-cpp';
import { deviceTestSerial, type TestDevice } from './helpers';

let ops: LltmCppOps;

test.before(async () => {
  ops = await loadLltmCpp({ buildDirectory: fs.mkdtempSync(path.join(os.tmpdir(), 'gx-lltm-cpp-')) });
});

/** input [B, F], weights [3S, F + S], bias [3S], old_h and old_cell [B, S], drawn from `seed`. */
function operands(B: number, F: number, S: number, device: TestDevice, seed: number): gx.Tensor[] {
  const o = { dtype: 'float64' as const, device, generator: new gx.Generator(seed) };
  const stdv = 1 / Math.sqrt(S);
  return [gx.randn([B, F], o), gx.uniform(-stdv, stdv, [3 * S, F + S], o), gx.uniform(-stdv, stdv, [3 * S], o), gx.randn([B, S], o),
    gx.randn([B, S], o)];
}

/** max |a - b| / max(1, max |b|) <= 1e-12, shapes equal. */
function close(t: ExecutionContext, a: gx.Tensor | null, b: gx.Tensor | null, what: string): void {
  if (a === null || b === null) {
    t.fail(`${what}: missing (${a === null ? 'C++' : 'reference'})`);
    return;
  }
  t.deepEqual(a.shape, b.shape, `${what}: shape`);
  const err = gx.noGrad(() => gx.tidy(() => Number(gx.max(gx.abs(gx.sub(a, b))).item()) / Math.max(1, Number(gx.max(gx.abs(b)).item()))));
  t.true(err <= 1e-12, `${what}: relative error ${err}`);
}

const SIZES = [[3, 4, 5], [7, 13, 33], [1, 1, 1], [2, 3, 64]];

deviceTestSerial('examples/lltm-cpp: lltm_forward matches the TypeScript LLTM in float64, all seven outputs', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  for (const [B, F, S] of SIZES) {
    gx.tidy(() => {
      const what = `B=${B} F=${F} S=${S}`;
      const [x, w, b, h, c] = operands(B, F, S, device, B * 100 + S);
      const got = ops.lltmForward(x, w, b, h, c);
      t.is(got.length, 7);
      for (const g of got) {
        t.is(g.device.type, device);
        t.is(g.dtype, 'float64');
      }
      const want = lltmReference(x, w, b, h, c, { intermediates: true });
      ['new_h', 'new_cell', 'input_gate', 'output_gate', 'candidate_cell'].forEach((name, i) => close(t, got[i], want[i], `${what} ${name}`));
      const X = gx.cat([h, x], 1);
      close(t, got[5], X, `${what} X`);
      close(t, got[6], gx.add(gx.matmul(X, w.transpose(0, 1)), b), `${what} gate_weights`);
    });
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('examples/lltm-cpp: lltm_backward gives the gradients autograd gives the TypeScript LLTM (float64)', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  for (const [B, F, S] of SIZES) {
    gx.tidy(() => {
      const what = `B=${B} F=${F} S=${S}`;
      const gen = { dtype: 'float64' as const, device, generator: new gx.Generator(7 + S) };
      const [gH, gC] = [gx.randn([B, S], gen), gx.randn([B, S], gen)];
      const grads = (cell: (...a: gx.Tensor[]) => gx.Tensor[]): (gx.Tensor | null)[] => {
        const inputs = operands(B, F, S, device, B * 100 + S).map((v) => v.requiresGrad_());
        const [newH, newCell] = cell(...inputs);
        gx.add(gx.sum(gx.mul(newH, gH)), gx.sum(gx.mul(newCell, gC))).backward();
        return inputs.map((v) => v.grad);
      };
      const want = grads((x, w, b, h, c) => lltmReference(x, w, b, h, c));
      const got = grads((x, w, b, h, c) => LLTMCppFunction.apply(x, w, b, h, c));
      ['input', 'weights', 'bias', 'old_h', 'old_cell'].forEach((name, i) => close(t, got[i], want[i], `${what} d_${name}`));
    });
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('examples/lltm-cpp: gradcheck of the autograd Function around lltm_forward and lltm_backward', (t, device) => {
  gx.tidy(() => {
    const inputs = operands(2, 3, 4, device, 11).map((v) => v.requiresGrad_());
    const report = gx.autograd.gradcheck((x, w, b, h, c) => LLTMCppFunction.apply(x, w, b, h, c), inputs);
    t.true(report.ok, `worst excess ${report.worstExcess}`);
  });
});

deviceTestSerial('examples/lltm-cpp: an error inside the C++ op names the op and the gx::ops call', (t, device) => {
  gx.tidy(() => {
    const [x, w, b, h, c] = operands(2, 3, 4, device, 12);
    t.throws(() => ops.lltmForward(x, w.narrow(1, 0, 5), b, h, c), {
      message: /^lltm_cpp::lltm_forward: gx::ops::matmul: inner dimensions differ: \[2, 7\] @ \[5, 12\]/,
    });
  });
});
