// The data folder holds keys, and the server deletes what it finds in `tmp/` at start-up, often as root
// (the Action's embedded builds): so it is opened only as this package leaves it. Every folder the
// server writes in is a real folder (never a symbolic link) owned by the user the server runs as, and
// a file holding keys is a regular file of that user that no one else may read, as ssh requires of a
// private key. A checkout cannot produce such a key file (git writes files 0644 or 0755), and a
// `forge.db` without its `secret.key` is not opened: a committed or copied database is never trusted.
import { closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, writeSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { ForgeError } from '../errors';

export const DATABASE_FILES = ['forge.db', 'forge.db-wal', 'forge.db-shm'] as const;
export const SECRET_KEY_FILE = 'secret.key';

/** A data folder, one of its folders or a key file that this package did not make, or that another user owns. */
export class DataFolderError extends ForgeError {
  static readonly code = 'E_DATA_FOLDER';
  constructor(readonly path: string, reason: string) {
    super(`unsafe data folder: ${path} ${reason}`);
    this.name = 'DataFolderError';
  }
}

const euid = (): number | undefined => process.geteuid?.();

function checkOwner(path: string, st: Stats): void {
  const me = euid();
  if (me !== undefined && st.uid !== me) {
    throw new DataFolderError(path, `belongs to uid ${st.uid}, not to this user (uid ${me}): use a data folder of your own (--data-dir)`);
  }
}

/**
 * Checks that `path` is a real folder of this user (lstat: a link is refused, never followed); with
 * `create`, makes it first (0700). Absent and not to be created: nothing to check.
 */
export function realFolder(path: string, create = false): void {
  if (create) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isSymbolicLink()) throw new DataFolderError(path, 'is a symbolic link: the server writes and deletes there, so it must be a real folder');
  if (!st.isDirectory()) throw new DataFolderError(path, 'is not a folder');
  checkOwner(path, st);
}

/** A file the server opens (the database): absent, or a regular file of this user. */
function ownedFile(path: string): Stats | undefined {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return undefined;
  if (st.isSymbolicLink()) throw new DataFolderError(path, 'is a symbolic link: it must be a regular file');
  if (!st.isFile()) throw new DataFolderError(path, 'is not a regular file');
  checkOwner(path, st);
  return st;
}

/**
 * Makes (0700) and checks the data folder itself and its database files; returns its absolute path.
 * A `forge.db` without `secret.key` was not made here (the server writes the key first).
 */
export function openDataFolder(dataDir: string): string {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  realFolder(dir);
  const [db] = DATABASE_FILES.map((f) => ownedFile(join(dir, f)));
  if (db && !lstatSync(join(dir, SECRET_KEY_FILE), { throwIfNoEntry: false })) {
    throw new DataFolderError(join(dir, DATABASE_FILES[0]), `is there without ${SECRET_KEY_FILE}: appliance-forge did not make it (a committed or copied database is not opened)`);
  }
  return dir;
}

/**
 * The content of a key file, or undefined when there is none. The file is opened without following a
 * link (a link, even a dangling one, is refused) and must be this user's, mode 0600 or stricter.
 */
export function readSecretFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new DataFolderError(path, 'is a symbolic link: a key file must be a regular file (it is never followed)');
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new DataFolderError(path, 'is not a regular file');
    checkOwner(path, st);
    if ((st.mode & 0o077) !== 0) {
      throw new DataFolderError(path, `is open to other users (mode 0${(st.mode & 0o777).toString(8)}): a key file must be 0600, as appliance-forge writes it (chmod 600 it if this folder is yours)`);
    }
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a new key file: exclusive create (`wx`, which never follows a link, dangling or not), mode
 * 0600, synced. False when something is already at `path`: read it with readSecretFile.
 */
export function createSecretFile(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}
