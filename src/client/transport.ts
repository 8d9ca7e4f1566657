// The innermost layer: one undici Pool per client, one request per call. Connection failures and
// timeouts become TransportError (style example 5); the caller's abort becomes AbortedError.
// With HTTP(S)_PROXY set, undici's EnvHttpProxyAgent takes the Pool's place (it honours NO_PROXY).
import { EnvHttpProxyAgent, Pool, type Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import { AbortedError, messageOf } from '../errors';
import { TransportError } from './errors';
import { systemErrorText } from '../error-text';
import { flatHeaders, type Exchange, type WireRequest } from './wire';

export interface TransportOptions {
  origin: string;
  /** The base URL's path without a trailing slash (`/api`). */
  servicePath: string;
  timeoutMs: number;
  userAgent: string;
  /** Read the proxy variables of the environment; default true. */
  proxy?: boolean;
}

export interface Transport {
  exchange: Exchange;
  close(): Promise<void>;
}

/** The proxy variables undici's EnvHttpProxyAgent reads (the lower-case form wins, as in curl). */
const PROXY_VARS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY'] as const;

/** The proxy URLs set in `env`, credentials replaced by `***` (for a debug line); empty when none. */
export function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return PROXY_VARS.filter((k) => env[k]).map((k) => `${k}=${redactUserinfo(env[k]!)}`);
}

function redactUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, '$1***@');
}

export function createTransport(o: TransportOptions): Transport {
  const options = {
    connections: 16,
    connect: { timeout: Math.min(o.timeoutMs, 30_000) },
    headersTimeout: o.timeoutMs,
    bodyTimeout: o.timeoutMs,
  };
  // Only when a proxy variable is set: the plain Pool stays the path of every other run.
  const pool: Dispatcher = o.proxy !== false && proxyFromEnv().length ? new EnvHttpProxyAgent(options) : new Pool(o.origin, options);
  const exchange: Exchange = async (req) => {
    if (req.signal?.aborted) throw new AbortedError();
    let body: string | Readable | undefined;
    const headers: Record<string, string> = { 'user-agent': o.userAgent, ...req.headers };
    if (typeof req.body === 'string') body = req.body;
    else if (req.body) {
      body = req.body.open();
      headers['content-length'] = String(req.body.size);
    }
    try {
      const res = await pool.request({
        origin: o.origin,
        method: req.method,
        path: `${o.servicePath}/${req.target}`,
        headers,
        body: body ?? null,
        signal: req.signal ?? null,
        // undici: a POST is never sent down a pipelined connection before earlier answers arrived.
        idempotent: req.method !== 'POST',
      });
      return { status: res.statusCode, headers: flatHeaders(res.headers), body: res.body };
    } catch (e) {
      if (body && typeof body !== 'string') body.destroy();
      throw transportFailure(e, req);
    }
  };
  return { exchange, close: () => pool.close() };
}

/** Map an error thrown by undici to the client's typed errors; `describe` is the unsigned target. */
export function transportFailure(e: unknown, req: Pick<WireRequest, 'method' | 'target' | 'signal'>): Error {
  // undici reports a proxy that refuses the tunnel (e.g. 407) as an abort; it is a failure, not the caller's abort.
  const refused = !req.signal?.aborted && e instanceof Error ? /^Proxy response \((\d+)\)/.exec(e.message) : null;
  if (refused) return new TransportError(`${req.method} ${stripQuery(req.target)} failed: the proxy answered ${refused[1]}`, e, false);
  if (req.signal?.aborted || errCode(e) === 'UND_ERR_ABORTED' || (e instanceof Error && e.name === 'AbortError')) {
    return new AbortedError(`${req.method} ${stripQuery(req.target)} aborted`);
  }
  const kind = failureKind(e);
  const what = kind === 'timeout' ? 'timed out' : kind === 'connect' ? 'could not connect' : kind === 'reset' ? 'connection reset' : 'failed';
  const detail = systemErrorText(e, { causes: true }) ?? messageOf(e);
  return new TransportError(`${req.method} ${stripQuery(req.target)} ${what}: ${detail}`, e, kind !== 'other');
}

export type FailureKind = 'connect' | 'reset' | 'timeout' | 'other';

const CONNECT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);
const TIMEOUT = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/**
 * Which phase a connection failure belongs to. Only `connect` proves that no byte of the request
 * reached the server; that is the one failure after which a POST may be sent again (retry.ts).
 */
export function failureKind(e: unknown): FailureKind {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = errCode(cur);
    if (code && CONNECT.has(code)) return 'connect';
    if (code && TIMEOUT.has(code)) return 'timeout';
    if (code && RESET.has(code)) return 'reset';
    if (cur instanceof AggregateError) return failureKind(cur.errors[0]);
  }
  return 'other';
}

function errCode(e: unknown): string | undefined {
  const c = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof c === 'string' ? c : undefined;
}

/** Query strings may carry the signature and the public key; messages name the path only. */
function stripQuery(target: string): string {
  const i = target.indexOf('?');
  return `/${i < 0 ? target : target.slice(0, i)}`;
}
