// NumPy's .npz format: a zip file of .npy files, one per array, named
// '<key>.npy' (np.savez stores them, np.savez_compressed deflates them).
import type { FileHandle } from 'fs/promises';

import type { Device } from '../core/device';
import type { Tensor } from '../core/tensor';
import { fileError, type FileContext } from './errors';
import { npyHeader, readNpy, readNpyHeader, writeNpy } from './npy';
import type { NamedSource } from './sources';
import { dataBytes } from './tensor-data';
import type { NamedInfo } from './types';
import { checkBound } from './limits';
import { ZipWriter } from './zip';
import { openZipEntry, readZipDirectory, type ZipEntry } from './zip-read';

/** The name gx.save gives a lone tensor in an .npz file: np.savez's name for its first positional array. */
export const NPZ_NAME = 'arr_0';

/** The arrays of the zip directory `entries`, by key, checked: .npy entries only, each key once. */
function arrays(entries: readonly ZipEntry[], ctx: FileContext): [string, ZipEntry][] {
  const seen = new Set<string>();
  return entries.map((e) => {
    if (!e.name.endsWith('.npy')) throw fileError(ctx, `entry '${e.name}' is not an .npy array; an .npz file holds only .npy files`);
    const key = e.name.slice(0, -'.npy'.length);
    if (seen.has(key)) throw fileError(ctx, `entry '${e.name}' appears twice`);
    seen.add(key);
    return [key, e];
  });
}

/**
 * The arrays of the .npz file open as `fh` (of `size` bytes), read in
 * directory order onto `device`; their entries may hold `bound` bytes in all
 * (NOTE [ Bounded loads ] in limits.ts).
 */
export async function* loadNpz(fh: FileHandle, size: number, ctx: FileContext, device: Device, bound: number): AsyncGenerator<[string, Tensor]> {
  const entries = arrays(await readZipDirectory(fh, size, ctx), ctx);
  checkBound(ctx, entries.reduce((sum, [, e]) => sum + e.size, 0), bound, `its ${entries.length} arrays hold`);
  for (const [key, e] of entries) {
    const reader = openZipEntry(fh, e, ctx);
    try {
      const t = await readNpy(reader, e.size, ctx, device, `entry '${e.name}'`);
      try {
        if (!(await reader.atEnd())) throw fileError(ctx, `entry '${e.name}' inflates to more than the ${e.size} bytes its directory entry says; the file is damaged`);
        if (reader.crc !== e.crc) {
          throw fileError(ctx, `entry '${e.name}' fails its CRC-32 check (0x${reader.crc.toString(16)}, the directory says 0x${e.crc.toString(16)}); the file is damaged`);
        }
      } catch (err) {
        t.dispose();
        throw err;
      }
      yield [key, t];
    } finally {
      reader.close();
    }
  }
}

/** The arrays of the .npz file open as `fh`, their dtypes and shapes only (each entry's header read). */
export async function inspectNpz(fh: FileHandle, size: number, ctx: FileContext): Promise<NamedInfo[]> {
  const out: NamedInfo[] = [];
  for (const [key, e] of arrays(await readZipDirectory(fh, size, ctx), ctx)) {
    const reader = openZipEntry(fh, e, ctx);
    try {
      const { dtype, shape } = await readNpyHeader(reader, ctx, `entry '${e.name}'`);
      out.push({ name: key, dtype, shape: shape.slice() });
    } finally {
      reader.close();
    }
  }
  return out;
}

/** Writes `sources` as an .npz file into the empty file `fh`, deflated when `compressed`. */
export async function saveNpz(fh: FileHandle, sources: readonly NamedSource[], compressed: boolean, forceZip64 = false): Promise<void> {
  const zip = new ZipWriter(fh, forceZip64);
  for (const s of sources) {
    const size = npyHeader(s.dtype, s.shape).length + dataBytes(s.shape, s.dtype);
    await zip.add(`${s.name}.npy`, size, compressed, (sink) => writeNpy(s, sink));
  }
  await zip.finish();
}
