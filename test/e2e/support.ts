// Helpers of the end-to-end suite: a recording wrapper around the client (which operation ids were
// called through it), a server-side observer (which operations the reference server answered, and
// with what status), the real loopback OpenStack's env file, and a direct Glance check that does not
// go through the module under test.
import { openStackServices } from '../support/openstack';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';
import { expect } from 'vitest';
import { ApiError } from '../../src/client/errors';
import { isForgeError } from '../../src/errors';
import type { Client } from '../../src/client';
import { operations, operationsById, type OperationId } from '../../src/model/operations';
import type { RunningServer } from '../../src/server';

export const ALL_OPERATION_IDS: readonly OperationId[] = operations.map((o) => o.id);

const isOpId = (k: PropertyKey): k is OperationId => typeof k === 'string' && Object.prototype.hasOwnProperty.call(operationsById, k);

/**
 * The same client, with every operation id called through it (its per-operation methods, `send`,
 * `upload` and `download({op})`) added to `seen`. Nothing else changes: the call goes through as is.
 */
export function recording(client: Client, seen: Set<OperationId>): Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      const fn = v as (...a: unknown[]) => unknown;
      if (isOpId(prop)) return (...a: unknown[]) => (seen.add(prop), fn.apply(target, a));
      if (prop === 'send') {
        return (...a: unknown[]) => {
          if (isOpId(a[0] as PropertyKey)) seen.add(a[0] as OperationId);
          return fn.apply(target, a);
        };
      }
      if (prop === 'upload') return (...a: unknown[]) => (seen.add('mySoftwareArtifact_upload'), fn.apply(target, a));
      if (prop === 'download') {
        return (...a: unknown[]) => {
          const src = a[0] as { op?: unknown } | string;
          if (typeof src === 'object' && src !== null && isOpId(src.op as PropertyKey)) seen.add(src.op as OperationId);
          return fn.apply(target, a);
        };
      }
      return fn.bind(target);
    },
  });
}

export interface Answered {
  method: string;
  path: string;
  /** The operation of the table this method and path are routed to, if any. */
  op: OperationId | undefined;
  status: number;
  /** The body as sent, when the answer is an XML document (for the schema check). */
  xml?: string;
}

/** Operation routes, literal paths first (so `images/statuses` is not taken for `images/{itid}`). */
const ROUTES = operations
  .map((o) => ({
    o,
    params: (o.path.match(/\{/g) ?? []).length,
    re: new RegExp(`^${o.path.replace(/\{\w+\}/g, '[^/]+')}$`),
  }))
  .concat([
    // The upload's optional fileName (spec endpoint table): `…/bin` is the same operation.
    { o: operationsById.mySoftwareArtifact_upload as (typeof operations)[number], params: 3, re: /^\/users\/[^/]+\/mysoftware\/[^/]+\/artifacts\/[^/]+\/bin$/ },
  ])
  .sort((a, b) => a.params - b.params);

export function operationOf(method: string, pathUnderService: string): OperationId | undefined {
  return ROUTES.find((r) => r.o.method === method && r.re.test(pathUnderService))?.o.id;
}

/**
 * Watch every request the reference server answers (on its Node HTTP server, beside Fastify's own
 * listener): method, path under the service path, the operation it routes to, the final status.
 */
const XML_CAPTURE_MAX = 4 * 1024 * 1024;

export function observe(server: RunningServer): Answered[] {
  const servicePath = new URL(server.url).pathname.replace(/\/+$/, '');
  const seen: Answered[] = [];
  // Prepended: it must wrap the response before Fastify's own listener answers it.
  server.app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    // Keep a copy of what the server writes, as written, to check XML answers against the schema.
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (c: unknown): void => {
      if (size > XML_CAPTURE_MAX || c === undefined || c === null || typeof c === 'function') return;
      const b = Buffer.isBuffer(c) ? c : Buffer.from(c as string);
      size += b.length;
      chunks.push(b);
    };
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    res.write = ((c: unknown, ...rest: never[]) => (keep(c), write(c, ...rest))) as typeof res.write;
    res.end = ((c?: unknown, ...rest: never[]) => (keep(c), end(c as Buffer, ...rest))) as typeof res.end;
    res.once('finish', () => {
      const raw = (req.url ?? '/').split('?')[0]!;
      const path = raw.startsWith(`${servicePath}/`) ? raw.slice(servicePath.length) : raw;
      const method = req.method ?? '';
      // Fastify passes its headers to writeHead, so tell an XML document by its declaration.
      const body = size <= XML_CAPTURE_MAX ? Buffer.concat(chunks).toString('utf8') : '';
      const xml = body.startsWith('<?xml') ? body : undefined;
      seen.push({ method, path, op: operationOf(method, path), status: res.statusCode, ...(xml ? { xml } : {}) });
    });
  });
  return seen;
}

