// One SQLite interface over two engines: Node's built-in `node:sqlite` (Node ≥ 22.13: nothing to
// compile or install, what the Action's bundle runs on) and better-sqlite3 (an optional dependency,
// loaded only where `node:sqlite` is missing: Node 22.0 to 22.12). The store speaks only this interface.
import { createRequire } from 'node:module';
import { ForgeError } from '../../../errors';

export const SQLITE_ENGINES = ['node:sqlite', 'better-sqlite3'] as const;
export type SqliteEngine = (typeof SQLITE_ENGINES)[number];

export type SqlValue = string | number | bigint | null | Uint8Array;

export interface SqlStatement {
  run(...params: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): unknown[];
}

export interface SqlDatabase {
  readonly engine: SqliteEngine;
  readonly open: boolean;
  exec(sql: string): void;
  prepare(sql: string): SqlStatement;
  /** Runs `fn` in a transaction (a savepoint when nested): committed when it returns, rolled back when it throws. */
  transaction<T>(fn: () => T): T;
  /** `PRAGMA data_version` (its value alone, no row object): where the WAL index cannot be read (store/commit-watch.ts). */
  dataVersion(): unknown;
  close(): void;
}

/** No engine could open the database; the message says what to install or upgrade. */
export class SqliteUnavailableError extends ForgeError {
  static readonly code = 'E_SQLITE_UNAVAILABLE';
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'SqliteUnavailableError';
  }
}

// Shapes of the two engines' objects, as far as this module uses them (better-sqlite3's types must
// not leak into the package's declarations).
type NativeStatement = SqlStatement & {
  /** node:sqlite (Node ≥ 22.16): rows as arrays. */
  setReturnArrays?(on: boolean): void;
  /** better-sqlite3: the first column's value instead of a row. */
  pluck?(on?: boolean): NativeStatement;
};
interface NodeSqlite {
  DatabaseSync: new (path: string) => { exec(sql: string): void; prepare(sql: string): NativeStatement; close(): void };
}
interface BetterDatabase {
  readonly open: boolean;
  exec(sql: string): void;
  prepare(sql: string): NativeStatement;
  transaction<T>(fn: () => T): () => T;
  close(): void;
}

function nodeSqlite(): NodeSqlite | undefined {
  // getBuiltinModule (Node ≥ 20.16) answers undefined where the module does not exist: no bundler
  // or loader ever sees an import of `node:sqlite`. Node 22 warns on its first load that the module
  // is experimental (Node 24 does not): nothing a user can act on, and it would reach every
  // command's stderr, so that one warning is dropped.
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(warning).startsWith('SQLite is an experimental feature')) return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  });
  try {
    return process.getBuiltinModule?.('node:sqlite');
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * The Node-API version better-sqlite3's addon is built for: 10 from major 13 on (its binding.gyp's
 * NAPI_VERSION, its prebuilds too); major 12 builds for the running Node's ABI. A Node with an older
 * Node-API (Node 20, Node 22.0 to 22.13) does not refuse such an addon: it dies with SIGSEGV as it loads.
 */
function betterSqliteNapi(version: string): number {
  return parseInt(version, 10) >= 13 ? 10 : 0;
}

let better: { ctor?: new (file: string) => BetterDatabase; error?: unknown } | undefined;
function betterSqlite(): new (file: string) => BetterDatabase {
  if (!better) {
    try {
      const load = createRequire(__filename);
      const { version } = load('better-sqlite3/package.json') as { version: string };
      const needs = betterSqliteNapi(version);
      const has = Number(process.versions['napi']);
      if (!(has >= needs)) {
        throw new Error(
          `better-sqlite3 ${version} is a Node-API ${needs} addon (Node 22.14 or later) and Node ${process.versions.node} has Node-API ${has}: loading it would crash Node; npm install better-sqlite3@12 for this Node`,
        );
      }
      const ctor = load('better-sqlite3') as new (file: string) => BetterDatabase;
      // The package loads its native addon on first open: probe it, so that an addon built for
      // another Node's ABI counts as unavailable rather than failing later.
      new ctor(':memory:').close();
      better = { ctor };
    } catch (e) {
      better = { error: e };
    }
  }
  if (better.ctor) return better.ctor;
  const why = better.error instanceof Error ? better.error.message.split('\n')[0] : String(better.error);
  throw new SqliteUnavailableError(`better-sqlite3 cannot load (${why})`, better.error);
}

