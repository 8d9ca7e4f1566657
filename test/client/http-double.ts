// Small node:http servers on 127.0.0.1 that answer with documents produced by the codec, used until
// (and beside) the reference server. `startScripted` records every request it receives; a script
// that resets connections or answers 503 is the labelled fault double of the brief.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { encode, MEDIA_TYPE, type Format } from '../../src/codec/index';
import type { DocumentOf, DocumentRoot } from '../../src/model/resources';

export interface Seen {
  method: string;
  /** The raw request target as received (`/api/users/alice?…`). */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type Script = (req: IncomingMessage, res: ServerResponse, seen: Seen) => unknown;

export interface Double {
  /** Base URL with the service path `/api`. */
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

/** Start a server; with `buffer: false` the script reads the request body itself (upload sink). */
export async function startScripted(script: Script, o: { buffer?: boolean } = {}): Promise<Double> {
  const seen: Seen[] = [];
  // `handle` catches every error itself (the connection is destroyed): nothing to await in the listener.
  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.alloc(0) };
    seen.push(s);
    try {
      if (o.buffer !== false) {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        s.body = Buffer.concat(chunks);
      }
      await script(req, res, s);
    } catch (e) {
      res.destroy(e as Error);
    }
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Answer with a document written by the codec. */
export function reply<R extends DocumentRoot>(
  res: ServerResponse,
  status: number,
  root: R,
  value: DocumentOf<R>,
  format: Format = 'xml',
  headers: Record<string, string> = {},
): void {
  const text = encode(format, root, value);
  res.writeHead(status, { 'content-type': `${MEDIA_TYPE[format]}; charset=utf-8`, ...headers });
  res.end(text);
}

/** A `uforgeError` body as the service writes it (wire contract §5). */
export function replyError(res: ServerResponse, status: number, message: string, format: Format = 'xml', headers: Record<string, string> = {}): void {
  reply(res, status, 'uforgeError', {
    localizedErrorMsg: { message, messageId: 'test.error' },
    requestMethod: 'GET',
    requestUri: 'http://127.0.0.1/api/x',
    statusCode: status,
    timestamp: '2026-11-20T07:45:32.000Z',
  }, format, headers);
}

/** After each test, close what `get` returns (clients and servers; closing twice is harmless). */
export function closeAfterEach(get: () => Array<{ close(): Promise<void> } | undefined>): void {
  afterEach(async () => {
    for (const x of get()) await x?.close().catch(() => undefined);
  });
}
