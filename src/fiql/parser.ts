// FIQL parser (wire contract §7): `==`, `!=`, `=lt=`, `=le=`, `=gt=`, `=ge=`; `;` AND binds tighter than
// `,` OR; parentheses; values bare or quoted with `'` or `"`. Every failure is a FiqlError carrying the
// 0-based offset of the problem, so the server can answer 400 naming the position.
import { FiqlError } from '../errors';

export type FiqlOp = '==' | '!=' | '=lt=' | '=le=' | '=gt=' | '=ge=';

export interface FiqlComparison {
  type: 'cmp';
  selector: string;
  op: FiqlOp;
  /** The value as meant: quotes removed, backslash escapes resolved. */
  value: string;
  /** Whether the value was written between quotes. */
  quoted: boolean;
  /** Offset of the selector in the query text (for errors raised later, e.g. an unknown selector). */
  position?: number;
  /** Offset of the value (of its opening quote when quoted). */
  valuePosition?: number;
}

export interface FiqlGroup {
  type: 'and' | 'or';
  children: FiqlNode[];
}

export type FiqlNode = FiqlGroup | FiqlComparison;

/** Longest query accepted; a URL query string is far shorter in practice. */
export const MAX_QUERY_LENGTH = 64 * 1024;
/** Deepest parenthesis nesting accepted: keeps the recursive descent far from the stack limit. */
export const MAX_DEPTH = 64;

const OPS: readonly FiqlOp[] = ['==', '!=', '=lt=', '=le=', '=gt=', '=ge='];
const SELECTOR = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
/** Characters that end a bare value: the structure characters and the quotes. */
const BARE_STOP = new Set([';', ',', '(', ')', "'", '"']);

/**
 * Parse a FIQL query. Whitespace between tokens is ignored; a bare value runs up to the next
 * `;` `,` `(` `)` or quote and is trimmed. Inside quotes a backslash escapes the next character
 * (`\'`, `\"`, `\\`), which is how `fiql` writes a quote inside a value.
 */
export function parseFiql(text: string): FiqlNode {
  if (typeof text !== 'string') throw new FiqlError('query must be a string', 0);
  if (text.length > MAX_QUERY_LENGTH) throw new FiqlError(`query longer than ${MAX_QUERY_LENGTH} characters`, MAX_QUERY_LENGTH);
  const p = new Parser(text);
  p.skipSpace();
  if (p.atEnd()) throw new FiqlError('empty query', 0);
  const node = p.parseOr(0);
  p.skipSpace();
  if (!p.atEnd()) {
    const c = text[p.pos];
    throw new FiqlError(c === ')' ? "unbalanced ')'" : `unexpected ${describe(c!)}`, p.pos);
  }
  return node;
}

class Parser {
  pos = 0;
  constructor(private readonly s: string) {}

  atEnd(): boolean {
    return this.pos >= this.s.length;
  }

  skipSpace(): void {
    while (this.pos < this.s.length && isSpace(this.s[this.pos]!)) this.pos++;
  }

  parseOr(depth: number): FiqlNode {
    return this.parseList(',', 'or', () => this.parseAnd(depth));
  }

  parseAnd(depth: number): FiqlNode {
    return this.parseList(';', 'and', () => this.parsePrimary(depth));
  }

  /** `item (sep item)*`; one item stands for itself. */
  parseList(sep: ';' | ',', type: FiqlGroup['type'], item: () => FiqlNode): FiqlNode {
    const children = [item()];
    for (;;) {
      this.skipSpace();
      if (this.s[this.pos] !== sep) break;
      this.pos++;
      children.push(item());
    }
    return children.length === 1 ? children[0]! : { type, children };
  }

  parsePrimary(depth: number): FiqlNode {
    this.skipSpace();
    if (this.s[this.pos] === '(') {
      const open = this.pos;
      if (depth >= MAX_DEPTH) throw new FiqlError(`parentheses nested deeper than ${MAX_DEPTH}`, open);
      this.pos++;
      const inner = this.parseOr(depth + 1);
      this.skipSpace();
      if (this.s[this.pos] !== ')') {
        throw new FiqlError(this.atEnd() ? `'(' at ${open} is never closed` : `expected ')', found ${describe(this.s[this.pos]!)}`, this.pos);
      }
      this.pos++;
      return inner;
    }
    return this.parseComparison();
  }

  parseComparison(): FiqlComparison {
    const position = this.pos;
    if (this.atEnd()) throw new FiqlError('expected a selector, found the end of the query', position);
    SELECTOR.lastIndex = position;
    const m = SELECTOR.exec(this.s);
    if (!m) throw new FiqlError(`expected a selector, found ${describe(this.s[position]!)}`, position);
    const selector = m[0];
    this.pos += selector.length;
    this.skipSpace();
    const opPos = this.pos;
    const op = OPS.find((o) => this.s.startsWith(o, opPos));
    if (!op) {
      const found = this.atEnd() ? 'the end of the query' : describe(this.s.slice(opPos, opPos + 4));
      throw new FiqlError(`expected an operator (${OPS.join(' ')}) after '${selector}', found ${found}`, opPos);
    }
    this.pos += op.length;
    this.skipSpace();
    const valuePosition = this.pos;
    const c = this.s[this.pos];
    if (c === "'" || c === '"') {
      return { type: 'cmp', selector, op, value: this.readQuoted(c), quoted: true, position, valuePosition };
    }
    let end = this.pos;
    while (end < this.s.length && !BARE_STOP.has(this.s[end]!)) end++;
    const value = this.s.slice(this.pos, end).trim();
    if (value === '') {
      const what = end < this.s.length ? describe(this.s[end]!) : 'the end of the query';
      throw new FiqlError(`expected a value after '${selector}${op}', found ${what}`, valuePosition);
    }
    this.pos = end;
    return { type: 'cmp', selector, op, value, quoted: false, position, valuePosition };
  }

  /** A quoted value; the opening quote is at `this.pos`. */
  readQuoted(quote: string): string {
    const open = this.pos;
    let out = '';
    let i = open + 1;
    for (;;) {
      if (i >= this.s.length) throw new FiqlError(`quote ${quote} at ${open} is never closed`, open);
      const ch = this.s[i]!;
      if (ch === '\\') {
        if (i + 1 >= this.s.length) throw new FiqlError('backslash at the end of the query', i);
        out += this.s[i + 1];
        i += 2;
      } else if (ch === quote) {
        this.pos = i + 1;
        return out;
      } else {
        out += ch;
        i++;
      }
    }
  }
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

function describe(s: string): string {
  return JSON.stringify(s);
}
