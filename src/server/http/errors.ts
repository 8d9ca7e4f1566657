// One place where any failure becomes a `uforgeError` body in the negotiated format (wire contract §5).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { encode, formatOfAccept, MEDIA_TYPE, type Format } from '../../codec';
import { DecodeError, FiqlError, isForgeError, messageOf } from '../../errors';
import { escapeChars, replaceNonXml } from '../../model/text-rules';
import { BlobStoreError } from '../blobs/s3-url';
import { isServiceError, ServiceError } from '../service-error';

/** Map anything thrown to a ServiceError: ours as is, decode/FIQL → 400/415, a full disk 507, the blob store's service 503, Fastify's 4xx kept, rest 500. */
export function toServiceError(e: unknown): ServiceError {
  if (isServiceError(e)) return e;
  if (isForgeError(e, DecodeError)) {
    return (e as { unsupported?: boolean }).unsupported ? new ServiceError(415, e.message) : new ServiceError(400, e.message);
  }
  if (isForgeError(e, FiqlError)) return new ServiceError(400, e.message);
  // A full disk is the service's condition, not a bug: 507 Insufficient Storage, not a bare 500.
  const errno = (e as { code?: unknown } | null)?.code;
  if (errno === 'ENOSPC' || errno === 'EDQUOT') return new ServiceError(507, 'the service has no storage space left for this request');
  // The blob store's service refused or could not be reached (Swift answers 503 when its disk is full):
  // the service is unavailable for now, not broken. The bucket and endpoint stay in the server's log.
  if (isForgeError(e, BlobStoreError) && e.kind === 's3') {
    const said = [e.status, e.s3Code].filter((x) => x !== undefined).join(' ');
    return new ServiceError(503, `the service's blob store failed${said ? ` (S3 ${said})` : ''}: retry later, or tell the service's operator`, { 'Retry-After': '30' });
  }
  const status = (e as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = (e as { code?: string }).code;
    const message =
      code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'request document larger than the limit' :
      code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'unsupported media type: send application/xml or application/json' :
      messageOf(e);
    return new ServiceError(status, message);
  }
  return new ServiceError(500, 'internal error');
}

/** A request target without its `apiKey` and `signature` parameters: for answers and logs (a signed URL is a credential). */
export function unsignedTarget(url: string): string {
  return url.replace(/[?&](apiKey|signature)=[^&]*/g, '').replace(/^([^?]*)&/, '$1?');
}

/** Where the service is: its configured public base URL, else what the request's Host header says. */
export interface PublicBase {
  servicePath: string;
  /** `serve --public-url`: used for `Location` and `requestUri` so that a Host header is never reflected. */
  publicUrl?: string | undefined;
}

/** An http(s) URL with a host and an optional path: no query, no fragment, no space. */
export const isPublicBaseUrl = (s: string): boolean => /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(s);

export function baseUrlOf(request: FastifyRequest, b: PublicBase): string {
  // Without a Host header (HTTP/1.0, or the 400 that refuses an HTTP/1.1 request without one): the local address.
  const host = request.host || `${request.socket.localAddress ?? '127.0.0.1'}:${request.socket.localPort ?? 0}`;
  return b.publicUrl ?? `${request.protocol}://${host}${b.servicePath}`;
}

/** `requestUri` is absolute; the signature parameters are left out of it (they are not the resource). */
export function absoluteRequestUri(request: FastifyRequest, b: PublicBase): string {
  const target = unsignedTarget(request.raw.url ?? '/');
  const base = baseUrlOf(request, b);
  return target.startsWith(`${b.servicePath}/`) ? base + target.slice(b.servicePath.length) : new URL(base).origin + target;
}

// A message may echo request bytes (a `%00` id); XML 1.0 cannot carry control characters at all.
const printable = (m: string): string => replaceNonXml(m, escapeChars);

/** The one place a `uforgeError` body is made (wire contract §5). */
function errorBody(format: Format, statusCode: number, message: string, method: string, requestUri: string, now: Date): string {
  return encode(format, 'uforgeError', {
    localizedErrorMsg: { message: printable(message), messageId: `error.${statusCode}` },
    requestMethod: method,
    requestUri,
    statusCode,
    timestamp: now.toISOString(),
  });
}

const FILE_HEADERS = ['content-length', 'content-disposition', 'etag', 'last-modified'] as const;

export function sendError(request: FastifyRequest, reply: FastifyReply, se: ServiceError, now: Date, base: PublicBase): FastifyReply {
  const format = formatOfAccept(request.headers.accept);
  // An error raised after a file answer was prepared: its length and name must not describe the error body.
  for (const h of FILE_HEADERS) reply.removeHeader(h);
  for (const [k, v] of Object.entries(se.headers)) reply.header(k, v);
  // The request body was not read to its end (an upload cut short by 507/413…): this connection cannot
  // carry another request, so say so and close it rather than leave a keep-alive client hanging.
  if (!request.raw.complete) reply.header('Connection', 'close');
  const body = errorBody(format, se.statusCode, se.message, request.method, absoluteRequestUri(request, base), now);
  return reply.code(se.statusCode).type(`${MEDIA_TYPE[format]}; charset=utf-8`).send(body);
}

/**
 * A request Node's HTTP parser refuses before any route sees it (a NUL or a space in the request
 * line, oversized headers) still gets a `uforgeError` body, then the connection is closed.
 */
export function sendClientError(err: Error & { code?: string }, socket: Duplex, now: Date): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return rawError(socket, 408, 'the request did not arrive in time', now);
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  rawError(socket, status, `malformed HTTP request (${err.code ?? 'parse error'})`, now);
}

/** A connection idle past the limit: 408 when a request is in progress and its answer has not begun, then closed. */
export function sendIdleTimeout(socket: Duplex & { _httpMessage?: { headersSent?: boolean } | null }, now: Date): void {
  const res = socket._httpMessage;
  if (!socket.writable || !res || res.headersSent) {
    socket.destroy();
    return;
  }
  rawError(socket, 408, 'the connection was idle too long', now);
  socket.once('finish', () => socket.destroy());
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
};

/** CONNECT (Node would drop the socket without a word): this is no proxy. */
export function sendConnectRefused(socket: Duplex, now: Date): void {
  rawError(socket, 405, 'CONNECT is not supported: this is not a proxy', now);
}

/** An `Expect` other than 100-continue (Node would answer 417 with an empty body). */
export function sendExpectationFailed(res: ServerResponse, now: Date): void {
  const body = errorBody('xml', 417, 'only Expect: 100-continue is supported', '', '', now);
  res.writeHead(417, { 'Content-Type': `${MEDIA_TYPE.xml}; charset=utf-8`, 'Content-Length': Buffer.byteLength(body), Connection: 'close' }).end(body);
}

function rawError(socket: Duplex, status: number, message: string, now: Date): void {
  const body = errorBody('xml', status, message, '', '', now);
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status]}\r\n` +
      `Content-Type: ${MEDIA_TYPE.xml}; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
