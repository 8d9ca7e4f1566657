// Whether any connection to the database committed since the last look, asked as each request starts
// (a key removed by `appliance-forge users` must be refused by the next request). Asking SQLite
// (`PRAGMA data_version`) opens a read transaction: two `fcntl` locks on the WAL index and a statement
// step, the largest single cost of a signed GET after the socket write. The WAL index's header (the
// first 48 bytes of the `-shm` file, SQLite's file format: sqlite.org/walformat.html §2.1) is rewritten
// by every commit of every connection (its change counter, last frame and salts), and it is the
// commit's last step (readers take it as the commit point): one 48-byte read says the same. Any
// difference counts as a commit (a checkpoint too, or a read torn by a commit under way: at worst a kept
// value is rebuilt once more). Without the file (another journal mode), SQLite is asked.
import { closeSync, openSync, readSync } from 'node:fs';
import type { Db } from './db';

const HEADER_BYTES = 48;

export interface CommitWatch {
  /** True when a commit (of any connection, this one's included) may have happened since the last call. */
  changed(): boolean;
  close(): void;
}

export function watchCommits(db: Db, dbFile: string): CommitWatch {
  let fd: number | undefined;
  try {
    fd = openSync(`${dbFile}-shm`, 'r');
  } catch {
    fd = undefined;
  }
  if (fd === undefined) {
    let seen: unknown;
    return {
      changed() {
        const dv = db.dataVersion();
        if (dv === seen) return false;
        seen = dv;
        return true;
      },
      close() {},
    };
  }
  const shm = fd;
  const seen = Buffer.alloc(HEADER_BYTES);
  const now = Buffer.alloc(HEADER_BYTES);
  return {
    changed() {
      const n = readSync(shm, now, 0, HEADER_BYTES, 0);
      if (n === HEADER_BYTES && now.equals(seen)) return false;
      now.copy(seen);
      return true;
    },
    close() {
      closeSync(shm);
    },
  };
}
