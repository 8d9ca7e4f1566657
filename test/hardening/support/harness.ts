// Hardening harness: a real reference server on 127.0.0.1:0 (in process), users made by createUser,
// raw HTTP (undici for well-formed targets, a plain socket for bytes undici refuses to send), and the
// one assertion every hostile case ends with: a 4xx carrying a `uforgeError` body, never a 5xx.
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { basicAuthorization, signTarget } from '../../../src/auth/signer';
import type { Client } from '../../../src/client';
import { decode, formatOfContentType } from '../../../src/codec';
import type { CreatedUser, RunningServer, StartOptions } from '../../../src/server';
import { startReferenceServer } from '../../support/reference-server';
import { messageOf } from '../../../src/errors';

/** Hostile suites run a bounded sample in `npm test`; `APPLIANCE_FORGE_LONG=1` runs the full form. */
export const LONG = process.env.APPLIANCE_FORGE_LONG === '1';

export const PASSWORDS = { admin: 'admin-Pa55-word', alice: 'alice-Pa55-word', bob: 'bob-Pa55-word' } as const;

export interface Res {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface Send {
  /** Sign the target as this user (default alice); null sends it unsigned. */
  user?: CreatedUser | null;
  basic?: { login: string; password: string };
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Harness {
  server: RunningServer;
  dataDir: string;
  origin: string;
  admin: CreatedUser;
  alice: CreatedUser;
  bob: CreatedUser;
  /** `rel` is relative to the base URL, already percent-encoded; it is signed as given. */
  send(method: string, rel: string, o?: Send): Promise<Res>;
  /** Send a request target exactly as given, bytes and all (`target` starts with `/`). */
  sendRaw(method: string, target: string, o?: { headers?: Record<string, string>; body?: Buffer | string }): Promise<Res>;
  client(u: CreatedUser, format?: 'xml' | 'json'): Client;
  close(): Promise<void>;
}

export function tempDir(prefix = 'forge-hard-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startHarness(o: Partial<StartOptions> = {}): Promise<Harness> {
  const ref = await startReferenceServer(
    { admin: { password: PASSWORDS.admin, admin: true }, alice: { password: PASSWORDS.alice }, bob: { password: PASSWORDS.bob } },
    { ...o, prefix: 'forge-hard-' },
  );
  const { server, dataDir } = ref;
  const { admin, alice, bob } = ref.users;
  const base = new URL(server.url);
  return {
    server,
    dataDir,
    origin: base.origin,
    admin,
    alice,
    bob,
    send: (method, rel, s = {}) => sendSigned(server.url, method, rel, { ...s, user: s.user === undefined ? alice : s.user }),
    sendRaw: (method, target, r = {}) => rawSocket(base.hostname, Number(base.port), method, target, r.headers ?? {}, r.body),
    client: (u, format = 'xml') => ref.client(u, { format, retry: false }),
    close: () => ref.close(),
  };
}

/** One request to `baseUrl` + `/` + rel, signed as `s.user` when given. */
export async function sendSigned(baseUrl: string, method: string, rel: string, s: Send = {}): Promise<Res> {
  const target = s.user ? signTarget(rel, s.user) : rel.replace(/^\//, '');
  const headers: Record<string, string> = { ...(s.headers ?? {}) };
  if (s.basic) headers.authorization = basicAuthorization(s.basic.login, s.basic.password);
  const res = await request(`${baseUrl}/${target}`, {
    method: method as 'GET',
    headers,
    ...(s.body !== undefined ? { body: s.body } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: flat(res.headers), text };
}

function flat(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** HTTP/1.1 over a plain socket, `Connection: close`: the only way to put NUL or a raw control byte in a target. */
export function rawSocket(host: string, port: number, method: string, target: string, headers: Record<string, string>, body?: Buffer | string): Promise<Res> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
    const lines = [`${method} ${target} HTTP/1.1`, `Host: ${host}:${port}`, 'Connection: close', `Content-Length: ${payload.length}`];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    const sock = connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(new Error('raw request timed out')), 15_000);
    // No half-close: Node's server may drop a response to a client that already sent FIN.
    sock.on('connect', () => sock.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload])));
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(parseRawResponse(Buffer.concat(chunks).toString('utf8')));
    });
  });
}

function parseRawResponse(all: string): Res {
  const head = all.indexOf('\r\n\r\n');
  const lines = (head < 0 ? all : all.slice(0, head)).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let text = head < 0 ? '' : all.slice(head + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) text = dechunk(text);
  return { status, headers, text };
}

function dechunk(s: string): string {
  let out = '';
  let i = 0;
  for (let guard = 0; guard < 10_000; guard++) {
    const nl = s.indexOf('\r\n', i);
    if (nl < 0) break;
    const n = parseInt(s.slice(i, nl), 16);
    if (!n) break;
    out += s.slice(nl + 2, nl + 2 + n);
    i = nl + 2 + n + 2;
  }
  return out;
}

/** Why a response is not "a 4xx with a uforgeError body whose statusCode matches", or undefined when it is. */
export function whyNotClientError(r: Res, expected?: number | readonly number[]): string | undefined {
  const allowed = expected === undefined ? undefined : [expected].flat();
  if (r.status < 400 || r.status > 499) return `status ${r.status} is not a 4xx: ${r.text.slice(0, 200)}`;
  if (allowed && !allowed.includes(r.status)) return `status ${r.status}, expected ${allowed.join('/')}: ${r.text.slice(0, 200)}`;
  const format = formatOfContentType(r.headers['content-type']);
  if (!format) return `status ${r.status} with a non-document body (${r.headers['content-type'] ?? 'no type'}): ${r.text.slice(0, 200)}`;
  try {
    const d = decode(format, r.text, 'uforgeError');
    if (d.value.statusCode !== r.status) return `uforgeError.statusCode ${d.value.statusCode} ≠ ${r.status}`;
    if (!d.value.localizedErrorMsg?.message) return 'uforgeError without a message';
  } catch (e) {
    return `body is not a uforgeError: ${messageOf(e)}: ${r.text.slice(0, 200)}`;
  }
  return undefined;
}

/** The service still answers `GET /status` (wire contract §6): the health check after each batch. */
export async function healthy(baseUrl: string): Promise<boolean> {
  // A fresh connection each time: a new client must be served, whatever state pooled sockets are in.
  const u = new URL(baseUrl);
  try {
    const r = await rawSocket(u.hostname, Number(u.port), 'GET', `${u.pathname}/status`, {});
    return r.status === 200 && r.text.includes('<alive>true</alive>');
  } catch {
    return false;
  }
}

/** A counter of hostile cases tried, printed by each suite (the report's figures). */
export class CaseCounter {
  private readonly byKind = new Map<string, number>();
  add(kind: string, n = 1): void {
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + n);
  }
  get total(): number {
    let n = 0;
    for (const v of this.byKind.values()) n += v;
    return n;
  }
  report(suite: string): string {
    return `[hardening] ${suite}: ${this.total} cases (${[...this.byKind].map(([k, v]) => `${k} ${v}`).join(', ')})`;
  }
}

export const XML_HEADERS = { 'content-type': 'application/xml' } as const;
export const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' } as const;
export const NS = 'xmlns:ns0="http://www.usharesoft.com/uforge" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
