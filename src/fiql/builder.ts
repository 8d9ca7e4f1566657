// FIQL builder: every value is written between single quotes with `\` and `'` escaped by a backslash,
// so a value can never change the structure of a query (wire contract §7). `parseFiql` reads back
// exactly the value given. `*` keeps its wildcard meaning for `==`/`!=` (it is not structure).
import { FiqlError } from '../errors';
import type { FiqlOp } from './parser';

const SELECTOR = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** One comparison as `cmp` writes it: needs no parentheses inside a group. */
const SINGLE = /^[A-Za-z_][A-Za-z0-9_.]*(?:==|!=|=(?:lt|le|gt|ge)=)'(?:[^'\\]|\\[^])*'$/;

/** A value as the builder writes it: `'…'` with `\` and `'` escaped. */
export function quoteFiqlValue(value: string): string {
  return `'${value.replace(/[\\']/g, '\\$&')}'`;
}

type Value = string | number | boolean | Date;

function valueText(v: Value): string {
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) throw new FiqlError('invalid Date value', 0);
    return v.toISOString();
  }
  if (typeof v === 'number' && !Number.isFinite(v)) throw new FiqlError(`number value must be finite, got ${v}`, 0);
  return String(v);
}

function cmp(op: FiqlOp) {
  return (selector: string, value: Value): string => {
    // A selector is code, not data: refuse one that would not parse rather than quote it.
    if (!SELECTOR.test(selector)) throw new FiqlError(`invalid selector ${JSON.stringify(selector)}`, 0);
    return `${selector}${op}${quoteFiqlValue(valueText(value))}`;
  };
}

function group(sep: ';' | ',') {
  return (...parts: Array<string | undefined | false>): string => {
    const kept = parts.filter((p): p is string => typeof p === 'string' && p !== '');
    if (kept.length === 0) throw new FiqlError(`${sep === ';' ? 'and' : 'or'}() needs at least one condition`, 0);
    return kept.length === 1 ? kept[0]! : kept.map((p) => (SINGLE.test(p) ? p : `(${p})`)).join(sep);
  };
}

/**
 * `fiql.and(fiql.eq('name', '*nginx*'), fiql.eq('arch', 'amd64'))` → `name=='*nginx*';arch=='amd64'`.
 * `and`/`or` skip `undefined`/`false` parts, so optional conditions can be written inline.
 */
export const fiql = {
  eq: cmp('=='),
  ne: cmp('!='),
  lt: cmp('=lt='),
  le: cmp('=le='),
  gt: cmp('=gt='),
  ge: cmp('=ge='),
  and: group(';'),
  or: group(','),
  /** A hand-written fragment, passed through unchanged (the caller answers for it). */
  raw: (s: string): string => s,
} as const;
