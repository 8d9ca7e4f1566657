// The real reference server on 127.0.0.1:0 with a fresh data dir and one user, for integration tests.
import { openStackServices } from '../../support/openstack';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '../../../src/client';
import type { RunningServer } from '../../../src/server';
import { startReferenceServer } from '../../support/reference-server';

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
  const ref = await startReferenceServer({ alice: {} }, { prefix: 'af-engine-' });
  const user = ref.users.alice;
  return {
    server: ref.server, dataDir: ref.dataDir, login: user.login, publicKey: user.publicKey, secretKey: user.secretKey,
    client: (url = ref.url) => ref.client(user, { url }),
    // Its images are GiBs: the data folder goes with it (the run's temp root goes at the end anyway).
    close: () => ref.close(),
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
