// The SQLite store (src/server/store/sqlite/) on each engine: the same tests for `node:sqlite` and
// better-sqlite3. An engine this Node cannot load is skipped here and covered by the run under the
// other Node: on Node 20 (no node:sqlite) the last test runs this file again under Node 24. The
// files the store writes are read back with the sqlite3 command-line tool, not with the store.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/server/ports';
import { ServiceError } from '../../src/server/service-error';
import { nameVersionKey } from '../../src/server/store/keys';
import { SqliteStore } from '../../src/server/store/sqlite/store';
import { closeInterruptedJobs, INTERRUPTED, liveBlobKeys } from '../../src/server/jobs/recovery';
import { availableEngines, openSqlite, SQLITE_ENGINES, SqliteUnavailableError } from '../../src/server/store/sqlite/engines';
import { node24 } from '../support/node24';

const available = availableEngines();
const clock: Clock = { now: () => new Date('2026-01-02T03:04:05.000Z') };
const hasSqliteCli = spawnSync('sqlite3', ['-version']).status === 0;

/** Query a database file with the sqlite3 command-line tool (an independent reader). */
function cli(file: string, sql: string): string {
  return execFileSync('sqlite3', [file, sql], { encoding: 'utf8' }).trim();
}

for (const engine of SQLITE_ENGINES) {
  const here = available.includes(engine);
  if (!here) console.warn(`SKIP store tests on ${engine} under Node ${process.versions.node}: the engine cannot load here (covered under the other Node)`);
  describe.skipIf(!here)(`store on ${engine}`, () => {
    const dirs: string[] = [];
    const stores: SqliteStore[] = [];
    const open = (dir?: string) => {
      const d = dir ?? mkdtempSync(path.join(tmpdir(), 'af-store-'));
      if (!dir) dirs.push(d);
      const s = new SqliteStore(d, clock, engine);
      stores.push(s);
      return { dir: d, store: s };
    };
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close();
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });

    it('opens with the engine asked for, in WAL mode, at the last schema version', async () => {
      const { dir, store } = open();
      expect(store.db.engine).toBe(engine);
      await store.insert('software', { owner: 'alice', doc: { name: 'web', version: '1', revision: 0 } });
      if (!hasSqliteCli) return;
      const file = path.join(dir, 'forge.db');
      expect(cli(file, 'PRAGMA journal_mode')).toBe('wal');
      expect(cli(file, 'PRAGMA user_version')).toBe('2');
      expect(cli(file, "SELECT kind, owner, doc FROM records")).toBe('software|alice|{"name":"web","version":"1","revision":0}');
    });

    it('names the blobs of records for the start-up sweep: an image with its SBOMs, an artifact', async () => {
      const { store } = open();
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
      const { store } = open();
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
      const { store } = open();
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
      const { store } = open();
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

    it.skipIf(!hasSqliteCli)('a database of schema 1 (NUL-joined keys, written by the sqlite3 tool) is re-keyed on open', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'af-store-'));
      dirs.push(dir);
      const file = path.join(dir, 'forge.db');
      const row = (kind: string, key: string, doc: string) =>
        `INSERT INTO records (kind, owner, unique_key, doc, created, modified) VALUES ('${kind}', 'alice', ${key}, '${doc}', 'x', 'x');`;
      cli(file, [
        'CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, login TEXT NOT NULL UNIQUE, admin INTEGER NOT NULL DEFAULT 0, password_hash TEXT, doc TEXT NOT NULL, created TEXT NOT NULL, modified TEXT NOT NULL);',
        'CREATE TABLE records (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, owner TEXT NOT NULL, parent_id INTEGER, unique_key TEXT, doc TEXT NOT NULL, secret TEXT, created TEXT NOT NULL, modified TEXT NOT NULL);',
        'CREATE UNIQUE INDEX records_unique ON records(kind, owner, unique_key) WHERE unique_key IS NOT NULL;',
        row('software', "'web' || char(0) || '1'", '{"name":"web","version":"1","revision":0}'),
        row('appliance', "'site' || char(0) || '2'", '{"name":"site","version":"2","revision":0}'),
        row('account', "'lab'", '{"name":"Lab","kind":"CredAccountOpenStack"}'),
        'PRAGMA user_version = 1;',
      ].join('\n'));
      const { store } = open(dir);
      expect(cli(file, 'PRAGMA user_version')).toBe('2');
      expect(cli(file, 'SELECT kind, unique_key FROM records ORDER BY id')).toBe('software|["web","1"]\nappliance|["site","2"]\naccount|["lab"]');
      expect((await store.byKey('software', nameVersionKey({ name: 'web', version: '1' })))?.doc).toMatchObject({ name: 'web', version: '1' });
    });

    it('users: insert, read, list, update', async () => {
      const { store } = open();
      expect(await store.getUser('nobody')).toBeUndefined();
      const u = await store.insertUser('alice', true, 'hash', { email: 'a@example.org' });
      expect(u).toEqual({ id: expect.any(Number), login: 'alice', admin: true, passwordHash: 'hash', doc: { email: 'a@example.org' }, created: clock.now().toISOString(), modified: clock.now().toISOString() });
      expect(await store.updateUser('alice', { admin: false, doc: { name: 'Alice' } })).toMatchObject({ admin: false, passwordHash: 'hash', doc: { name: 'Alice' } });
      await store.insertUser('bob', false, null, {});
      expect((await store.listUsers()).map((x) => x.login)).toEqual(['alice', 'bob']);
    });

    it('a copied row keeps its id and dates, and later inserts do not collide with it', async () => {
      const { store } = open();
      const copied = { id: 40, created: '2020-01-01T00:00:00.000Z', modified: '2021-01-01T00:00:00.000Z' };
      expect(await store.insert('software', { owner: 'a', doc: { name: 'old', version: '1', revision: 3 } }, undefined, copied)).toMatchObject(copied);
      expect((await store.insertUser('old', false, null, {}, { ...copied, id: 7 })).id).toBe(7);
      const next = await store.insert('software', { owner: 'a', doc: { name: 'new', version: '1', revision: 0 } });
      expect(next.id).toBeGreaterThan(40);
    });

    it('a transaction commits what it wrote through its handle, or nothing when its body rejects', async () => {
      const { store } = open();
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

    it('calls on the store wait while a transaction is open, never reading inside it; transactions run one after the other', async () => {
      const { store } = open();
      const counter = await store.insert('software', { owner: 'a', doc: { name: 'n', version: '0', revision: 0 } });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inside!: () => void;
      const wrote = new Promise<void>((resolve) => (inside = resolve));
      const first = store.tx(async (t) => {
        const r = (await t.get('software', counter.id))!;
        await t.update('software', counter.id, { ...r.doc, revision: r.doc.revision + 1 });
        inside();
        // The body waits on something else than the store: other calls must not slip into the transaction.
        await held;
      });
      try {
        await wrote;
        const second = store.tx(async (t) => {
          const r = (await t.get('software', counter.id))!;
          await t.update('software', counter.id, { ...r.doc, revision: r.doc.revision + 1 });
        });
        const outside = store.get('software', counter.id);
        let read = false;
        void outside.then(() => (read = true));
        await new Promise((r) => setTimeout(r, 50));
        expect(read).toBe(false);
        release();
        await Promise.all([first, second]);
        // Read once the first transaction committed, before the second began: its value, not the one mid-way.
        expect((await outside)!.doc.revision).toBe(1);
        expect((await store.get('software', counter.id))!.doc.revision).toBe(2);
      } finally {
        release();
        await first;
      }
    });

    it('a store call inside its own transaction is refused (it would wait forever); a handle used after its end is refused', async () => {
      const { store } = open();
      await expect(store.tx(() => store.list('software'))).rejects.toThrow(/use the transaction handle/);
      let kept: Parameters<Parameters<typeof store.tx>[0]>[0] | undefined;
      await store.tx(async (t) => {
        kept = t;
      });
      await expect(kept!.list('software')).rejects.toThrow(/after its transaction ended/);
    });

    it('afterCommit runs once a transaction commits, never after a rollback', async () => {
      const { store } = open();
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
      const { dir, store } = open();
      const running = await store.insert('image', { owner: 'a', doc: { applianceId: 1, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0, status: { percentage: 40 } } });
      const done = await store.insert('image', { owner: 'a', doc: { applianceId: 1, formatName: 'RAW', compress: false, installProfile: {}, revision: 0, status: { complete: true, percentage: 100 } } });
      await store.close();
      expect(store.db.open).toBe(false);
      await store.close(); // closing twice is harmless
      const again = open(dir).store;
      expect(await closeInterruptedJobs(again)).toBe(1);
      expect((await again.get('image', running.id))?.doc.status).toMatchObject({ error: true, errorMessage: INTERRUPTED });
      expect((await again.get('image', done.id))?.doc.status).toEqual({ complete: true, percentage: 100 });
      expect(await closeInterruptedJobs(again)).toBe(0);
    });
  });
}

