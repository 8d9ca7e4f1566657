// The shape of a route handler: one function per operation id, given a decoded request and
// returning a document, a file stream or nothing. Routes never touch Fastify's reply themselves,
// so status codes, headers and errors are written in one place (http/register.ts).
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { DecodedDocument } from '../../codec/xml';
import type { DocumentOf, DocumentRoot, rootAliases } from '../../model/resources';
import type { Operation, OperationId } from '../../model/operations';
import type { Caller } from '../auth/authenticate';

export interface Req {
  readonly op: Operation;
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters, first value of each (the signature's `apiKey`/`signature` included). */
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly caller: Caller;
  /** `http://host:port/api`, to build absolute `Location` and `requestUri` values. */
  readonly baseUrl: string;
  readonly raw: FastifyRequest;
  /** Decode the request document; 400 when absent or malformed, 415 when not XML/JSON. */
  body<R extends DocumentRoot>(roots: R | readonly R[]): DecodedDocument<DocumentOf<R>>;
}

export interface DocResult<R extends DocumentRoot = DocumentRoot> {
  status?: 200 | 201;
  root: R | keyof typeof rootAliases;
  value: DocumentOf<R>;
  /** Relative URI of the created record (201 → absolute `Location`). */
  location?: string;
}

export interface FileResult {
  file: Readable;
  size: number;
  contentType: string;
  fileName: string;
  etag: string;
  lastModified?: string;
}

/**
 * A document whose last field, the list `list`, is written to the socket as `items` are read (in
 * chunks, with backpressure), so no answer is built whole. `version` names the contents for the ETag
 * (the same version is the same list).
 */
export interface StreamedListResult<R extends DocumentRoot = DocumentRoot> {
  root: R;
  value: DocumentOf<R>;
  list: string;
  items: Iterable<Record<string, unknown>>;
  version: string;
}

export type Result = DocResult | FileResult | StreamedListResult | { status: 204 };

export type Handler = (req: Req) => Result | Promise<Result>;

export type Routes = Partial<Record<OperationId, Handler>>;

/** Typed helper so a handler's document matches its root. */
export function doc<R extends DocumentRoot>(root: R, value: DocumentOf<R>, extra: Omit<DocResult<R>, 'root' | 'value'> = {}): DocResult {
  return { root, value, ...extra } as DocResult;
}

export const NO_CONTENT = { status: 204 } as const;

export function streamedList<R extends DocumentRoot>(root: R, value: DocumentOf<R>, list: string, items: Iterable<object>, version: string): StreamedListResult {
  return { root, value, list, items: items as Iterable<Record<string, unknown>>, version } as StreamedListResult;
}
