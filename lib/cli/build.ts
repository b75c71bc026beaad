// `gpuext build [--config setup.config.json] [--arch ...] [--verbose] [--watch]`
import * as fs from 'fs';
import * as path from 'path';

import { build, type BuildEvent, type BuildOptions, type BuildResult } from '../toolkit/build';
import { loadConfig, DEFAULT_CONFIG_FILE } from '../toolkit/config';
import { BuildError, ConfigError, displayPath, ToolchainError } from '../toolkit/errors';
import { glob, matchGlob } from '../toolkit/glob';
import { waitMessage } from '../toolkit/lock';
import { flag, formatCommand, parseArgs, stringOption } from './args';

export const BUILD_USAGE = `usage: gpuext build [--config setup.config.json] [--arch native|sm_80,sm_90|all] [--verbose] [--watch]

Compiles the sources of setup.config.json (nvcc for .cu, the host compiler
for .cpp) in parallel, links <outDir>/<name>.node and generates the typed
<name>.js / <name>.d.ts: an ES module in a "type": "module" package, else
CommonJS ("outputFormat" in setup.config.json: auto, esm, cjs, or both as
.mjs/.cjs). Only what changed is rebuilt.

  -c, --config FILE   the config (default ./setup.config.json)
      --arch SPEC     GPU archs: native (this machine's GPUs), all, or sm_80,sm_90
  -v, --verbose       print every command and the compilers' full output
  -w, --watch         rebuild when a source or header changes`;

const SPEC = {
  config: { value: true, alias: 'c' },
  arch: { value: true },
  verbose: { value: false, alias: 'v' },
  watch: { value: false, alias: 'w' },
  help: { value: false, alias: 'h' },
};

// NOTE [ Build progress ]
// A build prints one line per compiled unit as it finishes (`[2/5] nvcc
// ops/add.cu 3.1s`), on a terminal and in a CI log alike: a piped 14 s build
// that says nothing until its end looks hung. The lines are whole lines (no
// carriage return redrawing one line), so a log file reads as the terminal
// did. They go to stderr, beside warnings, so that stdout carries the result
// alone (the closing `built ...` line) for scripts that read it; with
// --verbose, to stdout, in order with the commands and compiler output.
export interface Output {
  /** The result (and, with --verbose, commands, compiler logs and progress). */
  out: (line: string) => void;
  /** Progress, warnings and errors. */
  err: (line: string) => void;
}

export function defaultOutput(): Output {
  return {
    out: (l) => process.stdout.write(`${l}\n`),
    err: (l) => process.stderr.write(`${l}\n`),
  };
}

function secs(s: number): string {
  return s < 10 ? `${s.toFixed(s < 0.1 ? 2 : 1)}s` : `${Math.round(s)}s`;
}

/**
 * Prints build events. A printer made `once` prints each warning text once
 * (a --watch run rebuilds with the same config: the arch warning of its first
 * build would otherwise repeat on every save).
 */
export function eventPrinter(o: Output, verbose: boolean, once = false): (e: BuildEvent) => void {
  const warned = new Set<string>();
  return (e) => {
    switch (e.type) {
      case 'compiled':
        (verbose ? o.out : o.err)(`[${e.index}/${e.total}] ${e.tool} ${e.file} ${secs(e.seconds)}`);
        break;
      case 'linked':
        if (verbose) o.out(`linked ${e.file} (${e.tool}) ${secs(e.seconds)}`);
        break;
      case 'command':
        o.out(`$ ${formatCommand(e.argv)}`);
        break;
      case 'log':
        o.out(e.text.replace(/\s+$/, ''));
        break;
      case 'wait':
        o.err(waitMessage(e.holder, e.detail));
        break;
      case 'takeover':
        o.err(`taking over a stale build lock (${e.why})`);
        break;
      case 'warning':
        if (once && warned.has(e.text)) break;
        warned.add(e.text);
        o.err(e.text);
        break;
    }
  };
}

/** The closing line of a build. */
export function summary(r: BuildResult): string {
  const shown = displayPath(r.outPath, process.cwd());
  const counts = `${r.compiled} compiled, ${r.cached} cached`;
  if (!r.linked) return `${shown} is up to date (${counts}) in ${secs(r.seconds)}`;
  // "+ my_ops.js/.d.ts", or "+ my_ops.mjs/.d.mts/.cjs/.d.cts" for both formats.
  const extra = r.bindings.length ? ` + ${r.config.name}${r.bindings.map((b) => path.basename(b).slice(r.config.name.length)).join('/')}` : '';
  return `built ${shown}${extra} in ${secs(r.seconds)} (${counts})`;
}