describe('engine selection', () => {
  it('prefers node:sqlite where this Node has it, else better-sqlite3', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'af-store-'));
    try {
      const db = openSqlite(path.join(dir, 'x.db'));
      expect(db.engine).toBe(available[0]);
      expect(available[0]).toBe(process.getBuiltinModule?.('node:sqlite') ? 'node:sqlite' : 'better-sqlite3');
      db.close();
      for (const e of SQLITE_ENGINES.filter((x) => !available.includes(x))) {
        expect(() => openSqlite(path.join(dir, 'y.db'), e)).toThrow(SqliteUnavailableError);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // On Node 20 the node:sqlite tests above were skipped: run this file under Node 24, where they are not.
  it.skipIf(available.includes('node:sqlite'))('the node:sqlite tests pass under Node 24', () => {
    const n = node24();
    if (!n.bin) {
      console.warn(`SKIP store tests under Node 24: ${n.reason}`);
      return;
    }
    const root = path.resolve(__dirname, '../..');
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'af-store-')), 'report.json');
    const r = spawnSync(n.bin, [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', 'test/server/store.test.ts', '--reporter=json', `--outputFile=${out}`], {
      cwd: root, encoding: 'utf8', timeout: 300_000,
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const text = readFileSync(out, 'utf8');
    rmSync(path.dirname(out), { recursive: true, force: true });
    const report = JSON.parse(text) as { testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }> };
    const results = report.testResults.flatMap((f) => f.assertionResults);
    const onNodeSqlite = results.filter((t) => t.fullName.startsWith('store on node:sqlite '));
    expect(onNodeSqlite.length).toBeGreaterThanOrEqual(10);
    expect(onNodeSqlite.map((t) => t.status)).toEqual(onNodeSqlite.map(() => 'passed'));
  });
});
