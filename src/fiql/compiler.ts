// Turns a parsed FIQL query into a predicate over records (wire contract §7). Each selector has a type
// that decides how its values compare: strings with `*` wildcards for `==`/`!=`, numbers, ISO dates,
// booleans. Selector names and values are checked once, here, so a bad query fails before any record.
import { FiqlError } from '../errors';
import { parseFiql, type FiqlComparison, type FiqlNode } from './parser';

export type SelectorType = 'string' | 'number' | 'date' | 'boolean';

export interface Selector<R> {
  readonly type: SelectorType;
  /** The record's value: string, number, boolean, Date or ISO string; undefined/null when absent. */
  get(rec: R): unknown;
}

export type Selectors<R> = Readonly<Record<string, Selector<R>>>;
export type Predicate<R> = (rec: R) => boolean;

/**
 * Selectors for plain objects from dotted paths: `fieldSelectors({name: 'string', 'targetFormat.name': 'string'})`.
 */
export function fieldSelectors<R>(types: Readonly<Record<string, SelectorType>>): Selectors<R> {
  const out: Record<string, Selector<R>> = {};
  for (const [path, type] of Object.entries(types)) {
    const keys = path.split('.');
    out[path] = {
      type,
      get: (rec) => {
        let v: unknown = rec;
        for (const k of keys) {
          if (v === null || typeof v !== 'object') return undefined;
          v = (v as Record<string, unknown>)[k];
        }
        return v;
      },
    };
  }
  return out;
}

/**
 * Compile a query (text or parsed) against the selectors. Rules where the contract is silent:
 * string compares are case-sensitive, by UTF-16 code unit; `*` is a wildcard only for `==`/`!=`;
 * a record without a value for the selector matches `!=` and nothing else.
 */
export function compileFiql<R>(query: FiqlNode | string, selectors: Selectors<R>): Predicate<R> {
  const node = typeof query === 'string' ? parseFiql(query) : query;
  return compileNode(node, selectors);
}

function compileNode<R>(node: FiqlNode, selectors: Selectors<R>): Predicate<R> {
  if (node.type === 'cmp') return compileComparison(node, selectors);
  const parts = node.children.map((c) => compileNode(c, selectors));
  if (parts.length === 0) throw new FiqlError(`empty '${node.type}' group`, 0);
  if (node.type === 'and') {
    if (parts.length === 2) {
      const [a, b] = parts as [Predicate<R>, Predicate<R>];
      return (r) => a(r) && b(r);
    }
    return (r) => parts.every((p) => p(r));
  }
  return (r) => parts.some((p) => p(r));
}

function compileComparison<R>(c: FiqlComparison, selectors: Selectors<R>): Predicate<R> {
  const sel = Object.prototype.hasOwnProperty.call(selectors, c.selector) ? selectors[c.selector] : undefined;
  if (!sel) {
    const known = Object.keys(selectors);
    const list = known.length > 20 ? `${known.slice(0, 20).join(', ')}, …` : known.join(', ');
    throw new FiqlError(`unknown selector '${c.selector}' (known: ${list})`, c.position ?? 0);
  }
  const test = valueTest(c, sel.type);
  const get = sel.get;
  const negated = c.op === '!=';
  // `!=` is the negation of `==`, and so also holds for a record without a value.
  if (negated) {
    return (r) => {
      const v = get(r);
      return v === undefined || v === null || !test(v);
    };
  }
  return (r) => {
    const v = get(r);
    return v !== undefined && v !== null && test(v);
  };
}

