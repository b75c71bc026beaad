// Where the time of the L-BFGS logistic regression goes (bench:autograd's
// regression, 10^6 x 100 float32 on the GPU): one loss-and-gradient
// evaluation and its parts, each timed alone (median of 20 after a warm-up,
// closed by a synchronize), and the fit itself with its evaluation count;
// torch times the same parts in the same call (bench/torch_glm_breakdown.py).
//   node dist/bench/glm-breakdown.js
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { logisticData, logisticFitOnly } from '../examples/glm';
import { fmt, perCallNs, REPO, runPythonJson, section } from './util';

/** Median milliseconds of f(), each call closed by sync(). */
const ms = (f: () => void, sync: () => void): number => perCallNs(f, 20, 1, { warmup: 3, sync }) / 1e6;

async function main(): Promise<void> {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  const sync = device === 'cuda' ? (): void => gx.cuda.synchronize() : (): void => undefined;
  const [n, d] = device === 'cuda' ? [1_000_000, 100] : [100_000, 20];
  const { z, y } = logisticData(device, n, d, 0, 'float32');
  const beta = gx.mul(gx.ones([d + 1, 1], { device }), 0.01).requiresGrad_();
  const g = gx.onesLike(y);
  const loss = (eta: gx.Tensor): gx.Tensor => gx.mean(gx.sub(gx.softplus(eta), gx.mul(y, eta)));
  const parts: Record<string, number> = {
    'z @ beta': ms(() => gx.noGrad(() => gx.matmul(z, beta).dispose()), sync),
    'z.T @ g': ms(() => gx.matmul(z.T, g).dispose(), sync),
    'loss on eta (noGrad)': ms(() => gx.noGrad(() => gx.tidy(() => { loss(gx.matmul(z, beta)); })), sync),
    'loss + backward': ms(() => gx.tidy(() => { loss(gx.matmul(z, beta)).backward(); beta.grad = null; }), sync),
    'loss + backward + item': ms(() => gx.tidy(() => { const l = loss(gx.matmul(z, beta)); l.backward(); l.item(); beta.grad = null; }), sync),
    'dot of 101 (sum(mul)) + item': ms(() => gx.tidy(() => gx.sum(gx.mul(beta, beta)).item()), sync),
  };
  logisticFitOnly(z, y);  // warm-up (the two-loop kernel compiles on first use)
  const fits = [0, 1, 2].map(() => logisticFitOnly(z, y)).sort((a, b) => a.ms - b.ms);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gx-glm-')), 'glm.npz');
  await gx.save(file, { z, y });
  const py = runPythonJson(path.join(REPO, 'bench', 'torch_glm_breakdown.py'), [file], 600_000);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  const t = (py.ok ? py.o : {}) as Record<string, number>;
  section('summary');
  for (const [k, v] of Object.entries(parts)) console.log(`  ${k.padEnd(32)} gpuext ${fmt(v, 3)} ms   torch ${fmt(t[k], 3)} ms`);
  console.log(`  fit: gpuext ${fmt(fits[1].ms)} ms, ${fits[1].iterations} iterations, ${fits[1].evaluations} evaluations; torch ${fmt(t.fit_ms)} ms, ${String(t.fit_iterations)} iterations, ${String(t.fit_evals)} evaluations` +
    `${py.ok ? '' : ` (python: ${py.error})`}`);
  z.dispose(); y.dispose(); beta.dispose(); g.dispose();
}

main().catch((e: unknown) => { console.error(e); process.exitCode = 1; });
