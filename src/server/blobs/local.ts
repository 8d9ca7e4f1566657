// The BlobStore port on this node's disk (the embedded default): under the data dir, `files/`
// (uploads), `images/` (generated disks and SBOMs), `tmp/` (work in progress). A file is written under
// `tmp/`, fsync'd, checksummed, and renamed into place only when complete, so a crash never leaves a
// partial file where it could be served. The three folders are checked as real folders of this user
// (data-folder.ts) before any use, and a stored key is used only when it names an entry directly
// inside one of them.
import { randomBytes } from 'node:crypto';
import { createReadStream, lstatSync, openSync, closeSync, fsyncSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { copyFile, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { Digester } from '../../digest';
import { DataFolderError, realFolder } from '../data-folder';
import { ServiceError } from '../service-error';
import { writeAll } from '../../file-writes';
import { writeBeside } from '../../hash-workers';
import type { BlobArea, BlobStore, WriteOptions, WrittenBlob, WrittenUpload } from './port';

/** Uploads of at least this many bytes (or of unknown length) hash in worker threads, smaller ones here. */
export const PARALLEL_DIGEST_FROM = 4 * 1024 * 1024;
/**
 * A write asked to (`lateDigests`) of at least this many bytes (or of unknown length) leaves out its
 * sha256 and md5, which are filled in after the answer (late-digests.ts); below it both cost under ~120 ms.
 */
export const LATE_DIGESTS_FROM = 64 * 1024 * 1024;

const AREAS: readonly (BlobArea | 'tmp')[] = ['files', 'images', 'tmp'];

export class LocalBlobs implements BlobStore {
  readonly backend = 'local' as const;
  readonly shared = false;
  readonly where: string;
  constructor(readonly dataDir: string) {
    for (const d of AREAS) realFolder(join(dataDir, d), true);
    this.where = dataDir;
  }

  /** `rel` must be `<area>` or `<area>/<name>`: a path read from the database never leaves the three folders. */
  abs(rel: string): string {
    const [area, name, ...deeper] = rel.split(sep);
    if (!AREAS.some((a) => a === area) || name === '' || name === '.' || name === '..' || deeper.length) {
      throw new DataFolderError(join(this.dataDir, 'forge.db'), `names the file ${JSON.stringify(rel)}, not one directly inside ${AREAS.join('/, ')}/`);
    }
    return join(this.dataDir, rel);
  }

  /** The file of a key: what this node's builds, digests and publications read without a copy. */
  localPath(key: string): string {
    return this.abs(key);
  }

  /** A fresh name: a random prefix keeps two writers of the same record apart. */
  fresh(area: BlobArea | 'tmp', suffix: string): string {
    return join(area, `${randomBytes(8).toString('hex')}-${suffix}`);
  }

  /**
   * Stream `source` to `area` with its sha256 and md5, holding at most a few MiB in memory, made durable
   * by one fsync at the end. Over `maxBytes` → 413 and nothing is kept. `expectedBytes` (the Content-Length) picks
   * where the hashing runs: here for small files, in worker threads beside the writes for large ones; and,
   * with `lateDigests`, whether the digests are left out (from LATE_DIGESTS_FROM bytes, or of unknown
   * length): the file is then only written, its chunks as they came.
   */
  async write(source: AsyncIterable<Uint8Array>, area: BlobArea, suffix: string, maxBytes: number, expectedBytes?: number, o: WriteOptions = {}): Promise<WrittenUpload> {
    const tmp = this.fresh('tmp', suffix);
    const fh = await open(this.abs(tmp), 'wx', 0o600);
    let ok = false;
    let written: Omit<WrittenUpload, 'key'>;
    try {
      const below = (n: number): boolean => expectedBytes !== undefined && Number.isFinite(expectedBytes) && expectedBytes < n;
      const limit = { bytes: maxBytes, error: () => tooLarge(maxBytes) };
      if (below(PARALLEL_DIGEST_FROM)) written = await writeHere(source, fh, maxBytes);
      else if (o.lateDigests && !below(LATE_DIGESTS_FROM)) written = await writeAll(source, fh, limit);
      else written = await writeBeside(source, fh, ['sha256', 'md5'], limit);
      await fh.sync();
      ok = true;
    } finally {
      await fh.close();
      if (!ok) await rm(this.abs(tmp), { force: true });
    }
    const key = this.fresh(area, suffix);
    await rename(this.abs(tmp), this.abs(key));
    syncDir(this.abs(area));
    return { key, ...written };
  }

  scratchPath(suffix: string): string {
    return this.abs(this.fresh('tmp', suffix));
  }

  /** A file of this data folder's `tmp/` is renamed into place; another is copied, then removed. */
  async adopt(localPath: string, area: BlobArea, suffix: string): Promise<string> {
    const key = this.fresh(area, suffix);
    try {
      await rename(localPath, this.abs(key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      await copyFile(localPath, this.abs(key));
      const fd = openSync(this.abs(key), 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      await rm(localPath, { force: true });
    }
    syncDir(this.abs(area));
    return key;
  }

  /** Copied under `tmp/`, synced, then renamed into place: a crash never leaves part of it under `key`. */
  async copyIn(localPath: string, key: string): Promise<void> {
    const target = this.abs(key);
    const tmp = this.abs(this.fresh('tmp', 'copy'));
    try {
      await copyFile(localPath, tmp);
      const fd = openSync(tmp, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      await rename(tmp, target);
    } finally {
      await rm(tmp, { force: true });
    }
    syncDir(dirname(target));
  }

  async open(key: string): Promise<Readable> {
    const path = this.abs(key);
    // A missing file is an error at once, not an error event of a stream already handed out.
    statSync(path);
    return createReadStream(path);
  }

  async fetch(key: string, dest: string): Promise<void> {
    await copyFile(this.abs(key), dest);
  }

  async remove(key: string | undefined): Promise<void> {
    if (key) await rm(this.abs(key), { force: true, recursive: true });
  }

  async ping(): Promise<void> {
    realFolder(join(this.dataDir, 'files'));
  }

  /**
   * Startup clean-up: everything under `tmp/` is an interrupted write; a file under `files/` or
   * `images/` that no record names was renamed just before a crash, before its record committed.
   * Each folder is checked again (lstat) just before it is listed, and a link found in it is removed
   * itself: the sweep never deletes anything outside the data folder.
   */
  async sweep(live: ReadonlySet<string>, graceMs = 0): Promise<{ removed: number }> {
    let removed = 0;
    const before = Date.now() - graceMs;
    for (const area of AREAS) {
      const dir = join(this.dataDir, area);
      realFolder(dir);
      for (const e of readdirSync(dir)) {
        if (area !== 'tmp' && live.has(join(area, e))) continue;
        if (graceMs > 0 && (lstatSync(join(dir, e), { throwIfNoEntry: false })?.mtimeMs ?? 0) > before) continue;
        try {
          removeEntry(join(dir, e));
          removed++;
        } catch (err) {
          // Build children die with the server (host/child.ts), but one may still be exiting: what
          // still resists in tmp/ is left to the next start rather than refuse to start.
          if (area !== 'tmp') throw err;
        }
      }
    }
    return { removed };
  }
}

/** A link or a file is unlinked; a folder removed with its content (fs.rm unlinks the links it meets, never their targets). */
function removeEntry(p: string): void {
  const st = lstatSync(p, { throwIfNoEntry: false });
  if (!st) return;
  if (!st.isDirectory()) unlinkSync(p);
  else rmSync(p, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}

const tooLarge = (maxBytes: number): ServiceError => new ServiceError(413, `upload larger than the limit of ${maxBytes} bytes`);

/** Hash and write each chunk in turn on this thread (small files: no hand-over costs). */
async function writeHere(source: AsyncIterable<Uint8Array>, fh: FileHandle, maxBytes: number): Promise<Omit<WrittenBlob, 'key'>> {
  const d = new Digester(['sha256', 'md5']);
  for await (const chunk of source) {
    d.update(chunk);
    if (d.size > maxBytes) throw tooLarge(maxBytes);
    await fh.write(chunk);
  }
  return d.digests();
}

/** fsync a directory so that a rename in it survives a crash. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