/** The test for one comparison; for `!=` it is the `==` test, negated by the caller. */
function valueTest(c: FiqlComparison, type: SelectorType): (v: unknown) => boolean {
  const at = c.valuePosition ?? c.position ?? 0;
  switch (type) {
    case 'string': {
      if (c.op === '==' || c.op === '!=') {
        const m = globMatcher(c.value);
        return (v) => m(typeof v === 'string' ? v : String(v));
      }
      return ordered(c.op, (v) => String(v), c.value, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
    }
    case 'number': {
      const n = parseNumber(c.value);
      if (n === undefined) throw new FiqlError(`'${c.selector}' takes a number, got ${JSON.stringify(c.value)}`, at);
      if (c.op === '==' || c.op === '!=') return (v) => toNumber(v) === n;
      return ordered(c.op, toNumber, n, (a, b) => a - b);
    }
    case 'date': {
      const span = parseDateSpan(c.value);
      if (!span) throw new FiqlError(`'${c.selector}' takes an ISO-8601 date, got ${JSON.stringify(c.value)}`, at);
      // A value names a span as long as its precision (a whole day for `2023-06-10`), so `==` means "within"
      // and `=le=` means "on or before" that day.
      const [lo, hi] = span;
      switch (c.op) {
        case '==':
        case '!=':
          return (v) => { const t = toTime(v); return t >= lo && t < hi; };
        case '=lt=': return (v) => toTime(v) < lo;
        case '=le=': return (v) => toTime(v) < hi;
        case '=gt=': return (v) => toTime(v) >= hi;
        case '=ge=': return (v) => toTime(v) >= lo;
      }
      break;
    }
    case 'boolean': {
      const lower = c.value.toLowerCase();
      if (lower !== 'true' && lower !== 'false') {
        throw new FiqlError(`'${c.selector}' takes true or false, got ${JSON.stringify(c.value)}`, at);
      }
      if (c.op !== '==' && c.op !== '!=') throw new FiqlError(`'${c.selector}' is a boolean: only == and != apply`, c.position ?? at);
      const b = lower === 'true';
      return (v) => (typeof v === 'boolean' ? v : String(v).toLowerCase() === 'true') === b;
    }
  }
  throw new FiqlError(`selector '${c.selector}' has an unknown type '${String(type)}'`, c.position ?? 0);
}

function ordered<T>(op: FiqlComparison['op'], conv: (v: unknown) => T, ref: T, cmp: (a: T, b: T) => number): (v: unknown) => boolean {
  switch (op) {
    case '=lt=': return (v) => cmp(conv(v), ref) < 0;
    case '=le=': return (v) => cmp(conv(v), ref) <= 0;
    case '=gt=': return (v) => cmp(conv(v), ref) > 0;
    default: return (v) => cmp(conv(v), ref) >= 0;
  }
}

/** A matcher for a value with `*` wildcards at any position, without building a regular expression. */
export function globMatcher(pattern: string): (s: string) => boolean {
  if (!pattern.includes('*')) return (s) => s === pattern;
  const parts = pattern.split('*');
  const head = parts[0]!;
  const tail = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((p) => p !== '');
  const min = head.length + tail.length;
  if (middle.length === 0) {
    if (tail === '') return (s) => s.startsWith(head);
    if (head === '') return (s) => s.endsWith(tail);
    return (s) => s.length >= min && s.startsWith(head) && s.endsWith(tail);
  }
  if (middle.length === 1 && head === '' && tail === '') {
    const only = middle[0]!;
    return (s) => s.includes(only);
  }
  return (s) => {
    if (s.length < min || !s.startsWith(head) || !s.endsWith(tail)) return false;
    const end = s.length - tail.length;
    let pos = head.length;
    for (const m of middle) {
      const i = s.indexOf(m, pos);
      if (i < 0 || i + m.length > end) return false;
      pos = i + m.length;
    }
    return true;
  };
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function parseNumber(s: string): number | undefined {
  if (!NUMBER.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}

function toTime(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v instanceof Date) return v.getTime();
  const span = parseDateSpan(String(v));
  return span ? span[0] : NaN;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** `[start, end)` in epoch ms of the span an ISO date names; times without a zone are UTC. */
export function parseDateSpan(s: string): [number, number] | undefined {
  const m = DATE.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || Number(sec ?? 0) > 59)) return undefined;
  // setUTCFullYear, not Date.UTC, which reads years 0–99 as 1900–1999.
  const dt = new Date(0);
  dt.setUTCFullYear(Number(y), month - 1, day);
  // A day past the month's end (2023-02-31) rolls over into the next month: refuse it instead.
  if (dt.getUTCDate() !== day) return undefined;
  dt.setUTCHours(Number(h ?? 0), Number(mi ?? 0), Number(sec ?? 0), frac ? Math.floor(Number(`0${frac}`) * 1000) : 0);
  let t = dt.getTime();
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    t -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  }
  const unit = frac ? 1 : sec !== undefined ? 1000 : h !== undefined ? 60_000 : 86_400_000;
  return [t, t + unit];
}
