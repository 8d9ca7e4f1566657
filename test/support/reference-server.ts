// The one way a suite starts the reference server in its own process: a fresh data folder, the users it
// asks for (made with createUser, as `appliance-forge users add` does), the server on 127.0.0.1:0, clients
// closed and the folder removed on close. Suite helpers (test/server, test/hardening, test/engine, the
// Pulumi stack) add their own conveniences on top. A server as a child process is another thing
// (test/hardening/support/child-server.ts: kill tests and logs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client, type ClientOptions } from '../../src/client';
import { createUser, startServer, type CreatedUser, type RunningServer, type StartOptions } from '../../src/server';

export interface UserSpec { password?: string; admin?: boolean }

export interface ReferenceServer<U extends string> {
  /** The running server (a new one after `restart`). */
  readonly server: RunningServer;
  readonly url: string;
  readonly dataDir: string;
  /** The users asked for, by login, with their API key pair. */
  readonly users: Readonly<Record<U, CreatedUser>>;
  /** A client of `user` by its API key pair; closed with the server. */
  client(user: CreatedUser, o?: Partial<ClientOptions>): Client;
  /** Stops and starts the server again on the same data folder (a restart keeps every record). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startReferenceServer<const U extends string>(
  users: Readonly<Record<U, UserSpec>>,
  o: Partial<StartOptions> & { prefix?: string } = {},
): Promise<ReferenceServer<U>> {
  const { prefix = 'forge-ref-', ...options } = o;
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
