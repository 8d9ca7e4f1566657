// The one way a suite starts the reference server in its own process: a fresh data folder, the users it
// asks for (made with createUser, as `appliance-forge users add` does), the server on 127.0.0.1:0, clients
// closed and the folder removed on close. Suite helpers (test/server, test/hardening, test/engine, the
// Pulumi stack) add their own conveniences on top. A server as a child process is another thing
// (test/hardening/support/child-server.ts: kill tests and logs). With APPLIANCE_FORGE_TEST_BACKEND=farm
// (vitest's `farm` project), the server is a farm instead: PostgreSQL, S3, an API node here and two
// worker processes (test/support/farm.ts), whose records and blobs `dataDir` does not hold.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client, type ClientOptions } from '../../src/client';
import { createUser, startServer, type CreatedUser, type RunningServer, type StartOptions } from '../../src/server';
import { onFarm, startFarm, type Farm } from './farm';
import { sql } from './postgres';

export interface UserSpec { password?: string; admin?: boolean }

export interface ReferenceServer<U extends string> {
  /** The running server (a new one after `restart`). */
  readonly server: RunningServer;
  readonly url: string;
  readonly dataDir: string;
  /** The farm the server is part of, on the `farm` project; undefined for the embedded server. */
  readonly farm?: Farm | undefined;
  /** The users asked for, by login, with their API key pair. */
  readonly users: Readonly<Record<U, CreatedUser>>;
  /** What the server keeps, read without the server (sqlite3's library, a pg connection, an S3 client). */
  readonly stored: Stored;
  /** A client of `user` by its API key pair; closed with the server. */
  client(user: CreatedUser, o?: Partial<ClientOptions>): Client;
  /** Stops and starts the server again on the same data folder (a restart keeps every record). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface Stored {
  /** A record's `doc` as the database holds it (its JSON text). */
  recordDoc(kind: string, id: number): Promise<string | undefined>;
  /** Every byte the server keeps: its database and its blobs (a scan for what must never be stored). */
  bytes(): Promise<Buffer>;
  /** The keys of the blobs it keeps (`files/…`, `images/…`) and of writes in progress (`tmp/…` locally, `upload:<key>` in S3). */
  blobKeys(): Promise<string[]>;
  /** Whether a write is under way with bytes already stored (a temporary file that is not empty, a multipart upload begun). */
  writing(): Promise<boolean>;
}

function bytesUnder(dir: string): Buffer[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? bytesUnder(p) : [readFileSync(p)];
  });
}

/** What an embedded server keeps: its data folder (forge.db, its WAL, the blobs). */
function storedLocally(dataDir: string): Stored {
  return {
    async recordDoc(kind, id) {
      const db = new Database(join(dataDir, 'forge.db'), { readonly: true });
      try {
        return (db.prepare('SELECT doc FROM records WHERE kind = ? AND id = ?').get(kind, id) as { doc: string } | undefined)?.doc;
      } finally {
        db.close();
      }
    },
    bytes: async () => Buffer.concat(bytesUnder(dataDir)),
    blobKeys: async () => ['files', 'images', 'tmp'].flatMap((area) => readdirSync(join(dataDir, area)).map((n) => `${area}/${n}`)),
    writing: async () => readdirSync(join(dataDir, 'tmp')).some((f) => statSync(join(dataDir, 'tmp', f)).size > 0),
  };
}

/** What a farm keeps: its database (records, users, the queue's jobs) and its bucket prefix. */
function storedInFarm(farm: Farm): Stored {
  const under = (key: string | undefined): string[] => (key?.startsWith(`${farm.blobPrefix}/`) ? [key.slice(farm.blobPrefix.length + 1)] : []);
  const keys = async (): Promise<string[]> => (await farm.s3.objects()).flatMap((o) => under(o.Key));
  const uploads = async (): Promise<string[]> => (await farm.s3.uploads()).flatMap((u) => under(u.Key).map((k) => `upload:${k}`));
  return {
    async recordDoc(kind, id) {
      return (await sql<{ doc: string }>(farm.databaseUrl, 'SELECT doc FROM appliance_forge.records WHERE kind = $1 AND id = $2', [kind, id]))[0]?.doc;
    },
    async bytes() {
      const rows = await sql<{ t: string }>(
        farm.databaseUrl,
        `SELECT row_to_json(r)::text AS t FROM appliance_forge.records r UNION ALL SELECT row_to_json(u)::text FROM appliance_forge.users u
         UNION ALL SELECT data::text FROM pgboss.job`,
      );
      const blobs: Buffer[] = [];
      for (const key of await keys()) {
        const o = await farm.s3.client.send(new GetObjectCommand({ Bucket: farm.s3.bucket, Key: `${farm.blobPrefix}/${key}` }));
        blobs.push(Buffer.from(await o.Body!.transformToByteArray()));
      }
      return Buffer.concat([...rows.map((r) => Buffer.from(r.t)), ...blobs]);
    },
    blobKeys: async () => [...(await keys()), ...(await uploads())],
    writing: async () => (await uploads()).length > 0,
  };
}

export async function startReferenceServer<const U extends string>(
  users: Readonly<Record<U, UserSpec>>,
  o: Partial<StartOptions> & { prefix?: string } = {},
): Promise<ReferenceServer<U>> {
  const { prefix = 'forge-ref-', ...options } = o;
  if (onFarm()) return farmServer(users, options);
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), prefix));
  const made: Partial<Record<U, CreatedUser>> = {};
  for (const [login, spec] of Object.entries(users) as Array<[U, UserSpec]>) made[login] = await createUser(dataDir, { login, ...spec });
  const start = () => startServer({ port: 0, ...options, dataDir });
  let server = await start();
  const clients: Client[] = [];
  return {
    get server() {
      return server;
    },
    get url() {
      return server.url;
    },
    dataDir,
    users: made as Record<U, CreatedUser>,
    stored: storedLocally(dataDir),
    client(u, c = {}) {
      const client = createClient({ url: server.url, auth: { login: u.login, publicKey: u.publicKey, secretKey: u.secretKey }, ...c });
      clients.push(client);
      return client;
    },
    async restart() {
      await server.close();
      server = await start();
    },
    async close() {
      for (const c of clients.splice(0)) await c.close().catch(() => undefined);
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The same, as a farm: the users in its database, the API node restarted by `restart`. */
async function farmServer<const U extends string>(users: Readonly<Record<U, UserSpec>>, options: Partial<StartOptions>): Promise<ReferenceServer<U>> {
  const farm = await startFarm({ api: options });
  const made: Partial<Record<U, CreatedUser>> = {};
  for (const [login, spec] of Object.entries(users) as Array<[U, UserSpec]>) {
    made[login] = await createUser(farm.apiDir, { login, ...spec, databaseUrl: farm.databaseUrl, secretKeyFile: farm.secretKeyFile });
  }
  const clients: Client[] = [];
  return {
    get server() {
      return farm.api;
    },
    get url() {
      return farm.api.url;
    },
    dataDir: farm.apiDir,
    farm,
    users: made as Record<U, CreatedUser>,
    stored: storedInFarm(farm),
    client(u, c = {}) {
      const client = createClient({ url: farm.api.url, auth: { login: u.login, publicKey: u.publicKey, secretKey: u.secretKey }, ...c });
      clients.push(client);
      return client;
    },
    restart: () => farm.restartApi(),
    async close() {
      for (const c of clients.splice(0)) await c.close().catch(() => undefined);
      await farm.close();
    },
  };
}
