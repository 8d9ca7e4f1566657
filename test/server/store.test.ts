// The store on each SQLite engine (src/server/store/sqlite.ts): the same tests for `node:sqlite` and
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
import { INTERRUPTED, Store } from '../../src/server/store/store';
import { availableEngines, openSqlite, SQLITE_ENGINES, SqliteUnavailableError } from '../../src/server/store/sqlite';
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
    const stores: Store[] = [];
    const open = (dir?: string) => {
      const d = dir ?? mkdtempSync(path.join(tmpdir(), 'af-store-'));
      if (!dir) dirs.push(d);
      const s = new Store(d, clock, engine);
      stores.push(s);
      return { dir: d, store: s };
    };
    afterEach(() => {
      for (const s of stores.splice(0)) s.close();
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });

    it('opens with the engine asked for, in WAL mode, at the last schema version', () => {
      const { dir, store } = open();
      expect(store.db.engine).toBe(engine);
      store.insert('software', { owner: 'alice', doc: { name: 'web', version: '1', revision: 0 } });
      if (!hasSqliteCli) return;
      const file = path.join(dir, 'forge.db');
      expect(cli(file, 'PRAGMA journal_mode')).toBe('wal');
      expect(cli(file, 'PRAGMA user_version')).toBe('2');
      expect(cli(file, "SELECT kind, owner, doc FROM records")).toBe('software|alice|{"name":"web","version":"1","revision":0}');
    });

    it('names the files of records for the start-up sweep: an image with its SBOMs, an artifact', () => {
      const { store } = open();
      const f = (p: string) => ({ path: p, fileName: p, size: 1, sha256: 'a', md5: 'b', mimeType: 'x', stored: 'now' });
      store.insert('image', {
        owner: 'alice',
        doc: {
          applianceId: 1, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0, status: { complete: true }, file: f('images/a-web.qcow2'),
          sbom: { packages: 2, files: { spdx: f('images/b-web.qcow2.spdx.json'), cyclonedx: f('images/c-web.qcow2.cdx.json') } },
        },
      });
      store.insert('artifact', { owner: 'alice', doc: { name: 'x', kind: 'SoftwareFile', file: f('files/d-x') } });
      expect([...store.filePaths()].sort()).toEqual(['files/d-x', 'images/a-web.qcow2', 'images/b-web.qcow2.spdx.json', 'images/c-web.qcow2.cdx.json']);
    });

    it('inserts, reads, lists by owner and parent in id order, updates and removes records', () => {
      const { store } = open();
      const a = store.insert('appliance', { owner: 'alice', uniqueKey: 'alice/web/1', doc: { uuid: 'u1', name: 'web', version: '1', distId: 1, softwareIds: [], revision: 0 } });
      expect(a).toEqual({
        id: expect.any(Number), kind: 'appliance', owner: 'alice', parentId: null, uniqueKey: 'alice/web/1', secret: null,
        doc: { uuid: 'u1', name: 'web', version: '1', distId: 1, softwareIds: [], revision: 0 },
        created: '2026-01-02T03:04:05.000Z', modified: '2026-01-02T03:04:05.000Z',
      });
      const images = [2, 1].map((rev) =>
        store.insert('image', { owner: 'alice', parentId: a.id, doc: { applianceId: a.id, formatName: 'QCOW2', compress: false, installProfile: {}, revision: rev, status: { percentage: 0 } } }),
      );
      store.insert('image', { owner: 'bob', parentId: a.id, doc: { applianceId: a.id, formatName: 'RAW', compress: false, installProfile: {}, revision: 0, status: {} } });
      expect(store.list('image', 'alice', a.id).map((r) => r.id)).toEqual(images.map((r) => r.id).sort((x, y) => x - y));
      expect(store.list('image').length).toBe(3);
      expect(store.list('image', 'alice', a.id + 1000)).toEqual([]);
      expect(store.byKey('appliance', 'alice/web/1')?.id).toBe(a.id);
      // A kind is part of the identity: the id of an appliance is no image.
      expect(store.get('image', a.id)).toBeUndefined();
      expect(store.get('appliance', Number.NaN)).toBeUndefined();
      const u = store.update('appliance', a.id, { ...a.doc, version: '2' }, { uniqueKey: 'alice/web/2', secret: 'sealed' });
      expect(u).toMatchObject({ uniqueKey: 'alice/web/2', secret: 'sealed', doc: { version: '2' } });
      expect(store.update('appliance', a.id, { ...u.doc, description: 'd' })).toMatchObject({ uniqueKey: 'alice/web/2', secret: 'sealed' });
      store.remove('appliance', a.id);
      expect(store.get('appliance', a.id)).toBeUndefined();
    });

    it('a duplicate unique key is a 409 naming the conflict, and changes nothing', () => {
      const { store } = open();
      const doc = { name: 'web', version: '1', revision: 0 };
      const first = store.insert('software', { owner: 'alice', uniqueKey: 'web', doc });
      const dup = (() => {
        try {
          store.insert('software', { owner: 'alice', uniqueKey: 'web', doc: { ...doc, version: '2' } }, 'software web already exists');
        } catch (e) {
          return e;
        }
      })();
      expect(dup).toBeInstanceOf(ServiceError);
      expect(dup).toMatchObject({ statusCode: 409, message: 'software web already exists' });
      // Another owner may use the same key.
      store.insert('software', { owner: 'bob', uniqueKey: 'web', doc });
      const other = store.insert('software', { owner: 'alice', uniqueKey: 'api', doc });
      expect(() => store.update('software', other.id, doc, { uniqueKey: 'web' })).toThrow(expect.objectContaining({ statusCode: 409 }));
      expect(store.get('software', other.id)?.uniqueKey).toBe('api');
      expect(store.list('software', 'alice').map((r) => r.id)).toEqual([first.id, other.id]);
      store.insertUser('alice', false, null, {});
      expect(() => store.insertUser('alice', true, null, {})).toThrow(expect.objectContaining({ statusCode: 409, message: 'user alice already exists' }));
      expect(store.getUser('alice')?.admin).toBe(false);
    });

    it('name-and-version keys keep both parts: two versions of a name coexist, the same pair is a 409; no U+0000 is ever bound', () => {
      const { store } = open();
      const doc = (version: string) => ({ name: 'web', version, revision: 0 });
      store.insert('software', { owner: 'alice', uniqueKey: nameVersionKey(doc('1')), doc: doc('1') });
      store.insert('software', { owner: 'alice', uniqueKey: nameVersionKey(doc('2')), doc: doc('2') });
      expect(() => store.insert('software', { owner: 'alice', uniqueKey: nameVersionKey(doc('1')), doc: doc('1') })).toThrow(expect.objectContaining({ statusCode: 409 }));
      expect(store.list('software', 'alice').map((r) => r.doc.version)).toEqual(['1', '2']);
      // A NUL would be cut off by node:sqlite: refused before it reaches either engine, and never found.
      expect(() => store.insert('software', { owner: 'alice', uniqueKey: 'web\u00003', doc: doc('3') })).toThrow(/U\+0000/);
      expect(store.byKey('software', `${nameVersionKey(doc('1'))}\u0000x`)).toBeUndefined();
      expect(store.list('software', 'alice')).toHaveLength(2);
    });

    it.skipIf(!hasSqliteCli)('a database of schema 1 (NUL-joined keys, written by the sqlite3 tool) is re-keyed on open', () => {
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
      expect(store.byKey('software', nameVersionKey({ name: 'web', version: '1' }))?.doc).toMatchObject({ name: 'web', version: '1' });
    });

    it('users: insert, read, update', () => {
      const { store } = open();
      expect(store.getUser('nobody')).toBeUndefined();
      const u = store.insertUser('alice', true, 'hash', { email: 'a@example.org' });
      expect(u).toEqual({ id: expect.any(Number), login: 'alice', admin: true, passwordHash: 'hash', doc: { email: 'a@example.org' }, created: clock.now().toISOString(), modified: clock.now().toISOString() });
      expect(store.updateUser('alice', { admin: false, doc: { name: 'Alice' } })).toMatchObject({ admin: false, passwordHash: 'hash', doc: { name: 'Alice' } });
    });

    it('a transaction commits what it wrote, or nothing when it throws; a nested one rolls back alone', () => {
      const { store } = open();
      const doc = (name: string) => ({ name, version: '1', revision: 0 });
      expect(store.tx(() => store.insert('software', { owner: 'a', doc: doc('kept') }).id)).toEqual(expect.any(Number));
      expect(() =>
        store.tx(() => {
          store.insert('software', { owner: 'a', doc: doc('lost') });
          throw new Error('boom');
        }),
      ).toThrow('boom');
      store.tx(() => {
        store.insert('software', { owner: 'a', doc: doc('outer') });
        expect(() =>
          store.tx(() => {
            store.insert('software', { owner: 'a', doc: doc('inner') });
            throw new Error('inner boom');
          }),
        ).toThrow('inner boom');
        store.tx(() => store.insert('software', { owner: 'a', doc: doc('inner kept') }));
      });
      expect(store.list('software').map((r) => r.doc.name)).toEqual(['kept', 'outer', 'inner kept']);
      // After all that, a transaction still works (none was left open).
      store.tx(() => store.insert('software', { owner: 'a', doc: doc('last') }));
      expect(store.list('software').length).toBe(4);
    });

    it('records survive closing and reopening; running jobs end as interrupted', () => {
      const { dir, store } = open();
      const running = store.insert('image', { owner: 'a', doc: { applianceId: 1, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0, status: { percentage: 40 } } });
      const done = store.insert('image', { owner: 'a', doc: { applianceId: 1, formatName: 'RAW', compress: false, installProfile: {}, revision: 0, status: { complete: true, percentage: 100 } } });
      store.close();
      expect(store.db.open).toBe(false);
      store.close(); // closing twice is harmless
      const again = open(dir).store;
      expect(again.closeInterruptedJobs()).toBe(1);
      expect(again.get('image', running.id)?.doc.status).toMatchObject({ error: true, errorMessage: INTERRUPTED });
      expect(again.get('image', done.id)?.doc.status).toEqual({ complete: true, percentage: 100 });
      expect(again.closeInterruptedJobs()).toBe(0);
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
    expect(onNodeSqlite.length).toBeGreaterThanOrEqual(6);
    expect(onNodeSqlite.map((t) => t.status)).toEqual(onNodeSqlite.map(() => 'passed'));
  });
});
