// What the io tests share: the NumPy fixtures' folder, a temporary directory
// per test file (checked for leftover temporary files), and assertions on
// loaded tensors and on refusals.
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import type * as gx from '../lib';
import { sameValues, type ErrorClass } from './helpers';

const root = path.resolve(__dirname, '../..');
const fixtures = path.join(root, 'test/fixtures/io');
export const fixture = (name: string): string => path.join(fixtures, name);

/**
 * A temporary directory for this test file, removed at the end, where no save
 * may leave a temporary file; returns it and a maker of fresh paths in it.
 */
export function useTmpDir(): { tmpPath: (name: string) => string; tmpDir: () => string } {
  let tmp: string | undefined;
  let counter = 0;
  test.before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-io-'));
  });
  test.after('no save, failed or not, left a temporary file behind', (t) => {
    const left = fs.readdirSync(tmp as string, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tmp'));
    t.deepEqual(left, []);
  });
  test.after.always(() => {
    if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
  });
  const tmpDir = (): string => tmp as string;
  return { tmpPath: (name) => path.join(tmpDir(), `${counter++}-${name}`), tmpDir };
}

export type Values = ArrayLike<number | bigint>;

export function valuesOf(t: gx.Tensor): Values {
  return t.toArraySync() as Values;
}

/** Asserts `t` has this dtype, shape and (C-order) values, on `device`. */
export function same(t: ExecutionContext, x: gx.Tensor, dtype: gx.DType, shape: readonly number[], values: Values, what: string, device = 'cpu'): void {
  t.is(x.dtype, dtype, `${what}: dtype`);
  t.deepEqual([...x.shape], [...shape], `${what}: shape`);
  t.is(x.device.type, device.startsWith('cuda') ? 'cuda' : 'cpu', `${what}: device`);
  sameValues(t, valuesOf(x), values, what);
}

export function disposeAll(r: Record<string, gx.Tensor>): void {
  for (const x of Object.values(r)) x.dispose();
}

/** Awaits `p`, asserting it rejects with `cls` and a message matching `re`; returns the error. */
export async function rejects(t: ExecutionContext, p: Promise<unknown>, cls: ErrorClass, re: RegExp): Promise<Error | undefined> {
  const err = await t.throwsAsync(p);
  t.true(err instanceof cls, `expected ${cls.name}, got ${err?.constructor.name}: ${err?.message}`);
  t.regex(err?.message ?? '', re);
  return err;
}

export function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
