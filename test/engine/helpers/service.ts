// The real reference server on 127.0.0.1:0 with a fresh data dir and one user, for integration tests.
import { openStackServices } from '../../support/openstack';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, type Client } from '../../../src/client';
import { createUser, startServer, type RunningServer } from '../../../src/server';

export interface TestService {
  readonly server: RunningServer;
  readonly dataDir: string;
  readonly login: string;
  readonly publicKey: string;
  readonly secretKey: string;
  client(url?: string): Client;
  close(): Promise<void>;
}

export async function startTestService(): Promise<TestService> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'af-engine-'));
  const user = await createUser(dataDir, { login: 'alice' });
  const server = await startServer({ dataDir });
  const clients: Client[] = [];
  return {
    server, dataDir, login: user.login, publicKey: user.publicKey, secretKey: user.secretKey,
    client(url = server.url) {
      const c = createClient({ url, auth: { login: user.login, publicKey: user.publicKey, secretKey: user.secretKey } });
      clients.push(c);
      return c;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
      rmSync(dataDir, { recursive: true, force: true }); // its images are GiBs; the run's temp root goes at the end anyway
    },
  };
}

/**
 * The env file values of the real Keystone + Glance on loopback (test/support/openstack.ts), or
 * undefined where they cannot run (not root, not Debian, no script): callers skip with a message.
 */
export function openStackEnv(): Record<string, string> | undefined {
  return openStackServices().vars;
}

/** A copy of the examples folder, so that a test can edit its declarations. */
export function examplesWorkspace(prefix = 'af-decl-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cpSync(path.resolve(__dirname, '../../../examples'), dir, { recursive: true });
  return dir;
}
