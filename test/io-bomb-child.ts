// A child process of test/io-strict.test.ts: loads one file with
// gx.loadTensors and prints, as one JSON line, whether it loaded, the error,
// and how far the load raised the process's peak resident memory (maxRSS
// after less maxRSS before: the load's own peak, apart from start-up).
//   node dist/test/io-bomb-child.js FILE [MAX_BYTES]
import * as gx from '../lib';

async function main(): Promise<void> {
  const [file, max] = process.argv.slice(2);
  const before = process.resourceUsage().maxRSS;
  const t0 = process.hrtime.bigint();
  let result: { ok: boolean; message?: string; bytes?: number };
  try {
    const r = await gx.loadTensors(file, max === undefined ? {} : { maxBytes: Number(max) });
    const tensors = Object.values(r);
    result = { ok: true, bytes: tensors.reduce((s, x) => s + x.numel * gx.DTYPE_INFO[x.dtype].itemsize, 0) };
    for (const x of tensors) x.dispose();
  } catch (err) {
    result = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  // maxRSS is in KiB.
  process.stdout.write(`${JSON.stringify({ ...result, ms, peakRiseBytes: (process.resourceUsage().maxRSS - before) * 1024 })}\n`);
}

void main();
