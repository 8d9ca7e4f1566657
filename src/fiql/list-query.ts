// Filtering, ordering and paging of a list (wire contract §7): `total` counts the matches before
// `offset`/`count` cut the page. Problems with any of the parameters are FiqlErrors, so the server
// answers all of them with one 400.
import { FiqlError } from '../errors';
import { compileFiql, parseDateSpan, type Selectors } from './compiler';
import type { FiqlNode } from './parser';

export interface ListOptions {
  /** FIQL text or an already parsed query; empty or blank text means no filter. */
  query?: string | FiqlNode | undefined;
  /** A selector name; records come in their given order when absent. */
  orderBy?: string | undefined;
  /** The exact reverse of the ascending order (ties included). */
  descending?: boolean | undefined;
  count?: number | undefined;
  offset?: number | undefined;
}

export interface ListHints {
  /**
   * Selectors by which `records` is already in ascending order (ties in array order), e.g. `dbId`:
   * ordering by one of them skips the sort.
   */
  naturalOrder?: readonly string[] | undefined;
}

export interface ListResult<R> {
  total: number;
  items: R[];
}

/**
 * Ascending order puts records without a value last; ties keep their order in `records`.
 * `descending` reverses the whole ascending list.
 */
export function listQuery<R>(records: readonly R[], opts: ListOptions, selectors: Selectors<R>, hints: ListHints = {}): ListResult<R> {
  const offset = paging('offset', opts.offset, 0);
  const count = paging('count', opts.count, Number.POSITIVE_INFINITY);
  const orderBy = opts.orderBy === '' ? undefined : opts.orderBy;
  const sel = orderBy === undefined ? undefined : Object.prototype.hasOwnProperty.call(selectors, orderBy) ? selectors[orderBy] : undefined;
  if (orderBy !== undefined && !sel) throw new FiqlError(`orderBy: unknown selector '${orderBy}'`, 0);

  const q = opts.query;
  const pred = q === undefined || (typeof q === 'string' && q.trim() === '') ? undefined : compileFiql(q, selectors);
  const needSort = sel !== undefined && !(hints.naturalOrder ?? []).includes(orderBy!);

  // Fast path: records already in the wanted order, ascending: collect only the page, count the rest.
  if (!needSort && !opts.descending) {
    const items: R[] = [];
    let total = 0;
    const end = offset + count;
    for (const r of records) {
      if (pred && !pred(r)) continue;
      if (total >= offset && total < end) items.push(r);
      total++;
    }
    return { total, items };
  }

  let matched = pred ? records.filter(pred) : records.slice();
  if (needSort) matched = sortBy(matched, sel.type, sel.get);
  if (opts.descending) matched.reverse();
  return { total: matched.length, items: matched.slice(offset, offset + count) };
}

function paging(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < 0) throw new FiqlError(`${name} must be a whole number >= 0, got ${String(v)}`, 0);
  return v;
}

type Key = string | number;

/** Stable sort (Array.prototype.sort is stable) on keys computed once; records without a key go last. */
function sortBy<R>(recs: R[], type: string, get: (r: R) => unknown): R[] {
  const keyed: Array<{ k: Key; r: R }> = [];
  const missing: R[] = [];
  for (const r of recs) {
    const k = sortKey(type, get(r));
    if (k === undefined) missing.push(r);
    else keyed.push({ k, r });
  }
  if (type === 'string') keyed.sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : 0));
  else keyed.sort((x, y) => (x.k as number) - (y.k as number));
  const out = keyed.map((x) => x.r);
  for (const r of missing) out.push(r);
  return out;
}

function sortKey(type: string, v: unknown): Key | undefined {
  if (v === undefined || v === null) return undefined;
  switch (type) {
    case 'number': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isNaN(n) ? undefined : n;
    }
    case 'date': {
      const t = v instanceof Date ? v.getTime() : typeof v === 'number' ? v : parseDateSpan(String(v))?.[0];
      return t === undefined || Number.isNaN(t) ? undefined : t;
    }
    case 'boolean':
      return v === true || String(v).toLowerCase() === 'true' ? 1 : 0;
    default:
      return String(v);
  }
}