/** The engines this process can open, preferred first. */
export function availableEngines(): SqliteEngine[] {
  const out: SqliteEngine[] = [];
  if (nodeSqlite()) out.push('node:sqlite');
  try {
    betterSqlite();
    out.push('better-sqlite3');
  } catch {
    // not installed, or built for another Node
  }
  return out;
}

/**
 * Opens (creating) the database file with `engine`, or the first engine available: `node:sqlite`,
 * else better-sqlite3 (loaded only then).
 */
export function openSqlite(file: string, engine?: SqliteEngine): SqlDatabase {
  const use = engine ?? (nodeSqlite() ? 'node:sqlite' : 'better-sqlite3');
  if (use === 'node:sqlite') {
    const m = nodeSqlite();
    if (!m) throw new SqliteUnavailableError(`node:sqlite is not available on Node ${process.versions.node} (it needs Node 22.13 or later)`);
    return fromNodeSqlite(new m.DatabaseSync(file));
  }
  let Ctor: new (file: string) => BetterDatabase;
  try {
    Ctor = betterSqlite();
  } catch (e) {
    if (engine) throw e;
    throw new SqliteUnavailableError(
      `no SQLite engine: Node ${process.versions.node} has no node:sqlite (Node 22.13 or later has it) and the optional dependency ${(e as Error).message}`,
      e,
    );
  }
  return fromBetterSqlite(new Ctor(file));
}

function fromBetterSqlite(db: BetterDatabase): SqlDatabase {
  return {
    engine: 'better-sqlite3',
    get open() {
      return db.open;
    },
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql),
    transaction: (fn) => db.transaction(fn)(),
    dataVersion: (() => {
      const st = db.prepare('PRAGMA data_version');
      if (!st.pluck) return () => (st.get() as { data_version: unknown }).data_version;
      const value = st.pluck();
      return () => value.get();
    })(),
    close: () => db.close(),
  };
}

function fromNodeSqlite(db: InstanceType<NodeSqlite['DatabaseSync']>): SqlDatabase {
  let open = true;
  let depth = 0;
  const ending = (sql: string) => {
    depth--;
    db.exec(sql);
  };
  return {
    engine: 'node:sqlite',
    get open() {
      return open;
    },
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql),
    // better-sqlite3's semantics: BEGIN at the outer level, a savepoint for each nested level.
    transaction<T>(fn: () => T): T {
      const sp = depth ? `tx${depth}` : undefined;
      db.exec(sp ? `SAVEPOINT ${sp}` : 'BEGIN');
      depth++;
      let result: T;
      try {
        result = fn();
      } catch (e) {
        ending(sp ? `ROLLBACK TO ${sp}; RELEASE ${sp}` : 'ROLLBACK');
        throw e;
      }
      try {
        ending(sp ? `RELEASE ${sp}` : 'COMMIT');
      } catch (e) {
        // A failed COMMIT (SQLITE_BUSY, disk full) leaves the transaction open: end it, keep the error.
        if (!sp) db.exec('ROLLBACK');
        throw e;
      }
      return result;
    },
    dataVersion: (() => {
      const st = db.prepare('PRAGMA data_version');
      if (!st.setReturnArrays) return () => (st.get() as { data_version: unknown }).data_version;
      st.setReturnArrays(true);
      return () => (st.get() as unknown[])[0];
    })(),
    close() {
      if (!open) return;
      db.close();
      open = false;
    },
  };
}

/** A UNIQUE constraint refused the write (both engines' error shapes). */
export function isUniqueViolation(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const { code, errcode } = e as { code?: unknown; errcode?: unknown };
  // better-sqlite3: the extended code's name; node:sqlite: its number (SQLITE_CONSTRAINT_UNIQUE = 2067).
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || errcode === 2067;
}
