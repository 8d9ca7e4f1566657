// The files of an image's root filesystem as disk/diff.ts compares them: walked with debugfs by inode
// number (type, mode, owner, size, times, extended attributes), contents dumped to files named by inode
// number and hashed; every tool confined to the raw bytes (read only) and the scratch folder, and the
// walk, the listings and the dumps bounded against a hostile filesystem.
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Digester } from '../../digest';
import { run } from '../../host/child';
import { confinedPrefix, type ConfineSpec } from '../../host/confine';
import { ImagingError } from '../errors';
import { imagingFault } from '../run';
import type { Fields } from './diff-report';

/** Bounds against a hostile filesystem: entries walked, directory depth, bytes of one file hashed. */
const MAX_ENTRIES = 1_000_000;
const MAX_DEPTH = 256;
const MAX_HASHED_BYTES = 4 * 1024 ** 3;
/** debugfs commands per run, and bytes of file contents dumped per run. */
const BATCH = 1000;
const DUMP_BATCH_BYTES = 512 * 1024 ** 2;

/** A confinement whose working folder is the diff's work folder (debugfs's relative names start there). */
export type Confined = ConfineSpec & { readonly cwd: string };

/** A tool that reads the image, confined (host/confine.ts): its whole stdout (bounded by the runner). */
export async function confined(command: string, args: readonly string[], confine: ConfineSpec, signal?: AbortSignal, input?: string): Promise<string> {
  return (await run({ command, args, within: confinedPrefix(confine), collect: true, signal, input }, imagingFault)).stdout;
}

interface Entry {
  readonly ino: number;
  readonly mode: number;
  readonly uid: string;
  readonly gid: string;
  readonly size: string;
}

const S_IFMT = 0o170000;
const TYPES: Readonly<Record<number, string>> = { 0o040000: 'directory', 0o100000: 'file', 0o120000: 'symlink', 0o020000: 'char device', 0o060000: 'block device', 0o010000: 'fifo', 0o140000: 'socket' };

/** Run debugfs commands in batches (bounded output each), read only. */
async function debugfs(device: string, commands: readonly string[], confine: ConfineSpec, signal?: AbortSignal): Promise<string[]> {
  const outs: string[] = [];
  for (let i = 0; i < commands.length; i += BATCH) {
    outs.push(await confined('debugfs', ['-f', '-', device], confine, signal, commands.slice(i, i + BATCH).join('\n') + '\n'));
  }
  return outs;
}

/** `ls -p` lines: `/INODE/MODE/UID/GID/NAME/SIZE/` (SIZE empty for a directory); a name may hold `/`. */
export function parseListing(out: string): Map<number, [string, Entry][]> {
  const dirs = new Map<number, [string, Entry][]>();
  let current: [string, Entry][] | undefined;
  for (const line of out.split('\n')) {
    const cmd = /^debugfs: ls -p <(\d+)>$/.exec(line);
    if (cmd) {
      current = [];
      dirs.set(Number(cmd[1]), current);
      continue;
    }
    const m = /^\/(\d+)\/([0-7]+)\/(\d+)\/(\d+)\/(.*)\/(\d*)\/$/.exec(line);
    if (!m || !current) continue;
    const name = m[5]!;
    if (name === '.' || name === '..' || name === '') continue;
    current.push([name, { ino: Number(m[1]), mode: parseInt(m[2]!, 8), uid: m[3]!, gid: m[4]!, size: m[6]! }]);
  }
  return dirs;
}

export async function filesOf(device: string, scratch: string, confine: Confined, signal?: AbortSignal): Promise<Map<string, Fields>> {
  const cwd = confine.cwd;
  const files = new Map<string, Fields>();
  const inodes = new Map<number, Entry>();
  const seenDirs = new Set<number>([2]);
  let level: { ino: number; path: string }[] = [{ ino: 2, path: '' }];
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > MAX_DEPTH) throw new ImagingError('input', `the filesystem nests directories deeper than ${MAX_DEPTH}`);
    const listed = new Map<number, [string, Entry][]>();
    for (const out of await debugfs(device, level.map((d) => `ls -p <${d.ino}>`), confine, signal)) {
      for (const [ino, entries] of parseListing(out)) listed.set(ino, entries);
    }
    const next: { ino: number; path: string }[] = [];
    for (const dir of level) {
      for (const [name, e] of listed.get(dir.ino) ?? []) {
        const path = `${dir.path}/${name}`;
        if (files.size >= MAX_ENTRIES) throw new ImagingError('input', `the filesystem has more than ${MAX_ENTRIES} entries`);
        const type = TYPES[e.mode & S_IFMT] ?? `type ${(e.mode & S_IFMT).toString(8)}`;
        const f: Fields = new Map([['type', type], ['mode', (e.mode & 0o7777).toString(8).padStart(4, '0')], ['owner', `${e.uid}:${e.gid}`], ['inode', String(e.ino)]]);
        if (type !== 'directory') f.set('size', e.size);
        files.set(path, f);
        inodes.set(e.ino, e);
        if (type === 'directory' && !seenDirs.has(e.ino)) {
          seenDirs.add(e.ino);
          next.push({ ino: e.ino, path });
        }
      }
    }
    level = next;
  }
  const stats = await inodeStats([...inodes.keys()], device, confine, signal);
  // Named relative to `cwd` (the work folder): debugfs splits its commands at spaces.
  const contents = await contentDigests([...inodes.values()], stats, device, join(relative(cwd, scratch), 'dump'), confine, signal);
  for (const f of files.values()) {
    const ino = Number(f.get('inode'));
    // Inode numbers are the layout's business: what a file holds and says is compared, not where it sits.
    f.delete('inode');
    for (const [k, v] of stats.get(ino) ?? []) if (k !== 'fast link') f.set(k, v);
    const content = contents.get(ino);
    if (content !== undefined) f.set(f.get('type') === 'symlink' ? 'target sha256' : 'sha256', content);
    const fast = stats.get(ino)?.get('fast link');
    if (fast !== undefined) f.set('target', fast);
  }
  return files;
}

