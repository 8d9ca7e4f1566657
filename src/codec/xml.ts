// XML codec (wire contract §2): ns0-qualified root, unqualified children in canonical order, any
// order and unknown elements accepted, `xsi:type` both ways, no DTDs and no entity expansion.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces';
import { DecodeError, messageOf } from '../errors';
import { type AnyModel, defaultKind, fieldsOf, hasKind, kindToWrite, presentFields } from '../model/schema';
import { documents, rootAliases, type DocumentOf, type DocumentRoot } from '../model/resources';
import { scalarFromText, scalarToText } from './values';

export const UFORGE_NS = 'http://www.usharesoft.com/uforge';
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';

type Rec = Record<string, unknown>;

// ---- encode --------------------------------------------------------------------------------------

/** Write a document. `root` may be an alias (`linuxProfile`), which fixes the kind and omits `xsi:type`. */
export function encodeXml<R extends DocumentRoot>(root: R | keyof typeof rootAliases, value: DocumentOf<R>): string {
  const alias = rootAliases[root];
  const m: AnyModel = documents[(alias?.root ?? root) as DocumentRoot];
  const doc = create({ version: '1.0', encoding: 'UTF-8', standalone: true });
  const el = doc.ele(UFORGE_NS, `ns0:${root}`);
  writeRecord(el, m, value, root, alias ? alias.kind : undefined, !alias);
  return doc.end({ headless: false });
}

function writeRecord(el: XMLBuilder, m: AnyModel, v: Rec, path: string, forcedKind?: string, writeType = true): void {
  const kind = kindToWrite(m, v, path, forcedKind);
  if (kind !== undefined && writeType) el.att(XSI_NS, 'xsi:type', `ns0:${kind}`);
  for (const [name, f, fv] of presentFields(m, kind, v)) {
    const p = `${path}.${name}`;
    switch (f.t) {
      case 'scalar':
        el.ele(name).txt(ampersands(scalarToText(f, fv, p)));
        break;
      case 'uriList': {
        const w = el.ele(name);
        for (const u of asArray(fv, p)) w.ele('uri').txt(ampersands(scalarToText({ t: 'scalar', type: 'uri' }, u, p)));
        break;
      }
      case 'object':
        writeRecord(el.ele(name), f.model(), fv as Rec, p);
        break;
      case 'list': {
        const w = el.ele(name);
        const im = f.model();
        asArray(fv, p).forEach((item, i) => writeRecord(w.ele(f.item), im, item as Rec, `${p}[${i}]`));
        break;
      }
    }
  }
}

// xmlbuilder2 leaves an `&` that looks like an entity (`&amp;`, `&x;`, `&#1;`) unescaped, so the text
// "&amp;" would come back as "&": escape those ourselves (xmlbuilder2 then keeps our `&amp;` as is).
const ampersands = (s: string): string => s.replace(/&(?=[A-Za-z]+;|#\d+;)/g, '&amp;');

function asArray(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new TypeError(`${path}: expected an array`);
  return v;
}

// ---- decode --------------------------------------------------------------------------------------

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false, // "007" stays "007"
  parseAttributeValue: false,
  processEntities: false, // entities are decoded below, the five predefined ones and character references only
  htmlEntities: false,
  trimValues: true,
  isArray: (_name, _jpath, _leaf, isAttribute) => !isAttribute,
});

type Node = Rec;
const DTD = /<!(DOCTYPE|ENTITY|ELEMENT|ATTLIST)/i;

export interface DecodedDocument<T = Rec> {
  /** The root element's local name as sent (an alias such as `linuxProfile` included). */
  element: string;
  root: DocumentRoot;
  kind?: string;
  value: T;
}

/**
 * Read a document whose root is one of `accept` (or an alias of one). Throws DecodeError with a
 * position or a field path on anything malformed.
 */
export function decodeXml<R extends DocumentRoot>(text: string, accept: R | readonly R[]): DecodedDocument<DocumentOf<R>> {
  const roots: readonly string[] = typeof accept === 'string' ? [accept] : accept;
  if (DTD.test(text)) throw new DecodeError('document type declarations and entities are not accepted');
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new DecodeError(`malformed XML at line ${line}, column ${col}: ${msg}`);
  }
  let tree: Rec;
  try {
    tree = parser.parse(text) as Rec;
  } catch (e) {
    throw new DecodeError(`malformed XML: ${messageOf(e)}`);
  }
  const elements = Object.keys(tree).filter((k) => !k.startsWith('?') && !k.startsWith('#'));
  if (elements.length !== 1 || (tree[elements[0]!] as unknown[]).length !== 1) throw new DecodeError('expected exactly one root element');
  const qname = elements[0]!;
  const local = localName(qname);
  const alias = rootAliases[local];
  const root = (alias?.root ?? local) as DocumentRoot;
  if (!roots.includes(root)) throw new DecodeError(`expected root element ${roots.join(' or ')}, got ${local}`);
  const node = (tree[qname] as Node[])[0] ?? {};
  if (typeof node !== 'object') throw new DecodeError(`${local} must be an element with children`);
  const ns = nsScope(node, {});
  const m: AnyModel = documents[root];
  const kind = alias?.kind ?? xsiType(node, ns, m, local);
  const value = readRecord(m, node, local, ns, kind);
  return { element: local, root, ...(m.kinds ? { kind } : {}), value: value as DocumentOf<R> };
}

