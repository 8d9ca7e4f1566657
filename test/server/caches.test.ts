// Per-request work kept between requests: resolved API keys and appliance views. Each kept
// value must be used (views built are counted) and dropped on every change: through the API, through
// another connection to the same database (`appliance-forge users add` on a live data dir), and it is
// never handed to another user.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { buildServer, createUser, type CreatedUser } from '../../src/server';
import { systemClock } from '../../src/server/ports';
import { SqliteStore as Store } from '../../src/server/store/sqlite/store';
import { viewCache } from '../../src/server/view-cache';
import { serverDeps, tempDir } from './helpers';

describe('caches of the server', () => {
  const dir = tempDir();
  let store: Store;
  let built: ReturnType<typeof buildServer>;
  let url: string;
  let alice: CreatedUser;
  let bob: CreatedUser;
  const clients: Client[] = [];
  const as = (u: CreatedUser): Client => {
    const c = createClient({ url, auth: u, retry: false });
    clients.push(c);
    return c;
  };
  /** A second connection to the server's database, as another process would have. */
  const other = (): Store => new Store(dir, systemClock);

  beforeAll(async () => {
    alice = await createUser(dir, { login: 'alice' });
    bob = await createUser(dir, { login: 'bob' });
    store = new Store(dir, systemClock);
    built = buildServer(serverDeps(dir, store));
    await built.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = built.app.server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/api`;
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await built.app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds an appliance view once while nothing changes, again after each change', async () => {
    const c = as(alice);
    const cache = viewCache(built.ctx);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'kept', version: '1', distributionUri: 'distributions/1' } });
    const aid = app.dbId!;
    const first = await c.appliance_get({ uid: 'alice', aid });
    const built1 = cache.misses;
    for (let i = 0; i < 5; i++) expect(await c.appliance_get({ uid: 'alice', aid })).toEqual(first);
    expect(cache.misses).toBe(built1);

    const changed = await c.appliance_update({ uid: 'alice', aid, body: { description: 'changed once' } });
    expect(changed.description).toBe('changed once');
    const read = await c.appliance_get({ uid: 'alice', aid });
    expect(read.description).toBe('changed once');
    expect(read.digest).not.toBe(first.digest);
    expect(cache.misses).toBeGreaterThan(built1);

    // A change of a related record (the software list names a component) shows in the view at once.
    const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'tool', version: '1' } });
    await c.appliance_update({ uid: 'alice', aid, body: { mySoftwareList: [{ uri: sw.uri! }] } });
    expect((await c.appliance_get({ uid: 'alice', aid })).mySoftwareList?.map((s) => s.name)).toEqual(['tool']);
    await c.mySoftware_update({ uid: 'alice', msid: sw.dbId!, body: { name: 'tool-renamed' } });
    expect((await c.appliance_get({ uid: 'alice', aid })).mySoftwareList?.map((s) => s.name)).toEqual(['tool-renamed']);
  });

  it('answers a kept view in each format asked for, each encoding kept with it and dropped with it', async () => {
    const xml = as(alice);
    const json = createClient({ url, auth: alice, retry: false, format: 'json' });
    clients.push(json);
    const app = await xml.appliance_create({ uid: 'alice', body: { name: 'both-formats', version: '1', distributionUri: 'distributions/1' } });
    const aid = app.dbId!;
    const misses = viewCache(built.ctx).misses;
    for (let i = 0; i < 2; i++) {
      expect(await json.appliance_get({ uid: 'alice', aid })).toEqual(await xml.appliance_get({ uid: 'alice', aid }));
    }
    expect(viewCache(built.ctx).misses).toBe(misses + 1);
    await json.appliance_update({ uid: 'alice', aid, body: { description: 'after' } });
    expect((await xml.appliance_get({ uid: 'alice', aid })).description).toBe('after');
    expect((await json.appliance_get({ uid: 'alice', aid })).description).toBe('after');
  });

  it('lists from kept views; a created, changed or deleted appliance shows in the next list', async () => {
    const c = as(alice);
    const cache = viewCache(built.ctx);
    const before = await c.appliance_getAll({ uid: 'alice' });
    const n = before.total!;
    const misses = cache.misses;
    expect((await c.appliance_getAll({ uid: 'alice' })).appliances).toEqual(before.appliances);
    expect(cache.misses).toBe(misses);

    const made = await c.appliance_create({ uid: 'alice', body: { name: 'listed', version: '1', distributionUri: 'distributions/1' } });
    expect((await c.appliance_getAll({ uid: 'alice' })).total).toBe(n + 1);
    await c.appliance_update({ uid: 'alice', aid: made.dbId!, body: { name: 'listed-renamed' } });
    expect((await c.appliance_getAll({ uid: 'alice' })).appliances!.map((a) => a.name)).toContain('listed-renamed');
    await c.appliance_delete({ uid: 'alice', aid: made.dbId! });
    const after = await c.appliance_getAll({ uid: 'alice' });
    expect(after.total).toBe(n);
    expect(after.appliances!.some((a) => a.dbId === made.dbId)).toBe(false);
  });

  it('sees a change committed by another connection at the next request', async () => {
    const c = as(alice);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'elsewhere', version: '1', distributionUri: 'distributions/1' } });
    const aid = app.dbId!;
    await c.appliance_get({ uid: 'alice', aid });
    await c.appliance_getAll({ uid: 'alice' });
    const o = other();
    try {
      const row = (await o.get('appliance', aid))!;
      await o.update('appliance', aid, { ...row.doc, description: 'written by another process' });
    } finally {
      await o.close();
    }
    expect((await c.appliance_get({ uid: 'alice', aid })).description).toBe('written by another process');
    expect((await c.appliance_getAll({ uid: 'alice' })).appliances!.find((a) => a.dbId === aid)?.description).toBe('written by another process');
  });

  it('a key pair removed or added by another connection is refused or accepted at the next request', async () => {
    const b = as(bob);
    expect((await b.user_get({ uid: 'bob' })).loginName).toBe('bob');
    const o = other();
    try {
      for (const k of await o.list('apikey', 'bob')) await o.remove('apikey', k.id);
    } finally {
      await o.close();
    }
    await expect(b.user_get({ uid: 'bob' })).rejects.toMatchObject({ status: 401 });
    // A new user made on the live data dir signs at once (its key was unknown a moment ago).
    const carol = await createUser(dir, { login: 'carol' });
    expect((await as(carol).user_get({ uid: 'carol' })).loginName).toBe('carol');
  });

  it('a user made admin by another connection acts as one at the next request (the caller is kept with the key, and dropped with it)', async () => {
    const erin = await createUser(dir, { login: 'erin' });
    const e = as(erin);
    await expect(e.user_get({ uid: 'alice' })).rejects.toMatchObject({ status: 403 });
    const o = other();
    try {
      await o.updateUser('erin', { admin: true });
    } finally {
      await o.close();
    }
    expect((await e.user_get({ uid: 'alice' })).loginName).toBe('alice');
  });

  it('sees another connection\'s commit after a checkpoint emptied the WAL (the next commit starts it again)', async () => {
    const c = as(alice);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'after-checkpoint', version: '1', distributionUri: 'distributions/1' } });
    const aid = app.dbId!;
    await c.appliance_get({ uid: 'alice', aid });
    for (const text of ['first', 'second']) {
      const o = other();
      try {
        // TRUNCATE: the WAL starts over from its first frame, as after a restart of every connection.
        o.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        const row = (await o.get('appliance', aid))!;
        await o.update('appliance', aid, { ...row.doc, description: text });
      } finally {
        await o.close();
      }
      expect((await c.appliance_get({ uid: 'alice', aid })).description).toBe(text);
    }
  });

  it('never answers one user with a view kept for another', async () => {
    const a = as(alice);
    const app = await a.appliance_create({ uid: 'alice', body: { name: 'private', version: '1', distributionUri: 'distributions/1' } });
    await a.appliance_get({ uid: 'alice', aid: app.dbId! });
    const dave = await createUser(dir, { login: 'dave' });
    const d = as(dave);
    // Under dave's own path, alice's record id is no appliance of his, kept view or not.
    await expect(d.appliance_get({ uid: 'dave', aid: app.dbId! })).rejects.toMatchObject({ status: 404 });
    await expect(d.appliance_get({ uid: 'alice', aid: app.dbId! })).rejects.toMatchObject({ status: 403 });
    expect((await d.appliance_getAll({ uid: 'dave' })).total ?? 0).toBe(0);
  });
});
