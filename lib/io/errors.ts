// Errors of the file functions: each names the function, then the file, then
// what is wrong with it (`gx.loadTensors: /data/w.safetensors: header length
// 999999 exceeds the file size 120`), so that a failure among many files says
// which one.

/** The function and the file an error names. */
export interface FileContext {
  readonly fn: string;
  readonly path: string;
}

type ErrorClass = ErrorConstructor | TypeErrorConstructor | RangeErrorConstructor;

/** An error about the file of `ctx`, naming its function. */
export function fileError(ctx: FileContext, message: string, Cls: ErrorClass = Error): Error {
  return new Cls(`${ctx.fn}: ${ctx.path}: ${message}`);
}

/**
 * `err` with the function and the file in front of its message, for errors of
 * the file system (ENOENT, EACCES, ENOSPC...) and of zlib, which name neither;
 * their code and errno stay. Errors already naming the function pass as they are.
 */
export function withFileContext(err: unknown, ctx: FileContext): unknown {
  if (!(err instanceof Error) || err.message.startsWith(`${ctx.fn}: `)) return err;
  err.message = `${ctx.fn}: ${ctx.path}: ${err.message}`;
  return err;
}
