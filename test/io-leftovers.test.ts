// The temporary files of saves (NOTE [ Temporary files of saves ] in
// lib/io/atomic.ts): named after the process, removed on SIGTERM and SIGINT
// during a save, and, when a process dies where no code runs (SIGKILL), swept
// by the next save to the same target with those older than a day.
import test from 'ava';
import { spawn, spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';

const linuxTest = process.platform === 'linux' ? test : test.skip;

const dirs: string[] = [];
test.after.always(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tmpdir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-leftovers-'));
  dirs.push(d);
  return d;
}

/** The id of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid;
}

const tmpFiles = (dir: string): string[] => fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')).sort();

test('a save sweeps its target\'s leftovers of dead processes and those older than a day, and no other', async (t) => {
  const dir = tmpdir();
  const target = path.join(dir, 'w.safetensors');
  const dead = deadPid(), live = process.ppid;
  const dayOld = new Date(Date.now() - 25 * 3600 * 1000);
  const files: Record<string, Date | undefined> = {
    [`.w.safetensors.${dead}.aaaaaaaaaaaa.tmp`]: undefined,         // a dead process's: swept
    [`.w.safetensors.${live}.bbbbbbbbbbbb.tmp`]: undefined,         // a live process's, fresh: kept (its save may be under way)
    [`.w.safetensors.${live}.cccccccccccc.tmp`]: dayOld,            // a live process's, a day old: swept (the id may be reused)
    ['.w.safetensors.dddddddddddd.tmp']: undefined,                 // an older version's name (no id), fresh: kept
    ['.w.safetensors.eeeeeeeeeeee.tmp']: dayOld,                    // the same, a day old: swept
    [`.v.safetensors.${dead}.ffffffffffff.tmp`]: undefined,         // another target's: kept
    [`.w.safetensors.${dead}.not-a-temp.tmp`]: undefined,           // not a name a save makes: kept
  };
  for (const [name, time] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), 'left over');
    if (time !== undefined) fs.utimesSync(path.join(dir, name), time, time);
  }
  const x = gx.tensor(Float32Array.from({ length: 6 }, (_, i) => Math.cos(i)), { shape: [2, 3] });
  t.teardown(() => x.dispose());
  await gx.save(target, x);
  t.deepEqual(tmpFiles(dir), [
    `.v.safetensors.${dead}.ffffffffffff.tmp`,
    `.w.safetensors.${dead}.not-a-temp.tmp`,
    `.w.safetensors.${live}.bbbbbbbbbbbb.tmp`,
    '.w.safetensors.dddddddddddd.tmp',
  ].sort());
  const back = await gx.loadTensor(target);
  t.deepEqual([...back.toArraySync()], [...x.toArraySync()]);
  back.dispose();
});

/** Starts a child saving 64 MiB to `target` in a loop; resolves once its temporary file exists. */
async function savingChild(target: string): Promise<{ child: ReturnType<typeof spawn>; tmpName: string }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'io-save-child.js'), target, '64'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const dir = path.dirname(target);
  const end = Date.now() + 30_000;
  for (;;) {
    const found = tmpFiles(dir).find((f) => f.startsWith(`.${path.basename(target)}.${child.pid}.`));
    if (found !== undefined) return { child, tmpName: found };
    if (Date.now() > end || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error('the child never started a save');
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

function exited(child: ReturnType<typeof spawn>): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

linuxTest('SIGTERM and SIGINT during a save remove its temporary file and still end the process; SIGKILL\'s is swept by the next save', async (t) => {
  const dir = tmpdir();
  const target = path.join(dir, 'big.safetensors');
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const { child, tmpName } = await savingChild(target);
    t.regex(tmpName, new RegExp(`^\\.big\\.safetensors\\.${child.pid}\\.[0-9a-f]{12}\\.tmp$`), 'the name holds the process id');
    child.kill(signal);
    const how = await exited(child);
    t.is(how.signal, signal, `the ${signal} ended the process as it would have without a save`);
    t.deepEqual(tmpFiles(dir), [], `no temporary file left after ${signal}`);
  }
  const { child, tmpName } = await savingChild(target);
  child.kill('SIGKILL');
  await exited(child);
  t.deepEqual(tmpFiles(dir), [tmpName], 'SIGKILL leaves it');
  const x = gx.zeros([4]);
  t.teardown(() => x.dispose());
  await gx.save(target, x);
  t.deepEqual(tmpFiles(dir), [], 'the next save swept it');
});
