// Every row of the operations table is a registered route, and answers over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillPath, operations } from '../../src/model/operations';
import { buildServer } from '../../src/server';
import { systemClock } from '../../src/server/ports';
import { SqliteStore as Store } from '../../src/server/store/sqlite/store';
import { serverDeps, startTestServer, tempDir, type TestServer } from './helpers';
import type { Appliance, Image } from '../../src/model/resources';
import { NO_CONTENT, type Handler, type Routes } from '../../src/server/http/handler';

describe('operations table', () => {
  it('registers exactly the 76 operations of the reference list and the extensions of the table', async () => {
    const dir = tempDir();
    const store = new Store(dir, systemClock);
    const { app, routes } = buildServer(serverDeps(dir, store));
    const ids = new Set(routes.map((r) => r.id));
    expect(ids.size).toBe(76 + operations.filter((o) => 'extension' in o).length);
    expect([...ids].sort()).toEqual(operations.map((o) => o.id).sort());
    for (const o of operations) {
      expect(routes.some((r) => r.id === o.id && r.method === o.method && r.url === `/api${o.path.replace(/\{(\w+)\}/g, ':$1')}`)).toBe(true);
    }
    // The one shorter path (spec endpoint table: the upload's file name is optional).
    expect(routes.filter((r) => !operations.some((o) => o.id === r.id && r.url === `/api${o.path.replace(/\{(\w+)\}/g, ':$1')}`))).toEqual([
      { id: 'mySoftwareArtifact_upload', method: 'POST', url: '/api/users/:uid/mysoftware/:msid/artifacts/:said/bin' },
    ]);
    await app.close();
    await store.close();
  });

  describe('over HTTP', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer();
    });
    afterAll(async () => t.close());

    it('every operation answers: 401 without credentials (200 for status), never a 404 or 405', async () => {
      for (const o of operations) {
        const path = fillPath(o.path, { uid: 'alice', id: 1, pid: 1, prid: 1, oid: 1, caid: 1, akid: 1, aid: 1, itid: 1, pitid: 1, osid: 1, msid: 1, said: 1, fileName: 'f.bin', format: 'spdx' });
        const r = await t.raw(o.method, path, { user: null });
        expect(r.status, `${o.id} ${o.method} ${path}`).toBe(o.id === 'uforgeStatus_get' ? 200 : 401);
      }
    });
  });
});

/**
 * Compile-time checks, run by `tsc -p tsconfig.test.json` in `npm test` (never called): a handler gets
 * its operation's parameters and request root and must answer with its response root. Each
 * `@ts-expect-error` fails the type check if the line below it compiles.
 */
export function handlerTypeChecks(image: Image & { uri: string }, appliance: Appliance & { uri: string }): unknown[] {
  const right: Handler<'appliance_create'> = (req) => req.created({ ...appliance, name: req.body().value.name ?? req.params.uid });
  // @ts-expect-error -- an image is not the appliance root of appliance_get
  const wrongRoot: Handler<'appliance_get'> = (req) => req.ok(image);
  // @ts-expect-error -- appliance_get has no {itid} parameter
  const missingParam: Handler<'appliance_get'> = (req) => req.ok({ ...appliance, name: req.params.itid });
  // @ts-expect-error -- appliance_get takes no request document
  const noBody: Handler<'appliance_get'> = (req) => req.ok(req.body().value);
  // @ts-expect-error -- appliance_delete answers 204, not a document
  const noDocument: Handler<'appliance_delete'> = (req) => req.ok(appliance);
  // @ts-expect-error -- appliance_get answers a document, not 204
  const notEmpty: Handler<'appliance_get'> = () => NO_CONTENT;
  // @ts-expect-error -- a created record needs its uri (the Location)
  const noLocation: Handler<'appliance_create'> = (req) => req.created({ name: 'x' });
  // @ts-expect-error -- the list of a packages document is pkgs
  const wrongList: Handler<'osPkg_getAll'> = (req) => req.list({}, 'distributions', [], 'v');
  // @ts-expect-error -- every operation of the table needs its handler
  const incomplete: Routes = { uforgeStatus_get: (req) => req.ok({ alive: true }) };
  return [right, wrongRoot, missingParam, noBody, noDocument, notEmpty, noLocation, wrongList, incomplete];
}
