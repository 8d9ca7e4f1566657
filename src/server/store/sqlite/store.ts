// Typed access to the records table. Every method runs synchronously on SQLite, so a write is
// committed before the handler that called it answers: every acknowledged write is committed.
import { isTerminal } from '../../model/job-state';
import type { OpStatus } from '../../model/resources';
import type { Clock } from '../ports';
import { conflict } from '../service-error';
import { watchCommits, type CommitWatch } from './commit-watch';
import { dbFile, openDb, type Db } from './db';
import { isUniqueViolation, type SqlStatement, type SqliteEngine, type SqlValue } from './sqlite';
import { imageFilePaths, type Kind, type KindDocs, type UserDoc, type UserRow } from './docs';

export interface Row<K extends Kind> {
  id: number;
  kind: K;
  owner: string;
  parentId: number | null;
  uniqueKey: string | null;
  doc: KindDocs[K];
  /** Encrypted secret (secret-box.ts), never sent. */
  secret: string | null;
  created: string;
  modified: string;
}

interface RawRow {
  id: number;
  kind: string;
  owner: string;
  parent_id: number | null;
  unique_key: string | null;
  doc: string;
  secret: string | null;
  created: string;
  modified: string;
}

interface RawUser {
  id: number;
  login: string;
  admin: number;
  password_hash: string | null;
  doc: string;
  created: string;
  modified: string;
}

export interface NewRecord<K extends Kind> {
  owner: string;
  parentId?: number | null;
  uniqueKey?: string | null;
  doc: KindDocs[K];
  secret?: string | null;
}

export const INTERRUPTED = 'interrupted by a server restart';

export class Store {
  readonly db: Db;
  /** Prepared once per SQL text: preparing on every call cost more than running the query (bench/server-throughput). */
  private readonly statements = new Map<string, SqlStatement>();
  /** See generation(): this connection's writes, and other connections' commits (./commit-watch.ts). */
  private writes = 0;
  private readonly commits: CommitWatch;
  private lookedThisTurn = false;
  /** `engine`: the SQLite engine to use (tests run both); default: the first available (sqlite.ts). */
  constructor(dataDir: string, private readonly clock: Clock, engine?: SqliteEngine) {
    this.db = openDb(dataDir, engine);
    this.commits = watchCommits(this.db, dbFile(dataDir));
  }

  /** Every change goes through here, so that generation() moves with it (even when the statement fails half-way). */
  private write(text: string, ...args: SqlValue[]): { lastInsertRowid: number | bigint } {
    // node:sqlite cuts a bound string at U+0000: what is written must hold none (docs are JSON, keys keys.ts).
    if (args.some((a) => typeof a === 'string' && a.includes('\u0000'))) throw new Error('a value to store holds U+0000');
    try {
      return this.sql(text).run(...args);
    } finally {
      this.writes++;
    }
  }

  private sql(text: string): SqlStatement {
    let st = this.statements.get(text);
    if (!st) this.statements.set(text, (st = this.db.prepare(text)));
    return st;
  }

  close(): void {
    if (!this.db.open) return;
    this.commits.close();
    this.db.close();
  }

  now(): string {
    return this.clock.now().toISOString();
  }

