// One loss-and-gradient evaluation of the L-BFGS logistic regression
// (bench/glm-breakdown.ts), node by node: each backward node's formula timed
// alone (synchronized before and after), the forward ops likewise, and the
// engine's own time (the whole backward minus its nodes). For finding where
// an evaluation's time goes on the GPU.
//   node dist/bench/glm-eval-profile.js
import * as gx from '../lib';
import { logisticData } from '../examples/glm';

type AnyNode = { name: string; edges: readonly ({ node?: AnyNode } | null)[]; backward: (...a: unknown[]) => unknown };

function main(): void {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  const sync = (): void => { if (device === 'cuda') gx.cuda.synchronize(); };
  const [n, d] = device === 'cuda' ? [1_000_000, 100] : [100_000, 20];
  const { z, y } = logisticData(device, n, d, 0, 'float32');
  const beta = gx.mul(gx.ones([d + 1, 1], { device }), 0.01).requiresGrad_();
  const totals = new Map<string, number[]>();
  const add = (k: string, v: number): void => { const a = totals.get(k) ?? []; a.push(v); totals.set(k, a); };
  const timed = <T>(k: string, f: () => T): T => {
    sync();
    const t0 = performance.now();
    const r = f();
    sync();
    add(k, (performance.now() - t0) * 1e3);
    return r;
  };
  for (let rep = 0; rep < 25; rep++) {
    gx.tidy(() => {
      const eta = timed('fwd matmul', () => gx.matmul(z, beta));
      const sp = timed('fwd softplus', () => gx.softplus(eta));
      const ye = timed('fwd mul', () => gx.mul(y, eta));
      const df = timed('fwd sub', () => gx.sub(sp, ye));
      const l = timed('fwd mean', () => gx.mean(df));
      // Wrap every node's formula with a timer.
      const seen = new Set<AnyNode>();
      const walk = (node: AnyNode | null | undefined): void => {
        if (node == null || seen.has(node)) return;
        seen.add(node);
        const f = node.backward.bind(node);
        node.backward = (...a: unknown[]) => timed(`bwd ${node.name}`, () => f(...a));
        for (const e of node.edges) walk(e?.node);
      };
      walk(l.ag?.node as unknown as AnyNode);
      timed('backward (all)', () => l.backward());
      timed('item', () => l.item());
      beta.grad = null;
    });
  }
  const med = (a: number[]): number => a.slice(5).sort((p, q) => p - q)[Math.floor((a.length - 5) / 2)];
  console.log(`== eval profile on ${device}, ${n} x ${d}: median us of 20 (after 5 warm-up)`);
  for (const [k, v] of totals) console.log(`  ${k.padEnd(20)} ${med(v).toFixed(1)}`);
  z.dispose(); y.dispose(); beta.dispose();
}

main();
