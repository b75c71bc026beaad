// A finished profile: the recorded events, their totals by op (as torch's
// prof.key_averages().table()), and the Chrome trace-event JSON that
// chrome://tracing and ui.perfetto.dev open.
import * as fs from 'fs';

/** One recorded op call or range. Times in microseconds from the profiler's start. */
export interface ProfileEvent {
  /** The op's name ('add', 'my_ops::scale' for a library's) or the range's. */
  name: string;
  kind: 'op' | 'range';
  /** Where the op ran ('cpu', 'cuda:0'); 'cpu' for a range or an op of no tensor. */
  device: string;
  /** The shapes of the op's tensor arguments, in order ([] for a range, or when shapes are not recorded). */
  shapes: number[][];
  /** Host time: when the call started and how long it took (the launch, for a CUDA op). */
  hostStart: number;
  hostDuration: number;
  /** GPU time of a CUDA op's work, from events recorded around it (the 'cuda' activity), else undefined. */
  gpuStart?: number;
  gpuDuration?: number;
  /** The error's message, for a call that threw. */
  error?: string;
}

/** The totals of one op on one device. */
export interface KeyAverage {
  name: string;
  device: string;
  count: number;
  hostTotal: number;
  hostAverage: number;
  /** Over the calls with a GPU time (undefined without the 'cuda' activity). */
  gpuTotal?: number;
  gpuAverage?: number;
}

export interface TableOptions {
  /** 'host' (the default) or 'gpu' total time, or the number of calls. */
  sortBy?: 'host' | 'gpu' | 'count';
  /** At most this many rows (default all). */
  rowLimit?: number;
}

/** A Chrome trace event (the Trace Event Format's complete 'X' and metadata 'M' events). */
export interface TraceEvent {
  name: string;
  ph: 'X' | 'M';
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  cat?: string;
  args?: Record<string, unknown>;
}

export interface ChromeTrace {
  traceEvents: TraceEvent[];
  displayTimeUnit: 'ms';
}

const HOST_TID = 0;

function micros(us: number): string {
  return us >= 1000 ? `${(us / 1000).toFixed(3)} ms` : `${us.toFixed(1)} us`;
}

export class Profile {
  /** Every recorded call, in the order they started. */
  readonly events: readonly ProfileEvent[];

  /** @internal */
  constructor(events: ProfileEvent[]) {
    this.events = Object.freeze(events.sort((a, b) => a.hostStart - b.hostStart));
  }

  /** Totals by op and device, largest host total first. */
  keyAverages(): KeyAverage[] {
    const by = new Map<string, KeyAverage>();
    for (const e of this.events) {
      if (e.kind !== 'op') continue;
      const key = `${e.name}\0${e.device}`;
      let k = by.get(key);
      if (k === undefined) {
        k = { name: e.name, device: e.device, count: 0, hostTotal: 0, hostAverage: 0 };
        by.set(key, k);
      }
      k.count++;
      k.hostTotal += e.hostDuration;
      if (e.gpuDuration !== undefined) k.gpuTotal = (k.gpuTotal ?? 0) + e.gpuDuration;
    }
    const rows = [...by.values()];
    for (const k of rows) {
      k.hostAverage = k.hostTotal / k.count;
      if (k.gpuTotal !== undefined) k.gpuAverage = k.gpuTotal / k.count;
    }
    return rows.sort((a, b) => b.hostTotal - a.hostTotal);
  }

  /** The totals as a text table, as torch's `prof.key_averages().table()`. */
  table(opts: TableOptions = {}): string {
    const sortBy = opts.sortBy ?? 'host';
    const value = (k: KeyAverage): number => (sortBy === 'gpu' ? k.gpuTotal ?? 0 : sortBy === 'count' ? k.count : k.hostTotal);
    const rows = this.keyAverages().sort((a, b) => value(b) - value(a)).slice(0, opts.rowLimit ?? Infinity);
    const gpu = rows.some((k) => k.gpuTotal !== undefined);
    const header = ['Name', 'Device', 'Calls', 'Host total', 'Host avg', ...(gpu ? ['GPU total', 'GPU avg'] : [])];
    const cells = rows.map((k) => [k.name, k.device, String(k.count), micros(k.hostTotal), micros(k.hostAverage),
      ...(gpu ? [k.gpuTotal === undefined ? '-' : micros(k.gpuTotal), k.gpuAverage === undefined ? '-' : micros(k.gpuAverage)] : [])]);
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
    const line = (c: string[]): string => c.map((s, i) => (i < 2 ? s.padEnd(widths[i]) : s.padStart(widths[i]))).join('  ').trimEnd();
    return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
  }

  /**
   * The profile in the Trace Event Format: host calls on one track, each
   * CUDA device's GPU work on its own, op arguments (device, shapes) in args.
   */
  toChromeTrace(): ChromeTrace {
    const pid = process.pid;
    const devices = [...new Set(this.events.filter((e) => e.gpuStart !== undefined).map((e) => e.device))].sort();
    const tidOf = (device: string): number => 1 + devices.indexOf(device);
    const meta: TraceEvent[] = [
      { name: 'process_name', ph: 'M', pid, tid: HOST_TID, args: { name: 'gpuext' } },
      { name: 'thread_name', ph: 'M', pid, tid: HOST_TID, args: { name: 'host' } },
      ...devices.map((d): TraceEvent => ({ name: 'thread_name', ph: 'M', pid, tid: tidOf(d), args: { name: `${d} (GPU)` } })),
    ];
    const host = this.events.map((e): TraceEvent => ({
      name: e.name, ph: 'X', cat: e.kind, pid, tid: HOST_TID, ts: e.hostStart, dur: e.hostDuration,
      args: { device: e.device, shapes: e.shapes, ...(e.error !== undefined ? { error: e.error } : {}) },
    }));
    const gpu = this.events.filter((e) => e.gpuStart !== undefined).map((e): TraceEvent => ({
      name: e.name, ph: 'X', cat: 'kernel', pid, tid: tidOf(e.device), ts: e.gpuStart, dur: e.gpuDuration, args: { device: e.device },
    })).sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0));
    return { traceEvents: [...meta, ...host, ...gpu], displayTimeUnit: 'ms' };
  }

  /** Writes toChromeTrace() as JSON to `path` (open it in ui.perfetto.dev or chrome://tracing). */
  exportChromeTrace(path: string): void {
    if (typeof path !== 'string' || path === '') throw new TypeError(`Profile.exportChromeTrace: path must be a file name, got ${JSON.stringify(path)}`);
    fs.writeFileSync(path, JSON.stringify(this.toChromeTrace()));
  }
}
