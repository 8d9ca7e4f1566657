// XML codec (wire contract §2): ns0-qualified root, unqualified children in canonical order, any
// order and unknown elements accepted, `xsi:type` both ways, no DTDs and no entity expansion.
import { SaxesParser } from 'saxes';
import { DecodeError, messageOf } from '../errors';
import { type AnyModel, defaultKind, type Field, fieldsOf, hasKind, kindToWrite, type ListField, type ScalarField } from '../model/schema';
import { documents, rootAliases, type DocumentOf, type DocumentRoot } from '../model/resources';
import { scalarFromText, scalarToText } from './values';

export const UFORGE_NS = 'http://www.usharesoft.com/uforge';
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';

type Rec = Record<string, unknown>;

// ---- encode --------------------------------------------------------------------------------------

// Written straight to text from the model (no DOM): each model and kind has a precomputed plan of
// its fields with their tags, so writing is string concatenation in canonical order.
const XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
const XSI_DECL = ` xmlns:xsi="${XSI_NS}"`;

interface Slot {
  name: string;
  f: Field;
  open: string;
  close: string;
  empty: string;
}

const plans = new WeakMap<AnyModel, Map<string | undefined, Slot[]>>();

function planOf(m: AnyModel, kind: string | undefined): Slot[] {
  let byKind = plans.get(m);
  if (!byKind) plans.set(m, (byKind = new Map()));
  let plan = byKind.get(kind);
  if (!plan) {
    plan = fieldsOf(m, kind).map(([name, f]) => ({ name, f, open: `<${name}>`, close: `</${name}>`, empty: `<${name}/>` }));
    byKind.set(kind, plan);
  }
  return plan;
}

/** Write a document. `root` may be an alias (`linuxProfile`), which fixes the kind and omits `xsi:type`. */
export function encodeXml<R extends DocumentRoot>(root: R | keyof typeof rootAliases, value: DocumentOf<R>): string {
  const { head, body, tail } = xmlDocumentParts(root, value);
  return body === '' ? `${head.slice(0, -1)}/>` : head + body + tail;
}

/**
 * The parts of a document: `head` is the declaration and the root's start tag, `body` its content,
 * `tail` its end tag (all three joined are `encodeXml`, save the empty root which closes itself).
 */
export function xmlDocumentParts(root: string, value: Rec): { head: string; body: string; tail: string } {
  const alias = rootAliases[root];
  const m: AnyModel = documents[(alias?.root ?? root) as DocumentRoot];
  const kind = kindToWrite(m, value, root, alias?.kind);
  const attrs = ` xmlns:ns0="${UFORGE_NS}"${kind !== undefined && !alias ? `${XSI_DECL} xsi:type="ns0:${kind}"` : ''}`;
  const body = writeFields(m, kind, value, root, kind !== undefined && !alias);
  return { head: `${XML_DECL}<ns0:${root}${attrs}>`, body, tail: `</ns0:${root}>` };
}

/**
 * A document whose list field `list` (the last field the document holds) is written as `items` are
 * read, in chunks of at least `chunkChars` characters: the joined chunks are `encodeXml` of the whole.
 */
export function* xmlListChunks(root: string, value: Rec, list: string, items: Iterable<Rec>, chunkChars: number): Generator<string> {
  const alias = rootAliases[root];
  const m: AnyModel = documents[(alias?.root ?? root) as DocumentRoot];
  const kind = kindToWrite(m, value, root, alias?.kind);
  const slot = listSlot(planOf(m, kind), value, root, list);
  const f = slot.f as ListField;
  const { head, body, tail } = xmlDocumentParts(root, value);
  const im = f.model();
  const open = `<${f.item}`;
  const close = `</${f.item}>`;
  const xsiDeclared = kind !== undefined && !alias;
  let buf = head + body;
  let i = 0;
  for (const item of items) {
    buf += (i === 0 ? slot.open : '') + writeElement(open, close, im, item, `${root}.${list}[${i}]`, xsiDeclared);
    i++;
    if (buf.length >= chunkChars) {
      yield buf;
      buf = '';
    }
  }
  yield buf + (i === 0 ? slot.empty : slot.close) + tail;
}

