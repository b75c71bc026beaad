// The default group: the one initProcessGroup joins (torch's
// dist.group.WORLD), which gx.distributed's functions run on
// (lib/generated/collective-functions.ts).
import type { ProcessGroup } from './group';

let current: ProcessGroup | undefined;

/** The default group; an error naming `fn` when there is none. */
export function group(fn: string): ProcessGroup {
  if (current === undefined) throw new Error(`${fn}: no process group; call await gx.distributed.initProcessGroup() first`);
  return current;
}

/** The default group, or undefined before initProcessGroup. */
export const currentGroup = (): ProcessGroup | undefined => current;

/** Makes `g` the default group (undefined: none). */
export function setCurrentGroup(g: ProcessGroup | undefined): void {
  current = g;
}
