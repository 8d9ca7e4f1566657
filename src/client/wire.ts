// The types that pass between the layers of the client's pipeline (pipeline.ts), and the few
// helpers every layer needs. Targets are relative to the base URL, as the signer wants them
// (wire contract §4): percent-encoded path and query, no leading slash.
import { Readable } from 'node:stream';
import type { Method } from '../model/operations';
import type { DocumentRoot } from '../model/resources';

/** A request body that can be sent again: every attempt calls `open()` for a fresh stream (style example 8). */
export interface ReopenableBody {
  open: () => Readable;
  size: number;
}

/** What the raw layers (cache, sign, transport) exchange. */
export interface WireRequest {
  method: Method;
  target: string;
  headers: Record<string, string>;
  body?: string | ReopenableBody;
  /** The caller wants the response body as a stream (downloads): never buffered, never cached. */
  stream?: boolean;
  signal?: AbortSignal | undefined;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: Readable;
  /** Served from the conditional-GET cache after a 304. */
  fromCache?: boolean;
}

export type Exchange = (req: WireRequest) => Promise<WireResponse>;

/** What the document layers (retry, negotiate) exchange: a request document in, a decoded document out. */
export interface Call {
  method: Method;
  target: string;
  /** GET, PUT and DELETE: may be sent again (operations.ts). */
  idempotent: boolean;
  headers?: Record<string, string>;
  /** Request document, encoded in the client's format by negotiate. */
  document?: { root: string; value: unknown };
  /** Raw request body (uploads). */
  raw?: ReopenableBody;
  /** Root(s) of the expected response document; null → none; 'stream' → raw body handed back. */
  expect: DocumentRoot | readonly DocumentRoot[] | null | 'stream';
  signal?: AbortSignal | undefined;
}

export interface Reply<T = unknown> {
  status: number;
  headers: Record<string, string>;
  value: T;
  /** Only when `expect` is 'stream' and the status is 2xx. */
  body?: Readable;
  fromCache?: boolean;
}

export type Handler = (call: Call) => Promise<Reply>;

/** Read a body to a Buffer, up to `limit` bytes; the rest is drained and dropped, `truncated` says so. */
export async function readBody(body: Readable, limit: number): Promise<{ data: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    if (size + b.length > limit) {
      truncated = true;
      if (size < limit) chunks.push(b.subarray(0, limit - size));
      size = limit;
      continue; // keep reading so the connection can be reused
    }
    chunks.push(b);
    size += b.length;
  }
  return { data: Buffer.concat(chunks, size), truncated };
}

/** Drop a body we do not need (undici: always consume or dump a body). */
export function dump(body: Readable): void {
  body.on('error', () => undefined);
  body.resume();
}

/** A body made of bytes already in memory. */
export function bodyOf(data: Buffer | string): Readable {
  return Readable.from(data.length === 0 ? [] : [typeof data === 'string' ? Buffer.from(data) : data]);
}

/**
 * Percent-encode one query component strictly: every character except RFC 3986 unreserved ones,
 * so `'`, `*`, `(`, `)` and `!` are encoded too and the signed string is unambiguous (§4).
 */
export function encodeComponent(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export type QueryValue = string | number | boolean | undefined | null;

/** `?a=1&b=x%20y` in the caller's order; undefined and null values are left out. */
export function queryString(params: Readonly<Record<string, QueryValue>> | undefined): string {
  if (!params) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue;
    if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError(`query parameter "${k}" is not a finite number`);
    parts.push(`${encodeComponent(k)}=${encodeComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Response headers as a plain record; repeated headers joined with ", ". */
export function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
