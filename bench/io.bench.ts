// npm run bench:io, side by side with torch + the safetensors package in the
// same call (bench/torch_io.py): a safetensors file of GPUEXT_BENCH_IO_GIB
// (default 4) GiB of float32 in 16 tensors written from the GPU and loaded
// back straight to the GPU, against safetensors.torch.save_file /
// load_file(device='cuda') of the same tensors. Each side writes its own file
// in a fresh directory of the OS temp folder (on the same disk), fsync not
// forced on either; times are the median of 3 after one warm-up, GB/s =
// bytes of tensor data / s. The loaded values are checked against the saved
// ones (a checksum of sums on the GPU). Target: >= torch + safetensors' speed
// both ways. Without a GPU it runs on the CPU at 1/16 of the size.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { fmt, median, REPO, runPythonJson, section } from './util';

const TENSORS = 16;

async function timeMs(f: () => Promise<void>, reps = 3): Promise<number> {
  await f();  // warm-up (page cache, allocator)
  const s: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await f();
    s.push(performance.now() - t0);
  }
  return median(s);
}

async function main(): Promise<void> {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  const gib = Number(process.env.GPUEXT_BENCH_IO_GIB ?? (device === 'cuda' ? 4 : 0.25));
  const perTensor = Math.floor((gib * 2 ** 30) / 4 / TENSORS);
  const bytes = perTensor * 4 * TENSORS;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-io-'));
  const file = path.join(dir, 'bench.safetensors');
  const sync = (): void => { if (device === 'cuda') gx.cuda.synchronize(); };
  const record: Record<string, gx.Tensor> = {};
  for (let i = 0; i < TENSORS; i++) record[`t${i}`] = gx.randn([perTensor], { device });
  const checksum = (r: Record<string, gx.Tensor>): number =>
    Object.keys(record).reduce((acc, k, i) => acc + (i + 1) * (gx.tidy(() => gx.sum(r[k]).item()) as number), 0);
  const want = checksum(record);
  const saveMs = await timeMs(async () => { sync(); await gx.save(file, record); });
  let loaded: Record<string, gx.Tensor> = {};
  const loadMs = await timeMs(async () => {
    for (const t of Object.values(loaded)) t.dispose();
    loaded = await gx.loadTensors(file, { device });
    sync();
  });
  const got = checksum(loaded);
  const ok = Math.abs(got - want) <= 1e-6 * Math.max(1, Math.abs(want));
  for (const t of [...Object.values(loaded), ...Object.values(record)]) t.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
  const py = runPythonJson(path.join(REPO, 'bench', 'torch_io.py'), [String(perTensor), String(TENSORS), device], 1_200_000);
  const t = (py.ok ? py.o : {}) as Record<string, number | string>;
  const gbps = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : bytes / (ms / 1e3) / 1e9);
  const tSave = typeof t.save_ms === 'number' ? t.save_ms : undefined;
  const tLoad = typeof t.load_ms === 'number' ? t.load_ms : undefined;
  section('summary');
  const line = (what: string, ms: number, tms: number | undefined): string =>
    `  ${what} ${fmt(bytes / 2 ** 30, 2)} GiB safetensors on ${device}: ${fmt(ms)} ms (${fmt(gbps(ms), 2)} GB/s) vs torch + safetensors ` +
    `${fmt(tms)} ms (${fmt(gbps(tms), 2)} GB/s)` +
    (tms === undefined ? ` (python: ${py.ok ? String(t.error ?? 'no figure') : py.error})` : ` = ${fmt(tms / ms, 3)}x torch's speed (target >= 1: ${ms <= tms ? 'met' : 'MISSED'})`);
  console.log(line('save', saveMs, tSave));
  console.log(line('load', loadMs, tLoad));
  console.log(`  loaded values ${ok ? 'match' : `DIFFER (checksum ${got} vs ${want})`}`);
  if (!ok) process.exitCode = 1;
}

main().catch((e: unknown) => { console.error(e); process.exitCode = 1; });
