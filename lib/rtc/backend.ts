// What compile() asks of a compiler backend (nvrtc-backend.ts, nvcc-backend.ts).
import type { Backend, CacheEntry } from './cache';

export interface BackendCompileIn {
  source: string;
  name: string;
  options: string[];
  nameExpressions: string[];
  arch: string;
  cwd: string;
  what: string;
}

export interface ChosenBackend {
  backend: Backend;
  version: string;
  /** Include directories the backend adds after the user's (searched for headers, so in the key). */
  includeDirs: string[];
  compile(req: BackendCompileIn): CacheEntry;
  /** After a compile: whether the key named the compiler that ran (NOTE [ NVRTC identity ]). */
  keyTrusted?(): boolean;
}
