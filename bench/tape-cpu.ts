// The tape's JavaScript cost per node, on the CPU (no GPU needed): bench:autograd's
// chain of 100 one-element multiplications, forward + backward, its forward
// recorded alone (graph dropped), its forward under noGrad, and its backward
// alone (the graph recorded outside the timed region). Microseconds per op,
// medians of rounds that rotate the order of the four. For a CPU profile:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/tape-cpu.js
import * as gx from '../lib';
import { elapsedNs, fmt, median, nowNs, section } from './util';

const CHAIN = 100;

/** Median microseconds per op of `run(timed)`, where run brackets the timed part with timed(() => ...). */
function perOpUs(run: (timed: (f: () => void) => void) => void, calls: number): number {
  const samples: number[] = [];
  const timed = (f: () => void): void => {
    const t0 = nowNs();
    f();
    samples.push(elapsedNs(t0) / 1e3 / CHAIN);
  };
  for (let i = 0; i < calls; i++) run(timed);
  return median(samples.slice(Math.floor(calls / 5)));  // the first fifth is warm-up
}

function main(): void {
  const rounds = Number(process.argv[2] ?? 5);
  const live = gx.memory.stats('cpu').liveTensors;
  const x = gx.tensor([1.0001]).requiresGrad_();
  const c = gx.tensor([0.9999]);
  const chain = (): gx.Tensor => {
    let y = x;
    for (let i = 0; i < CHAIN; i++) y = gx.mul(y, c);
    return y;
  };
  const cases: Record<string, (timed: (f: () => void) => void) => void> = {
    'forward + backward': (timed) => timed(() => {
      gx.tidy(() => chain().backward());
      x.grad = null;
    }),
    'forward recorded, graph dropped': (timed) => timed(() => gx.tidy(() => { chain(); })),
    'forward under noGrad': (timed) => timed(() => gx.noGrad(() => gx.tidy(() => { chain(); }))),
    'backward alone': (timed) => gx.tidy(() => {
      const y = chain();
      timed(() => y.backward());
      x.grad = null;
    }),
  };
  const names = Object.keys(cases);
  const results = names.map((): number[] => []);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = (j + r) % names.length;
      results[k].push(perOpUs(cases[names[k]], 500));
    }
  }
  // The result, to show a change kept the values: x * c^100, and its gradient c^100.
  const y = gx.tidy(() => {
    const out = chain();
    out.backward();
    return out;
  });
  const [value, grad] = [y.toArraySync()[0], x.grad?.toArraySync()[0]];
  y.dispose();
  x.grad = null;
  x.dispose();
  c.dispose();
  section(`autograd tape on the CPU, chain of ${CHAIN} one-element gx.mul, us per op (median of ${rounds} rounds)`);
  names.forEach((n, i) => console.log(`  ${n.padEnd(34)} ${fmt(median(results[i]), 3)}   rounds: ${results[i].map((v) => fmt(v, 3)).join(' ')}`));
  console.log(`  value ${value}, gradient ${grad}; tensors left behind: ${gx.memory.stats('cpu').liveTensors - live}`);
}

main();
