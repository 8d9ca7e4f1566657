// Lists and searches (wire contract §7): FIQL `query`, `orderBy`, `descending`, `count`, `offset`
// over the fields of the listed model, dotted paths for nested records (`targetFormat.name`).
import { fieldSelectors, listQuery, type ListResult, type SelectorType, type Selectors } from '../../fiql';
import { documents, type DocumentOf, type DocumentRoot } from '../../model/resources';
import { type AnyModel, fieldsOf, type ScalarType } from '../../model/schema';
import type { ListParams } from '../ports';
import { badRequest } from '../service-error';

const TYPES: Readonly<Record<ScalarType, SelectorType>> = {
  string: 'string',
  uri: 'string',
  boolean: 'boolean',
  int: 'number',
  long: 'number',
  dateTime: 'date',
};

const cache = new Map<AnyModel, Selectors<unknown>>();

/** Selectors of every scalar field of a model (and of its kinds), nested records one level down. */
export function selectorsOf<R>(m: AnyModel): Selectors<R> {
  let s = cache.get(m);
  if (!s) {
    const types: Record<string, SelectorType> = {};
    collect(m, '', types, 2);
    s = fieldSelectors(types);
    cache.set(m, s);
  }
  return s;
}

function collect(m: AnyModel, prefix: string, into: Record<string, SelectorType>, depth: number): void {
  const kinds = m.kinds ? Object.keys(m.kinds) : [undefined];
  for (const k of kinds) {
    for (const [name, f] of fieldsOf(m, k)) {
      if (f.secret) continue; // never searchable: a query must not probe a write-only value
      if (f.t === 'scalar') into[prefix + name] = TYPES[f.type];
      else if (f.t === 'object' && depth > 1) collect(f.model(), `${prefix}${name}.`, into, depth - 1);
    }
  }
}

/** The list parameters of a query string; 400 on a malformed number or boolean. */
export function listParams(q: Readonly<Record<string, string | undefined>>): ListParams {
  const out: ListParams = {};
  if (q.query !== undefined) out.query = q.query;
  if (q.orderBy !== undefined && q.orderBy !== '') out.orderBy = q.orderBy;
  if (q.descending !== undefined) out.descending = boolParam('descending', q.descending);
  if (q.count !== undefined) out.count = intParam('count', q.count);
  if (q.offset !== undefined) out.offset = intParam('offset', q.offset);
  return out;
}

export function intParam(name: string, v: string): number {
  if (!/^\d{1,9}$/.test(v)) throw badRequest(`${name} must be a whole number >= 0, got ${JSON.stringify(v)}`);
  return Number(v);
}

export function boolParam(name: string, v: string): boolean {
  const l = v.toLowerCase();
  if (l === 'true' || l === '1' || l === '') return true;
  if (l === 'false' || l === '0') return false;
  throw badRequest(`${name} must be true or false, got ${JSON.stringify(v)}`);
}

/** Filter, order and page records of `root`'s model (records already in dbId order). */
export function page<R extends DocumentRoot>(root: R, records: ReadonlyArray<DocumentOf<R>>, q: Readonly<Record<string, string | undefined>>): ListResult<DocumentOf<R>> {
  return listQuery(records, listParams(q), selectorsOf<DocumentOf<R>>(documents[root]), { naturalOrder: ['dbId'] });
}
