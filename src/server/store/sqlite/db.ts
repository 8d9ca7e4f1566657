// SQLite under the data dir (contracts: `forge.db`, WAL), on either engine of ./sqlite.ts.
// Migrations are an ordered list applied once each, tracked by `PRAGMA user_version`.
import { join } from 'node:path';
import { accountKey, nameVersionKey } from '../keys';
import { openSqlite, type SqlDatabase, type SqliteEngine } from './engines';

/** A step of the schema: SQL, or a function where rows are rewritten with the code's own rules. */
type Migration = string | ((db: SqlDatabase) => void);

const MIGRATIONS: readonly Migration[] = [
  `CREATE TABLE users (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     login TEXT NOT NULL UNIQUE,
     admin INTEGER NOT NULL DEFAULT 0,
     password_hash TEXT,
     doc TEXT NOT NULL,
     created TEXT NOT NULL,
     modified TEXT NOT NULL
   );
   CREATE TABLE records (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL,
     owner TEXT NOT NULL,
     parent_id INTEGER,
     unique_key TEXT,
     doc TEXT NOT NULL,
     secret TEXT,
     created TEXT NOT NULL,
     modified TEXT NOT NULL
   );
   CREATE UNIQUE INDEX records_unique ON records(kind, owner, unique_key) WHERE unique_key IS NOT NULL;
   CREATE INDEX records_parent ON records(kind, owner, parent_id);
   CREATE INDEX records_key ON records(kind, unique_key);`,
  // Unique keys were NUL-joined parts, which node:sqlite truncates: each is rebuilt from its record.
  rekey,
];

function rekey(db: SqlDatabase): void {
  const rows = db.prepare("SELECT id, kind, doc FROM records WHERE unique_key IS NOT NULL AND kind IN ('software', 'appliance', 'account')").all() as Array<{ id: number; kind: string; doc: string }>;
  const set = db.prepare('UPDATE records SET unique_key = ? WHERE id = ?');
  for (const r of rows) {
    const doc = JSON.parse(r.doc) as { name: string; version: string };
    set.run(r.kind === 'account' ? accountKey(doc.name) : nameVersionKey(doc), r.id);
  }
}

export type Db = SqlDatabase;

/** The database file of a data dir. */
export const dbFile = (dataDir: string): string => join(dataDir, 'forge.db');

export function openDb(dataDir: string, engine?: SqliteEngine): Db {
  const db = openSqlite(dbFile(dataDir), engine);
  db.exec('PRAGMA journal_mode = WAL');
  // FULL: a write acknowledged to a client is on disk, even across a power cut.
  db.exec('PRAGMA synchronous = FULL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA busy_timeout = 5000');
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      const step = MIGRATIONS[v]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    });
  }
}
