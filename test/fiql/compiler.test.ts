import { describe, expect, it } from 'vitest';
import { FiqlError } from '../../src/errors';
import { compileFiql, fieldSelectors, fiql, listQuery, parseDateSpan } from '../../src/fiql';

interface Rec {
  name: string;
  size?: number;
  built?: string;
  active?: boolean;
  targetFormat?: { name: string };
}

const sels = fieldSelectors<Rec>({ name: 'string', size: 'number', built: 'date', active: 'boolean', 'targetFormat.name': 'string' });
const recs: Rec[] = [
  { name: 'nginx', size: 300, built: '2023-06-10T08:00:00.000Z', active: true, targetFormat: { name: 'OpenStack QCOW2' } },
  { name: 'libnginx-mod-http', size: 20, built: '2023-06-09T23:59:59.999Z', active: false, targetFormat: { name: 'QCOW2' } },
  { name: 'bash', size: 1500, built: '2023-01-01T00:00:00.000Z', active: true },
  { name: 'nginx-common', built: '2023-06-11T00:00:00.000Z' },
  { name: 'a*b', size: 5 },
];

function names(q: string): string[] {
  const p = compileFiql(q, sels);
  return recs.filter(p).map((r) => r.name);
}

function fiqlError(f: () => unknown): FiqlError {
  try {
    f();
  } catch (e) {
    if (e instanceof FiqlError) return e;
    throw e;
  }
  throw new Error('expected a FiqlError');
}

describe('compileFiql', () => {
  it('matches * wildcards at any position with == and !=', () => {
    expect(names("name=='*nginx*'")).toEqual(['nginx', 'libnginx-mod-http', 'nginx-common']);
    expect(names("name=='nginx*'")).toEqual(['nginx', 'nginx-common']);
    expect(names("name=='*x'")).toEqual(['nginx']);
    expect(names("name=='l*n*http'")).toEqual(['libnginx-mod-http']);
    expect(names("name=='*'")).toHaveLength(5);
    expect(names("name!='*nginx*'")).toEqual(['bash', 'a*b']);
    expect(names('name==nginx')).toEqual(['nginx']);
  });

  it('compares strings by code unit with the ordering operators, * being literal there', () => {
    expect(names("name=lt='b'")).toEqual(['a*b']);
    expect(names("name=ge='nginx'")).toEqual(['nginx', 'nginx-common']);
    expect(names("name=le='a*b'")).toEqual(['a*b']);
  });

  it('compares numbers as numbers; a record without the value matches only !=', () => {
    expect(names('size=gt=100')).toEqual(['nginx', 'bash']);
    expect(names('size=le=20')).toEqual(['libnginx-mod-http', 'a*b']);
    expect(names('size==300')).toEqual(['nginx']);
    expect(names('size==3e2')).toEqual(['nginx']);
    expect(names('size!=300')).toEqual(['libnginx-mod-http', 'bash', 'nginx-common', 'a*b']);
  });

  it('compares dates; a date-only value spans its whole UTC day', () => {
    expect(names('built==2023-06-10')).toEqual(['nginx']);
    expect(names('built=le=2023-06-10')).toEqual(['nginx', 'libnginx-mod-http', 'bash']);
    expect(names('built=lt=2023-06-10')).toEqual(['libnginx-mod-http', 'bash']);
    expect(names('built=gt=2023-06-10')).toEqual(['nginx-common']);
    expect(names("built=ge='2023-06-10T08:00:00.000Z'")).toEqual(['nginx', 'nginx-common']);
    expect(names("built=='2023-06-10T10:00:00+02:00'")).toEqual(['nginx']);
  });

  it('compares booleans', () => {
    expect(names('active==true')).toEqual(['nginx', 'bash']);
    expect(names('active==FALSE')).toEqual(['libnginx-mod-http']);
  });

  it('follows dotted selectors and combines with ; and ,', () => {
    expect(names("targetFormat.name=='OpenStack*'")).toEqual(['nginx']);
    expect(names("name=='*nginx*';size=gt=100,name==bash")).toEqual(['nginx', 'bash']);
    expect(names("name=='*nginx*';(size=gt=100,active==false)")).toEqual(['nginx', 'libnginx-mod-http']);
  });

  it('refuses an unknown selector at its position, and a bad value at the value', () => {
    let e = fiqlError(() => compileFiql("name=='x';colour==red", sels));
    expect(e.position).toBe(10);
    expect(e.message).toContain("unknown selector 'colour'");
    e = fiqlError(() => compileFiql('size==big', sels));
    expect(e.position).toBe(6);
    e = fiqlError(() => compileFiql('built=gt=yesterday', sels));
    expect(e.position).toBe(9);
    expect(fiqlError(() => compileFiql('built==2023-02-30', sels)).message).toContain('ISO-8601');
    expect(fiqlError(() => compileFiql('active==yes', sels)).position).toBe(8);
    expect(fiqlError(() => compileFiql('active=lt=true', sels)).message).toContain('only == and !=');
    expect(fiqlError(() => compileFiql('toString==x', sels)).message).toContain('unknown selector');
  });

  it('builder values with quotes and structure characters compile to literal matches', () => {
    const q = fiql.or(fiql.eq('name', "x';name=='bash"), fiql.eq('name', 'nginx'));
    expect(names(q)).toEqual(['nginx']);
  });
});