/** The slot of a streamed list: a list field, after every field the document holds. */
function listSlot(plan: Slot[], value: Rec, root: string, list: string): Slot {
  const at = plan.findIndex((s) => s.name === list);
  const slot = plan[at];
  if (!slot || slot.f.t !== 'list') throw new TypeError(`${root}.${list}: not a list field`);
  for (const later of plan.slice(at)) {
    if (value[later.name] !== undefined && value[later.name] !== null) throw new TypeError(`${root}.${later.name}: written before the streamed list ${list}`);
  }
  return slot;
}

function writeElement(openNoGt: string, close: string, m: AnyModel, v: Rec, path: string, xsiDeclared: boolean): string {
  const kind = kindToWrite(m, v, path);
  let open = openNoGt;
  if (kind !== undefined) {
    open += `${xsiDeclared ? '' : XSI_DECL} xsi:type="ns0:${kind}"`;
    xsiDeclared = true;
  }
  const body = writeFields(m, kind, v, path, xsiDeclared);
  return body === '' ? `${open}/>` : `${open}>${body}${close}`;
}

function writeFields(m: AnyModel, kind: string | undefined, v: Rec, path: string, xsiDeclared: boolean): string {
  let out = '';
  for (const s of planOf(m, kind)) {
    const fv = v[s.name];
    if (fv === undefined || fv === null) continue;
    const f = s.f;
    switch (f.t) {
      case 'scalar':
        out += s.open + escapeText(scalarText(f, fv, path, s.name)) + s.close;
        break;
      case 'uriList': {
        let items = '';
        for (const u of asArray(fv, `${path}.${s.name}`)) items += `<uri>${escapeText(scalarText(URI, u, path, s.name))}</uri>`;
        out += items === '' ? s.empty : s.open + items + s.close;
        break;
      }
      case 'object':
        out += writeElement(`<${s.name}`, s.close, f.model(), fv as Rec, `${path}.${s.name}`, xsiDeclared);
        break;
      case 'list': {
        const im = f.model();
        const open = `<${f.item}`;
        const close = `</${f.item}>`;
        const arr = asArray(fv, `${path}.${s.name}`);
        let items = '';
        for (let i = 0; i < arr.length; i++) items += writeElement(open, close, im, arr[i] as Rec, `${path}.${s.name}[${i}]`, xsiDeclared);
        out += items === '' ? s.empty : s.open + items + s.close;
        break;
      }
    }
  }
  return out;
}

const URI: ScalarField = { t: 'scalar', type: 'uri' };

/** The common cases inline; anything else (and every type error) through `scalarToText`. */
function scalarText(f: ScalarField, v: unknown, path: string, name: string): string {
  if (typeof v === 'string' && f.type !== 'boolean' && f.type !== 'int' && f.type !== 'long') return v;
  return scalarToText(f, v, `${path}.${name}`);
}

// Every `&` is escaped, also one that looks like an entity: the text "&amp;" comes back as "&amp;".
const SPECIAL = /[&<>]/;
const SPECIAL_ALL = /[&<>]/g;
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

function escapeText(s: string): string {
  return SPECIAL.test(s) ? s.replace(SPECIAL_ALL, (c) => ESCAPES[c]!) : s;
}

function asArray(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new TypeError(`${path}: expected an array`);
  return v;
}

// ---- decode --------------------------------------------------------------------------------------

// saxes checks well-formedness in the same pass (XML 1.0 characters, the five predefined entities
// and character references only); its events are read against the model as they come (a stack of
// open elements, each read as a record, a scalar, a URI list, a list or skipped), so no tree is built.

const DTD = /<!(DOCTYPE|ENTITY|ELEMENT|ATTLIST)/i;
/** Far deeper than any document of the model; deeper input is refused rather than held. */
const MAX_DEPTH = 64;

export interface DecodedDocument<T = Rec> {
  /** The root element's local name as sent (an alias such as `linuxProfile` included). */
  element: string;
  root: DocumentRoot;
  kind?: string | undefined;
  value: T;
}

