// Caching headers and conditional requests (wire contract §6): ETag from the record's digest,
// Last-Modified from `lastModified`; If-None-Match / If-Modified-Since → 304; If-Match → 412.
import { createHash } from 'node:crypto';
import { ServiceError } from '../service-error';

export const quoteEtag = (digest: string): string => `"${digest}"`;

export function etagOfText(text: string): string {
  return quoteEtag(createHash('sha256').update(text).digest('base64url').slice(0, 27));
}

function etagList(header: string): string[] {
  return header.split(',').map((t) => t.trim().replace(/^W\//, '')).filter(Boolean);
}

/** Whether a conditional GET may answer 304. If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2). */
export function notModified(headers: Readonly<Record<string, string | string[] | undefined>>, etag: string, lastModified?: string): boolean {
  const inm = headers['if-none-match'];
  if (typeof inm === 'string') {
    const tags = etagList(inm);
    return tags.includes('*') || tags.includes(etag);
  }
  const ims = headers['if-modified-since'];
  if (typeof ims === 'string' && lastModified) {
    const since = Date.parse(ims);
    const mod = Math.floor(Date.parse(lastModified) / 1000) * 1000;
    return Number.isFinite(since) && Number.isFinite(mod) && mod <= since;
  }
  return false;
}

/** PUT/DELETE with If-Match: the record must still carry one of the tags (wire contract §6, Decision). */
export function checkIfMatch(ifMatch: string | string[] | undefined, digest: string | undefined): void {
  if (typeof ifMatch !== 'string') return;
  const tags = etagList(ifMatch);
  if (tags.includes('*') || (digest !== undefined && tags.includes(quoteEtag(digest)))) return;
  throw new ServiceError(412, 'the record changed since it was read (If-Match does not match its ETag)');
}

export function httpDate(iso: string): string {
  return new Date(iso).toUTCString();
}
