// What every Store adapter must do (store/port.ts), run by test/server/store.test.ts on each SQLite
// engine and by test/server/pg-store.test.ts on PostgreSQL: the caller opens a fresh store (and again
// one over the same data), closes them after each test, and gives the clock the store was made with.
import { expect, it } from 'vitest';
import type { Clock } from '../../src/server/ports';
import { ServiceError } from '../../src/server/service-error';
import { nameVersionKey } from '../../src/server/store/keys';
import type { Store, StoreTx } from '../../src/server/store/port';
import { closeInterruptedJobs, INTERRUPTED, liveBlobKeys } from '../../src/server/jobs/recovery';

export interface OpenedStore {
  readonly store: Store;
  /** A second store over the same data (another process's, or this one's after a restart). */
  again(): Promise<Store>;
}

export function storeContract(open: () => Promise<OpenedStore>, clock: Clock): void {
  it('names the blobs of records for the start-up sweep: an image with its SBOMs, an artifact', async () => {
    const { store } = await open();
    const f = (p: string) => ({ path: p, fileName: p, size: 1, sha256: 'a', md5: 'b', mimeType: 'x', stored: 'now' });
    await store.insert('image', {
      owner: 'alice',
      doc: {
        applianceId: 1, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0, status: { complete: true }, file: f('images/a-web.qcow2'),
        sbom: { packages: 2, files: { spdx: f('images/b-web.qcow2.spdx.json'), cyclonedx: f('images/c-web.qcow2.cdx.json') } },
      },
    });
    await store.insert('artifact', { owner: 'alice', doc: { name: 'x', kind: 'SoftwareFile', file: f('files/d-x') } });
    expect([...(await liveBlobKeys(store))].sort()).toEqual(['files/d-x', 'images/a-web.qcow2', 'images/b-web.qcow2.spdx.json', 'images/c-web.qcow2.cdx.json']);
  });

  it('inserts, reads, lists by owner and parent in id order, updates and removes records', async () => {
    const { store } = await open();
    const a = await store.insert('appliance', { owner: 'alice', uniqueKey: 'alice/web/1', doc: { uuid: 'u1', name: 'web', version: '1', distId: 1, softwareIds: [], revision: 0 } });
    expect(a).toEqual({
      id: expect.any(Number), kind: 'appliance', owner: 'alice', parentId: null, uniqueKey: 'alice/web/1', secret: null,
      doc: { uuid: 'u1', name: 'web', version: '1', distId: 1, softwareIds: [], revision: 0 },
      created: '2026-01-02T03:04:05.000Z', modified: '2026-01-02T03:04:05.000Z',
    });
    const images = [];
    for (const rev of [2, 1]) {
      images.push(await store.insert('image', { owner: 'alice', parentId: a.id, doc: { applianceId: a.id, formatName: 'QCOW2', compress: false, installProfile: {}, revision: rev, status: { percentage: 0 } } }));
    }
    await store.insert('image', { owner: 'bob', parentId: a.id, doc: { applianceId: a.id, formatName: 'RAW', compress: false, installProfile: {}, revision: 0, status: {} } });
    expect((await store.list('image', 'alice', a.id)).map((r) => r.id)).toEqual(images.map((r) => r.id).sort((x, y) => x - y));
    expect((await store.list('image')).length).toBe(3);
    expect(await store.list('image', 'alice', a.id + 1000)).toEqual([]);
    expect((await store.byKey('appliance', 'alice/web/1'))?.id).toBe(a.id);
    // A kind is part of the identity: the id of an appliance is no image.
    expect(await store.get('image', a.id)).toBeUndefined();
    expect(await store.get('appliance', Number.NaN)).toBeUndefined();
    const u = await store.update('appliance', a.id, { ...a.doc, version: '2' }, { uniqueKey: 'alice/web/2', secret: 'sealed' });
    expect(u).toMatchObject({ uniqueKey: 'alice/web/2', secret: 'sealed', doc: { version: '2' } });
    expect(await store.update('appliance', a.id, { ...u.doc, description: 'd' })).toMatchObject({ uniqueKey: 'alice/web/2', secret: 'sealed' });
    await store.remove('appliance', a.id);
    expect(await store.get('appliance', a.id)).toBeUndefined();
    await expect(store.update('appliance', a.id, u.doc)).rejects.toThrow(/vanished/);
  });

  it('a duplicate unique key is a 409 naming the conflict, and changes nothing', async () => {
    const { store } = await open();
    const doc = { name: 'web', version: '1', revision: 0 };
    const first = await store.insert('software', { owner: 'alice', uniqueKey: 'web', doc });
    const dup = await store.insert('software', { owner: 'alice', uniqueKey: 'web', doc: { ...doc, version: '2' } }, 'software web already exists').catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(ServiceError);
    expect(dup).toMatchObject({ statusCode: 409, message: 'software web already exists' });
    // Another owner may use the same key.
    await store.insert('software', { owner: 'bob', uniqueKey: 'web', doc });
    const other = await store.insert('software', { owner: 'alice', uniqueKey: 'api', doc });
    await expect(store.update('software', other.id, doc, { uniqueKey: 'web' })).rejects.toMatchObject({ statusCode: 409 });
    expect((await store.get('software', other.id))?.uniqueKey).toBe('api');
    expect((await store.list('software', 'alice')).map((r) => r.id)).toEqual([first.id, other.id]);
    await store.insertUser('alice', false, null, {});
    await expect(store.insertUser('alice', true, null, {})).rejects.toMatchObject({ statusCode: 409, message: 'user alice already exists' });
    expect((await store.getUser('alice'))?.admin).toBe(false);
  });

  it('name-and-version keys keep both parts: two versions of a name coexist, the same pair is a 409; no U+0000 is ever bound', async () => {
    const { store } = await open();
    const doc = (version: string) => ({ name: 'web', version, revision: 0 });
    await store.insert('software', { owner: 'alice', uniqueKey: nameVersionKey(doc('1')), doc: doc('1') });
    await store.insert('software', { owner: 'alice', uniqueKey: nameVersionKey(doc('2')), doc: doc('2') });
    await expect(store.insert('software', { owner: 'alice', uniqueKey: nameVersionKey(doc('1')), doc: doc('1') })).rejects.toMatchObject({ statusCode: 409 });
    expect((await store.list('software', 'alice')).map((r) => r.doc.version)).toEqual(['1', '2']);
    // A NUL would be cut off by node:sqlite: refused before it reaches either engine, and never found.
    await expect(store.insert('software', { owner: 'alice', uniqueKey: 'web\u00003', doc: doc('3') })).rejects.toThrow(/U\+0000/);
    expect(await store.byKey('software', `${nameVersionKey(doc('1'))}\u0000x`)).toBeUndefined();
    expect(await store.list('software', 'alice')).toHaveLength(2);
  });

  it('users: insert, read, list, update', async () => {
    const { store } = await open();
    expect(await store.getUser('nobody')).toBeUndefined();
    const u = await store.insertUser('alice', true, 'hash', { email: 'a@example.org' });
    expect(u).toEqual({ id: expect.any(Number), login: 'alice', admin: true, passwordHash: 'hash', doc: { email: 'a@example.org' }, created: clock.now().toISOString(), modified: clock.now().toISOString() });
    expect(await store.updateUser('alice', { admin: false, doc: { name: 'Alice' } })).toMatchObject({ admin: false, passwordHash: 'hash', doc: { name: 'Alice' } });
    await store.insertUser('bob', false, null, {});
    expect((await store.listUsers()).map((x) => x.login)).toEqual(['alice', 'bob']);
  });

  it('a copied row keeps its id and dates, and later inserts do not collide with it', async () => {
    const { store } = await open();
    const copied = { id: 40, created: '2020-01-01T00:00:00.000Z', modified: '2021-01-01T00:00:00.000Z' };
    expect(await store.insert('software', { owner: 'a', doc: { name: 'old', version: '1', revision: 3 } }, undefined, copied)).toMatchObject(copied);
    expect((await store.insertUser('old', false, null, {}, { ...copied, id: 7 })).id).toBe(7);
    const next = await store.insert('software', { owner: 'a', doc: { name: 'new', version: '1', revision: 0 } });
    expect(next.id).toBeGreaterThan(40);
  });

  it('a transaction commits what it wrote through its handle, or nothing when its body rejects', async () => {
    const { store } = await open();
    const doc = (name: string) => ({ name, version: '1', revision: 0 });
    expect(await store.tx(async (t) => (await t.insert('software', { owner: 'a', doc: doc('kept') })).id)).toEqual(expect.any(Number));
    await expect(
      store.tx(async (t) => {
        await t.insert('software', { owner: 'a', doc: doc('lost') });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await store.list('software')).map((r) => r.doc.name)).toEqual(['kept']);
    // After all that, a transaction still works (none was left open).
    await store.tx((t) => t.insert('software', { owner: 'a', doc: doc('last') }));
    expect((await store.list('software')).length).toBe(2);
  });

  it('afterCommit runs once a transaction commits, never after a rollback', async () => {
    const { store } = await open();
    const ran: string[] = [];
    await store.tx(async (t) => t.afterCommit(() => ran.push('committed')));
    await store.tx(async (t) => {
      t.afterCommit(() => ran.push('rolled back'));
      throw new Error('no');
    }).catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    expect(ran).toEqual(['committed']);
  });

  it('records survive closing and reopening; running jobs end as interrupted', async () => {
    const { store, again: reopen } = await open();
    const running = await store.insert('image', { owner: 'a', doc: { applianceId: 1, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0, status: { percentage: 40 } } });
    const done = await store.insert('image', { owner: 'a', doc: { applianceId: 1, formatName: 'RAW', compress: false, installProfile: {}, revision: 0, status: { complete: true, percentage: 100 } } });
    await store.close();
    await store.close(); // closing twice is harmless
    const again = await reopen();
    expect(await closeInterruptedJobs(again)).toBe(1);
    expect((await again.get('image', running.id))?.doc.status).toMatchObject({ error: true, errorMessage: INTERRUPTED });
    expect((await again.get('image', done.id))?.doc.status).toEqual({ complete: true, percentage: 100 });
    expect(await closeInterruptedJobs(again)).toBe(0);
  });

  it('a handle used after its transaction ended is refused', async () => {
    const { store } = await open();
    let kept: StoreTx | undefined;
    await store.tx(async (t) => {
      kept = t;
    });
    await expect(kept!.list('software')).rejects.toThrow(/after its transaction ended/);
  });
}
