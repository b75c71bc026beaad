// The errors and warnings of a build's link and load steps, in the user's
// terms (diagnostics.ts finds the places): a failed link by its first
// undefined reference or multiple definition, a registration error at the
// m.def it is about, and a GX_LIBRARY namespace other than the extension's name.
import * as path from 'path';

import type { ExtensionDescriptor } from '../extension/runtime';
import { linkProblem, locateDef, locateLibrary, locateSymbol, undefinedSymbol, type SourcePlace } from './diagnostics';
import { BuildError, compileError, displayPath, type CompileFailure } from './errors';

export interface LinkContext {
  /** The sources (absolute), in the order of `objects`. */
  sources: readonly string[];
  objects: readonly string[];
  /** Directory paths are shown relative to (the project). */
  base: string;
}

/** A failed link: the first undefined reference / multiple definition when the log has one, else the first error. */
export function linkError(f: CompileFailure, ctx: LinkContext): BuildError {
  const names = new Map<string, string>();
  ctx.objects.forEach((o, i) => {
    if (ctx.sources[i] !== undefined) names.set(o, displayPath(ctx.sources[i], ctx.base));
  });
  const d = linkProblem(f.log, names, ctx.sources, ctx.base);
  if (d === undefined) return compileError(f);
  return new BuildError({
    file: d.file || displayPath(f.source, ctx.base), line: d.line, compilerMessage: d.message, context: d.context, log: f.log,
    command: f.command, stage: 'link', verbose: f.verbose,
  });
}

function context(p: SourcePlace): string[] {
  return [`${String(p.line).padStart(5)} | ${p.text}`];
}

/**
 * A failure to open or register the just-linked extension (under its
 * temporary name `tmp`), shown as `node` and, when it is about an m.def,
 * at that line of its source.
 */
export function loadError(message: string, tmp: string, node: string, sources: readonly string[], base: string): BuildError {
  const shown = displayPath(node, base);
  // The core says "loading extension <file>: [<file>: ]why"; the error's place names the file already.
  const named = message.split(tmp).join(shown);
  const prefix = `loading extension ${shown}: `;
  let msg = named.startsWith(prefix) ? named.slice(prefix.length) : named;
  if (msg.startsWith(`${shown}: `)) msg = msg.slice(shown.length + 2);
  const missing = undefinedSymbol(msg);
  const place = missing === undefined ? locateDef(msg, sources) : locateSymbol(msg, sources);
  return new BuildError({
    file: place ? displayPath(place.file, base) : shown, line: place?.line, compilerMessage: missing ?? msg,
    context: place ? context(place) : undefined, log: message, stage: 'load',
  });
}

/** A warning for each GX_LIBRARY namespace of `desc` other than the extension's `name` (its ops' errors would carry the other name). */
export function namespaceWarnings(desc: ExtensionDescriptor, name: string, configFile: string, sources: readonly string[],
  base: string): string[] {
  const namespaces = new Map<string, string>();
  for (const op of desc.ops) {
    const ns = op.qualifiedName.slice(0, op.qualifiedName.indexOf('::'));
    if (ns !== name && !namespaces.has(ns)) namespaces.set(ns, op.qualifiedName);
  }
  return [...namespaces].map(([ns, example]) => {
    const place = locateLibrary(ns, sources);
    const where = place ? `${displayPath(place.file, base)}:${place.line}: ` : '';
    return `warning: ${where}GX_LIBRARY(${ns}, m) registers its ops under '${ns}' (${example}), but ${path.basename(configFile)} ` +
      `names the extension '${name}'; write GX_LIBRARY(${name}, m) so that its ops and their errors carry the extension's name`;
  });
}
