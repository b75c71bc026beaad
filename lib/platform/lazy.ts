// A module required the first time it is needed rather than when its importer
// loads (NOTE [ Lazy entry ] in lib/README.md): `require('gpuext')` loads the
// faces of every subsystem, and each face requires its heavy parts (the
// compiler and its cache, the tensor file formats, the build tool, the
// process group's transports) through this on first use. The argument is a
// literal `() => require('./x') as typeof import('./x')`, so
// scripts/check-imports.js still sees and checks the edge.

/** The module `load` returns, loaded on the first call and remembered. */
export function lazyModule<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}
