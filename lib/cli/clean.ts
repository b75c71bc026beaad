// `gpuext clean [--config setup.config.json]`
import { clean } from '../toolkit/build';
import { DEFAULT_CONFIG_FILE, loadConfig } from '../toolkit/config';
import { displayPath } from '../toolkit/errors';
import { waitMessage } from '../toolkit/lock';
import { flag, parseArgs, stringOption } from './args';
import { defaultOutput, reportError, type Output } from './build';

export const CLEAN_USAGE = `usage: gpuext clean [--config setup.config.json]

Removes what \`gpuext build\` wrote: <outDir>/<name>.node, its bindings
(<name>.js and <name>.d.ts, or .mjs/.cjs/.d.mts/.d.cts) and the object
cache <outDir>/.gpuext.`;

export async function cleanCommand(argv: readonly string[], o: Output = defaultOutput()): Promise<number> {
  const args = parseArgs('clean', argv, { config: { value: true, alias: 'c' }, help: { value: false, alias: 'h' } });
  if (flag(args, 'help')) {
    o.out(CLEAN_USAGE);
    return 0;
  }
  if (args.positionals.length) {
    o.err(`gpuext clean: unexpected argument '${args.positionals[0]}'\n\n${CLEAN_USAGE}`);
    return 2;
  }
  try {
    const cfg = loadConfig(stringOption(args, 'config') ?? DEFAULT_CONFIG_FILE);
    const removed = await clean(cfg, (e) => {
      if (e.type === 'wait') o.err(waitMessage(e.holder, e.detail));
    });
    const shown = displayPath(cfg.outDir, process.cwd());
    o.out(removed.length ? `removed ${removed.length} build output${removed.length === 1 ? '' : 's'} of ${cfg.name} from ${shown}` : `nothing to clean in ${shown}`);
    return 0;
  } catch (e) {
    return reportError(e, o);
  }
}
