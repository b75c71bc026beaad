// Running the gpuext command line as a user would, in temporary apps where
// `gpuext` resolves to this checkout (node_modules/gpuext, a symlink): for
// the CLI tests and the tests of apps of each module system.
import test from 'ava';
import { execFile } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

export const root = path.resolve(__dirname, '../..');
export const cli = path.join(root, 'dist/lib/cli/main.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `exe args` in cwd, with CI=1 as in a CI job (stdout and stderr piped). */
export function run(exe: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(exe, args, { cwd, env: { ...process.env, CI: '1', ...env } }, (err, stdout, stderr) => {
      const code = err && 'code' in err && typeof err.code === 'number' ? err.code : err ? 1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export function gpuext(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return run(process.execPath, [cli, ...args], cwd, env);
}

const tmpdirs: string[] = [];

/** Removes the directories of tmpdir() after the file's tests; call once per test file. */
export function removeTmpdirsAfter(): void {
  test.after.always(() => {
    for (const d of tmpdirs) fs.rmSync(d, { recursive: true, force: true });
  });
}

export function tmpdir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `gpuext-cli-${prefix}-`));
  tmpdirs.push(d);
  return d;
}

/** A temporary directory where `require('gpuext')` and `import 'gpuext'` resolve to this checkout. */
export function workspace(prefix: string): string {
  const dir = tmpdir(prefix);
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(root, path.join(dir, 'node_modules', 'gpuext'), 'dir');
  return dir;
}
