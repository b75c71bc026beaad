// What gx.save takes and where it writes, and bool data read as NumPy reads
// it: a Map of tensors saves as a record does; anything else that is not a
// record (a Promise not awaited, a class instance) is refused rather than
// saved as an empty file; a save through a symbolic link writes the file it
// points at; bool bytes other than 0 and 1 load as true.
import test from 'ava';
import fs from 'fs';
import path from 'path';

import * as gx from '../lib';
import { disposeAll, rejects, useTmpDir, valuesOf } from './io-helpers';

const { tmpPath } = useTmpDir();

test('a Map of names to tensors saves as a record does; a Promise, a class instance or a Map with other keys is refused', async (t) => {
  for (const ext of ['safetensors', 'npz']) {
    const file = tmpPath(`map.${ext}`);
    const w = gx.tensor([1, 2, 3]), b = gx.tensor([4]);
    await gx.save(file, new Map([['w', w], ['b', b]]));
    const back = await gx.loadTensors(file);
    t.deepEqual(Object.keys(back).sort(), ['b', 'w'], ext);
    t.deepEqual(Array.from(valuesOf(back.w)), [1, 2, 3], ext);
    t.deepEqual(Array.from(valuesOf(back.b)), [4], ext);
    disposeAll(back);
    w.dispose();
    b.dispose();
  }
  const file = tmpPath('refused.safetensors');
  using x = gx.tensor([1]);
  const saved = tmpPath('x.npy');
  await gx.save(saved, x);
  const pending = gx.loadTensor(saved);
  await rejects(t, gx.save(file, pending as never), TypeError, /^gx\.save: data must be a gx\.Tensor or a record of them .*, got a Promise \(await the tensor first\)/);
  (await pending).dispose();
  class Weights { w = x; }
  await rejects(t, gx.save(file, new Weights() as never), TypeError, /^gx\.save: data must be a gx\.Tensor or a record of them/);
  await rejects(t, gx.save(file, new Map([[1, x]]) as never), TypeError, /^gx\.save: .*the Map has the key number 1, not a string/);
  t.false(fs.existsSync(file), 'nothing was written');
});

test('a save through a symbolic link writes the file it points at, and keeps the link (as np.save does)', async (t) => {
  if (process.platform === 'win32') return t.pass('symbolic links need privileges on Windows');
  const dir = tmpPath('linked');
  fs.mkdirSync(path.join(dir, 'real'), { recursive: true });
  const real = path.join(dir, 'real', 'w.npy'), link = path.join(dir, 'w.npy');
  using ones = gx.ones([2]);
  await gx.save(real, ones);
  fs.symlinkSync(real, link);
  using sevens = gx.full([2], 7);
  await gx.save(link, sevens);
  t.true(fs.lstatSync(link).isSymbolicLink(), 'the link is still a link');
  using back = await gx.loadTensor(real);
  t.deepEqual(Array.from(valuesOf(back)), [7, 7], 'the file it points at has the new values');
  // A link to a file not there yet: the file is made where the link points.
  const dangling = path.join(dir, 'new.npy');
  fs.symlinkSync(path.join('real', 'new.npy'), dangling);
  await gx.save(dangling, sevens);
  t.true(fs.lstatSync(dangling).isSymbolicLink());
  using made = await gx.loadTensor(path.join(dir, 'real', 'new.npy'));
  t.deepEqual(Array.from(valuesOf(made)), [7, 7]);
  t.deepEqual(fs.readdirSync(path.join(dir, 'real')).sort(), ['new.npy', 'w.npy'], 'no temporary file is left');
});

test('bool bytes other than 0 and 1 (a file written by other means) load as true, as NumPy reads them', async (t) => {
  // A uint8 .npy whose header says bool: the bytes 0, 1, 2, 255.
  const file = tmpPath('bytes.npy');
  using u8 = gx.tensor(new Uint8Array([0, 1, 2, 255, 0, 7]));
  await gx.save(file, u8);
  const bytes = fs.readFileSync(file);
  const at = bytes.indexOf('|u1');
  t.true(at > 0);
  bytes.write('|b1', at, 'latin1');
  fs.writeFileSync(file, bytes);
  using b = await gx.loadTensor(file);
  t.is(b.dtype, 'bool');
  t.deepEqual(Array.from(valuesOf(b.astype('int32'))), [0, 1, 1, 1, 0, 1]);
  t.is(b.sum().item(), 4);
  t.deepEqual(Array.from(valuesOf(gx.eq(b, true).astype('int32'))), [0, 1, 1, 1, 0, 1], 'each true byte equals true');
});
