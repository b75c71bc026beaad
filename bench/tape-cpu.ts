// The tape's JavaScript cost per node, on the CPU (no GPU needed): bench:autograd's
// chain of 100 one-element multiplications, forward + backward, its forward
// recorded alone (graph dropped), its forward under noGrad, and its backward
// alone (the graph recorded outside the timed region). Microseconds per op,
// medians of rounds that rotate the order of the four. Arguments: the number
// of rounds (5), and a word to time only the cases whose name has it. For a
// CPU profile of the backward:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/tape-cpu.js 5 alone
import * as gx from '../lib';
import { elapsedNs, fmt, median, nowNs, section } from './util';

const CHAIN = 100;

/** Microseconds of CPU time this process has used (all its threads: the collector's helpers too). */
function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/**
 * Median microseconds per op of `run(timed)`, where run brackets the timed
 * part with timed(() => ...): wall-clock time, and the process's CPU time
 * (steadier on a machine shared with other work, which takes the wall
 * clock's time but not this process's CPU time).
 */
function perOpUs(run: (timed: (f: () => void) => void) => void, calls: number): { wall: number; cpu: number } {
  const wall: number[] = [], cpu: number[] = [];
  const timed = (f: () => void): void => {
    const c0 = cpuUs(), t0 = nowNs();
    f();
    wall.push(elapsedNs(t0) / 1e3 / CHAIN);
    cpu.push((cpuUs() - c0) / CHAIN);
  };
  for (let i = 0; i < calls; i++) run(timed);
  const skip = Math.floor(calls / 5);  // the first fifth is warm-up
  return { wall: median(wall.slice(skip)), cpu: median(cpu.slice(skip)) };
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
  const names = Object.keys(cases).filter((n) => n.includes(process.argv[3] ?? ''));
  const results = names.map((): { wall: number[]; cpu: number[] } => ({ wall: [], cpu: [] }));
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = (j + r) % names.length;
      const { wall, cpu } = perOpUs(cases[names[k]], 500);
      results[k].wall.push(wall);
      results[k].cpu.push(cpu);
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
  section(`autograd tape on the CPU, chain of ${CHAIN} one-element gx.mul, us per op (median of ${rounds} rounds): wall clock, CPU time`);
  names.forEach((n, i) => {
    const { wall, cpu } = results[i];
    console.log(`  ${n.padEnd(34)} ${fmt(median(wall), 3)}  ${fmt(median(cpu), 3)}   rounds (wall): ${wall.map((v) => fmt(v, 3)).join(' ')}`);
  });
  console.log(`  value ${value}, gradient ${grad}; tensors left behind: ${gx.memory.stats('cpu').liveTensors - live}`);
}

main();