describe('parseDateSpan', () => {
  it('gives the span the precision names', () => {
    expect(parseDateSpan('2023-06-10')).toEqual([Date.UTC(2023, 5, 10), Date.UTC(2023, 5, 11)]);
    expect(parseDateSpan('2023-06-10T10:20')).toEqual([Date.UTC(2023, 5, 10, 10, 20), Date.UTC(2023, 5, 10, 10, 21)]);
    expect(parseDateSpan('0050-01-01')![0]).toBe(Date.parse('0050-01-01T00:00:00Z'));
    expect(parseDateSpan('2023-13-01')).toBeUndefined();
    expect(parseDateSpan('2023-06-10T24:00')).toBeUndefined();
  });
});

describe('listQuery', () => {
  it('filters, counts the total before paging, then pages', () => {
    const r = listQuery(recs, { query: "name=='*nginx*'", count: 1, offset: 1 }, sels);
    expect(r.total).toBe(3);
    expect(r.items.map((x) => x.name)).toEqual(['libnginx-mod-http']);
  });

  it('orders by any selector, missing values last, descending as the exact reverse', () => {
    const asc = listQuery(recs, { orderBy: 'size' }, sels).items.map((x) => x.name);
    expect(asc).toEqual(['a*b', 'libnginx-mod-http', 'nginx', 'bash', 'nginx-common']);
    const desc = listQuery(recs, { orderBy: 'size', descending: true }, sels).items.map((x) => x.name);
    expect(desc).toEqual([...asc].reverse());
    expect(listQuery(recs, { orderBy: 'name', count: 2 }, sels).items.map((x) => x.name)).toEqual(['a*b', 'bash']);
    expect(listQuery(recs, { orderBy: 'built', descending: true, count: 1 }, sels).items.map((x) => x.name)).toEqual(['a*b']);
    expect(listQuery(recs, { orderBy: 'targetFormat.name', count: 1 }, sels).items.map((x) => x.name)).toEqual(['nginx']);
  });

  it('keeps the given order without orderBy, and gives all records for a blank query', () => {
    const r = listQuery(recs, { query: '  ' }, sels);
    expect(r.total).toBe(5);
    expect(r.items).toEqual(recs);
    expect(listQuery(recs, { descending: true, count: 2 }, sels).items.map((x) => x.name)).toEqual(['a*b', 'nginx-common']);
  });

  it('uses the natural order hint only to skip the sort: same answers as sorting', () => {
    const sorted = [...recs].sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const descending of [false, true]) {
      const hinted = listQuery(sorted, { orderBy: 'name', descending, offset: 1, count: 2 }, sels, { naturalOrder: ['name'] });
      const plain = listQuery(sorted, { orderBy: 'name', descending, offset: 1, count: 2 }, sels);
      expect(hinted).toEqual(plain);
    }
  });

  it('refuses an unknown orderBy and bad paging with a FiqlError', () => {
    expect(fiqlError(() => listQuery(recs, { orderBy: 'colour' }, sels)).message).toContain("orderBy: unknown selector 'colour'");
    expect(() => listQuery(recs, { count: -1 }, sels)).toThrow(FiqlError);
    expect(() => listQuery(recs, { offset: 1.5 }, sels)).toThrow(FiqlError);
    expect(listQuery(recs, { count: 0 }, sels)).toEqual({ total: 5, items: [] });
    expect(listQuery(recs, { offset: 10 }, sels)).toEqual({ total: 5, items: [] });
  });
});
