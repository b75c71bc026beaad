// A tiny glob: `*` (any characters but '/'), `**` (any number of directories),
// `?` (one character but '/'), `{a,b}` (either: "ops/**/*.{cu,cpp}"). Patterns are relative to a base directory or
// absolute. Walks skip node_modules and dot-directories unless the pattern
// names them literally. No dependency.
import * as fs from 'fs';
import * as path from 'path';

const MAGIC = /[*?]/;

function escapeRegExp(s: string): string {
  return s.replace(/[.+^${}()|[\]\\]/g, '\\$&');
}

/**
 * "ops/*.{cu,cpp}" -> ["ops/*.cu", "ops/*.cpp"]: the first brace group
 * expanded, recursively (nested and later groups too). A lone "{" or "}" is
 * literal.
 */
export function expandBraces(pattern: string): string[] {
  let depth = 0, open = -1;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '{') {
      if (depth++ === 0) open = i;
    } else if (ch === '}' && depth > 0 && --depth === 0) {
      const alternatives: string[] = [];
      let level = 0, from = open + 1;
      for (let j = open + 1; j < i; j++) {
        if (pattern[j] === '{') level++;
        else if (pattern[j] === '}') level--;
        else if (pattern[j] === ',' && level === 0) {
          alternatives.push(pattern.slice(from, j));
          from = j + 1;
        }
      }
      alternatives.push(pattern.slice(from, i));
      if (alternatives.length < 2) continue;  // "{a}" is literal, as in bash
      const head = pattern.slice(0, open), tail = pattern.slice(i + 1);
      return alternatives.flatMap((a) => expandBraces(`${head}${a}${tail}`));
    }
  }
  return [pattern];
}

/** Compiles a glob (with '/' separators) to a RegExp over '/'-separated paths. */
export function globToRegExp(pattern: string): RegExp {
  const parts = pattern.split('/');
  let re = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const last = i === parts.length - 1;
    if (part === '**') {
      // zero or more whole directories (or, last, anything below)
      re += last ? '.*' : '(?:[^/]+/)*';
      continue;
    }
    for (const ch of part) {
      if (ch === '*') re += '[^/]*';
      else if (ch === '?') re += '[^/]';
      else re += escapeRegExp(ch);
    }
    if (!last) re += '/';
  }
  return new RegExp(`^${re}$`);
}

/** True when `rel` (a '/'-separated path) matches `pattern`. */
export function matchGlob(pattern: string, rel: string): boolean {
  return globToRegExp(pattern).test(rel);
}

export function hasMagic(pattern: string): boolean {
  return MAGIC.test(pattern);
}

export interface GlobOptions {
  /** Absolute directories never descended into (e.g. the build output). */
  ignoreDirs?: string[];
}

function toSlash(p: string): string {
  return p.split(path.sep).join('/');
}

/**
 * Files (not directories) matching any of `patterns`, as absolute paths,
 * sorted and without duplicates. A pattern without wildcards names one file
 * and is returned only when that file exists.
 */
export function glob(patterns: readonly string[], base: string, opts: GlobOptions = {}): string[] {
  const found = new Set<string>();
  const ignore = new Set((opts.ignoreDirs ?? []).map((d) => path.resolve(d)));
  for (const raw of patterns.flatMap(expandBraces)) {
    const pattern = toSlash(raw).replace(/\/+$/, '');
    const abs = path.isAbsolute(raw) ? pattern : `${toSlash(path.resolve(base))}/${pattern.replace(/^\.\//, '')}`;
    const parts = abs.split('/');
    // The static prefix: the directories before the first part with a wildcard.
    let k = 0;
    while (k < parts.length && !MAGIC.test(parts[k])) k++;
    if (k === parts.length) {
      const file = path.normalize(abs);
      if (isFile(file)) found.add(file);
      continue;
    }
    const root = parts.slice(0, k).join('/') || '/';
    const rest = parts.slice(k).join('/');
    const re = globToRegExp(rest);
    const allowDot = /(^|\/)\.[^/]/.test(rest);
    const maxDepth = rest.split('/').includes('**') ? Infinity : rest.split('/').length;
    walk(path.normalize(root), '', 1, { re, allowDot, ignore, maxDepth }, found);
  }
  return [...found].sort();
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

interface Walk {
  re: RegExp;
  allowDot: boolean;
  ignore: Set<string>;
  maxDepth: number;
}

function walk(dir: string, rel: string, depth: number, w: Walk, out: Set<string>): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    const r = rel ? `${rel}/${e.name}` : e.name;
    let isDir = e.isDirectory();
    let isFileEntry = e.isFile();
    if (e.isSymbolicLink()) {
      // Links to files count; links to directories are not followed (no cycles).
      isDir = false;
      isFileEntry = isFile(full);
    }
    if (isDir) {
      if (depth >= w.maxDepth) continue;
      if ((!w.allowDot && e.name.startsWith('.')) || e.name === 'node_modules' || w.ignore.has(full)) continue;
      walk(full, r, depth + 1, w, out);
    } else if (isFileEntry && w.re.test(r)) {
      out.add(full);
    }
  }
}
