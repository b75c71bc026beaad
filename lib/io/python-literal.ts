// The Python literals of a .npy header: `{'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }` is the repr() of a dict, which NumPy reads with
// ast.literal_eval. This reads the literals that function accepts and the
// header could hold, keeping what NumPy's checks look at: tuples apart from
// lists (a list shape is refused), integers apart from floats and booleans
// (exact, as bigints), str apart from bytes. Integers in any base, with
// underscores and one sign; strings with prefixes, escapes and implicit
// concatenation; comments; dicts, sets, None, True, False. Python 2's `3L`
// only when asked (NumPy filters it out of version 1.0 and 2.0 headers).
// Nesting is bounded as Python's parser bounds it (200 brackets), so a
// header of a million '(' is an error, not a stack overflow.

/** A tuple, list or set: what NumPy tells apart (a shape must be a tuple). */
export interface PySequence {
  kind: 'tuple' | 'list' | 'set';
  items: PyValue[];
}

/** bytes (b'...'), kept apart from str (a bytes descr is refused by NumPy). */
export interface PyBytes {
  kind: 'bytes';
  text: string;
}

/** A Python value: int as bigint, float as number, dict as a Map (keys of any literal). */
export type PyValue = string | bigint | number | boolean | null | PySequence | PyBytes | Map<PyValue, PyValue>;

/** Python's tokenizer refuses more brackets open at once ("too many nested parentheses"). */
export const MAX_NESTING = 200;

const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '\n': '',
};

/** Python's integer literals (PEP 515 underscores), with an optional L of Python 2. */
const INT = /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|[1-9](?:_?\d)*|0(?:_?0)*)(L?)(?![\w.])/;
/** Python's float and imaginary literals ('1.', '.5', '1e3', '01.5', '2j'); an int's digits alone are not one. */
const FLOAT = /^(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*(?:[eE][+-]?\d(?:_?\d)*)?|\d(?:_?\d)*\.(?:[eE][+-]?\d(?:_?\d)*)?|\d(?:_?\d)*[eE][+-]?\d(?:_?\d)*)[jJ]?|^\d(?:_?\d)*[jJ]/;

/** Options of parsePythonLiteral. */
export interface LiteralOptions {
  /** Accept Python 2's long suffix (`3L`), as NumPy does in .npy headers of version 1.0 and 2.0. */
  allowLong?: boolean;
}

/** Parses `text` as one Python literal, as ast.literal_eval would; a SyntaxError says where it fails. */
export function parsePythonLiteral(text: string, opts: LiteralOptions = {}): PyValue {
  return new LiteralParser(text, opts).parse();
}

/** The reader of one literal: the text, where it is, and how many brackets are open. */
class LiteralParser {
  readonly #text: string;
  readonly #opts: LiteralOptions;
  #i = 0;
  #depth = 0;

  constructor(text: string, opts: LiteralOptions) {
    this.#text = text;
    this.#opts = opts;
  }

