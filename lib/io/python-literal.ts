// The Python literals of a .npy header: `{'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }` is the repr() of a dict, read by NumPy with
// ast.literal_eval. This reads the part of that grammar the header uses:
// dicts, tuples, lists, strings, integers (Python 2's `3L` too), True, False
// and None.

/** A Python value: tuples and lists as arrays, dicts as Maps (their keys may be any literal). */
export type PyValue = string | number | boolean | null | PyValue[] | Map<PyValue, PyValue>;

/** Parses `text` as one Python literal; a SyntaxError says where it fails. */
export function parsePythonLiteral(text: string): PyValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at character ${i} of ${JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}...` : text)}`);
  };
  const skip = (): void => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const string = (): string => {
    const quote = text[i++];
    let out = '';
    while (i < text.length && text[i] !== quote) {
      if (text[i] === '\\') {
        const c = text[++i];
        const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0' };
        if (c === 'x' || c === 'u') {
          const len = c === 'x' ? 2 : 4;
          const hex = text.slice(i + 1, i + 1 + len);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) fail('a bad escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += len + 1;
          continue;
        }
        if (!(c in simple)) fail('an unknown escape');
        out += simple[c];
        i++;
        continue;
      }
      out += text[i++];
    }
    if (i >= text.length) fail('an unterminated string');
    i++;
    return out;
  };
  /** Items up to `close`, separated by commas (a trailing comma allowed). */
  const items = <T>(close: string, item: () => T): T[] => {
    const out: T[] = [];
    for (;;) {
      skip();
      if (text[i] === close) {
        i++;
        return out;
      }
      out.push(item());
      skip();
      if (text[i] === ',') i++;
      else if (text[i] !== close) fail(`expected ',' or '${close}'`);
    }
  };
  const value = (): PyValue => {
    skip();
    const c = text[i];
    if (c === '{') {
      i++;
      const pairs = items('}', (): [PyValue, PyValue] => {
        const key = value();
        skip();
        if (text[i++] !== ':') fail("expected ':'");
        return [key, value()];
      });
      return new Map(pairs);
    }
    if (c === '(') {
      i++;
      return items(')', value);
    }
    if (c === '[') {
      i++;
      return items(']', value);
    }
    if (c === "'" || c === '"') return string();
    const word = /^(?:-?\d+L?|True|False|None)/.exec(text.slice(i));
    if (word === null) return fail('an unexpected character');
    i += word[0].length;
    if (word[0] === 'True') return true;
    if (word[0] === 'False') return false;
    if (word[0] === 'None') return null;
    return Number(word[0].replace('L', ''));
  };
  const result = value();
  skip();
  if (i < text.length) fail('text after the value');
  return result;
}
