// Routes are registered by operation id from the one operations table (style example 2): every
// row gets its handler, every path answers 405 + Allow for the methods it does not take (§5).
import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { decodeBody, encode, encodeListChunks, formatOfAccept, MEDIA_TYPE, type Format } from '../../codec';
import { operations, type Operation, type OperationId } from '../../model/operations';
import type { DocumentRoot } from '../../model/resources';
import type { Authenticator, Caller } from '../auth/authenticate';
import type { Ctx } from '../context';
import { isDeepFrozen } from '../deep-freeze';
import { badRequest, forbidden, notFound, ServiceError } from '../service-error';
import { baseUrlOf } from './errors';
import { etagOfText, httpDate, notModified, quoteEtag } from './conditional';
import { optionalTail, type DocResult, type FileResult, type NoContent, type ReqBase, type Result, type Routes, type StreamedListResult } from './handler';

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/** Fastify's `:name` form of a table path. */
export const fastifyPath = (servicePath: string, p: string): string => servicePath + p.replace(/\{(\w+)\}/g, ':$1');

export interface RegisterOptions {
  ctx: Ctx;
  auth: Authenticator;
  handlers: Routes;
  /** Fastify logs each request (its `onResponse`): kept documents then go through Fastify's reply too. */
  logsRequests: boolean;
}

/** Headers of every answer (wire contract §6), set by app.ts's onRequest hook, and written with each kept document. */
export const commonHeaders = (version: string): ReadonlyArray<readonly [string, string]> => [
  ['Server', `appliance-forge/${version}`],
  ['version', version],
  ['Content-Language', 'en'],
];

/** A handler as register.ts calls it: the table's types end at this line (each handler was checked against its operation). */
type AnyHandler = (req: RuntimeReq) => Result | Promise<Result>;

/** The request every handler gets; `Req<Id>` (http/handler.ts) shows each operation the part it may use. */
interface RuntimeReq extends ReqBase {
  readonly params: Readonly<Record<string, string>>;
  body(): unknown;
  ok(value: object): DocResult;
  created(value: { readonly uri: string }): DocResult;
  list(value: object, list: string, items: Iterable<Record<string, unknown>>, version: string): StreamedListResult;
}

/** The table's path, and the same without its optional last parameter (`optionalTail`). */
function pathsOf(op: Operation): string[] {
  const tails: Readonly<Partial<Record<string, string>>> = optionalTail;
  const tail = tails[op.id];
  if (tail === undefined) return [op.path];
  const suffix = `/{${tail}}`;
  if (!op.path.endsWith(suffix)) throw new Error(`${op.id}: {${tail}} is not the last parameter of ${op.path}`);
  return [op.path, op.path.slice(0, -suffix.length)];
}

/**
 * Registers every operation; returns the routes (operation id, method, Fastify URL) for the drift test.
 * Each path takes all seven methods, the ones it has no operation for answering 405, so that a path's
 * routes in every method are the same set (which path wins for a target does not depend on the method).
 * A path is one Fastify route for all seven (the operation chosen by method; HEAD is GET's) — a route
 * per operation plus one for the 405s cost twice the start — except a path with an upload, whose
 * operation takes raw bytes under its own content-type parser.
 */