  parse(): PyValue {
    const result = this.#value();
    this.#skip();
    if (this.#i < this.#text.length) this.#fail('text after the value');
    return result;
  }

  #fail(what: string): never {
    throw new SyntaxError(`${what} at character ${this.#i} of ${JSON.stringify(this.#text.length > 120 ? `${this.#text.slice(0, 120)}...` : this.#text)}`);
  }

  #skip(): void {
    for (;;) {
      while (this.#i < this.#text.length && /\s/.test(this.#text[this.#i])) this.#i++;
      if (this.#text[this.#i] === '\\' && this.#text[this.#i + 1] === '\n') this.#i += 2;
      else if (this.#text[this.#i] === '#') while (this.#i < this.#text.length && this.#text[this.#i] !== '\n') this.#i++;
      else return;
    }
  }

  #escape(raw: boolean): string {
    const c = this.#text[++this.#i];
    if (c === undefined) return '\\';
    if (raw) {
      // A raw string keeps the backslash and the character after it (an escaped quote does not end it).
      this.#i++;
      return `\\${c}`;
    }
    if (c in SIMPLE_ESCAPES) {
      this.#i++;
      return SIMPLE_ESCAPES[c];
    }
    const hexLength = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
    if (hexLength > 0) {
      const hex = this.#text.slice(this.#i + 1, this.#i + 1 + hexLength);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== hexLength) this.#fail('a truncated \\x, \\u or \\U escape');
      this.#i += hexLength + 1;
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) this.#fail('an escape beyond Unicode');
      return String.fromCodePoint(code);
    }
    const octal = /^[0-7]{1,3}/.exec(this.#text.slice(this.#i, this.#i + 3));
    if (octal !== null) {
      this.#i += octal[0].length;
      return String.fromCharCode(parseInt(octal[0], 8));
    }
    return '\\';  // an unknown escape keeps its backslash (the character follows as itself)
  }

  /** One quoted string (after its prefix); triple quotes are not read (repr() never writes them). */
  #quoted(raw: boolean): string {
    const quote = this.#text[this.#i++];
    if (this.#text.startsWith(quote.repeat(2), this.#i)) this.#fail('a triple-quoted string');
    let out = '';
    while (this.#i < this.#text.length && this.#text[this.#i] !== quote) {
      if (this.#text[this.#i] === '\n') this.#fail('a line break in a string');
      if (this.#text[this.#i] === '\\') out += this.#escape(raw);
      else out += this.#text[this.#i++];
    }
    if (this.#i >= this.#text.length) this.#fail('an unterminated string');
    this.#i++;
    return out;
  }

  /** Adjacent string literals, concatenated as Python does; bytes and str cannot mix. */
  #strings(): string | PyBytes {
    let out = '', bytes: boolean | undefined;
    for (;;) {
      const m = /^([rRbBuU]{0,2})['"]/.exec(this.#text.slice(this.#i, this.#i + 3));
      if (m === null || !/^(?:[rR]?[bB]?|[bB][rR]|[uU])$/.test(m[1])) break;
      const isBytes = /[bB]/.test(m[1]);
      if (bytes !== undefined && bytes !== isBytes) this.#fail('bytes and str literals concatenated');
      bytes = isBytes;
      this.#i += m[1].length;
      out += this.#quoted(/[rR]/.test(m[1]));
      this.#skip();
    }
    if (bytes === undefined) this.#fail('an unexpected character');
    return bytes ? { kind: 'bytes', text: out } : out;
  }

  /** Items up to `close`, separated by commas (a trailing comma allowed); whether a comma was seen. */
  #items<T>(close: string, item: () => T): { out: T[]; comma: boolean } {
    const out: T[] = [];
    let comma = false;
    for (;;) {
      this.#skip();
      if (this.#text[this.#i] === close) {
        this.#i++;
        this.#depth--;
        return { out, comma };
      }
      out.push(item());
      this.#skip();
      if (this.#text[this.#i] === ',') {
        this.#i++;
        comma = true;
      } else if (this.#text[this.#i] !== close) {
        this.#fail(`expected ',' or '${close}'`);
      }
    }
  }

  #open(): void {
    if (++this.#depth > MAX_NESTING) this.#fail(`brackets nested more than ${MAX_NESTING} deep (Python's parser limit)`);
    this.#i++;
  }

  #number(): bigint | number {
    const sign = this.#text[this.#i] === '-' || this.#text[this.#i] === '+' ? this.#text[this.#i++] : '';
    if (sign !== '') this.#skip();
    const rest = this.#text.slice(this.#i, this.#i + 64);
    const int = INT.exec(rest);
    if (int !== null && int[1] !== '' && !this.#opts.allowLong) this.#fail(`a Python 2 long integer ('${int[0]}'), which NumPy reads in .npy headers of version 1.0 and 2.0 only`);
    if (int !== null) {
      this.#i += int[0].length;
      const v = BigInt(int[0].replace(/_/g, '').replace(/L$/, '').replace(/^0+(?=\d)/, ''));
      return sign === '-' ? -v : v;
    }
    const float = FLOAT.exec(rest);
    if (float === null || float[0] === '') return this.#fail('an unexpected character');
    this.#i += float[0].length;
    return Number(`${sign}${float[0].replace(/_/g, '').replace(/[jJ]$/, '')}`);
  }

  #value(): PyValue {
    this.#skip();
    const c = this.#text[this.#i];
    if (c === '{') return this.#dictOrSet();
    if (c === '(') {
      this.#open();
      const { out, comma } = this.#items(')', () => this.#value());
      // (x) is x itself; (x,) and () are tuples.
      return out.length === 1 && !comma ? out[0] : { kind: 'tuple', items: out };
    }
    if (c === '[') {
      this.#open();
      return { kind: 'list', items: this.#items(']', () => this.#value()).out };
    }
    const word = /^(True|False|None)(?!\w)/.exec(this.#text.slice(this.#i, this.#i + 6));
    if (word !== null) {
      this.#i += word[0].length;
      return word[0] === 'None' ? null : word[0] === 'True';
    }
    if (c !== undefined && /[-+\d.]/.test(c)) return this.#number();
    return this.#strings();
  }

  /** A dict or a set, at its '{'. */
  #dictOrSet(): PyValue {
    this.#open();
    this.#skip();
    if (this.#text[this.#i] === '}') return this.#items('}', () => this.#value()).out.length === 0 ? new Map() : this.#fail('a bad dict');
    const first = this.#value();
    this.#skip();
    if (this.#text[this.#i] !== ':') {
      // A set: its first item is read; the rest follow as a sequence.
      if (this.#text[this.#i] === ',') this.#i++;
      else if (this.#text[this.#i] !== '}') this.#fail("expected ',', ':' or '}'");
      return { kind: 'set', items: [first, ...this.#items('}', () => this.#value()).out] };
    }
    this.#i++;
    const pairs: [PyValue, PyValue][] = [[first, this.#value()]];
    this.#skip();
    if (this.#text[this.#i] === ',') this.#i++;
    else if (this.#text[this.#i] !== '}') this.#fail("expected ',' or '}'");
    for (const pair of this.#items('}', (): [PyValue, PyValue] => {
      const key = this.#value();
      this.#skip();
      if (this.#text[this.#i++] !== ':') this.#fail("expected ':'");
      return [key, this.#value()];
    }).out) pairs.push(pair);
    return new Map(pairs);
  }
}