  tx<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn);
    } finally {
      // A rollback undoes writes that reads inside the transaction saw: whatever was derived from them is stale.
      this.writes++;
    }
  }

  /**
   * A number that changes whenever a committed row may have changed: on every write through this store
   * (and at the end of every transaction), and when another connection (`appliance-forge users` on the
   * same data dir) committed (./commit-watch.ts). Values derived from rows read at one generation
   * stay right while it lasts (./memo.ts).
   */
  generation(): number {
    // Commits are looked for once per turn of the event loop (and by lookForCommits): a commit
    // elsewhere during the turn is seen at the next one, as if the turn had run just before it (own
    // writes count at once).
    if (!this.lookedThisTurn) this.lookForCommits();
    return this.writes;
  }

  /**
   * Look for other connections' commits now. The server calls it as each request starts
   * (authentication), so a request sees every commit made before it arrived, whatever else ran in the
   * same turn; the rest of the request's turn asks no more (one look per request).
   */
  lookForCommits(): void {
    if (!this.lookedThisTurn) {
      this.lookedThisTurn = true;
      setImmediate(() => (this.lookedThisTurn = false));
    }
    if (this.commits.changed()) this.writes++;
  }

  // ---- users ---------------------------------------------------------------------------------

  getUser(login: string): UserRow | undefined {
    const r = this.sql('SELECT * FROM users WHERE login = ?').get(login) as RawUser | undefined;
    return r && userOf(r);
  }

  insertUser(login: string, admin: boolean, passwordHash: string | null, doc: UserDoc): UserRow {
    const now = this.now();
    try {
      this.write('INSERT INTO users (login, admin, password_hash, doc, created, modified) VALUES (?, ?, ?, ?, ?, ?)', login, admin ? 1 : 0, passwordHash, JSON.stringify(doc), now, now);
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`user ${login} already exists`);
      throw e;
    }
    return this.getUser(login)!;
  }

  updateUser(login: string, patch: { admin?: boolean | undefined; passwordHash?: string | undefined; doc?: UserDoc }): UserRow {
    const u = this.getUser(login)!;
    this.write('UPDATE users SET admin = ?, password_hash = ?, doc = ?, modified = ? WHERE login = ?', (patch.admin ?? u.admin) ? 1 : 0, patch.passwordHash ?? u.passwordHash, JSON.stringify(patch.doc ?? u.doc), this.now(), login);
    return this.getUser(login)!;
  }

  // ---- records -------------------------------------------------------------------------------

  insert<K extends Kind>(kind: K, r: NewRecord<K>, conflictMessage = `${kind} already exists`): Row<K> {
    const now = this.now();
    try {
      const res = this.write('INSERT INTO records (kind, owner, parent_id, unique_key, doc, secret, created, modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', kind, r.owner, r.parentId ?? null, r.uniqueKey ?? null, JSON.stringify(r.doc), r.secret ?? null, now, now);
      return this.get(kind, Number(res.lastInsertRowid))!;
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(conflictMessage);
      throw e;
    }
  }

  get<K extends Kind>(kind: K, id: number): Row<K> | undefined {
    if (!Number.isSafeInteger(id)) return undefined;
    const r = this.sql('SELECT * FROM records WHERE kind = ? AND id = ?').get(kind, id) as RawRow | undefined;
    return r && rowOf<K>(r);
  }

  /** The records of an owner (optionally under a parent), oldest first. */
  list<K extends Kind>(kind: K, owner?: string, parentId?: number): Array<Row<K>> {
    let sql = 'SELECT * FROM records WHERE kind = ?';
    const args: SqlValue[] = [kind];
    if (owner !== undefined) {
      sql += ' AND owner = ?';
      args.push(owner);
    }
    if (parentId !== undefined) {
      sql += ' AND parent_id = ?';
      args.push(parentId);
    }
    return (this.sql(`${sql} ORDER BY id`).all(...args) as RawRow[]).map((r) => rowOf<K>(r));
  }

  byKey<K extends Kind>(kind: K, uniqueKey: string): Row<K> | undefined {
    if (uniqueKey.includes('\u0000')) return undefined; // no stored key holds one (see write)
    const r = this.sql('SELECT * FROM records WHERE kind = ? AND unique_key = ?').get(kind, uniqueKey) as RawRow | undefined;
    return r && rowOf<K>(r);
  }

  update<K extends Kind>(
    kind: K,
    id: number,
    doc: KindDocs[K],
    opts: { uniqueKey?: string | null; secret?: string | null } = {},
    conflictMessage = `${kind} already exists`,
  ): Row<K> {
    const cur = this.get(kind, id);
    if (!cur) throw new Error(`${kind} ${id} vanished`);
    try {
      this.write('UPDATE records SET doc = ?, unique_key = ?, secret = ?, modified = ? WHERE kind = ? AND id = ?', 
          JSON.stringify(doc),
          opts.uniqueKey === undefined ? cur.uniqueKey : opts.uniqueKey,
          opts.secret === undefined ? cur.secret : opts.secret,
          this.now(),
          kind,
          id,
        );
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(conflictMessage);
      throw e;
    }
    return this.get(kind, id)!;
  }

  remove(kind: Kind, id: number): void {
    this.write('DELETE FROM records WHERE kind = ? AND id = ?', kind, id);
  }

  /** Every path of a stored file, to tell orphans from live files at startup. */
  filePaths(): Set<string> {
    const out = new Set<string>();
    for (const r of this.list('artifact')) if (r.doc.file) out.add(r.doc.file.path);
    for (const r of this.list('image')) for (const p of imageFilePaths(r.doc)) out.add(p);
    return out;
  }

  /**
   * Jobs that were running when the process stopped cannot resume: they end as errors, never stuck
   * (restart recovery). Returns how many were closed.
   */
  closeInterruptedJobs(): number {
    let n = 0;
    this.tx(() => {
      for (const kind of ['image', 'pimage'] as const) {
        for (const r of this.list(kind)) {
          if (isTerminal(r.doc.status)) continue;
          const status: OpStatus = { ...r.doc.status, error: true, errorMessage: INTERRUPTED, message: INTERRUPTED };
          this.update(kind, r.id, { ...r.doc, status });
          n++;
        }
      }
    });
    return n;
  }
}

function rowOf<K extends Kind>(r: RawRow): Row<K> {
  return {
    id: r.id,
    kind: r.kind as K,
    owner: r.owner,
    parentId: r.parent_id,
    uniqueKey: r.unique_key,
    doc: JSON.parse(r.doc) as KindDocs[K],
    secret: r.secret,
    created: r.created,
    modified: r.modified,
  };
}

function userOf(r: RawUser): UserRow {
  return {
    id: r.id,
    login: r.login,
    admin: r.admin === 1,
    passwordHash: r.password_hash,
    doc: JSON.parse(r.doc) as UserDoc,
    created: r.created,
    modified: r.modified,
  };
}