/** `0xSECONDS:EXTRA` of debugfs as ISO time: the extra field holds 2 epoch bits and the nanoseconds. */
export function inodeTime(hex: string): string {
  const [lo, extra] = hex.split(':').map((x) => parseInt(x.replace(/^0x/, ''), 16));
  const seconds = (lo ?? 0) + ((extra ?? 0) & 3) * 2 ** 32;
  const ns = (extra ?? 0) >>> 2;
  const iso = new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
  return ns === 0 ? iso : iso.replace('Z', `.${String(ns).padStart(9, '0')}Z`);
}

/** `stat` of each inode: times, links, flags, device numbers, extended attributes, a fast link's target. */
export function parseStats(out: string): Map<number, Fields> {
  const all = new Map<number, Fields>();
  let f: Fields | undefined;
  let xattrs: string[] | undefined;
  for (const line of out.split('\n')) {
    const ino = /^Inode: (\d+)\s+Type: \S+\s+Mode:\s+\d+\s+Flags: (0x[0-9a-f]+)/.exec(line);
    if (ino) {
      f = new Map([['flags', ino[2]!]]);
      xattrs = undefined;
      all.set(Number(ino[1]), f);
      continue;
    }
    if (!f) continue;
    if (xattrs && /^ {2}\S/.test(line)) {
      xattrs.push(line.trim());
      f.set('xattrs', xattrs.join('; '));
      continue;
    }
    xattrs = undefined;
    const time = /^\s*(ctime|atime|mtime|crtime): (0x[0-9a-f]+(?::[0-9a-f]+)?)/.exec(line);
    if (time) f.set(time[1]!, inodeTime(time[2]!));
    const links = /^Links: (\d+)/.exec(line);
    if (links) f.set('links', links[1]!);
    const dev = /^Device major\/minor number: (\S+)/.exec(line);
    if (dev) f.set('device', dev[1]!);
    const fast = /^Fast link dest: "(.*)"$/.exec(line);
    if (fast) f.set('fast link', fast[1]!);
    if (/^Extended attributes:/.test(line)) xattrs = [];
  }
  return all;
}

async function inodeStats(inodes: readonly number[], device: string, confine: ConfineSpec, signal?: AbortSignal): Promise<Map<number, Fields>> {
  const all = new Map<number, Fields>();
  for (const out of await debugfs(device, inodes.map((n) => `stat <${n}>`), confine, signal)) for (const [k, v] of parseStats(out)) all.set(k, v);
  return all;
}

/** sha256 of each regular file and slow symlink: dumped by debugfs to files named by inode number, hashed, removed. */
async function contentDigests(entries: readonly Entry[], stats: Map<number, Fields>, device: string, dumps: string, confine: Confined, signal?: AbortSignal): Promise<Map<number, string>> {
  const cwd = confine.cwd;
  const out = new Map<number, string>();
  const todo = entries.filter((e) => {
    const t = e.mode & S_IFMT;
    return (t === 0o100000 || (t === 0o120000 && !stats.get(e.ino)?.has('fast link'))) && Number(e.size) <= MAX_HASHED_BYTES;
  });
  for (const e of entries) if ((e.mode & S_IFMT) === 0o100000 && Number(e.size) > MAX_HASHED_BYTES) out.set(e.ino, `not hashed (over ${MAX_HASHED_BYTES} bytes)`);
  let batch: Entry[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await debugfs(device, batch.map((e) => `dump <${e.ino}> ${join(dumps, String(e.ino))}`), confine, signal);
    for (const e of batch) {
      const d = new Digester(['sha256']);
      try {
        for await (const chunk of createReadStream(join(cwd, dumps, String(e.ino)))) d.update(chunk as Buffer);
        out.set(e.ino, d.digests().sha256);
      } catch {
        out.set(e.ino, 'unreadable');
      }
      // The confined debugfs ran as this process's own user (root without capabilities, or the user itself).
      await rm(join(cwd, dumps, String(e.ino)), { force: true });
    }
    batch = [];
    bytes = 0;
  };
  for (const e of todo) {
    batch.push(e);
    bytes += Number(e.size);
    if (batch.length >= BATCH || bytes >= DUMP_BATCH_BYTES) await flush();
  }
  await flush();
  return out;
}