export function registerOperations(app: FastifyInstance, o: RegisterOptions): Array<{ id: OperationId; method: string; url: string }> {
  const sp = o.ctx.servicePath;
  const table = operations.flatMap((op: Operation) => pathsOf(op).map((path) => ({ op, path })));
  const done: Array<{ id: OperationId; method: string; url: string }> = [];
  const byUrl = new Map<string, Map<string, { op: Operation; handler: AnyHandler }>>();
  app.decorateRequest(CALLER);

  for (const { op, path } of table) {
    const url = fastifyPath(sp, path);
    const handler = o.handlers[op.id as OperationId] as AnyHandler;
    const methods = byUrl.get(url) ?? new Map<string, { op: Operation; handler: AnyHandler }>();
    methods.set(op.method, { op, handler });
    // HEAD is answered with GET (not Fastify's automatic HEAD route, which drains a file to answer).
    if (op.method === 'GET') methods.set('HEAD', { op, handler });
    byUrl.set(url, methods);
    done.push({ id: op.id as OperationId, method: op.method, url });
  }

  for (const [url, methods] of byUrl) {
    const allow = [...methods.keys()].join(', ');
    const notAllowed = async (): Promise<never> => {
      throw new ServiceError(405, `method not allowed here; allowed: ${allow}`, { Allow: allow });
    };
    const others = ALL_METHODS.filter((m) => !methods.has(m));
    if (![...methods.values()].some(({ op }) => op.binary === 'upload')) {
      app.route({
        method: [...ALL_METHODS],
        url,
        onRequest: (request, _reply, done) => authenticate(o, methods.get(request.method)?.op, request, done),
        handler: (request, reply) => {
          const m = methods.get(request.method);
          return m ? run(o, m.op, m.handler, request, reply) : notAllowed();
        },
      });
      continue;
    }
    for (const [method, { op, handler }] of methods) {
      if (method === 'HEAD') continue;
      const route = { url, onRequest: (request: FastifyRequest, _reply: FastifyReply, done: (e?: Error) => void) => authenticate(o, op, request, done), handler: (request: FastifyRequest, reply: FastifyReply) => run(o, op, handler, request, reply) };
      if (op.binary === 'upload') {
        // Uploads take the raw bytes as a stream, whatever their type (never buffered).
        app.register(async (scope) => {
          scope.removeAllContentTypeParsers();
          scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
          scope.route({ method: op.method, ...route });
        });
      } else {
        app.route({ method: method === 'GET' ? ['GET', 'HEAD'] : method, ...route });
      }
    }
    if (others.length) app.route({ method: others, url, handler: notAllowed });
  }
  return done;
}

/**
 * The route's onRequest hook: who is calling is known before a byte of the body is read (an
 * unauthenticated client cannot make the server read and hold a document or an upload). A method the
 * path does not take is refused unauthenticated. A signature is checked synchronously, so the hook
 * costs no promise; Basic auth (scrypt) answers later.
 */
function authenticate(o: RegisterOptions, op: Operation | undefined, request: FastifyRequest, done: (e?: Error) => void): void {
  if (!op) return done();
  if (op.id === 'uforgeStatus_get') return known(request, ANONYMOUS, done);
  let caller: Caller | Promise<Caller>;
  try {
    caller = o.auth.authenticate(request.raw.url ?? '', request.headers.authorization, request.ip);
  } catch (e) {
    return done(e as Error);
  }
  if (caller instanceof Promise) caller.then((c) => known(request, c, done), done);
  else known(request, caller, done);
}

/** The caller of the one operation open to anyone (the service's status). */
const ANONYMOUS: Readonly<Caller> = Object.freeze({ login: '', admin: false });

function known(request: FastifyRequest, caller: Caller, done: (e?: Error) => void): void {
  (request as WithCaller)[CALLER] = caller;
  done();
}

/**
 * The caller of each request, set by the route's onRequest hook: a property every Fastify request is made
 * with (decorateRequest in registerOperations), cheaper than a WeakMap entry per request.
 */
const CALLER = Symbol('caller');
type WithCaller = FastifyRequest & { [CALLER]?: Caller };

/**
 * The handler's request: query and base URL made on first use (most handlers need neither), its methods
 * on the prototype, so that a request makes no closures.
 */
class RuntimeRequest implements RuntimeReq {
  private queryValues: Record<string, string | undefined> | undefined;
  private base: string | undefined;
  constructor(
    readonly op: Operation,
    readonly params: Readonly<Record<string, string>>,
    readonly caller: Caller,
    readonly raw: FastifyRequest,
    private readonly ctx: Ctx,
  ) {}

  get query(): Record<string, string | undefined> {
    return (this.queryValues ??= firstValues(this.raw.query));
  }

  get baseUrl(): string {
    return (this.base ??= baseUrlOf(this.raw, this.ctx));
  }