function localName(q: string): string {
  const i = q.indexOf(':');
  return i < 0 ? q : q.slice(i + 1);
}

function nsScope(node: Node, parent: Record<string, string>): Record<string, string> {
  let scope = parent;
  for (const k of Object.keys(node)) {
    if (k.startsWith('@xmlns:')) {
      if (scope === parent) scope = { ...parent };
      scope[k.slice(7)] = String(node[k]);
    }
  }
  return scope;
}

function xsiType(node: Node, ns: Record<string, string>, m: AnyModel, path: string): string | undefined {
  let raw: string | undefined;
  for (const k of Object.keys(node)) {
    if (!k.startsWith('@') || !k.endsWith(':type')) continue;
    const prefix = k.slice(1, -5);
    if (ns[prefix] === XSI_NS || prefix === 'xsi') raw = String(node[k]);
  }
  if (!m.kinds) return undefined;
  if (raw === undefined) return defaultKind(m);
  const kind = localName(raw.trim());
  if (!hasKind(m, kind)) {
    throw new DecodeError(`unknown xsi:type ${JSON.stringify(raw)} (expected ${Object.keys(m.kinds).join(' or ')})`, path);
  }
  return kind;
}

function readRecord(m: AnyModel, node: Node, path: string, ns: Record<string, string>, kind: string | undefined): Rec {
  const out: Rec = {};
  if (kind !== undefined) out.kind = kind;
  // Children may be qualified by any prefix (unqualified is canonical): index them by local name.
  const children = new Map<string, Node[] | string[]>();
  for (const k of Object.keys(node)) {
    if (k.startsWith('@') || k === '#text') continue;
    children.set(localName(k), node[k] as Node[]);
  }
  for (const [name, f] of fieldsOf(m, kind)) {
    const els = children.get(name);
    if (!els || els.length === 0) continue;
    const p = `${path}.${name}`;
    if (f.unsupported) throw new DecodeError(`not supported by this service: ${f.unsupported}`, p);
    if (els.length > 1 && f.t !== 'list') throw new DecodeError('element repeated', p);
    const el = els[0]!;
    switch (f.t) {
      case 'scalar':
        out[name] = scalarFromText(f, text(el, p), p);
        break;
      case 'uriList':
        out[name] = childList(el, 'uri').map((u, i) => scalarFromText({ t: 'scalar', type: 'uri' }, text(u, `${p}[${i}]`), `${p}[${i}]`));
        break;
      case 'object': {
        if (typeof el !== 'object') {
          if (text(el, p) === '') continue; // an empty element is an absent record
          throw new DecodeError('expected child elements, got text', p);
        }
        const sub = f.model();
        const scope = nsScope(el, ns);
        out[name] = readRecord(sub, el, p, scope, xsiType(el, scope, sub, p));
        break;
      }
      case 'list': {
        const sub = f.model();
        const items: Rec[] = [];
        // Several wrappers are merged: order of items is kept.
        for (const w of els) {
          childList(w, f.item).forEach((item) => {
            const ip = `${p}[${items.length}]`;
            if (typeof item !== 'object') {
              throw new DecodeError('expected child elements, got text', ip);
            }
            const scope = nsScope(item, ns);
            items.push(readRecord(sub, item, ip, scope, xsiType(item, scope, sub, ip)));
          });
        }
        out[name] = items;
        break;
      }
    }
  }
  return out;
}

function childList(el: Node | string, name: string): Array<Node | string> {
  if (typeof el !== 'object') return [];
  for (const k of Object.keys(el)) if (!k.startsWith('@') && localName(k) === name) return el[k] as Node[];
  return [];
}

function text(el: Node | string, path: string): string {
  if (typeof el === 'string') return decodeEntities(el, path);
  const keys = Object.keys(el).filter((k) => !k.startsWith('@'));
  if (keys.length === 0) return '';
  if (keys.length === 1 && keys[0] === '#text') return decodeEntities(String(el['#text']), path);
  throw new DecodeError('expected text, got child elements', path);
}

const ENTITY = /&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string, path: string): string {
  if (!s.includes('&')) return s;
  return s.replace(ENTITY, (_, e: string) => {
    if (e[0] === '#') {
      const cp = e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      if (!(cp > 0 && cp <= 0x10ffff)) throw new DecodeError(`invalid character reference &${e};`, path);
      return String.fromCodePoint(cp);
    }
    const v = NAMED[e];
    if (v === undefined) throw new DecodeError(`undefined entity &${e};`, path);
    return v;
  });
}
