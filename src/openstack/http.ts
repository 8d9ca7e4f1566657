// One HTTP exchange with Keystone or Glance over undici, with bounded time and memory, and the
// translation of transport failures into OpenStackError. Every body is consumed or dumped.
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import { AbortedError, messageOf } from '../errors';
import { OpenStackError, scrub, type OpenStackErrorDetails, type OpenStackErrorKind } from './errors';
import { shown } from './urls';

export interface OpenStackTimeouts {
  /** Bound on connect, on waiting for answer headers and on body silences of ordinary requests. */
  readonly requestTimeoutMs?: number;
  /** During the upload: longest time without a byte written (Glance not reading) or, after the last byte, without an answer. */
  readonly uploadIdleTimeoutMs?: number;
  /** Longest wait for the image to become `active` once its data is sent. */
  readonly activeTimeoutMs?: number;
  /** Interval between status polls while waiting for `active`. */
  readonly pollMs?: number;
}

const DEFAULTS: Required<OpenStackTimeouts> = {
  requestTimeoutMs: 30_000,
  uploadIdleTimeoutMs: 120_000,
  activeTimeoutMs: 600_000,
  pollMs: 1_000,
};

/** A JSON answer is small; a larger one is a misbehaving server, not something to buffer. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const MAX_MESSAGE_CHARS = 160;

export type Service = 'keystone' | 'glance';

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  readonly json: unknown;
  readonly text: string;
}

export interface CallOptions {
  readonly service: Service;
  /** What we were doing, for messages: `create image`, `authenticate`. */
  readonly what: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly json?: unknown;
  readonly body?: Readable;
  /** Replaces the headers timeout: for an upload it is the idle bound (undici refreshes it on each write). */
  readonly headersTimeoutMs?: number;
  /** false: let the request finish even if the caller aborts (so that a create always yields its id). */
  readonly abortable?: boolean;
}

/** The state of one operation: its connection pool, its timeouts, the secrets to keep out of messages. */
export class Connection {
  readonly timeouts: Required<OpenStackTimeouts>;
  private readonly agent: Agent;
  private readonly secrets: string[] = [];

  constructor(timeouts: OpenStackTimeouts | undefined, readonly signal: AbortSignal | undefined) {
    this.timeouts = { ...DEFAULTS, ...definedOnly(timeouts ?? {}) };
    for (const [k, v] of Object.entries(this.timeouts)) {
      if (!Number.isFinite(v) || v <= 0) throw new OpenStackError('input', `timeouts.${k} must be a positive number`);
    }
    const t = this.timeouts.requestTimeoutMs;
    this.agent = new Agent({ connect: { timeout: t }, headersTimeout: t, bodyTimeout: t, keepAliveTimeout: 4_000 });
  }

  /** Registers a credential (password, token) that must never appear in a message. */
  secret(value: string): void {
    if (value) this.secrets.push(value);
  }

  /** An OpenStackError whose message has every registered secret removed. */
  error(kind: OpenStackErrorKind, message: string, details: OpenStackErrorDetails = {}): OpenStackError {
    return new OpenStackError(kind, scrub(message, this.secrets), details);
  }

  /** The error to throw when the caller aborted. */
  aborted(): AbortedError {
    return new AbortedError('OpenStack publication aborted');
  }

  throwIfAborted(): void {
    if (this.signal?.aborted) throw this.aborted();
  }

  async call(o: CallOptions): Promise<Answer> {
    const abortable = o.abortable ?? true;
    if (abortable) this.throwIfAborted();
    const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
    let body: string | Readable | undefined = o.body;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['content-type'] = 'application/json';
    }
    try {
      const res = await this.agent.request({
        origin: new URL(o.url).origin,
        path: pathOf(o.url),
        method: o.method,
        headers,
        body: body ?? null,
        signal: abortable ? this.signal ?? null : null,
        headersTimeout: o.headersTimeoutMs ?? this.timeouts.requestTimeoutMs,
      });
      const text = await readCapped(res.body, MAX_ANSWER_BYTES);
      return { status: res.statusCode, headers: res.headers, json: parseJson(text), text };
    } catch (e) {
      throw this.transportError(o, e, abortable);
    }
  }

  /** A message for a failing answer: what we did, the status, and the service's own words (scrubbed). */
  describe(o: Pick<CallOptions, 'service' | 'what'>, a: Answer): string {
    const said = remoteMessage(a, this.secrets);
    return `${o.what}: ${o.service === 'keystone' ? 'Keystone' : 'Glance'} answered HTTP ${a.status}${said ? ` (${said})` : ''}`;
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy().catch(() => undefined));
  }

  private transportError(o: CallOptions, e: unknown, abortable: boolean): Error {
    if (e instanceof OpenStackError) return e;
    if (abortable && this.signal?.aborted) return this.aborted();
    const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
    const text = messageOf(e);
    const where = `${o.service === 'keystone' ? 'Keystone' : 'Glance'} at ${shown(o.url)}`;
    const details = { service: o.service };
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      const ms = code === 'UND_ERR_HEADERS_TIMEOUT' ? o.headersTimeoutMs ?? this.timeouts.requestTimeoutMs : this.timeouts.requestTimeoutMs;
      // During an upload the headers timer is refreshed by every write: it fires when Glance stops reading.
      return this.error('timeout', `${o.what}: ${where} did not answer in time (nothing for ${ms} ms, ${code})`, details);
    }
    return this.error('network', `${o.what}: connection to ${where} failed (${code || 'error'}: ${text})`, details);
  }
}

function definedOnly(t: OpenStackTimeouts): OpenStackTimeouts {
  return Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined));
}

function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown }, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > cap) {
      body.destroy();
      throw new OpenStackError('network', `answer larger than ${cap} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Keystone puts its words in `error.message`, Glance in `message` (with `<br />` padding). Any other
 * answer is not echoed at all: the URL is the user's, so its answer may be some internal page (SSRF).
 * What is echoed is short, printable ASCII.
 */
function remoteMessage(a: Answer, secrets: readonly string[]): string {
  let m: unknown;
  if (isRecord(a.json)) m = isRecord(a.json.error) ? a.json.error.message : a.json.message;
  if (typeof m !== 'string') return '';
  // Scrubbed before it is cut: a secret cut in half would no longer be recognised.
  const flat = scrub(m, secrets).replace(/<[^>]*>/g, ' ').replace(/[^\x20-\x7e]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS)}…` : flat;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
