// JSON codec (wire contract §3): `{"<root>": {…}}`, fields named as the XML elements, lists keep
// their wrapper and item names, native booleans and numbers, `"xsi:type": "<Kind>"` on polymorphic records.
import { DecodeError, messageOf } from '../errors';
import { type AnyModel, defaultKind, fieldsOf, hasKind, kindToWrite, presentFields } from '../model/schema';
import { documents, rootAliases, type DocumentOf, type DocumentRoot } from '../model/resources';
import type { DecodedDocument } from './xml';
import { scalarFromJson, scalarToText } from './values';

type Rec = Record<string, unknown>;
const XSI_TYPE = 'xsi:type';

export function encodeJson<R extends DocumentRoot>(root: R | keyof typeof rootAliases, value: DocumentOf<R>): string {
  return JSON.stringify(toJson(root, value));
}

/** The JSON object of a document, before stringification. */
export function toJson<R extends DocumentRoot>(root: R | keyof typeof rootAliases, value: DocumentOf<R>): Rec {
  const alias = rootAliases[root];
  const m: AnyModel = documents[(alias?.root ?? root) as DocumentRoot];
  return { [root]: writeRecord(m, value, root, alias?.kind, !alias) };
}

/**
 * A document whose list field `list` (its last field) is written as `items` are read, in chunks of at
 * least `chunkChars` characters: the joined chunks are `encodeJson` of the whole.
 */
export function* jsonListChunks(root: string, value: Rec, list: string, items: Iterable<Rec>, chunkChars: number): Generator<string> {
  const alias = rootAliases[root];
  const m: AnyModel = documents[(alias?.root ?? root) as DocumentRoot];
  const f = fieldsOf(m, kindToWrite(m, value, root, alias?.kind)).find(([name]) => name === list)?.[1];
  if (f?.t !== 'list') throw new TypeError(`${root}.${list}: not a list field`);
  const head = toJson(root as DocumentRoot, value as DocumentOf<DocumentRoot>);
  const fields = head[root] as Rec;
  if (list in fields) throw new TypeError(`${root}.${list}: given with the document, not streamed`);
  const text = JSON.stringify(head);
  // `{"root":{…}}` opened again before its last two braces, the list last (as the model orders it).
  let buf = `${text.slice(0, -2)}${Object.keys(fields).length > 0 ? ',' : ''}${JSON.stringify(list)}:{${JSON.stringify(f.item)}:[`;
  const im = f.model();
  let i = 0;
  for (const item of items) {
    buf += (i === 0 ? '' : ',') + JSON.stringify(writeRecord(im, item, `${root}.${list}[${i}]`));
    i++;
    if (buf.length >= chunkChars) {
      yield buf;
      buf = '';
    }
  }
  yield `${buf}]}}}`;
}

function writeRecord(m: AnyModel, v: Rec, path: string, forcedKind?: string, writeType = true): Rec {
  const out: Rec = {};
  const kind = kindToWrite(m, v, path, forcedKind);
  if (kind !== undefined && writeType) out[XSI_TYPE] = kind;
  for (const [name, f] of fieldsOf(m, kind)) {
    const fv = v[name];
    if (fv === undefined || fv === null) continue;
    const p = `${path}.${name}`;
    switch (f.t) {
      case 'scalar':
        scalarToText(f, fv, p); // type check only: JSON keeps native values
        out[name] = fv;
        break;
      case 'uriList':
        out[name] = { uri: arr(fv, p).slice() };
        break;
      case 'object':
        out[name] = writeRecord(f.model(), fv as Rec, p);
        break;
      case 'list': {
        const im = f.model();
        out[name] = { [f.item]: arr(fv, p).map((item, i) => writeRecord(im, item as Rec, `${p}[${i}]`)) };
        break;
      }
    }
  }
  return out;
}

function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new TypeError(`${path}: expected an array`);
  return v;
}

/** Read a JSON document whose root key is one of `accept` (or an alias of one). */
export function decodeJson<R extends DocumentRoot>(text: string, accept: R | readonly R[]): DecodedDocument<DocumentOf<R>> {
  const roots: readonly string[] = typeof accept === 'string' ? [accept] : accept;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new DecodeError(`malformed JSON: ${messageOf(e)}`);
  }
  if (!isRec(doc)) throw new DecodeError('expected a JSON object');
  const keys = Object.keys(doc);
  if (keys.length !== 1) throw new DecodeError(`expected one root key (${roots.join(' or ')})`);
  const element = keys[0]!;
  const alias = rootAliases[element];
  const root = (alias?.root ?? element) as DocumentRoot;
  if (!roots.includes(root)) throw new DecodeError(`expected root ${roots.join(' or ')}, got ${element}`);
  const m: AnyModel = documents[root];
  const body = doc[element];
  if (!isRec(body)) throw new DecodeError('expected an object', element);
  const value = readRecord(m, body, element, alias?.kind);
  return { element, root, ...(m.kinds ? { kind: value.kind as string } : {}), value: value };
}

function readRecord(m: AnyModel, v: Rec, path: string, forcedKind?: string): Rec {
  const out: Rec = {};
  let kind: string | undefined;
  if (m.kinds) {
    const raw = v[XSI_TYPE];
    if (raw !== undefined && typeof raw !== 'string') throw new DecodeError('xsi:type must be a string', path);
    kind = forcedKind ?? (raw === undefined ? defaultKind(m) : raw.replace(/^[^:]*:/, ''));
    if (!hasKind(m, kind!)) throw new DecodeError(`unknown xsi:type ${JSON.stringify(raw)}`, path);
    out.kind = kind;
  }
  for (const [name, f, fv] of presentFields(m, kind, v)) {
    const p = `${path}.${name}`;
    if (f.unsupported) throw new DecodeError(`not supported by this service: ${f.unsupported}`, p);
    switch (f.t) {
      case 'scalar':
        out[name] = scalarFromJson(f, fv, p);
        break;
      case 'uriList': {
        // {"uri": [...]} as the contract writes it; a bare array or a single {"uri": "..."} is accepted too.
        const items = Array.isArray(fv) ? fv : isRec(fv) ? one(fv.uri) : bad('expected {"uri": [...]}', p);
        out[name] = items.map((u, i) => scalarFromJson({ t: 'scalar', type: 'uri' }, u, `${p}[${i}]`));
        break;
      }
      case 'object':
        if (!isRec(fv)) bad('expected an object', p);
        out[name] = readRecord(f.model(), fv, p);
        break;
      case 'list': {
        const items = Array.isArray(fv) ? fv : isRec(fv) ? one(fv[f.item]) : bad(`expected {"${f.item}": [...]}`, p);
        const im = f.model();
        out[name] = items.map((item, i) => {
          if (!isRec(item)) bad('expected an object', `${p}[${i}]`);
          return readRecord(im, item, `${p}[${i}]`);
        });
        break;
      }
    }
  }
  return out;
}

function isRec(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A repeated element with one item may come as the item itself (as some platform serializers write it). */
function one(v: unknown): unknown[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

function bad(message: string, path: string): never {
  throw new DecodeError(message, path);
}
