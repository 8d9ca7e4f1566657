// Files under the data dir: `files/` (uploads), `images/` (generated disks), `tmp/` (work in
// progress). A file is written under `tmp/`, fsync'd, checksummed, and renamed into place only when
// complete, so a crash never leaves a partial file where it could be served (task: durable state).
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, openSync, closeSync, fsyncSync, readdirSync, rmSync, type ReadStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Digester } from '../../digest';
import { ServiceError } from '../service-error';

export type FileArea = 'files' | 'images';

export interface WrittenFile {
  /** Relative to the data dir. */
  path: string;
  size: number;
  sha256: string;
  md5: string;
}

export class FileStore {
  constructor(readonly dataDir: string) {
    for (const d of ['files', 'images', 'tmp']) mkdirSync(join(dataDir, d), { recursive: true, mode: 0o700 });
  }

  abs(rel: string): string {
    return join(this.dataDir, rel);
  }

  /** A fresh name: a random prefix keeps two writers of the same record apart. */
  fresh(area: FileArea | 'tmp', suffix: string): string {
    return join(area, `${randomBytes(8).toString('hex')}-${suffix}`);
  }

  /**
   * Stream `source` to `area`, never holding more than one chunk in memory. Over `maxBytes` → 413
   * and nothing is kept.
   */
  async write(source: AsyncIterable<Uint8Array>, area: FileArea, suffix: string, maxBytes: number): Promise<WrittenFile> {
    const tmp = this.fresh('tmp', suffix);
    const d = new Digester(['sha256', 'md5']);
    const fh = await open(this.abs(tmp), 'wx', 0o600);
    let ok = false;
    try {
      for await (const chunk of source) {
        d.update(chunk);
        if (d.size > maxBytes) throw new ServiceError(413, `upload larger than the limit of ${maxBytes} bytes`);
        await fh.write(chunk);
      }
      await fh.sync();
      ok = true;
    } finally {
      await fh.close();
      if (!ok) await rm(this.abs(tmp), { force: true });
    }
    const path = this.fresh(area, suffix);
    await rename(this.abs(tmp), this.abs(path));
    syncDir(this.abs(area));
    return { path, ...d.digests() };
  }

  read(rel: string): ReadStream {
    return createReadStream(this.abs(rel));
  }

  async remove(rel: string | undefined): Promise<void> {
    if (rel) await rm(this.abs(rel), { force: true, recursive: true });
  }

  /**
   * Startup clean-up: everything under `tmp/` is an interrupted write; a file under `files/` or
   * `images/` that no record names was renamed just before a crash, before its record committed.
   */
  sweep(live: ReadonlySet<string>): { removed: number } {
    let removed = 0;
    for (const e of readdirSync(this.abs('tmp'))) {
      // Build children die with the server (host/child.ts), but one may still be exiting: retry on
      // ENOTEMPTY/EBUSY, and leave what still resists to the next start rather than refuse to start.
      try {
        rmSync(join(this.abs('tmp'), e), { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
        removed++;
      } catch {
        continue;
      }
    }
    for (const area of ['files', 'images'] as const) {
      for (const e of readdirSync(this.abs(area))) {
        if (live.has(join(area, e))) continue;
        rmSync(join(this.abs(area), e), { recursive: true, force: true });
        removed++;
      }
    }
    return { removed };
  }
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