  body(): unknown {
    const root = this.op.request;
    if (root === null) throw new ServiceError(500, `${this.op.id} takes no request document`);
    const text = this.raw.body;
    if (typeof text !== 'string' || text.trim() === '') {
      throw badRequest(`a ${root} document is required (application/xml or application/json)`);
    }
    return decodeBody(this.raw.headers['content-type'], text, root);
  }

  ok(value: object): DocResult {
    return { root: this.answer(), value };
  }

  created(value: { readonly uri: string }): DocResult {
    return { root: this.answer(), value, location: value.uri };
  }

  list(value: object, list: string, items: Iterable<Record<string, unknown>>, version: string): StreamedListResult {
    return { root: this.answer(), value, list, items, version };
  }

  private answer(): DocumentRoot {
    if (this.op.response === null) throw new ServiceError(500, `${this.op.id} has no response document`);
    return this.op.response;
  }
}

/**
 * Runs the operation. A handler that answers at once (a kept view: most signed GETs) is sent in the same
 * step, without the promise and microtask of an await. Returns what Fastify's handler returns: the reply
 * (a thenable: Fastify waits for its end), undefined when the answer was written past Fastify's reply.
 */
function run(o: RegisterOptions, op: Operation, handler: AnyHandler, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> | FastifyReply | undefined {
  const { ctx } = o;
  const caller = (request as WithCaller)[CALLER];
  if (!caller) throw new ServiceError(500, 'internal error');
  if (caller.readOnly && request.method !== 'GET' && request.method !== 'HEAD') throw forbidden('this API key pair is read-only (scope=read)');
  const params = request.params as Record<string, string>;
  if (params.uid !== undefined) {
    // 403 before 404, so that a user cannot probe which other logins exist (wire contract §4).
    if (caller.login !== params.uid && !caller.admin) throw forbidden(`user ${caller.login} may not access resources of another user`);
    // The caller's own login was resolved from the store by this request's authentication.
    if (caller.login !== params.uid) {
      return ctx.store.getUser(params.uid).then((u) => {
        if (!u) throw notFound(`no user ${params.uid}`);
        return answer(o, op, handler, request, reply, params, caller);
      });
    }
  }
  return answer(o, op, handler, request, reply, params, caller);
}

function answer(o: RegisterOptions, op: Operation, handler: AnyHandler, request: FastifyRequest, reply: FastifyReply, params: Record<string, string>, caller: Caller): Promise<FastifyReply | undefined> | FastifyReply | undefined {
  const req = new RuntimeRequest(op, params, caller, request, o.ctx);
  const result = handler(req);
  if (result instanceof Promise) return result.then((r) => send(request, reply, r, req, o));
  return send(request, reply, result, req, o);
}

function firstValues(q: unknown): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (q && typeof q === 'object') {
    for (const [k, v] of Object.entries(q as Record<string, unknown>)) {
      const s = Array.isArray(v) ? v[0] : v;
      if (typeof s === 'string') out[k] = s;
    }
  }
  return out;
}

function isFile(r: Result): r is FileResult {
  return 'open' in r;
}

function isNoContent(r: Result): r is NoContent {
  return 'status' in r && r.status === 204;
}

/** A file's answer: headers from the record, the bytes opened only for a GET that is not a 304. */
async function sendFile(request: FastifyRequest, reply: FastifyReply, r: FileResult): Promise<FastifyReply> {
  if (r.lastModified) reply.header('Last-Modified', httpDate(r.lastModified));
  reply.header('ETag', r.etag);
  if (notModified(request.headers, r.etag, r.lastModified)) return reply.code(304).send();
  reply
    .code(200)
    .header('Content-Type', r.contentType)
    .header('Content-Length', String(r.size))
    // RFC 6266: an ASCII `filename=` fallback and `filename*=UTF-8''…`; a raw name above U+00FF is refused by Node.
    .header('Content-Disposition', contentDisposition(r.fileName));
  // HEAD is answered from the record: the file is never read.
  if (request.method === 'HEAD') return reply.send();
  const file = await r.open();
  // Whatever ends the answer (sent, failed, client gone), the file is closed.
  reply.raw.once('close', () => file.destroy());
  return reply.send(file);
}

