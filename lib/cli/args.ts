// A small argument parser for the gpuext commands: --flag, --opt value,
// --opt=value, short aliases, positionals. Errors become UsageError (exit 2).

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface OptionSpec {
  /** Takes a value (`--config file`) or is a switch (`--verbose`). */
  value: boolean;
  alias?: string;
}

export interface ParsedArgs {
  options: Map<string, string | true>;
  positionals: string[];
}

export function parseArgs(command: string, argv: readonly string[], spec: Record<string, OptionSpec>): ParsedArgs {
  const options = new Map<string, string | true>();
  const positionals: string[] = [];
  const byAlias = new Map<string, string>();
  for (const [name, s] of Object.entries(spec)) if (s.alias) byAlias.set(s.alias, name);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      inline = eq >= 0 ? a.slice(eq + 1) : undefined;
    } else if (a.startsWith('-') && a.length > 1) {
      name = byAlias.get(a.slice(1));
      if (name === undefined) throw new UsageError(`gpuext ${command}: unknown option '${a}'`);
    } else {
      positionals.push(a);
      continue;
    }
    const s = spec[name];
    if (s === undefined) throw new UsageError(`gpuext ${command}: unknown option '--${name}'`);
    if (s.value) {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('-'))) {
        throw new UsageError(`gpuext ${command}: option '--${name}' needs a value`);
      }
      options.set(name, v);
    } else {
      if (inline !== undefined) throw new UsageError(`gpuext ${command}: option '--${name}' takes no value`);
      options.set(name, true);
    }
  }
  return { options, positionals };
}

export function stringOption(p: ParsedArgs, name: string): string | undefined {
  const v = p.options.get(name);
  return typeof v === 'string' ? v : undefined;
}

export function flag(p: ParsedArgs, name: string): boolean {
  return p.options.get(name) === true;
}

/** Shows an argument array as a shell would need it (for --verbose output only; never run). */
export function formatCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
