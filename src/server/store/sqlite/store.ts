// The Store port on SQLite in the data folder (the embedded default). Every statement runs
// synchronously on one connection, so a write is committed before the call's promise settles. A
// transaction holds the connection from BEGIN IMMEDIATE to COMMIT: calls on the store made meanwhile
// (other requests) wait for its end, so none of them reads or writes inside it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from '../../ports';
import { conflict } from '../../service-error';
import { watchCommits, type CommitWatch } from './commit-watch';
import { dbFile, openDb, type Db } from './db';
import { isUniqueViolation, type SqlStatement, type SqliteEngine, type SqlValue } from './engines';
import type { Kind, KindDocs, UserDoc, UserRow } from '../docs';
import type { CopiedRow, NewRecord, Row, Store, StoreOps, StoreTx, UserPatch } from '../port';

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

/** The synchronous operations on the connection, which the store and its transactions' handles wrap. */
class Statements {
  /** Prepared once per SQL text: preparing on every call cost more than running the query (bench/server-throughput). */
  private readonly prepared = new Map<string, SqlStatement>();
  /** See SqliteStore.generation(): this connection's writes. */
  writes = 0;

  constructor(
    readonly db: Db,
    private readonly now: () => string,
  ) {}

  /** Every change goes through here, so that the generation moves with it (even when the statement fails half-way). */
  write(text: string, ...args: SqlValue[]): { lastInsertRowid: number | bigint } {
    // node:sqlite cuts a bound string at U+0000: what is written must hold none (docs are JSON, keys keys.ts).
    if (args.some((a) => typeof a === 'string' && a.includes('\u0000'))) throw new Error('a value to store holds U+0000');
    try {
      return this.sql(text).run(...args);
    } finally {
      this.writes++;
    }
  }

  sql(text: string): SqlStatement {
    let st = this.prepared.get(text);
    if (!st) this.prepared.set(text, (st = this.db.prepare(text)));
    return st;
  }

  getUser(login: string): UserRow | undefined {
    const r = this.sql('SELECT * FROM users WHERE login = ?').get(login) as RawUser | undefined;
    return r && userOf(r);
  }

  listUsers(): UserRow[] {
    return (this.sql('SELECT * FROM users ORDER BY id').all() as RawUser[]).map(userOf);
  }

  insertUser(login: string, admin: boolean, passwordHash: string | null, doc: UserDoc, copied?: CopiedRow): UserRow {
    const now = this.now();
    try {
      this.write(
        'INSERT INTO users (id, login, admin, password_hash, doc, created, modified) VALUES (?, ?, ?, ?, ?, ?, ?)',
        copied?.id ?? null, login, admin ? 1 : 0, passwordHash, JSON.stringify(doc), copied?.created ?? now, copied?.modified ?? now,
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`user ${login} already exists`);
      throw e;
    }
    return this.getUser(login)!;
  }

  updateUser(login: string, patch: UserPatch): UserRow {
    const u = this.getUser(login);
    if (!u) throw new Error(`user ${login} vanished`);
    this.write('UPDATE users SET admin = ?, password_hash = ?, doc = ?, modified = ? WHERE login = ?', (patch.admin ?? u.admin) ? 1 : 0, patch.passwordHash ?? u.passwordHash, JSON.stringify(patch.doc ?? u.doc), this.now(), login);
    return this.getUser(login)!;
  }

