// One entry point for both representations, chosen by media type (wire contract §3).
import { DecodeError } from '../errors';
import type { DocumentOf, DocumentRoot, rootAliases } from '../model/resources';
import { decodeJson, encodeJson, jsonListChunks } from './json';
import { decodeXml, encodeXml, xmlListChunks, type DecodedDocument } from './xml';

export { decodeJson, encodeJson, toJson } from './json';
export { decodeXml, encodeXml, UFORGE_NS, XSI_NS, type DecodedDocument } from './xml';

export type Format = 'xml' | 'json';
export const MEDIA_TYPE: Readonly<Record<Format, string>> = { xml: 'application/xml', json: 'application/json' };

/** The format of a `Content-Type`, or undefined when it is neither XML nor JSON (→ 415). */
export function formatOfContentType(contentType: string | undefined): Format | undefined {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (t === 'application/xml' || t === 'text/xml' || /^application\/[\w.+-]*\+xml$/.test(t)) return 'xml';
  if (t === 'application/json' || /^application\/[\w.+-]*\+json$/.test(t)) return 'json';
  return undefined;
}

/** `Accept` → format: JSON only when asked for (and preferred over XML); XML otherwise. */
export function formatOfAccept(accept: string | undefined): Format {
  if (!accept) return 'xml';
  let best: Format = 'xml';
  let bestQ = -1;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    const f = formatOfContentType(type);
    if (f && q > bestQ) {
      best = f;
      bestQ = q;
    }
  }
  return best;
}

export function encode<R extends DocumentRoot>(format: Format, root: R | keyof typeof rootAliases, value: DocumentOf<R>): string {
  return format === 'json' ? encodeJson(root, value) : encodeXml(root, value);
}

/**
 * A document whose last field, the list `list`, is written as `items` are read: chunks of about
 * `chunkChars` characters that join into `encode(format, root, {...value, [list]: items})`.
 */
export function encodeListChunks<R extends DocumentRoot>(
  format: Format,
  root: R,
  value: DocumentOf<R>,
  list: string,
  items: Iterable<Record<string, unknown>>,
  chunkChars = 64 * 1024,
): Generator<string> {
  return (format === 'json' ? jsonListChunks : xmlListChunks)(root, value as Record<string, unknown>, list, items, chunkChars);
}

export function decode<R extends DocumentRoot>(format: Format, text: string, accept: R | readonly R[]): DecodedDocument<DocumentOf<R>> {
  return format === 'json' ? decodeJson(text, accept) : decodeXml(text, accept);
}

/** Decode by `Content-Type`; an unsupported type is a DecodeError flagged `unsupported` (→ 415). */
export function decodeBody<R extends DocumentRoot>(contentType: string | undefined, text: string, accept: R | readonly R[]): DecodedDocument<DocumentOf<R>> {
  const f = formatOfContentType(contentType);
  if (!f) throw Object.assign(new DecodeError(`unsupported media type ${contentType ?? '(none)'}`), { unsupported: true });
  return decode(f, text, accept);
}
