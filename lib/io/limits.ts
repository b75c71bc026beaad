// How much a load may allocate (NOTE [ Bounded loads ]).
//
// NOTE [ Bounded loads ]
// A file names the sizes of what it holds, and a reader that allocates what
// a header says before checking it against the file can be made to allocate
// anything. Data a file holds as it is (safetensors, .npy, stored .npz
// entries) is checked against the file's size before a byte is allocated, and
// .npz entries may not overlap (NOTE [ Strict zip reading ] in zip-read.ts),
// so such a load allocates at most the file's size. Deflated .npz entries
// inflate up to 1032 times their size: a 1 MB file may say 1 GB honestly.
// So every load has a bound, options.maxBytes, on the bytes of the entries
// or tensors it reads (their sum, checked from the headers before anything
// is allocated, then held while inflating: an entry that inflates past its
// declared size is refused at once). The default never refuses what a file
// holds as it is: the file's size, or DEFAULT_MAX_INFLATED_BYTES when larger.
import * as os from 'os';

import { fileError, type FileContext } from './errors';

/** What a load may inflate beyond its file's size by default: half the machine's memory, at most 8 GiB. */
export const DEFAULT_MAX_INFLATED_BYTES = Math.min(2 ** 33, Math.floor(os.totalmem() / 2));

/** The bound of a load of a file of `fileSize` bytes: options.maxBytes, else the default (NOTE [ Bounded loads ]). */
export function loadBound(maxBytes: number | undefined, fileSize: number): number {
  return maxBytes ?? Math.max(fileSize, DEFAULT_MAX_INFLATED_BYTES);
}

/** Throws unless `bytes` (what the headers say `what` holds) fit the load's bound. */
export function checkBound(ctx: FileContext, bytes: number, bound: number, what: string): void {
  if (bytes > bound) {
    throw fileError(ctx, `${what} ${bytes} bytes, more than the load's bound of ${bound} bytes (options.maxBytes); ` +
      'pass a larger maxBytes to load it if the file is trusted', RangeError);
  }
}
