// Sample records built from the model itself: every field of every kind filled with a value of its
// type, so a round trip and the schema check cover each field the codec can write.
import { type AnyModel, type Field, fieldsOf } from '../../src/model/schema';

type Rec = Record<string, unknown>;

function scalar(f: Extract<Field, { t: 'scalar' }>, name: string, n: number): unknown {
  if (f.values) return f.values[n % f.values.length];
  switch (f.type) {
    case 'boolean':
      return n % 2 === 0;
    case 'int':
      return 7 + n;
    case 'long':
      return 2 ** 40 + n;
    case 'dateTime':
      return `2026-11-2${n % 10}T07:45:32.000Z`;
    case 'uri':
      return `users/alice/${name}/${n}`;
    default:
      return n === 0 ? `${name} <&> "q" 'a' é` : '007';
  }
}

/** One record per kind (or one), `n` varies the values. */
export function samplesOf(m: AnyModel, n = 0, depth = 0): Rec[] {
  const kinds: Array<string | undefined> = m.kinds ? Object.keys(m.kinds) : [undefined];
  return kinds.map((kind) => {
    const out: Rec = kind ? { kind } : {};
    for (const [name, f] of fieldsOf(m, kind)) {
      if (f.unsupported) continue; // refused on input, never written: tested in test/server/install-profile.test.ts
      if (f.t === 'scalar') out[name] = scalar(f, name, n);
      else if (f.t === 'uriList') out[name] = [`distributions/${n}`, `distributions/${n + 1}`];
      else if (depth < 4 && f.t === 'object') out[name] = samplesOf(f.model(), n + 1, depth + 1)[0];
      else if (depth < 4 && f.t === 'list') out[name] = [...samplesOf(f.model(), n + 1, depth + 1), ...samplesOf(f.model(), n + 2, depth + 1)];
    }
    return out;
  });
}
