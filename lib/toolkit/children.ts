// NOTE [ Compilers die with the build ]
// A compiler is a tree of processes (nvcc runs cicc, ptxas, fatbinary and the
// host compiler; g++ runs cc1plus and as). Signalling only the process we
// spawned leaves the rest running, so on POSIX each compiler gets a process
// group of its own (spawn's `detached`) and is stopped as a group:
//  - when a sibling fails (the build stops the others: stopTool),
//  - when this process exits, or ends on SIGINT/SIGTERM through the lock's
//    handlers (an 'exit' hook, synchronous),
//  - when this process dies without running any code (SIGKILL, the OOM
//    killer): a watchdog, a small node process started with the first
//    compiler, reads a pipe from us and is told each group as it starts and
//    ends. End of file on that pipe means we are gone; it then stops the
//    groups left. It has a session of its own, so a Ctrl-C meant for us does
//    not stop it first, and it exits a second after the last compiler ends.
// A group of its own also means the terminal's Ctrl-C no longer reaches a
// compiler directly; the exit hook (or the watchdog) stops it instead.
// On Windows (no process groups) compilers are spawned and killed plainly.
// The watchdog is told a group just after spawn() returns (a process id
// exists only then); a SIGKILL of this process in between would leave that
// compiler unwatched (on a loaded machine the window has lasted long enough
// for a compiler to start its work). So each compiler also carries the
// watchdog's id in its environment (GPUEXT_BUILD_WATCHDOG, inherited by
// everything it starts), and on Linux the watchdog, at end of input, also
// stops the groups of every process that carries its id (/proc/<pid>/environ),
// unless we retired it in order. (A daemon a compiler leaves behind, such as
// a compiler cache's server, carries the id too and is stopped when this
// process ends without retiring the watchdog; such servers restart on demand.)
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'child_process';
import { Socket } from 'net';
import type { Readable } from 'stream';

const GROUPS = process.platform !== 'win32';

/** Process group ids of this process's running compilers. */
const running = new Set<number>();
let watchdog: ChildProcess | undefined;
let retireTimer: NodeJS.Timeout | undefined;
let exitHooked = false;

/** The environment variable that marks a compiler with its watchdog's id (NOTE above). */
const MARK_VARIABLE = 'GPUEXT_BUILD_WATCHDOG';

// The watchdog's whole program. On end of input: SIGTERM to each group (gcc
// and nvcc remove their temporary files on it), SIGKILL to what is left 2 s
// later. Lines are "+<pgid>" (started), "-<pgid>" (ended) and "." (we retire
// it: nothing to look for).
export const WATCHDOG = `
const groups = new Set();
let buf = '';
let orderly = false;
const each = (sig) => { for (const g of groups) { try { process.kill(-g, sig); } catch {} } };
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  for (let i; (i = buf.indexOf('\\n')) >= 0; buf = buf.slice(i + 1)) {
    const line = buf.slice(0, i);
    const g = Number(line.slice(1));
    if (line === '.') orderly = true;
    else if (line[0] === '+') groups.add(g); else groups.delete(g);
  }
});
// The processes started with our id in their environment (a compiler we were
// not told of yet, and its children): their groups join ours.
const marked = () => {
  let fs;
  try { fs = require('fs'); } catch { return; }
  let pids = [];
  try { pids = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)); } catch { return; }
  const mark = '${MARK_VARIABLE}=' + process.pid + '\\0';
  for (const p of pids) {
    try {
      if (!fs.readFileSync('/proc/' + p + '/environ', 'latin1').includes(mark)) continue;
      const stat = fs.readFileSync('/proc/' + p + '/stat', 'latin1');
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp > 1) groups.add(pgrp);
    } catch {}
  }
};
process.stdin.on('end', () => {
  if (!orderly) marked();
  each('SIGTERM');
  if (groups.size > 0) setTimeout(() => each('SIGKILL'), 2000);
});
`;

function tell(line: string): void {
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`${line}\n`);
}

function startWatchdog(): void {
  if (watchdog !== undefined) return;
  const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
  // Options meant for the user's program (--require hooks, inspectors) are not for this one.
  delete env.NODE_OPTIONS;
  const w = spawn(process.execPath, ['-e', WATCHDOG], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env });
  // It must not keep this process alive: ending is exactly what it waits for.
  w.unref();
  w.on('error', () => {
    // Without a watchdog only a SIGKILL of this process leaves compilers behind; the build goes on.
    if (watchdog === w) watchdog = undefined;
  });
  w.stdin?.on('error', () => {
    // the watchdog ended first: nothing to tell it
  });
  if (w.stdin instanceof Socket) w.stdin.unref();
  watchdog = w;
}

/** Ends the watchdog once no compiler has run for a second (a build's link follows its compiles). */
function retireWatchdogSoon(): void {
  clearTimeout(retireTimer);
  retireTimer = setTimeout(() => {
    if (running.size > 0 || watchdog === undefined) return;
    watchdog.stdin?.end('.\n');  // an orderly end: no compiler of ours is left to look for
    watchdog = undefined;
  }, 1000);
  retireTimer.unref();
}

function stopGroups(): void {
  for (const g of running) stopGroup(g, 'SIGTERM');
}

function stopGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group has already ended
  }
}

/** A compiler: no input, output and errors through pipes. */
export type ToolProcess = ChildProcessByStdio<null, Readable, Readable>;

/**
 * Spawns a compiler (an argument array; no shell) so that it and every
 * process it starts end with this build (NOTE above).
 */
export function spawnTool(argv: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): ToolProcess {
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  if (!GROUPS) return spawn(argv[0], argv.slice(1), { ...options, stdio });
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', stopGroups);
  }
  clearTimeout(retireTimer);
  startWatchdog();
  const env = watchdog?.pid === undefined ? options.env : { ...options.env, [MARK_VARIABLE]: String(watchdog.pid) };
  const child = spawn(argv[0], argv.slice(1), { ...options, env, stdio, detached: true });
  const pgid = child.pid;
  if (pgid === undefined) {
    // It failed to start ('error' follows): nothing to watch.
    if (running.size === 0) retireWatchdogSoon();
    return child;
  }
  running.add(pgid);
  tell(`+${pgid}`);
  child.on('exit', () => {
    // The group may outlive its leader (children of a compiler killed by a
    // signal): stop them too, then forget the group.
    if (child.signalCode !== null) stopGroup(pgid, 'SIGKILL');
    running.delete(pgid);
    tell(`-${pgid}`);
    if (running.size === 0) retireWatchdogSoon();
  });
  return child;
}

/** Stops a compiler started by spawnTool, with everything it started. */
export function stopTool(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): void {
  if (GROUPS && child.pid !== undefined && running.has(child.pid)) stopGroup(child.pid, signal);
  else child.kill(signal);
}
