// Test helpers: a real server on 127.0.0.1:0 over a fresh data dir, users made through createUser,
// the project's client for typed calls, and raw signed requests (undici) for the error paths.
import { mkdtempSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Client as HttpClient } from 'undici';
import { basicAuthorization, signTarget } from '../../src/auth/signer';
import type { Client } from '../../src/client';
import type { CreatedUser, RunningServer, ServerDeps, StartOptions } from '../../src/server';
import { SecretBox } from '../../src/server/auth/secret-box';
import { loadCatalog } from '../../src/server/catalog';
import { LocalBlobs } from '../../src/server/blobs/local';
import { JobRunner } from '../../src/server/jobs/runner';
import { deleteGlanceImage, publishToGlance } from '../../src/openstack';
import { systemClock } from '../../src/server/ports';
import { realImaging } from '../../src/server/start';
import type { Store } from '../../src/server/store/port';
import { InProcessQueue } from '../../src/server/queue/in-process';
import { startReferenceServer, type Stored } from '../support/reference-server';
import type { Farm } from '../support/farm';

export { XSD } from '../support/shared';
import { XSD } from '../support/shared';

export interface TestServer {
  server: RunningServer;
  /** The API node's data folder (on a farm, neither its records nor its blobs are there: see `stored`). */
  dataDir: string;
  /** What the server keeps, read without it. */
  stored: Stored;
  /** The farm, on the `farm` project. */
  farm?: Farm | undefined;
  admin: CreatedUser;
  alice: CreatedUser;
  bob: CreatedUser;
  client(u: CreatedUser, format?: 'xml' | 'json'): Client;
  raw(method: string, rel: string, o?: RawOptions): Promise<RawResponse>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface RawOptions {
  user?: CreatedUser | null;
  basic?: { login: string; password: string };
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export function tempDir(prefix = 'forge-server-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestServer(o: Partial<StartOptions> = {}): Promise<TestServer> {
  const ref = await startReferenceServer(
    { admin: { password: 'admin-pass', admin: true }, alice: { password: 'alice-pass' }, bob: {} },
    { ...o, prefix: 'forge-server-' },
  );
  const { admin, alice, bob } = ref.users;
  const t: TestServer = {
    get server() {
      return ref.server;
    },
    dataDir: ref.dataDir,
    stored: ref.stored,
    farm: ref.farm,
    admin,
    alice,
    bob,
    client: (u, format = 'xml') => ref.client(u, { format, retry: false }),
    async raw(method, rel, r = {}) {
      const user = r.user === undefined ? alice : r.user;
      const target = user ? signTarget(rel, user) : rel.replace(/^\//, '');
      const base = new URL(ref.url);
      const headers: Record<string, string> = { ...(r.headers ?? {}) };
      if (r.basic) headers.authorization = basicAuthorization(r.basic.login, r.basic.password);
      // A dispatcher takes the path as is: no URL normalization, so `%2E%2E` reaches the server as sent.
      const http = new HttpClient(base.origin);
      const res = await http.request({
        path: `${base.pathname}/${target}`,
        method,
        headers,
        ...(r.body !== undefined ? { body: r.body } : {}),
      });
      const text = await res.body.text();
      await http.close();
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h[k] = v;
      return { status: res.statusCode, headers: h, text };
    },
    restart: () => ref.restart(),
    close: () => ref.close(),
  };
  return t;
}

/** What buildServer needs over a data dir and its open store, for tests that look inside the server. */
export function serverDeps(dir: string, store: Store): ServerDeps {
  return {
    store,
    box: SecretBox.open(dir),
    blobs: new LocalBlobs(dir),
    jobs: new JobRunner(),
    // Its orders are queued and never worked: these tests look at the records, not at builds.
    queue: new InProcessQueue(store, { error: () => undefined, warn: () => undefined, info: () => undefined }),
    clock: systemClock,
    catalog: loadCatalog(),
    imaging: realImaging({}),
    openstack: { publishToGlance, deleteGlanceImage },
  };
}

/** Validate an XML document against the platform schema (xmllint throws on an invalid one); a missing schema fails, it never passes. */
export function validatesAgainstXsd(xml: string): boolean {
  if (!existsSync(XSD)) throw new Error(`${XSD} is missing: the schema check cannot run`);
  const f = join(tempDir('forge-xsd-'), 'doc.xml');
  writeFileSync(f, xml);
  execFileSync('xmllint', ['--noout', '--schema', XSD, f], { stdio: 'pipe' });
  return true;
}

/** Poll until `fn` is true (bounded). */
export async function until(fn: () => Promise<boolean> | boolean, timeoutMs = 30_000, everyMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
