// Every row of the operations table is a registered route, and answers over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillPath, operations } from '../../src/model/operations';
import { buildServer } from '../../src/server';
import { systemClock } from '../../src/server/ports';
import { Store } from '../../src/server/store/store';
import { serverDeps, startTestServer, tempDir, type TestServer } from './helpers';

describe('operations table', () => {
  it('registers exactly the 76 operations of the table', async () => {
    const dir = tempDir();
    const store = new Store(dir, systemClock);
    const { app, routes } = buildServer(serverDeps(dir, store));
    const ids = new Set(routes.map((r) => r.id));
    expect(ids.size).toBe(76);
    expect([...ids].sort()).toEqual(operations.map((o) => o.id).sort());
    for (const o of operations) {
      expect(routes.some((r) => r.id === o.id && r.method === o.method && r.url === `/api${o.path.replace(/\{(\w+)\}/g, ':$1')}`)).toBe(true);
    }
    await app.close();
    store.close();
  });

  describe('over HTTP', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer();
    });
    afterAll(async () => t.close());

    it('every operation answers: 401 without credentials (200 for status), never a 404 or 405', async () => {
      for (const o of operations) {
        const path = fillPath(o.path, { uid: 'alice', id: 1, pid: 1, prid: 1, oid: 1, caid: 1, akid: 1, aid: 1, itid: 1, pitid: 1, osid: 1, msid: 1, said: 1, fileName: 'f.bin' });
        const r = await t.raw(o.method, path, { user: null });
        expect(r.status, `${o.id} ${o.method} ${path}`).toBe(o.id === 'uforgeStatus_get' ? 200 : 401);
      }
    });
  });
});
