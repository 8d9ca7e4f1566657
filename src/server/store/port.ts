// The Store port: users and records (store/docs.ts), read and written asynchronously, so that one
// server's code runs on SQLite in the data folder (sqlite/store.ts, the embedded default) or on a
// PostgreSQL database that several nodes share (postgres/store.ts). A transaction is explicit: its
// body gets the handle its reads and writes go through, and commits when the body resolves.
import type { Kind, KindDocs, UserDoc, UserRow } from './docs';

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

export interface NewRecord<K extends Kind> {
  owner: string;
  parentId?: number | null;
  uniqueKey?: string | null;
  doc: KindDocs[K];
  secret?: string | null;
}

/** What `appliance-forge migrate` keeps of a row copied from another store: its id and dates. */
export interface CopiedRow {
  id: number;
  created: string;
  modified: string;
}

export interface UserPatch {
  admin?: boolean | undefined;
  passwordHash?: string | undefined;
  doc?: UserDoc;
}

/** The reads and writes of a store, on the store itself or inside one of its transactions. */
export interface StoreOps {
  getUser(login: string): Promise<UserRow | undefined>;
  listUsers(): Promise<UserRow[]>;
  insertUser(login: string, admin: boolean, passwordHash: string | null, doc: UserDoc, copied?: CopiedRow): Promise<UserRow>;
  updateUser(login: string, patch: UserPatch): Promise<UserRow>;
  insert<K extends Kind>(kind: K, r: NewRecord<K>, conflictMessage?: string, copied?: CopiedRow): Promise<Row<K>>;
  get<K extends Kind>(kind: K, id: number): Promise<Row<K> | undefined>;
  /** The records of a kind (of an owner, under a parent when given), oldest first. */
  list<K extends Kind>(kind: K, owner?: string, parentId?: number): Promise<Array<Row<K>>>;
  byKey<K extends Kind>(kind: K, uniqueKey: string): Promise<Row<K> | undefined>;
  /** A 409 (`conflictMessage`) when the unique key is taken; an Error when the record is gone. */
  update<K extends Kind>(kind: K, id: number, doc: KindDocs[K], opts?: { uniqueKey?: string | null; secret?: string | null }, conflictMessage?: string): Promise<Row<K>>;
  remove(kind: Kind, id: number): Promise<void>;
}

/** A transaction's handle: the store's operations, and the SQL executor other ports join it with (a job sent in it). */
export interface StoreTx extends StoreOps {
  /** PostgreSQL only: runs SQL on the transaction's connection (pg-boss's `db` option). */
  readonly executor?: SqlExecutor | undefined;
  /** Runs `fn` once the transaction has committed (never after a rollback): what must not happen for a write that did not. */
  afterCommit(fn: () => void): void;
}

export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

export type StoreBackend = 'sqlite' | 'postgres';

export interface Store extends StoreOps {
  readonly backend: StoreBackend;
  /** Where it is, for the start line and errors (a file, or a URL without its password). */
  readonly where: string;
  now(): string;
  /**
   * Runs `body` in a transaction: committed when it resolves, rolled back when it rejects. Inside it,
   * every read and write goes through its handle, never through the store (SQLite: a call on the store
   * while one of its transactions is open is a defect, and throws).
   */
  tx<T>(body: (t: StoreTx) => Promise<T>): Promise<T>;
  /**
   * A number that changes whenever a committed row may have changed: at this store's own writes (and
   * transactions' ends) at once, at other connections' and nodes' commits once they are seen
   * (SQLite: the WAL index at each request; PostgreSQL: a notification). Values derived from rows
   * read at one generation stay right while it lasts (memo.ts).
   */
  generation(): number;
  /** Look for other connections' commits now (called as each request starts). */
  lookForCommits(): void;
  /** Answers when the database does (the health route). */
  ping(): Promise<void>;
  /**
   * PostgreSQL: takes the session-level lock `name` for as long as this store is open; false when
   * another node holds it (one node alone may serve the farm's database with blobs on its own disk).
   */
  holdLock?(name: string): Promise<boolean>;
  /** PostgreSQL: the index of the OS layers a farm's workers share (server/shared-layers.ts). */
  readonly layers?: LayerIndex;
  close(): Promise<void>;
}

/** A shared OS layer: its archive's blob key and digest, and the layer's meta (JSON text). */
export interface LayerEntry {
  readonly key: string;
  readonly blob: string;
  readonly sha256: string;
  readonly size: number;
  readonly meta: string;
}

export interface LayerIndex {
  /** The entry of `key`, marked used now; undefined when there is none. */
  get(key: string): Promise<LayerEntry | undefined>;
  /** Adds the entry: false (nothing changed) when `key` has one already. */
  put(entry: LayerEntry): Promise<boolean>;
  /** The blob keys of every entry (they are live for the blob sweep). */
  blobKeys(): Promise<string[]>;
  /** Removes the entries not used since `before` (ISO time): their blobs, for removal. */
  expire(before: string): Promise<string[]>;
  /** The farm-wide lock `name` until the returned function frees it; undefined while another holds it. A dead holder's lock is freed with its connection. */
  tryLock(name: string): Promise<(() => Promise<void>) | undefined>;
}
