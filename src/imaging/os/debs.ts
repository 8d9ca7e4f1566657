// The .deb files the layer builds downloaded, kept in the cache's `debs/` folder and hard-linked into
// each later build's apt archive, so a package is downloaded once per cache.
import { constants, createWriteStream } from 'node:fs';
import { link, lstat, mkdir, open, readdir, rename, rm, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BuildHost } from '../build-host';

/**
 * Keep one downloaded .deb in `debs` (a hard link). A kept file of other owners (a privileged build's,
 * which the namespace's root may not link: protected_hardlinks) is replaced atomically, so the next
 * builds link it instead of downloading it again; EPERM: this process may not link the new one, it is
 * not kept. From another file system (a build in memory), a copy owned by the namespace's root.
 */
export async function keepDeb(debs: string, file: string, name: string, host: BuildHost): Promise<void> {
  const kept = join(debs, name);
  const err = await link(file, kept).then(() => undefined, (e: NodeJS.ErrnoException) => e);
  if (err?.code === 'EXDEV') return copyDeb(file, kept, host);
  if (err === undefined || err.code === 'EPERM') return;
  if (err.code !== 'EEXIST') throw err;
  const st = await lstat(kept).catch(() => undefined);
  if (st === undefined || st.uid === host.hostId(0, 'uid')) return;
  const fresh = join(debs, `.${name}.${randomBytes(4).toString('hex')}`);
  await link(file, fresh).then(() => rename(fresh, kept), () => unlink(fresh).catch(() => undefined));
}

/**
 * A copy of a .deb from another file system, unless one is kept already (the same name is the same
 * file: apt checks it). Only a regular file is copied, never what a link of the tree points at, and
 * opening a FIFO placed there does not wait for a writer.
 */
async function copyDeb(file: string, kept: string, host: BuildHost): Promise<void> {
  if (await lstat(kept).then(() => true, () => false)) return;
  const src = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (!src) return;
  const fresh = `${kept}.${randomBytes(4).toString('hex')}.part`;
  try {
    if (!(await src.stat()).isFile()) return;
    await pipeline(src.createReadStream({ autoClose: false }), createWriteStream(fresh, { flags: 'wx', mode: 0o644 }));
    await host.own(fresh);
    await rename(fresh, kept);
  } finally {
    await src.close();
    await unlink(fresh).catch(() => undefined);
  }
}

/** Hand each downloaded .deb file of the tree to `keep` (which moves or links it), and leave none in the tree. */
export async function harvestDebs(tree: string, host: BuildHost, keep: (file: string, name: string) => Promise<void>): Promise<void> {
  const archives = join(tree, 'var/cache/apt/archives');
  for (const name of await readdir(archives)) {
    if (!name.endsWith('.deb')) continue;
    await keep(join(archives, name), name);
    await unlink(join(archives, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e; // moved by `keep`
    });
  }
  await rm(join(archives, 'partial'), { recursive: true, force: true });
  await mkdir(join(archives, 'partial'), { recursive: true });
  await host.own(join(archives, 'partial'));
  for (const bin of ['pkgcache.bin', 'srcpkgcache.bin']) await rm(join(tree, 'var/cache/apt', bin), { force: true });
}

export interface DebFile {
  readonly path: string;
  readonly bytes: number;
  readonly links: number;
  readonly mtime: number;
}

/** The kept .deb files of `debs` with their disk usage (their inodes added to `seen`). */
export async function debFiles(debs: string, seen: Set<string>): Promise<DebFile[]> {
  const out: DebFile[] = [];
  for (const name of await readdir(debs).catch(() => [] as string[])) {
    const path = join(debs, name);
    const s = await lstat(path).catch(() => undefined);
    if (!s?.isFile()) continue;
    const id = `${s.dev}:${s.ino}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ path, bytes: s.blocks * 512, links: s.nlink, mtime: s.mtimeMs });
  }
  return out;
}
