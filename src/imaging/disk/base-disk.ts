// An image's base disk: the bootable raw disk of the OS layer with the install profile applied, before
// the manifest and the software files are written into it (image-files.ts). Every build makes its
// image from a base disk, so an image is the same bytes whether its base was just made or came from
// the cache: a reproducible build's base is kept, keyed by everything it is made of, and a rebuild
// after a software change copies it instead of copying the layer, applying the settings and making
// the filesystem again.
//
//   <dir>/entries/<key>/{disk.raw,meta.json,used}  complete entries only (renamed in whole); `used`'s mtime is the LRU clock
//   <dir>/tmp/<owner>-…/                           entries being written or removed (a dead owner's are swept)
//   <dir>/locks/                                   proper-lockfile lock of the short sections that evict
//
// Bounded: at most MAX_ENTRIES entries and maxBytes of disk space (allocated blocks), least recently
// used removed first. A reader copies an entry's disk (a removal meanwhile only costs it a fresh base).
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { BuildHost } from '../build-host';
import type { ImageContents } from '../sbom';
import { ownerAlive, processOwner } from '../../host/process-owner';
import type { Reproducible } from '../reproducible';
import { runTool } from '../run';
import type { SystemSettings } from '../stages';
import type { TreeIndex } from '../tree';

/** Changes whenever a base disk's making changes (its layout, what it holds, this format). */
export const BASE_DISK_VERSION = 2;
export const MAX_ENTRIES = 4;
export const DEFAULT_MAX_BYTES = 4 * 1024 ** 3;

/** What a build needs of its base besides the disk. */
export interface BaseMeta {
  readonly key: string;
  /** Bytes the base's tree took (du): the files' bytes are added to refuse a disk too small. */
  readonly treeBytes: number;
  /** Its paths, to resolve the files' destinations as the image sees them. */
  readonly index: TreeIndex;
  /** The account files of /etc (passwd, group, shadow…) with their modes and owners in the image: the files' owners, the passwords. */
  readonly accountFiles: readonly AccountFile[];
  /** The SBOMs' view of the tree. */
  readonly contents: Omit<ImageContents, 'files'>;
}

export interface AccountFile {
  readonly name: string;
  readonly text: string;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/** The account files the shadow tools read and write, as kept with a base. */
export const ACCOUNT_FILES = ['passwd', 'group', 'shadow', 'gshadow', 'login.defs'];

/** What a base disk is made of: the layer (by its key), the settings, cloud-init, the epoch, the owners' host ids. */
export function baseKey(i: BaseInputs & { layerKey: string }): string {
  return digestOf(i, i.layerKey, i.host.owners);
}

/**
 * The seed of a base disk's ids: its key without host ids or build host (the layer's portable key says how
 * the layer was built; the disk stage of an ordinary user runs in a child that is its namespace's root and
 * sees itself as privileged), so that root and an ordinary user, on any host, make the same disk.
 */
export function baseSeed(i: Omit<BaseInputs, 'host'> & { portableKey: string }): string {
  return digestOf(i, i.portableKey, 'portable');
}

interface BaseInputs {
  settings: SystemSettings;
  cloudInit: boolean;
  reproducible: Reproducible;
  host: Pick<BuildHost, 'owners'>;
}

function digestOf(i: Omit<BaseInputs, 'host'>, layer: string, owners: string): string {
  const canonical = { v: BASE_DISK_VERSION, layer, settings: i.settings, cloudInit: i.cloudInit, sourceDateEpoch: i.reproducible.sourceDateEpoch, owners };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** Copy a sparse file (its holes kept: only the data is read and written). */
export async function copySparse(from: string, to: string, signal?: AbortSignal): Promise<void> {
  await runTool('cp', ['--sparse=always', '--', from, to], { signal });
}

export class BaseDiskCache {
  constructor(
    readonly dir: string,
    readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {}

  private p(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  /** The entry's meta and its disk copied to `rawPath`; undefined when there is none (or it went meanwhile). */
  async take(key: string, rawPath: string, signal?: AbortSignal): Promise<BaseMeta | undefined> {
    const entry = this.p('entries', key);
    try {
      const meta = JSON.parse(await readFile(join(entry, 'meta.json'), 'utf8')) as BaseMeta;
      if (meta.key !== key) return undefined;
      await copySparse(join(entry, 'disk.raw'), rawPath, signal);
      const now = new Date();
      await utimes(join(entry, 'used'), now, now).catch(() => undefined);
      return meta;
    } catch (e) {
      if (signal?.aborted) throw e;
      await rm(rawPath, { force: true });
      return undefined;
    }
  }

  /** Keep a base (a copy of `rawPath`), then evict down to the bounds. A failure here never fails the build. */
  async put(meta: BaseMeta, rawPath: string, signal?: AbortSignal): Promise<void> {
    let work: string | undefined;
    try {
      await mkdir(this.p('tmp'), { recursive: true });
      await mkdir(this.p('entries'), { recursive: true });
      await mkdir(this.p('locks'), { recursive: true });
      await this.sweep();
      work = this.p('tmp', `${processOwner()}-put-${randomBytes(4).toString('hex')}`);
      await mkdir(work, { mode: 0o700 });
      await copySparse(rawPath, join(work, 'disk.raw'), signal);
      await writeFile(join(work, 'meta.json'), JSON.stringify(meta));
      await writeFile(join(work, 'used'), '');
      if ((await bytesOf(work)) > this.maxBytes) return;
      // Another build may have put the same key meanwhile: its entry (the same bytes) stays.
      await rename(work, this.p('entries', meta.key)).then(() => (work = undefined), () => undefined);
      await this.evict();
    } catch {
      // The cache is an optimisation: the image is built all the same.
    } finally {
      if (work !== undefined) await rm(work, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** Remove entries, least recently used first, until at most MAX_ENTRIES and maxBytes remain. Their keys. */
  async evict(): Promise<string[]> {
    const release = await lockfile.lock(this.p('locks', 'evict'), { realpath: false, stale: 30_000, update: 5_000, retries: { retries: 100, minTimeout: 20, maxTimeout: 200 }, onCompromised: () => undefined });
    try {
      const entries = [];
      for (const key of await readdir(this.p('entries'))) {
        const used = await lstat(this.p('entries', key, 'used')).catch(() => undefined);
        entries.push({ key, used: used?.mtimeMs ?? 0, bytes: await bytesOf(this.p('entries', key)) });
      }
      entries.sort((a, b) => b.used - a.used); // newest first: the tail goes
      let total = 0;
      const removed: string[] = [];
      for (const [i, e] of entries.entries()) {
        total += e.bytes;
        if (i < MAX_ENTRIES && total <= this.maxBytes) continue;
        const trash = this.p('tmp', `${processOwner()}-evict-${randomBytes(4).toString('hex')}`);
        await rename(this.p('entries', e.key), trash);
        await rm(trash, { recursive: true, force: true });
        total -= e.bytes;
        removed.push(e.key);
      }
      return removed;
    } finally {
      await release().catch(() => undefined);
    }
  }

  /** What dead processes left in tmp/. */
  async sweep(): Promise<void> {
    for (const name of await readdir(this.p('tmp')).catch(() => [] as string[])) {
      if (!ownerAlive(name)) await rm(this.p('tmp', name), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/** Allocated bytes of the files of a folder (one level: an entry holds files only). */
async function bytesOf(dir: string): Promise<number> {
  let n = 0;
  for (const name of await readdir(dir)) n += ((await lstat(join(dir, name)).catch(() => undefined))?.blocks ?? 0) * 512;
  return n;
}
