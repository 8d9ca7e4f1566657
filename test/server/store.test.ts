// The SQLite store (src/server/store/sqlite/) on each engine: the Store port's contract
// (store-contract.ts) and SQLite's own behaviours, the same for `node:sqlite` and better-sqlite3. An engine this Node cannot load is skipped here and covered by the run under the
// other Node: on Node 20 (no node:sqlite) the last test runs this file again under Node 24. The
// files the store writes are read back with the sqlite3 command-line tool, not with the store.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/server/ports';
import { nameVersionKey } from '../../src/server/store/keys';
import { SqliteStore } from '../../src/server/store/sqlite/store';
import { storeContract } from './store-contract';
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

    storeContract(async () => {
      const { dir, store } = open();
      return { store, again: async () => open(dir).store };
    }, clock);

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

    it('a store call inside its own transaction is refused (it would wait forever)', async () => {
      const { store } = open();
      await expect(store.tx(() => store.list('software'))).rejects.toThrow(/use the transaction handle/);
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
