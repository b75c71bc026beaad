// The einsum equation, read as torch.einsum reads it: subscripts are the
// letters a-z and A-Z, spaces are ignored, terms are separated by commas,
// `->` introduces the output (without it the output is implicit: the
// ellipsis dims, then the letters that appear exactly once in the whole
// equation, in ASCII order, capitals first), and `...` once per term stands
// for the dims its operand has beyond its letters. The ellipsis dims of all
// operands broadcast, aligned from the right; an explicit output without
// `...` sums them. A letter repeated within one term takes that operand's
// diagonal; letters missing from the output are summed.
//
// Labels are numbers: 0-25 for A-Z, 26-51 for a-z (so sorting them sorts
// capitals first, as torch does) and 52 + k for ellipsis dim k of the
// broadcast ellipsis (k counted from its left).

/** The labels of each operand's dims, and of the output's. */
export interface EinsumSpec {
  inputs: number[][];
  output: number[];
  /** How many dims the broadcast ellipsis has (0 when no term uses `...`). */
  ellipsisDims: number;
}

export const LETTERS = 52;

/** A label as the equation writes it (`...[k]` for an ellipsis dim). */
export function labelName(l: number): string {
  if (l < 26) return String.fromCharCode(65 + l);
  if (l < LETTERS) return String.fromCharCode(97 + l - 26);
  return `...[${l - LETTERS}]`;
}

interface Term {
  letters: number[];
  /** The position of `...` among the letters (its index in `letters` order), or -1. */
  ellipsisAt: number;
}

function labelOf(c: string): number {
  const code = c.charCodeAt(0);
  if (code >= 65 && code <= 90) return code - 65;
  if (code >= 97 && code <= 122) return code - 97 + 26;
  return -1;
}

/** One term (without spaces): its letters and where `...` is. `at` is the term's offset in the equation, for messages. */
function parseTerm(term: string, at: number, fn: string, what: string): Term {
  const letters: number[] = [];
  let ellipsisAt = -1;
  for (let i = 0; i < term.length; i++) {
    const c = term[i];
    if (c === '.') {
      if (term.slice(i, i + 3) !== '...') {
        throw new SyntaxError(`${fn}: equation: '.' at index ${at + i} is not part of an ellipsis '...' (${what})`);
      }
      if (ellipsisAt >= 0) throw new SyntaxError(`${fn}: equation: ${what} has more than one ellipsis '...'`);
      ellipsisAt = letters.length;
      i += 2;
      continue;
    }
    const l = labelOf(c);
    if (l < 0) throw new SyntaxError(`${fn}: equation: invalid subscript '${c}' at index ${at + i} (${what}); subscripts are the letters a-z and A-Z`);
    letters.push(l);
  }
  return { letters, ellipsisAt };
}

/**
 * The labels of an einsum over operands of these numbers of dims; a
 * SyntaxError or RangeError naming `fn` and what is wrong otherwise.
 */
export function parseEinsum(equation: string, ndims: readonly number[], fn: string): EinsumSpec {
  // Spaces go, but indices in messages count them: keep each kept char's original index.
  const kept: number[] = [];
  let eq = '';
  for (let i = 0; i < equation.length; i++) {
    if (/\s/.test(equation[i])) continue;
    kept.push(i);
    eq += equation[i];
  }
  const arrow = eq.indexOf('->');
  if (arrow >= 0 && eq.indexOf('->', arrow + 1) >= 0) throw new SyntaxError(`${fn}: equation '${equation}' has more than one '->'`);
  const lhs = arrow >= 0 ? eq.slice(0, arrow) : eq;
  const pieces = lhs.split(',');
  if (pieces.length !== ndims.length) {
    throw new RangeError(`${fn}: equation '${equation}' has ${pieces.length} input term${pieces.length === 1 ? '' : 's'} but ` +
      `${ndims.length} operand${ndims.length === 1 ? ' was' : 's were'} given`);
  }
  const terms: Term[] = [];
  let offset = 0;
  pieces.forEach((p, k) => {
    terms.push(parseTerm(p, kept[offset] ?? equation.length, fn, `the term of operands[${k}]`));
    offset += p.length + 1;
  });
  // Each operand's ellipsis dims: what its dims leave beyond its letters.
  const ell = terms.map((t, k) => {
    const extra = ndims[k] - t.letters.length;
    const term = pieces[k] === '' ? "''" : `'${pieces[k]}'`;
    if (t.ellipsisAt < 0 && extra !== 0) {
      throw new RangeError(`${fn}: the term ${term} of operands[${k}] has ${t.letters.length} subscript${t.letters.length === 1 ? '' : 's'} ` +
        `but the operand has ${ndims[k]} dimension${ndims[k] === 1 ? '' : 's'}`);
    }
    if (extra < 0) {
      throw new RangeError(`${fn}: the term ${term} of operands[${k}] has ${t.letters.length} subscripts but the operand has only ${ndims[k]} dimensions`);
    }
    return t.ellipsisAt < 0 ? 0 : extra;
  });
  const ellipsisDims = Math.max(0, ...ell);
  const inputs = terms.map((t, k) => {
    if (t.ellipsisAt < 0) return t.letters.slice();
    const e = ell[k];
    const dots = Array.from({ length: e }, (_, j) => LETTERS + ellipsisDims - e + j);  // right-aligned
    return [...t.letters.slice(0, t.ellipsisAt), ...dots, ...t.letters.slice(t.ellipsisAt)];
  });
  const count = new Array<number>(LETTERS).fill(0);
  for (const t of terms) for (const l of t.letters) count[l]++;
  const anyEllipsis = terms.some((t) => t.ellipsisAt >= 0);
  const dotsAll = Array.from({ length: ellipsisDims }, (_, j) => LETTERS + j);
  let output: number[];
  if (arrow < 0) {
    output = [...(anyEllipsis ? dotsAll : []), ...count.flatMap((c, l) => (c === 1 ? [l] : []))];
  } else {
    const rhs = eq.slice(arrow + 2);
    const out = parseTerm(rhs, kept[arrow + 2] ?? equation.length, fn, 'the output');
    out.letters.forEach((l, i) => {
      if (count[l] === 0) throw new RangeError(`${fn}: output subscript '${labelName(l)}' does not appear in any input term`);
      if (out.letters.indexOf(l) !== i) throw new RangeError(`${fn}: output subscript '${labelName(l)}' appears more than once in the output`);
    });
    output = out.ellipsisAt < 0 ? out.letters : [...out.letters.slice(0, out.ellipsisAt), ...dotsAll, ...out.letters.slice(out.ellipsisAt)];
  }
  return { inputs, output, ellipsisDims };
}
