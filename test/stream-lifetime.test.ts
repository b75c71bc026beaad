// A stream outlives its handle (NOTE [ Streams are kept ] in csrc/cuda/runtime.cpp): memory
// declared used on a gx.Stream (recordStream) may be freed after the Stream was dropped and
// collected (a disposal carried by a later call, NOTE [ Deferred disposal ]; a finalizer at
// exit), and the free records an event on that stream. In a child process, with the
// collector at hand; CUDA only.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

import { cudaTest } from './helpers';

const LIB = path.join(__dirname, '..', 'lib');

const CHILD = `
const gx = require(${JSON.stringify(LIB)});
const settle = () => new Promise((r) => setImmediate(r));
(async () => {
  let s = new gx.Stream({ nonBlocking: true });
  const kept = [];
  for (let i = 0; i < 8; i++) {
    const x = gx.zeros([4], { device: 'cuda' });
    x.recordStream(s);
    gx.withStream(s, () => gx.add(x, i).dispose());
    if (i % 2 === 0) kept.push(x); else x.dispose();  // disposed: left for a later call to free
  }
  s = null;  // the Stream's handle goes, and its finalizer runs
  for (let k = 0; k < 4; k++) { global.gc(); await settle(); }
  gx.memory.stats('cuda');  // frees what was disposed: events on the dropped stream
  const again = new gx.Stream({ nonBlocking: true });  // takes the kept stream
  const y = gx.withStream(again, () => gx.mul(gx.ones([3], { device: 'cuda' }), 2));
  again.synchronize();
  console.log(JSON.stringify(Array.from(y.toArraySync())));
  for (const x of kept) x.dispose();  // left to exit: freed by finalizers, after the stream's
})();
`;

cudaTest('memory recorded on a stream is freed safely after the Stream was dropped and collected', (t) => {
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', CHILD], { encoding: 'utf8', timeout: 60_000 });
  t.is(r.signal, null, `the child was killed by ${r.signal}: ${r.stderr}`);
  t.is(r.status, 0, r.stderr);
  t.is(r.stdout.trim(), '[2,2,2]');
});
