// Console sessions across API nodes that share one database and one secret key file, as a farm's nodes do:
// two servers, each with its own connection to the same store (SQLite here; a farm shares PostgreSQL the same
// way), over real HTTP. A session opened on one node is accepted by the other; signing out on either ends it
// on both; a password changed through the API ends it too.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, createUser } from '../../src/server';
import { systemClock } from '../../src/server/ports';
import { SqliteStore } from '../../src/server/store/sqlite/store';
import { serverDeps, tempDir } from '../server/helpers';
import { csrfOf, Visitor } from './helpers';

const PASSWORD = 'nodes-Console-pw1';

describe('console sessions on two nodes of one store', () => {
  const dir = tempDir('forge-console-nodes-');
  const nodes: Array<{ store: SqliteStore; built: ReturnType<typeof buildServer>; origin: string }> = [];

  beforeAll(async () => {
    await createUser(dir, { login: 'alice', password: PASSWORD });
    for (let i = 0; i < 2; i++) {
      const store = new SqliteStore(dir, systemClock);
      const built = buildServer(serverDeps(dir, store));
      await built.app.listen({ host: '127.0.0.1', port: 0 });
      const addr = built.app.server.address();
      nodes.push({ store, built, origin: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` });
    }
  });
  afterAll(async () => {
    for (const n of nodes) {
      await n.built.app.close();
      await n.store.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** The same browser (cookie jar) pointed at node `i`. */
  const at = (v: Visitor, i: number): Visitor => {
    const w = new Visitor(nodes[i]!.origin);
    for (const [k, val] of v.jar) w.jar.set(k, val);
    return w;
  };

  it('accepts a session opened on one node on the other, and ends it on both at sign-out', async () => {
    const a = new Visitor(nodes[0]!.origin);
    expect((await a.signIn('alice', PASSWORD)).status).toBe(303);
    const b = at(a, 1);
    const page = await b.get('/console/images');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign out alice');
    // The CSRF token made on one node is good on the other.
    const token = csrfOf((await a.get('/console/images')).text);
    expect((await b.post('/console/sign-out', { csrf: token })).status).toBe(303);
    const stale = at(a, 0);
    expect((await stale.get('/console/images')).status).toBe(303);
    expect((await at(a, 1).get('/console/images')).status).toBe(303);
  });

  it('ends every session when the password changes through the API', async () => {
    const a = new Visitor(nodes[0]!.origin);
    expect((await a.signIn('alice', PASSWORD)).status).toBe(303);
    expect((await at(a, 1).get('/console/images')).status).toBe(200);
    const basic = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;
    const changed = await fetch(`${nodes[1]!.origin}/api/users/alice`, {
      method: 'PUT',
      headers: { authorization: basic, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ user: { password: `${PASSWORD}-new` } }),
    });
    expect(changed.status).toBe(200);
    expect((await a.get('/console/images')).status).toBe(303);
    expect((await new Visitor(nodes[1]!.origin).signIn('alice', `${PASSWORD}-new`)).status).toBe(303);
  });
});
