// npm run bench:autograd: the tape's overhead (issue 17's anchor: a chain of
// 100 one-element multiplications, forward + backward, per op; and forward
// only under noGrad) side by side with torch in the same call
// (bench/torch_autograd.py). On a machine without a GPU both run on the CPU.
import * as path from 'path';

import * as gx from '../lib';
import { fmt, median, nowNs, elapsedNs, REPO, runPythonJson, section } from './util';

function perOpUs(f: () => void, sync: () => void, reps = 200, chain = 100): number {
  for (let i = 0; i < 50; i++) f();
  sync();
  const s: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = nowNs();
    f();
    sync();
    s.push(elapsedNs(t0) / 1e3 / chain);
  }
  return median(s);
}

function main(): void {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  const sync = device === 'cuda' ? (): void => gx.cuda.synchronize() : (): void => undefined;
  const live = gx.memory.stats(device).liveTensors;
  using x = gx.tensor([1.0001], { device }).requiresGrad_();
  using c = gx.tensor([0.9999], { device });
  const step = (): void => {
    gx.tidy(() => {
      let y = x;
      for (let i = 0; i < 100; i++) y = gx.mul(y, c);
      y.backward();
    });
    x.grad = null;
  };
  const fwd = (): void => gx.noGrad(() => gx.tidy(() => {
    let y = x;
    for (let i = 0; i < 100; i++) y = gx.mul(y, c);
  }));
  const tape = perOpUs(step, sync);
  const forward = perOpUs(fwd, sync);
  const leaked = gx.memory.stats(device).liveTensors - live - 2;
  const py = runPythonJson(path.join(REPO, 'bench', 'torch_autograd.py'), [], 600_000);
  const t = py.ok ? py.o : undefined;
  const tTape = typeof t?.tape_us === 'number' ? t.tape_us : undefined;
  const tFwd = typeof t?.forward_us === 'number' ? t.forward_us : undefined;
  section('summary');
  console.log(`  tape, 100 one-element multiplications forward + backward on ${device}: ${fmt(tape, 2)} us per op vs torch ${fmt(tTape, 2)} us = ` +
    `${tTape === undefined ? `n/a (python: ${py.ok ? JSON.stringify(py.o) : py.error})` : `${fmt(tape / tTape, 3)}x (target <= 0.5: ${tape / tTape <= 0.5 ? 'met' : 'MISSED'})`}`);
  console.log(`  forward only (noGrad): ${fmt(forward, 2)} us per op vs torch ${fmt(tFwd, 2)} us${tFwd === undefined ? '' : ` = ${fmt(forward / tFwd, 3)}x`}; tensors left behind: ${leaked}`);
}

main();
