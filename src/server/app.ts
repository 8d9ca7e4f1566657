// The Fastify factory (style example 10): dependencies in, a server out. Content-type parsers for
// documents, common headers, one error handler, every operation by id (http/register.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { OperationId } from '../model/operations';
import { Authenticator } from './auth/authenticate';
import { DEFAULT_LIMITS } from '../model/limits';
import type { Ctx, ServerDeps } from './context';
import { isPublicBaseUrl, sendClientError, sendConnectRefused, sendError, sendExpectationFailed, sendIdleTimeout, toServiceError, unsignedTarget } from './http/errors';
import type { Routes } from './http/handler';
import { commonHeaders, registerOperations } from './http/register';
import { registerHealth } from './http/health';
import { registerConsole } from './console/routes';
import { accountRoutes } from './routes/accounts';
import { applianceRoutes } from './routes/appliances';
import { distributionRoutes } from './routes/distributions';
import { imageRoutes } from './routes/images';
import { orgRoutes } from './routes/orgs';
import { osProfileRoutes } from './routes/os-profile';
import { publicationRoutes } from './routes/publications';
import { softwareRoutes } from './routes/software';
import { statusRoutes } from './routes/status';
import { targetFormatRoutes } from './routes/target-formats';
import { userRoutes } from './routes/users';
import { ServiceError } from './service-error';
import { SERVICE_VERSION } from './version';

// Media types decoded by the codec (wire contract §2–3); anything else on a document route → 415.
const DOCUMENT_TYPES: readonly string[] = ['application/xml', 'text/xml', 'application/json'];
const DOCUMENT_SUFFIXES = /^application\/[\w.+-]*\+(xml|json)$/;

/** Fastify's compiler factory where no route has a schema: one that is asked for a compiler is a defect. */
function noSchemaCompiler(): never {
  throw new Error('a route declares a JSON schema: this server compiles none (app.ts)');
}

export interface BuiltServer {
  app: FastifyInstance;
  ctx: Ctx;
  /** Every registered operation route, for the drift test. */
  routes: Array<{ id: OperationId; method: string; url: string }>;
}

export function buildServer(deps: ServerDeps): BuiltServer {
  const servicePath = (deps.servicePath ?? '/api').replace(/\/+$/, '');
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const { limits: _l, logger: _g, publicUrl, cloudEndpoints, role: _r, console: _c, ...rest } = deps;
  for (const e of cloudEndpoints ?? []) if (!isPublicBaseUrl(e)) throw new Error(`a cloud endpoint must be an http(s) URL, got ${e}`);
  if (publicUrl !== undefined && !isPublicBaseUrl(publicUrl)) throw new Error(`publicUrl must be an http(s) base URL, got ${publicUrl}`);

  const app = Fastify({
    logger: deps.logger
      ? {
          level: deps.logger === 'errors' ? 'error' : 'info',
          // Failed jobs and server errors alone go where an operator looks for them (a service's stderr).
          stream: deps.logger === 'errors' ? process.stderr : process.stdout,
          redact: ['req.headers.authorization'],
          // A signed URL replays as a credential: the log keeps the path and query without apiKey/signature.
          serializers: {
            req: (req: FastifyRequest) => ({
              method: req.method,
              url: unsignedTarget(req.url),
              host: req.host,
              remoteAddress: req.ip,
              ...(req.socket.remotePort !== undefined ? { remotePort: req.socket.remotePort } : {}),
            }),
          },
        }
      : false,
    // Errors only: no request line to tie a record to, so no per-request child logger (a pino child per request).
    ...(deps.logger === 'errors' ? { childLoggerFactory: (logger: FastifyBaseLogger) => logger } : {}),
    bodyLimit: limits.bodyBytes,
    // Slow clients: head, whole request and idle bounds, each a 408 uforgeError.
    // A missing Host is refused below with a uforgeError body (Node's own 400 has none).
    http: { requireHostHeader: false, headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: Math.max(100, Math.min(5_000, limits.headersTimeoutMs / 4)) },
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    routerOptions: { maxParamLength: 1024 },
    // No route declares a JSON schema (documents are checked by the codec against the model): without
    // these, Fastify loads Ajv and fast-json-stringify (~95 modules) at every start for nothing.
    schemaController: { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } },
    // A signed URL must reach the signature check exactly as sent (wire contract §4).
    return503OnClosing: true,
    // A target whose path does not percent-decode (`%FF`, `%C0%AE`) is a 400 like any other (§5).
    frameworkErrors: (err, request, reply) => {
      sendError(request, reply, new ServiceError(400, `bad request URL (${err.code})`), ctx.clock.now(), ctx);
    },
    clientErrorHandler: (err, socket) => sendClientError(err, socket, ctx.clock.now()),
  });

  const ctx: Ctx = { ...rest, servicePath, limits, log: app.log, version: SERVICE_VERSION, publicUrl: publicUrl?.replace(/\/+$/, ''), cloudEndpoints };

  app.server.on('timeout', (socket: Socket) => sendIdleTimeout(socket, ctx.clock.now()));
  app.server.on('connect', (_req: IncomingMessage, socket: Socket) => sendConnectRefused(socket, ctx.clock.now()));
  app.server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => sendExpectationFailed(res, ctx.clock.now()));

  app.removeAllContentTypeParsers();
  for (const t of [[...DOCUMENT_TYPES], DOCUMENT_SUFFIXES]) {
    app.addContentTypeParser(t, { parseAs: 'string', bodyLimit: limits.bodyBytes }, (_req, body, done) => done(null, body));
  }

  // Synchronous (done): an async hook costs every request a promise.
  const common = commonHeaders(ctx.version);
  app.addHook('onRequest', (request, reply, done) => {
    if (request.raw.httpVersion === '1.1' && !request.headers.host) return done(new ServiceError(400, 'an HTTP/1.1 request needs a Host header'));
    for (const [name, value] of common) reply.header(name, value);
    done();
  });

  app.setErrorHandler((err, request, reply) => {
    const se = toServiceError(err);
    if (se.statusCode >= 500) request.log.error({ err }, 'request failed');
    return sendError(request, reply, se, ctx.clock.now(), ctx);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new ServiceError(404, `no resource at ${request.method} ${request.url.split('?')[0]}`), ctx.clock.now(), ctx),
  );

  const handlers: Routes = {
    ...statusRoutes(ctx),
    ...orgRoutes(ctx),
    ...userRoutes(ctx),
    ...accountRoutes(ctx),
    ...distributionRoutes(ctx),
    ...targetFormatRoutes(ctx),
    ...applianceRoutes(ctx),
    ...osProfileRoutes(ctx),
    ...softwareRoutes(ctx),
    ...imageRoutes(ctx),
    ...publicationRoutes(ctx),
  };
  const auth = new Authenticator(ctx.store, ctx.box, servicePath, { clock: ctx.clock, maxAgeSeconds: limits.signedUrlMaxAgeSeconds, failuresPerMinute: limits.authFailuresPerMinute });
  const routes = registerOperations(app, { ctx, auth, handlers, logsRequests: deps.logger === true });
  registerHealth(app, ctx, deps.role ?? 'all');
  if (deps.console !== false) registerConsole(app, { ctx, auth });
  return { app, ctx, routes };
}
