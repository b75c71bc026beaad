// What gx.profiler costs a one-element op call: never started (the core's
// callOp), after a start/stop cycle (the core's callOp put back: NOTE [ A
// profiler hook that costs nothing when off ]), and while recording (with and
// without shapes). Rounds alternate the states after the first start, so that
// drift (other load on the machine) spreads over them. Recording also keeps
// an event per call (about 0.2 KB), so its figure includes their allocation.
//
//   npm run bench:profiler    (tsc, then node dist/bench/profiler.bench.js)
import * as gx from '../lib';
import { fmt, perCallNs, printTable, section } from './util';

const CALLS = 20_000;
const BATCH = 1_000;
const ROUNDS = 5;

function main(): void {
  const a = gx.tensor(new Float32Array([1]));
  const b = gx.tensor(new Float32Array([2]));
  const c = gx.empty([1]);
  const call = (): void => { gx.add(a, b, { out: c }); };
  const ns = (): number => perCallNs(call, CALLS, BATCH, { warmup: 2_000 });
  const states: [string, () => number][] = [
    ['never started', ns],
    ['after start/stop', () => {
      gx.profiler.stop();
      return ns();
    }],
    ['recording, shapes', () => {
      gx.profiler.start();
      const r = ns();
      gx.profiler.stop();
      return r;
    }],
    ['recording, no shapes', () => {
      gx.profiler.start({ recordShapes: false });
      const r = ns();
      gx.profiler.stop();
      return r;
    }],
  ];
  const samples = new Map<string, number[]>(states.map(([n]) => [n, []]));
  // 'never started' can only be measured before the first start: its rounds come first.
  for (let r = 0; r < ROUNDS; r++) samples.get('never started')?.push(ns());
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, f] of states) {
      if (name === 'after start/stop') gx.profiler.start();
      if (name !== 'never started') samples.get(name)?.push(f());
    }
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  section('gx.add(a, b, { out }) on one CPU element: ns per call (median over rounds)');
  printTable(['state', 'ns / call', 'rounds'], [...samples].map(([n, xs]) => [n, fmt(median(xs), 0), String(xs.length)]));
}

main();
