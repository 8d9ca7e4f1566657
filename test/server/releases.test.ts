// Both Debian releases through the server: a template on Debian 12 (distribution 1, as records made before
// Debian 13 point to) and one on Debian 13 (distribution 3) each get their own profile packages and
// package versions over HTTP, and the image generation builds each from its own release's suites.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { buildServer, createUser, type CreatedUser } from '../../src/server';
import { buildOrder } from '../../src/server/jobs/build-order';
import { systemClock } from '../../src/server/ports';
import { SqliteStore } from '../../src/server/store/sqlite/store';
import { renderManifest } from '../../src/imaging';
import { includeList, sourceLines } from '../../src/imaging/os/recipe';
import { serverDeps, tempDir } from './helpers';

describe('Debian 12 and 13 side by side', () => {
  const dir = tempDir();
  let store: SqliteStore;
  let built: ReturnType<typeof buildServer>;
  let c: Client;
  let alice: CreatedUser;

  beforeAll(async () => {
    alice = await createUser(dir, { login: 'alice' });
    store = new SqliteStore(dir, systemClock);
    built = buildServer(serverDeps(dir, store));
    await built.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = built.app.server.address();
    c = createClient({ url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/api`, auth: alice, retry: false });
  });
  afterAll(async () => {
    await c.close();
    await built.app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A template of `distId` with the Minimal profile `pid` and nginx of that distribution, and what its generation would build. */
  async function template(distId: number, pid: number) {
    const app = await c.appliance_create({ uid: 'alice', body: { name: `web-${distId}`, version: '1', distributionUri: `distributions/${distId}` } });
    const nginx = (await c.osPkg_getAll({ id: distId, params: { query: 'name==nginx;arch==amd64' } })).pkgs!;
    expect(nginx).toHaveLength(1);
    const profile = await c.applianceOSProfile_create({
      aid: app.dbId!, uid: 'alice', body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: `distributions/${distId}/profiles/${pid}` },
    });
    await c.applianceOSProfilePkg_updateAll({ uid: 'alice', aid: app.dbId!, osid: profile.dbId!, body: { addedPkgUris: [nginx[0]!.uri!] } });
    const qcow2 = built.ctx.imaging.targetFormats.find((f) => f.name === 'QCOW2')!;
    const order = await buildOrder(built.ctx, store, (await store.get('appliance', app.dbId!))!, qcow2, {}, { id: 0, compress: false });
    // The order is what crosses the queue: plain data, the same after a JSON round trip.
    expect(JSON.parse(JSON.stringify(order))).toEqual(order);
    return { nginx: nginx[0]!, input: { recipe: order }, manifest: JSON.parse(renderManifest(order.manifest, order.os, [])) as { os: { name: string; version: string; suite: string } } };
  }

  it('builds a Debian 12 template from bookworm and a Debian 13 one from trixie, each with its own packages', async () => {
    const old = await template(1, 1);
    const now = await template(3, 4);
    expect(old.nginx.version).toMatch(/^1\.22\./);
    expect(now.nginx.version).toMatch(/^1\.26\./);
    expect([old.input.recipe.os.suite, now.input.recipe.os.suite]).toEqual(['bookworm', 'trixie']);
    expect(old.manifest.os).toMatchObject({ name: 'Debian', version: '12', suite: 'bookworm' });
    expect(now.manifest.os).toMatchObject({ name: 'Debian', version: '13', suite: 'trixie' });
    expect(sourceLines(now.input.recipe.os).map((l) => l.split(' ')[2])).toEqual(['trixie', 'trixie-updates', 'trixie-security']);
    // trixie's own base package; bookworm's list is as it always was (its cached layers stay valid).
    expect(includeList(now.input.recipe.os)).toContain('passwd');
    expect(includeList(old.input.recipe.os)).not.toContain('passwd');
    expect(includeList(now.input.recipe.os)).toContain('nginx:amd64');
  });

  it('refuses a profile or a package of another distribution', async () => {
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'mixed', version: '1', distributionUri: 'distributions/3' } });
    const wrongProfile = await c.applianceOSProfile_create({ aid: app.dbId!, uid: 'alice', body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: 'distributions/1/profiles/1' } })
      .then(() => undefined, (e: unknown) => e);
    expect(String(wrongProfile)).toMatch(/400|404/);
    const profile = await c.applianceOSProfile_create({ aid: app.dbId!, uid: 'alice', body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: 'distributions/3/profiles/4' } });
    const bookwormNginx = (await c.osPkg_getAll({ id: 1, params: { query: 'name==nginx;arch==amd64' } })).pkgs![0]!;
    const wrongPkg = await c.applianceOSProfilePkg_updateAll({ uid: 'alice', aid: app.dbId!, osid: profile.dbId!, body: { addedPkgUris: [bookwormNginx.uri!] } })
      .then(() => undefined, (e: unknown) => e);
    expect(String(wrongPkg)).toMatch(/400|404/);
  });
});
