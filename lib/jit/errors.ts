// The error of a user's kernel function that cannot be compiled (its own
// module: the public declarations reach it without reaching the parser).

/** An error in a user's kernel function, quoting its line with a caret under the construct. */
export class JitError extends Error {
  constructor(fn: string, what: string, text: string, node?: { start: number; end: number }) {
    super(`${fn}: ${what}${node === undefined ? '' : `\n${quote(text, node.start)}`}`);
    this.name = 'JitError';
  }
}

function quote(text: string, at: number): string {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const lineEnd = text.indexOf('\n', at);
  const line = text.slice(lineStart, lineEnd < 0 ? text.length : lineEnd);
  const lineNo = text.slice(0, at).split('\n').length;
  return `  line ${lineNo}: ${line}\n  ${' '.repeat(`line ${lineNo}: `.length + (at - lineStart))}^`;
}