  insert<K extends Kind>(kind: K, r: NewRecord<K>, conflictMessage = `${kind} already exists`, copied?: CopiedRow): Row<K> {
    const now = this.now();
    try {
      const res = this.write(
        'INSERT INTO records (id, kind, owner, parent_id, unique_key, doc, secret, created, modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        copied?.id ?? null, kind, r.owner, r.parentId ?? null, r.uniqueKey ?? null, JSON.stringify(r.doc), r.secret ?? null, copied?.created ?? now, copied?.modified ?? now,
      );
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

  update<K extends Kind>(kind: K, id: number, doc: KindDocs[K], opts: { uniqueKey?: string | null; secret?: string | null } = {}, conflictMessage = `${kind} already exists`): Row<K> {
    const cur = this.get(kind, id);
    if (!cur) throw new Error(`${kind} ${id} vanished`);
    try {
      this.write(
        'UPDATE records SET doc = ?, unique_key = ?, secret = ?, modified = ? WHERE kind = ? AND id = ?',
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
}

/** The async face of the synchronous operations: each call runs through `gate` (which may wait or refuse). */
function asyncOps(s: Statements, gate: <T>(op: () => T) => Promise<T>): StoreOps {
  return {
    getUser: (login) => gate(() => s.getUser(login)),
    listUsers: () => gate(() => s.listUsers()),
    insertUser: (login, admin, hash, doc, copied) => gate(() => s.insertUser(login, admin, hash, doc, copied)),
    updateUser: (login, patch) => gate(() => s.updateUser(login, patch)),
    insert: <K extends Kind>(kind: K, r: NewRecord<K>, message?: string, copied?: CopiedRow) => gate(() => s.insert(kind, r, message, copied)),
    get: <K extends Kind>(kind: K, id: number) => gate(() => s.get(kind, id)),
    list: <K extends Kind>(kind: K, owner?: string, parentId?: number) => gate(() => s.list(kind, owner, parentId)),
    byKey: <K extends Kind>(kind: K, key: string) => gate(() => s.byKey(kind, key)),
    update: <K extends Kind>(kind: K, id: number, doc: KindDocs[K], opts?: { uniqueKey?: string | null; secret?: string | null }, message?: string) => gate(() => s.update(kind, id, doc, opts, message)),
    remove: (kind, id) => gate(() => s.remove(kind, id)),
  };
}

/** A settled promise of `op()`'s value or error. */
function settle<T>(op: () => T): Promise<T> {
  try {
    return Promise.resolve(op());
  } catch (e) {
    return Promise.reject(e);
  }
}

export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  readonly where: string;
  readonly db: Db;
  private readonly s: Statements;
  private readonly ops: StoreOps;
  private readonly commits: CommitWatch;
  private lookedThisTurn = false;
  /** Transactions run one after the other; store calls wait while one is open. */
  private queue: Promise<unknown> = Promise.resolve();
  private open: { token: object; ended: Promise<void> } | undefined;
  /** Which transaction the running code belongs to: a call on the store from inside its own transaction would wait forever. */
  private readonly inTx = new AsyncLocalStorage<object>();

  /** `engine`: the SQLite engine to use (tests run both); default: the first available (engines.ts). */
  constructor(dataDir: string, private readonly clock: Clock, engine?: SqliteEngine) {
    this.where = dbFile(dataDir);
    this.db = openDb(dataDir, engine);
    this.commits = watchCommits(this.db, this.where);
    this.s = new Statements(this.db, () => this.now());
    this.ops = asyncOps(this.s, (op) => this.gate(op));
  }

  /** Runs `op` now when no transaction is open, else after it ends. */
  private gate<T>(op: () => T): Promise<T> {
    const open = this.open;
    if (!open) return settle(op);
    if (this.inTx.getStore() === open.token) return Promise.reject(new Error('a store call inside one of its transactions: use the transaction handle'));
    return open.ended.then(() => this.gate(op));
  }

  getUser: StoreOps['getUser'] = (login) => this.ops.getUser(login);
  listUsers: StoreOps['listUsers'] = () => this.ops.listUsers();
  insertUser: StoreOps['insertUser'] = (login, admin, hash, doc, copied) => this.ops.insertUser(login, admin, hash, doc, copied);
  updateUser: StoreOps['updateUser'] = (login, patch) => this.ops.updateUser(login, patch);
  insert: StoreOps['insert'] = (kind, r, message, copied) => this.ops.insert(kind, r, message, copied);
  get: StoreOps['get'] = (kind, id) => this.ops.get(kind, id);
  list: StoreOps['list'] = (kind, owner, parentId) => this.ops.list(kind, owner, parentId);
  byKey: StoreOps['byKey'] = (kind, key) => this.ops.byKey(kind, key);
  update: StoreOps['update'] = (kind, id, doc, opts, message) => this.ops.update(kind, id, doc, opts, message);
  remove: StoreOps['remove'] = (kind, id) => this.ops.remove(kind, id);

  now(): string {
    return this.clock.now().toISOString();
  }

  tx<T>(body: (t: StoreTx) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.runTx(body));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runTx<T>(body: (t: StoreTx) => Promise<T>): Promise<T> {
    const token = {};
    let end!: () => void;
    this.open = { token, ended: new Promise<void>((resolve) => (end = resolve)) };
    const committed: Array<() => void> = [];
    const handle: StoreTx = {
      ...asyncOps(this.s, (op) => (this.open?.token === token ? settle(op) : Promise.reject(new Error('a transaction handle used after its transaction ended')))),
      afterCommit: (fn) => void committed.push(fn),
    };
    try {
      // IMMEDIATE: the write lock from the start, so that another process's commit cannot make this one's reads stale.
      this.db.exec('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = await this.inTx.run(token, () => body(handle));
      } catch (e) {
        this.db.exec('ROLLBACK');
        throw e;
      }
      try {
        this.db.exec('COMMIT');
      } catch (e) {
        // A failed COMMIT (SQLITE_BUSY, disk full) leaves the transaction open: end it, keep the error.
        this.db.exec('ROLLBACK');
        throw e;
      }
      // After the finally below: the store is free again when they run.
      queueMicrotask(() => {
        for (const fn of committed) fn();
      });
      return result;
    } finally {
      // A rollback undoes writes that reads inside the transaction saw: whatever was derived from them is stale.
      this.s.writes++;
      this.open = undefined;
      end();
    }
  }

  generation(): number {
    // Commits are looked for once per turn of the event loop (and by lookForCommits): a commit
    // elsewhere during the turn is seen at the next one, as if the turn had run just before it (own
    // writes count at once).
    if (!this.lookedThisTurn) this.lookForCommits();
    return this.s.writes;
  }

  /**
   * The server calls it as each request starts (authentication), so a request sees every commit made
   * before it arrived, whatever else ran in the same turn; the rest of the request's turn asks no more.
   */
  lookForCommits(): void {
    if (!this.lookedThisTurn) {
      this.lookedThisTurn = true;
      setImmediate(() => (this.lookedThisTurn = false));
    }
    if (this.commits.changed()) this.s.writes++;
  }

  async ping(): Promise<void> {
    await this.gate(() => this.s.sql('SELECT 1').get());
  }

  async close(): Promise<void> {
    await this.queue;
    if (!this.db.open) return;
    this.commits.close();
    this.db.close();
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