/** An open element and what it is read as. */
interface Frame {
  t: 'record' | 'scalar' | 'uris' | 'list' | 'skip';
  /** Where the value goes: the root, a field of the parent record, an item of the parent list. */
  role: 'root' | 'field' | 'item';
  path: string;
  ns: Record<string, string>;
  /** The field in the parent record (role 'field'). */
  slot: Slot | undefined;
  m: AnyModel | undefined;
  kind: string | undefined;
  out: Rec | undefined;
  seen: Set<string> | undefined;
  /** Items of a list or URI list. */
  items: unknown[] | undefined;
  text: string;
  kids: boolean;
  attrs: boolean;
}

/**
 * Read a document whose root is one of `accept` (or an alias of one). Throws DecodeError with a
 * position or a field path on anything malformed.
 */
export function decodeXml<R extends DocumentRoot>(text: string, accept: R | readonly R[]): DecodedDocument<DocumentOf<R>> {
  const roots: readonly string[] = typeof accept === 'string' ? [accept] : accept;
  if (DTD.test(text)) throw new DecodeError('document type declarations and entities are not accepted');
  const parser = new SaxesParser();
  const stack: Frame[] = [];
  let result: DecodedDocument<DocumentOf<R>> | undefined;
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_DEPTH) throw new DecodeError(`elements nested deeper than ${MAX_DEPTH} levels`);
    const attrs = tag.attributes as Record<string, string>;
    const top = stack[stack.length - 1];
    if (top) {
      top.kids = true;
      stack.push(childFrame(top, localName(tag.name), attrs));
      return;
    }
    const local = localName(tag.name);
    const alias = rootAliases[local];
    const root = (alias?.root ?? local) as DocumentRoot;
    if (!roots.includes(root)) throw new DecodeError(`expected root element ${roots.join(' or ')}, got ${local}`);
    const ns = nsScope(attrs, {});
    const m: AnyModel = documents[root];
    const kind = alias?.kind ?? xsiType(attrs, ns, m, local);
    stack.push(recordFrame('root', local, ns, attrs, m, kind));
    result = { element: local, root: root as R, ...(m.kinds ? { kind } : {}), value: undefined as unknown as DocumentOf<R> };
  });
  parser.on('closetag', () => {
    const f = stack.pop()!;
    const parent = stack[stack.length - 1];
    if (parent) close(f, parent);
    else {
      if (!f.kids && !f.attrs) throw new DecodeError(`${f.path} must be an element with children`);
      result!.value = f.out as DocumentOf<R>;
    }
  });
  const onText = (t: string): void => {
    const top = stack[stack.length - 1];
    // Text only matters in a scalar, or in a record that has no child (text there is an error).
    if (top && (top.t === 'scalar' || (top.t === 'record' && !top.kids))) top.text += t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  try {
    parser.write(text).close();
  } catch (e) {
    if (e instanceof DecodeError) throw e;
    const msg = messageOf(e).replace(/^\d+:\d+: /, '');
    throw new DecodeError(`malformed XML at line ${parser.line}, column ${parser.column}: ${msg}`);
  }
  if (!result) throw new DecodeError('expected exactly one root element');
  return result;
}

/** Every frame has the same shape (one hidden class: the handlers stay fast). */
function frame(t: Frame['t'], role: Frame['role'], path: string, ns: Record<string, string>, slot?: Slot, items?: unknown[]): Frame {
  return { t, role, path, ns, slot, m: undefined, kind: undefined, out: undefined, seen: undefined, items, text: '', kids: false, attrs: false };
}

function recordFrame(role: Frame['role'], path: string, ns: Record<string, string>, attrs: Record<string, string>, m: AnyModel, kind: string | undefined, slot?: Slot): Frame {
  const f = frame('record', role, path, ns, slot);
  f.m = m;
  f.kind = kind;
  f.out = kind === undefined ? {} : { kind };
  f.attrs = !isEmpty(attrs);
  return f;
}