function send(request: FastifyRequest, reply: FastifyReply, r: Result, req: RuntimeReq, o: RegisterOptions): Promise<FastifyReply> | FastifyReply | undefined {
  const conditional = request.method === 'GET' || request.method === 'HEAD';
  if (isNoContent(r)) return reply.code(204).send();
  if (isFile(r)) return sendFile(request, reply, r);
  if ('items' in r) return sendList(request, reply, r);
  const d = r;
  const format = formatOfAccept(request.headers.accept);
  const { body, etag, lastModified, head } = encoded(format, d, o.ctx.version);
  const unchanged = conditional && notModified(request.headers, etag, lastModified?.iso);
  // A kept document (most signed GETs) is written with its headers made once, past Fastify's reply:
  // its onSend hooks (none here), header object and length count cost more than the rest of the answer.
  if (head && !unchanged && d.location === undefined && !o.logsRequests) {
    reply.hijack();
    reply.raw.writeHead(200, head);
    reply.raw.end(request.method === 'HEAD' ? undefined : body);
    return undefined;
  }
  reply.header('ETag', etag);
  if (lastModified) reply.header('Last-Modified', lastModified.http);
  if (unchanged) return reply.code(304).send();
  if (d.location !== undefined) reply.header('Location', `${req.baseUrl}/${d.location}`);
  return reply
    .code(d.location !== undefined ? 201 : 200)
    .type(`${MEDIA_TYPE[format]}; charset=utf-8`)
    .send(body);
}

interface Encoded {
  readonly body: string;
  readonly etag: string;
  readonly lastModified?: { readonly iso: string; readonly http: string };
  /** Of a kept document: every header of its 200, name then value (`writeHead`'s flat form; never changed). */
  readonly head?: string[];
}

/** Encodings of immutable documents (kept views), per format: the same object is the same bytes. */
const encodings = new WeakMap<object, Partial<Record<Format, Encoded>>>();

/** The document's text, ETag and Last-Modified (and of a kept one its headers), made once for as long as a kept view lives. */
function encoded(format: Format, d: DocResult, version: string): Encoded {
  const keep = isDeepFrozen(d.value);
  const kept = keep ? encodings.get(d.value)?.[format] : undefined;
  if (kept) return kept;
  const body = encode(format, d.root, d.value);
  const { digest, lastModified } = d.value as { digest?: string; lastModified?: string };
  const etag = digest ? quoteEtag(digest) : etagOfText(body);
  const modified = lastModified ? { iso: lastModified, http: httpDate(lastModified) } : undefined;
  if (!keep) return { body, etag, ...(modified ? { lastModified: modified } : {}) };
  const headers: Array<readonly [string, string]> = [...commonHeaders(version), ['ETag', etag]];
  if (modified) headers.push(['Last-Modified', modified.http]);
  headers.push(['Content-Type', `${MEDIA_TYPE[format]}; charset=utf-8`], ['Content-Length', String(Buffer.byteLength(body))]);
  const e = { body, etag, ...(modified ? { lastModified: modified } : {}), head: headers.flat() };
  encodings.set(d.value, { ...encodings.get(d.value), [format]: e });
  return e;
}

/**
 * A list written as it is read: chunks of about 64 KiB, each made in its own turn of the event loop
 * (other requests run between two chunks), no more made while the socket is full (backpressure).
 */
function sendList(request: FastifyRequest, reply: FastifyReply, r: StreamedListResult): FastifyReply {
  const format = formatOfAccept(request.headers.accept);
  const etag = etagOfText(`${format}\t${r.version}`);
  reply.header('ETag', etag);
  if (notModified(request.headers, etag, undefined)) return reply.code(304).send();
  reply.code(200).type(`${MEDIA_TYPE[format]}; charset=utf-8`);
  if (request.method === 'HEAD') return reply.send();
  return reply.send(Readable.from(turnByTurn(encodeListChunks(format, r.root, r.value, r.list, r.items)), { highWaterMark: 1 }));
}

/** A socket that takes every chunk at once would otherwise let one answer hold the event loop to its end. */
async function* turnByTurn<T>(chunks: Iterable<T>): AsyncGenerator<T> {
  for (const c of chunks) {
    yield c;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
