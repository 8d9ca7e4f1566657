// Property-based round trips of the codecs (wire contract §2–3) for arbitrary records of several
// models, generated from the model descriptions themselves: decode(encode(v)) equals v in XML and
// JSON, and XML → JSON → XML gives the same document. Strings include markup, entity look-alikes
// ("&amp;", "&x;"), quotes, unicode and astral characters.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decode, encode, type Format } from '../../src/codec';
import { documents, type DocumentRoot } from '../../src/model/resources';
import { type AnyModel, type Field, fieldsOf } from '../../src/model/schema';
import { replaceControls, replaceNonXml } from '../../src/model/text-rules';
import { LONG } from './support/harness';

const RUNS = LONG ? 1000 : 150;

// Text the codecs must carry unchanged: trimmed (XML trims values, §2), no XML-forbidden characters.
const tricky = fc.constantFrom('&', '&amp;', '&lt;', '&bogus;', '&#65;', '&#x41;', '<', '>', ']]>', '"', "'", 'é', '日本', '😀', '\t', '\n', ' ', '007', 'true', 'null', '{}', '<a/>');
const text = fc
  .array(fc.oneof(tricky, fc.string({ unit: 'grapheme', maxLength: 6 })), { minLength: 1, maxLength: 6 })
  .map((a) => replaceNonXml(replaceControls(a.join(''), () => '', '\t\n\r'), () => '').trim())
  .filter((s) => s.length > 0);
const isoDate = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());

function scalarArb(f: Extract<Field, { t: 'scalar' }>): fc.Arbitrary<unknown> {
  if (f.values) return fc.constantFrom(...f.values);
  switch (f.type) {
    case 'boolean':
      return fc.boolean();
    case 'int':
      return fc.integer();
    case 'long':
      return fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
    case 'dateTime':
      return isoDate;
    default:
      return text;
  }
}

/** An arbitrary record of model `m` (of one of its kinds), depth-bounded. */
function recordArb(m: AnyModel, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const kinds = m.kinds ? Object.keys(m.kinds) : [undefined];
  return fc.constantFrom(...kinds).chain((kind) => {
    const shape: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, f] of fieldsOf(m, kind)) {
      if (f.unsupported) continue; // refused on input, never written: tested in test/server/install-profile.test.ts
      if (f.t === 'scalar') shape[name] = scalarArb(f);
      else if (f.t === 'uriList') shape[name] = fc.array(text, { minLength: 1, maxLength: 3 });
      else if (depth > 0 && f.t === 'object') shape[name] = recordArb(f.model(), depth - 1);
      else if (depth > 0 && f.t === 'list') shape[name] = fc.array(recordArb(f.model(), depth - 1), { minLength: 1, maxLength: 2 });
    }
    return fc.record(shape, { requiredKeys: [] }).map((r) => (kind ? { ...r, kind } : r));
  });
}

const ROOTS: DocumentRoot[] = ['appliance', 'credAccount', 'publishImage', 'image', 'softwareArtifact', 'mySoftware', 'distribProfile', 'packages', 'user', 'images', 'uforgeError', 'status'];

/** Drop empty nested records: `<targetFormat/>` carries nothing to tell `{}` from absent. */
function normalise(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalise);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const n = normalise(x);
      if (n && typeof n === 'object' && !Array.isArray(n) && Object.keys(n).length === 0) continue;
      out[k] = n;
    }
    return out;
  }
  return v;
}

describe('codec properties', () => {
  for (const root of ROOTS) {
    for (const format of ['xml', 'json'] as Format[]) {
      it(`${root} (${format}): decode(encode(v)) equals v`, () => {
        fc.assert(
          fc.property(recordArb(documents[root] as AnyModel, 2), (v) => {
            const back = decode(format, encode(format, root, v as never), root).value;
            expect(normalise(back)).toEqual(normalise(v));
          }),
          { numRuns: RUNS },
        );
      });
    }
    it(`${root}: XML → JSON → XML is the same document`, () => {
      fc.assert(
        fc.property(recordArb(documents[root] as AnyModel, 2), (v) => {
          const xml = encode('xml', root, normalise(v) as never);
          const viaJson = decode('json', encode('json', root, decode('xml', xml, root).value), root).value;
          expect(encode('xml', root, normalise(viaJson) as never)).toBe(xml);
        }),
        { numRuns: Math.ceil(RUNS / 3) },
      );
    });
  }
});