/** The rejection of `p`, which must be an ApiError with this status and a complete uforgeError. */
export async function apiError(p: Promise<unknown>, status: number, baseUrl: string): Promise<ApiError> {
  const e = await p.then(
    (v) => {
      throw new Error(`expected an ApiError ${status}, got a result: ${JSON.stringify(v)?.slice(0, 200)}`);
    },
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ApiError);
  expect(isForgeError(e, ApiError)).toBe(true);
  const a = e as ApiError;
  expect(a.status, a.message).toBe(status);
  expect(a.statusCode).toBe(status);
  expect(a.body.localizedErrorMsg?.message).toBeTruthy();
  expect(a.messageId).toBe(`error.${status}`);
  expect(a.requestMethod).toMatch(/^(GET|POST|PUT|DELETE|HEAD|PATCH)$/);
  expect(a.requestUri?.startsWith(`${baseUrl}/`)).toBe(true);
  expect(a.requestUri).not.toContain('signature=');
  expect(a.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  return a;
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

// ---- The real loopback Keystone + Glance (../shared/openstack) --------------------------------

export interface OpenStack {
  keystoneUrl: string;
  glanceUrl: string | undefined;
  username: string;
  password: string;
  project: string;
  domain: string;
}

/** Start (or reuse) the services through the one shared helper. */
export function openStack(): { env: OpenStack } | { skip: string } {
  const { env, skip } = openStackServices();
  if (!env) return { skip: skip ?? 'OpenStack unavailable' };
  return {
    env: {
      keystoneUrl: env.keystoneUrl,
      glanceUrl: env.glanceUrl,
      username: env.user.login,
      password: env.user.password,
      project: env.user.project,
      domain: env.domain,
    },
  };
}

/** A project-scoped token of the test user and the Glance endpoint, straight from Keystone (not via the server's module). */
async function glanceSession(env: OpenStack): Promise<{ token: string; glance: string }> {
  const res = await request(`${env.keystoneUrl.replace(/\/v3\/?$/, '')}/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: env.username, domain: { name: env.domain }, password: env.password } } },
        scope: { project: { name: env.project, domain: { name: env.domain } } },
      },
    }),
  });
  const body = (await res.body.json()) as { token?: { catalog?: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }> } };
  const token = res.headers['x-subject-token'];
  if (res.statusCode !== 201 || typeof token !== 'string') throw new Error(`keystone auth of the test user: ${res.statusCode}`);
  const fromCatalog = body.token?.catalog?.find((s) => s.type === 'image')?.endpoints.find((e) => e.interface === 'public')?.url;
  const glance = (env.glanceUrl ?? fromCatalog ?? '').replace(/\/v2\/?$/, '').replace(/\/+$/, '');
  if (!glance) throw new Error('no Glance endpoint in the env file or the Keystone catalog');
  return { token, glance };
}

/** Glance's own answer about one image: its HTTP status and, when found, its status field. */
export async function glanceImage(env: OpenStack, id: string): Promise<{ http: number; status?: string }> {
  const s = await glanceSession(env);
  const res = await request(`${s.glance}/v2/images/${encodeURIComponent(id)}`, { headers: { 'x-auth-token': s.token, accept: 'application/json' } });
  if (res.statusCode !== 200) {
    await res.body.dump();
    return { http: res.statusCode };
  }
  const b = (await res.body.json()) as { status?: string };
  return { http: 200, ...(b.status ? { status: b.status } : {}) };
}

/** Ids of the test project's Glance images with this name. */
export async function glanceImagesNamed(env: OpenStack, name: string): Promise<string[]> {
  const s = await glanceSession(env);
  const res = await request(`${s.glance}/v2/images?name=${encodeURIComponent(name)}&limit=100`, { headers: { 'x-auth-token': s.token, accept: 'application/json' } });
  const b = (await res.body.json()) as { images?: Array<{ id: string }> };
  if (res.statusCode !== 200) throw new Error(`glance list: ${res.statusCode}`);
  return (b.images ?? []).map((i) => i.id);
}
