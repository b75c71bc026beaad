// A child process of test/io-leftovers.test.ts: saves a tensor of MIB
// mebibytes to FILE in a loop (so that a signal finds a save under way),
// printing 'saving' before the first.
//   node dist/test/io-save-child.js FILE MIB
import * as gx from '../lib';

async function main(): Promise<void> {
  const [file, mib] = process.argv.slice(2);
  const x = gx.full([Number(mib) * 262144], 1.5);
  process.stdout.write('saving\n');
  for (;;) await gx.save(file, x);
}

void main();
