// The shared tier in a plain folder (`APPLIANCE_FORGE_LAYER_ARCHIVE_DIR`): each layer's archive and its
// meta, by portable key. A CI job keeps the folder between runs with its own cache step (GitHub's
// `actions/cache` on that path), so a warm run restores the OS layer instead of running mmdebstrap.
// The folder comes back from outside: names are checked, links are not followed, the archive's sha256
// is checked against its meta, and the archive itself is unpacked inside the build's namespace.
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { digestFile } from '../../digest';
import { parseSharedLayerMeta, SharedLayerError, type SharedLayerTier } from './shared-tier';

const KEY = /^[0-9a-f]{16,128}$/;

/** The folder tier at `dir` (made on first use, mode 0700). */
export function folderLayerTier(dir: string): SharedLayerTier {
  const root = path.resolve(dir);
  /** The folder itself, made if absent: a link there (a checkout can plant one) would send root's writes elsewhere. */
  const folder = async (): Promise<void> => {
    await mkdir(root, { recursive: true, mode: 0o700 }).catch((e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? undefined : Promise.reject(e)));
    if (!(await lstat(root)).isDirectory()) throw new SharedLayerError(`${root} is not a folder (a link?): the layer archive folder must be a folder of its own`);
  };
  const file = (key: string, ext: 'tar' | 'json' | 'lock'): string => {
    if (!KEY.test(key)) throw new SharedLayerError(`${JSON.stringify(key.slice(0, 40))} is not an OS layer key`);
    return path.join(root, `${key}.${ext}`);
  };
  /** A regular file of the folder (never a link), or undefined when absent. */
  const regular = async (p: string): Promise<boolean> => {
    const s = await lstat(p).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
    if (s === undefined) return false;
    if (!s.isFile()) throw new SharedLayerError(`${p} is not a regular file: the layer archive folder holds nothing else`);
    return true;
  };
  const entry = async (key: string): Promise<{ sha256: string; meta: string } | undefined> => {
    const r = await lstat(root).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
    if (r === undefined) return undefined;
    if (!r.isDirectory()) throw new SharedLayerError(`${root} is not a folder (a link?): the layer archive folder must be a folder of its own`);
    if (!(await regular(file(key, 'json'))) || !(await regular(file(key, 'tar')))) return undefined;
    const text = await readFile(file(key, 'json'), { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW });
    let v: { sha256?: unknown } = {};
    try {
      v = JSON.parse(text) as { sha256?: unknown };
    } catch {
      // named below
    }
    if (typeof v.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(v.sha256)) throw new SharedLayerError(`the OS layer ${key.slice(0, 12)} in ${root} has a malformed meta file`);
    return { sha256: v.sha256, meta: text };
  };
  return {
    where: root,
    has: async (key) => (await entry(key)) !== undefined,
    async fetch(key, dest, signal) {
      const e = await entry(key);
      if (!e) return undefined;
      const src = await open(file(key, 'tar'), constants.O_RDONLY | constants.O_NOFOLLOW);
      await pipeline(createReadStream('', { fd: src }), createWriteStream(dest, { flags: 'wx', mode: 0o600 }), ...(signal ? [{ signal }] : []));
      const { sha256 } = await digestFile(dest, ['sha256'], signal ? { signal } : {});
      if (sha256 !== e.sha256) throw new SharedLayerError(`the OS layer ${key.slice(0, 12)} in ${root} is not the file that was stored: its sha256 is ${sha256}, not ${e.sha256}`);
      return parseSharedLayerMeta(e.meta, `${key.slice(0, 12)} in ${root}`);
    },
    async put(key, archive, meta, signal) {
      if (await entry(key)) return;
      await folder();
      const { sha256 } = await digestFile(archive, ['sha256'], signal ? { signal } : {});
      const tmp = path.join(root, `.${randomBytes(6).toString('hex')}.tmp`);
      try {
        await pipeline(createReadStream(archive), createWriteStream(tmp, { flags: 'wx', mode: 0o600 }), ...(signal ? [{ signal }] : []));
        await rename(tmp, file(key, 'tar'));
        // The meta last: a folder cut off half-way holds an archive without meta, which no one reads.
        await writeFile(tmp, JSON.stringify({ sha256, installed: meta.installed, sourceDateEpoch: meta.sourceDateEpoch }), { flag: 'wx', mode: 0o600 });
        await rename(tmp, file(key, 'json'));
      } finally {
        await rm(tmp, { force: true });
      }
    },
    async tryLock(key) {
      await folder();
      const lock = file(key, 'lock');
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await writeFile(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
          return () => rm(lock, { force: true });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        // A lock whose process is gone (a killed run) is taken over once.
        // Read without following a link or waiting on a FIFO: the folder comes from outside.
        const holder = Number(await readFile(lock, { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK }).catch(() => ''));
        if (Number.isSafeInteger(holder) && holder > 0 && alive(holder)) return undefined;
        await rm(lock, { force: true });
      }
      return undefined;
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