/** The frame of a child element of `top`, by what `top` is read as. */
function childFrame(top: Frame, name: string, attrs: Record<string, string>): Frame {
  switch (top.t) {
    case 'skip':
      return frame('skip', 'field', top.path, top.ns);
    case 'scalar':
      throw new DecodeError('expected text, got child elements', top.path);
    case 'uris':
      if (name !== 'uri') return frame('skip', 'field', top.path, top.ns);
      return frame('scalar', 'item', `${top.path}[${top.items!.length}]`, top.ns);
    case 'list': {
      const f = top.slot!.f as ListField;
      if (name !== f.item) return frame('skip', 'field', top.path, top.ns);
      const sub = f.model();
      const ip = `${top.path}[${top.items!.length}]`;
      const scope = nsScope(attrs, top.ns);
      return recordFrame('item', ip, scope, attrs, sub, xsiType(attrs, scope, sub, ip));
    }
    case 'record': {
      const slot = slotIndex(top.m!, top.kind).get(name);
      if (!slot) return frame('skip', 'field', top.path, top.ns); // unknown elements are ignored
      const f = slot.f;
      const p = `${top.path}.${name}`;
      if (f.unsupported) throw new DecodeError(`not supported by this service: ${f.unsupported}`, p);
      // Several wrappers of a list are merged: order of items is kept.
      if (f.t === 'list') return frame('list', 'field', p, top.ns, slot, (top.out![name] ??= []) as unknown[]);
      if ((top.seen ??= new Set()).has(name)) throw new DecodeError('element repeated', p);
      top.seen.add(name);
      if (f.t === 'scalar') return frame('scalar', 'field', p, top.ns, slot);
      if (f.t === 'uriList') return frame('uris', 'field', p, top.ns, slot, []);
      const sub = f.model();
      const scope = nsScope(attrs, top.ns);
      return recordFrame('field', p, scope, attrs, sub, xsiType(attrs, scope, sub, p), slot);
    }
  }
}

/** A closed element's value into its parent. */
function close(f: Frame, parent: Frame): void {
  switch (f.t) {
    case 'skip':
    case 'list':
      return;
    case 'scalar':
      if (f.role === 'item') parent.items!.push(scalarFromText(URI, f.text.trim(), f.path));
      else parent.out![f.slot!.name] = scalarFromText(f.slot!.f as ScalarField, f.text.trim(), f.path);
      return;
    case 'uris':
      parent.out![f.slot!.name] = f.items;
      return;
    case 'record':
      if (!f.kids && !f.attrs) {
        // An empty element is an absent record; text where a record is expected is an error.
        if (f.role === 'item' || f.text.trim() !== '') throw new DecodeError('expected child elements, got text', f.path);
        return;
      }
      if (f.role === 'item') parent.items!.push(f.out);
      else parent.out![f.slot!.name] = f.out;
      return;
  }
}

function localName(q: string): string {
  const i = q.indexOf(':');
  return i < 0 ? q : q.slice(i + 1);
}

function nsScope(attrs: Record<string, string>, parent: Record<string, string>): Record<string, string> {
  let scope = parent;
  for (const k in attrs) {
    if (k.startsWith('xmlns:')) {
      if (scope === parent) scope = { ...parent };
      scope[k.slice(6)] = attrs[k]!;
    }
  }
  return scope;
}

function xsiType(attrs: Record<string, string>, ns: Record<string, string>, m: AnyModel, path: string): string | undefined {
  let raw: string | undefined;
  for (const k in attrs) {
    if (!k.endsWith(':type')) continue;
    const prefix = k.slice(0, -5);
    if (ns[prefix] === XSI_NS || prefix === 'xsi') raw = attrs[k];
  }
  if (!m.kinds) return undefined;
  if (raw === undefined) return defaultKind(m);
  const kind = localName(raw.trim());
  if (!hasKind(m, kind)) {
    throw new DecodeError(`unknown xsi:type ${JSON.stringify(raw)} (expected ${Object.keys(m.kinds).join(' or ')})`, path);
  }
  return kind;
}

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

const slotIndexes = new WeakMap<Slot[], Map<string, Slot>>();

/** The plan of a model and kind by element name. */
function slotIndex(m: AnyModel, kind: string | undefined): Map<string, Slot> {
  const plan = planOf(m, kind);
  let idx = slotIndexes.get(plan);
  if (!idx) slotIndexes.set(plan, (idx = new Map(plan.map((s) => [s.name, s]))));
  return idx;
}