/** Prints a build failure; returns the exit code. */
export function reportError(e: unknown, o: Output): number {
  if (e instanceof BuildError || e instanceof ConfigError || e instanceof ToolchainError) {
    o.err(e.message);
    return 1;
  }
  o.err(`gpuext build: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  return 1;
}

export async function buildCommand(argv: readonly string[], o: Output = defaultOutput()): Promise<number> {
  const args = parseArgs('build', argv, SPEC);
  if (flag(args, 'help')) {
    o.out(BUILD_USAGE);
    return 0;
  }
  if (args.positionals.length) {
    o.err(`gpuext build: unexpected argument '${args.positionals[0]}'\n\n${BUILD_USAGE}`);
    return 2;
  }
  const verbose = flag(args, 'verbose');
  const opts: BuildOptions = {
    config: stringOption(args, 'config') ?? DEFAULT_CONFIG_FILE,
    arch: stringOption(args, 'arch'),
    verbose,
  };
  if (flag(args, 'watch')) return watch({ ...opts, onEvent: eventPrinter(o, verbose, true) }, o);
  opts.onEvent = eventPrinter(o, verbose);
  try {
    o.out(summary(await build(opts)));
    return 0;
  } catch (e) {
    return reportError(e, o);
  }
}

/**
 * Rebuilds on every change of the config, a source, a header it includes,
 * or a new file matching the source globs. Watches directories (editors
 * save by rename, which a per-file watch would lose). Errors are printed and
 * watching goes on. Resolves only when `signal` aborts (Ctrl-C ends the CLI).
 */
export async function watch(opts: BuildOptions, o: Output, signal?: AbortSignal): Promise<number> {
  return new Watcher(opts, o).run(signal);
}

/** The state of `gpuext build --watch`: what the last build read, the directory watchers, the pending rebuild. */
class Watcher {
  readonly #opts: BuildOptions;
  readonly #o: Output;
  readonly #configFile: string;
  readonly #watchers = new Map<string, fs.FSWatcher>();
  #files: Set<string>;
  #patterns: string[] = [];
  #baseDir: string;
  #outDir: string;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #again = false;

  constructor(opts: BuildOptions, o: Output) {
    this.#opts = opts;
    this.#o = o;
    this.#configFile = path.resolve(opts.config ?? DEFAULT_CONFIG_FILE);
    this.#files = new Set<string>([this.#configFile]);
    this.#baseDir = path.dirname(this.#configFile);
    this.#outDir = path.join(this.#baseDir, 'build');
  }

  /** Builds, then rebuilds on changes until `signal` aborts. */
  async run(signal?: AbortSignal): Promise<number> {
    await this.#once();
    return new Promise<number>((resolve) => {
      const stop = (): void => {
        if (this.#timer) clearTimeout(this.#timer);
        for (const w of this.#watchers.values()) w.close();
        resolve(0);
      };
      if (signal?.aborted) stop();
      signal?.addEventListener('abort', stop, { once: true });
    });
  }

  #relevant(file: string): boolean {
    if (file.startsWith(this.#outDir + path.sep)) return false;
    if (this.#files.has(file)) return true;
    const rel = path.relative(this.#baseDir, file).split(path.sep).join('/');
    return this.#patterns.some((p) => matchGlob(p.replace(/^\.\//, ''), rel));
  }

  /** The directories to watch: those of the files the build read, and those the globs could add files in. */
  #directories(): Set<string> {
    const dirs = new Set<string>();
    for (const f of this.#files) dirs.add(path.dirname(f));
    for (const f of glob(this.#patterns, this.#baseDir, { ignoreDirs: [this.#outDir] })) dirs.add(path.dirname(f));
    for (const p of this.#patterns) {
      const staticPart = p.split('/').findIndex((s) => /[*?]/.test(s));
      if (staticPart >= 0) dirs.add(path.resolve(this.#baseDir, ...p.split('/').slice(0, staticPart)));
    }
    return dirs;
  }

  #rewatch(): void {
    const dirs = this.#directories();
    const watchers = this.#watchers;
    for (const [d, w] of watchers) {
      if (!dirs.has(d)) {
        w.close();
        watchers.delete(d);
      }
    }
    for (const d of dirs) {
      if (watchers.has(d)) continue;
      try {
        const w = fs.watch(d, (_event, name) => {
          if (name === null || this.#relevant(path.join(d, name.toString()))) this.#schedule();
        });
        w.on('error', () => {
          w.close();
          watchers.delete(d);
        });
        watchers.set(d, w);
      } catch {
        // a directory that vanished; the next build re-lists them
      }
    }
  }

  async #once(): Promise<void> {
    const o = this.#o;
    this.#running = true;
    let report: () => void;
    try {
      const cfg = loadConfig(this.#configFile, { arch: this.#opts.arch });
      this.#patterns = cfg.sources;
      this.#baseDir = cfg.baseDir;
      this.#outDir = cfg.outDir;
      const r = await build({ ...this.#opts, resolved: cfg });
      this.#files = new Set([this.#configFile, ...r.watchFiles]);
      report = () => o.out(summary(r));
    } catch (e) {
      report = () => reportError(e, o);
      // Keep watching what we know, plus whatever the failed compile may fix.
    } finally {
      this.#running = false;
    }
    // Watching before the result is printed: an edit made as soon as it shows is seen.
    this.#rewatch();
    report();
    const n = this.#files.size;
    o.out(`watching ${n} file${n === 1 ? '' : 's'} for changes (Ctrl-C to stop)`);
    if (this.#again) {
      this.#again = false;
      this.#schedule();
    }
  }

  #schedule(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#once();
    }, 150);
  }
}
