// What differs between two disk images (docs/images.md "Reproducible images"): every file of the root
// filesystem (type, mode, owner, size, sha256 or link target, times, extended attributes; read with
// debugfs by inode number), then the metadata: the partition table (sfdisk --json) and the root
// filesystem's superblock (dumpe2fs -h). The images are hostile input: they must be self-contained (the boot
// check's rules: QEMU's own reading, boot/image.ts); qemu-img runs confined to the image and the
// scratch folder (host/confine.ts) and copies a non-raw image's virtual disk only once its map says it
// holds no more data than the bound (boot/qemu-img.ts's dataLimit); sfdisk, dumpe2fs and debugfs are
// confined the same way, to the raw bytes (read only) and the scratch folder, so whatever a hostile
// filesystem makes them do, they can open no other file of the host; names from the image never become host
// paths (contents are dumped to files named by inode number), and the walk, the listings and the report are
// bounded.
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Digester } from '../../digest';
import { run } from '../../host/child';
import { confinedPrefix, type ConfineSpec } from '../../host/confine';
import { hasControl } from '../../model/text-rules';
import { BootCheckError } from '../boot/errors';
import { inspectImage, type CheckedImage } from '../boot/image';
import { copyRange, DATA_FLOOR_BYTES, DATA_RATIO, dataBytes, dataLimit } from '../boot/qemu-img';
import { ImagingError } from '../errors';
import { imagingFault } from '../run';

/** One field that differs; `null`: absent on that side (a file only in one image). */
export interface Difference {
  /**
   * `file`: a path added or removed, or a file's type, mode, owner, size, contents, times or attributes;
   * `metadata`: the partition table's and the filesystem's own fields (UUIDs, free blocks, hash seed, ...).
   */
  readonly kind: 'file' | 'metadata';
  readonly section: 'partition table' | 'superblock' | 'files';
  /** The field, or `PATH: field` for a file. */
  readonly name: string;
  readonly a: string | null;
  readonly b: string | null;
}

export interface ImageDiff {
  /** No differences (with `filesOnly`: no file differences). */
  readonly identical: boolean;
  /** Only file differences were compared (`diff --files`). */
  readonly filesOnly: boolean;
  /** The first differences, in order: files by path, then the metadata (partition table, superblock). */
  readonly differences: readonly Difference[];
  /** How many more were found and not listed. */
  readonly more: number;
  /** How many differences of each kind were found, listed or not (metadata 0 with `filesOnly`). */
  readonly counts: { readonly files: number; readonly metadata: number };
  readonly files: { readonly a: number; readonly b: number };
}

export interface DiffOptions {
  readonly signal?: AbortSignal | undefined;
  /** Differences listed (default 20). */
  readonly max?: number | undefined;
  /** Only the files' differences, none of the partition table's or the filesystem's own fields. */
  readonly filesOnly?: boolean | undefined;
  /** Scratch folder parent (default the OS temp folder); a raw copy of a non-raw image goes there. */
  readonly workDir?: string | undefined;
}

type Fields = Map<string, string>;

interface ImageView {
  readonly table: Fields;
  readonly superblock: Fields;
  readonly files: Map<string, Fields>;
}

/** Bounds against a hostile filesystem: entries walked, directory depth, bytes of one file hashed. */
const MAX_ENTRIES = 1_000_000;
const MAX_DEPTH = 256;
const MAX_HASHED_BYTES = 4 * 1024 ** 3;
/** debugfs commands per run, and bytes of file contents dumped per run. */
const BATCH = 1000;
const DUMP_BATCH_BYTES = 512 * 1024 ** 2;
const MAX_SHOWN = 200;

export async function diffImages(imageA: string, imageB: string, o: DiffOptions = {}): Promise<ImageDiff> {
  const work = await mkdtemp(join(o.workDir ?? tmpdir(), 'af-diff-'));
  try {
    const scratch = await mkdtemp(join(work, 's-'));
    await mkdir(join(scratch, 'dump'));
    const a = await readImage(imageA, 'a', work, scratch, o.signal);
    const b = await readImage(imageB, 'b', work, scratch, o.signal);
    // What the files hold first; the layout's noise (ids, free counts, hash seed) after it.
    const files = compareFiles(a.files, b.files);
    const metadata = o.filesOnly ? [] : [...compareFields('partition table', '', a.table, b.table), ...compareFields('superblock', '', a.superblock, b.superblock)];
    const all = [...files, ...metadata];
    const max = o.max ?? 20;
    return {
      identical: all.length === 0,
      filesOnly: o.filesOnly === true,
      differences: all.slice(0, max),
      more: Math.max(0, all.length - max),
      counts: { files: files.length, metadata: metadata.length },
      files: { a: a.files.size, b: b.files.size },
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A value as printed: bounded, control characters escaped. */
export function shownValue(v: string | null): string {
  if (v === null) return '(absent)';
  const s = hasControl(v) ? JSON.stringify(v) : v;
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}…` : s;
}

const plural = (n: number): string => `${n} difference${n === 1 ? '' : 's'}`;

/**
 * The report a person reads: the file differences (one line each), then the metadata's under a heading
 * of their own, or `identical`.
 */
export function diffText(d: ImageDiff): string {
  if (d.identical) return d.filesOnly ? `no file differences (${d.files.a} files)\n` : `identical (${d.files.a} files)\n`;
  const line = (x: Difference): string => `  ${x.kind === 'file' ? '' : `${x.section}: `}${shownValue(x.name)}: ${shownValue(x.a)} ≠ ${shownValue(x.b)}`;
  const lines: string[] = [];
  const listed = { file: d.differences.filter((x) => x.kind === 'file'), metadata: d.differences.filter((x) => x.kind === 'metadata') };
  if (d.counts.files > 0) lines.push(`files (${plural(d.counts.files)}):`, ...listed.file.map(line));
  if (d.counts.metadata > 0) lines.push(`partition table and filesystem metadata (${plural(d.counts.metadata)}):`, ...listed.metadata.map(line));
  if (d.more > 0) lines.push(`… and ${d.more} more difference${d.more === 1 ? '' : 's'} (--max)`);
  return `${lines.join('\n')}\n`;
}

function compareFields(section: Difference['section'], prefix: string, a: Fields, b: Fields): Difference[] {
  const out: Difference[] = [];
  const kind = section === 'files' ? 'file' : 'metadata';
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(k) ?? null;
    const y = b.get(k) ?? null;
    if (x !== y) out.push({ kind, section, name: `${prefix}${k}`, a: x, b: y });
  }
  return out;
}

function compareFiles(a: Map<string, Fields>, b: Map<string, Fields>): Difference[] {
  const out: Difference[] = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(path);
    const y = b.get(path);
    if (!x || !y) out.push({ kind: 'file', section: 'files', name: path, a: x ? 'present' : null, b: y ? 'present' : null });
    else out.push(...compareFields('files', `${path}: `, x, y));
  }
  return out;
}

/** The boot check's error as diff's: a refused image is 'input', a missing tool or confinement a 'prerequisite'. */
function asImagingError(e: unknown): unknown {
  if (!(e instanceof BootCheckError)) return e;
  return new ImagingError(e.kind === 'input' ? 'input' : e.kind === 'qemu' ? 'tool' : 'prerequisite', e.message, e);
}

/**
 * A raw copy of a non-raw image's whole virtual disk in `scratch`, by qemu-img confined to the image
 * and `scratch`, once QEMU's map has said it holds at most dataLimit bytes of data (zeros are holes).
 */
async function rawCopy(image: CheckedImage, side: string, root: string, scratch: string, signal?: AbortSignal): Promise<string> {
  const confine = { root, paths: [{ path: image.path }, { path: scratch, writable: true }], cwd: scratch };
  const disk = { offset: 0, length: image.virtualSize };
  const limit = dataLimit(image.fileSize);
  if ((await dataBytes(image.path, image.format, disk, limit, confine, signal)) === undefined) {
    throw new ImagingError('input', `${image.name}: its virtual disk holds more than ${limit} bytes of data (QEMU's map of it), more than diff copies out of a ${image.fileSize}-byte image file (its size times ${DATA_RATIO}, at least ${DATA_FLOOR_BYTES})`);
  }
  const raw = join(scratch, `${side}.raw`);
  await copyRange(image.path, image.format, disk, raw, confine, signal);
  return raw;
}

/** The image as raw bytes (converted when needed), then its table, superblock and files. */
async function readImage(image: string, side: string, work: string, scratch: string, signal?: AbortSignal): Promise<ImageView> {
  // The confinement's new root: an empty folder of ours, each confined run mounts its own tmpfs over it.
  const root = join(work, `root-${side}`);
  await mkdir(root);
  let raw: string;
  try {
    const checked = await inspectImage(image, undefined, signal);
    raw = checked.format === 'raw' ? checked.path : await rawCopy(checked, side, root, scratch, signal);
  } catch (e) {
    throw asImagingError(e);
  }
  // e2fsprogs reads `NAME?offset=N`: a link of our own name, so nothing in the image's path is read as an option.
  await symlink(raw, join(work, side));
  const confine: Confined = { root, paths: [{ path: work }, { path: raw }, { path: scratch, writable: true }], cwd: work };
  const { table, offset } = await partitionTable(side, confine, signal);
  const device = `${side}?offset=${offset}`;
  const superblock = await superblockOf(device, confine, signal);
  if (superblock === undefined) throw new ImagingError('input', `${image}: no ext2/3/4 filesystem at byte ${offset}`);
  const files = await filesOf(device, scratch, confine, signal);
  return { table, superblock, files };
}

interface SfdiskPartition {
  readonly start: number;
  readonly size: number;
  readonly type: string;
  readonly uuid?: string;
  readonly name?: string;
  readonly attrs?: string;
  readonly bootable?: boolean;
}

/** Table fields (partitions by index, never by device name) and the byte offset of the root filesystem. */
/** A confinement whose working folder is the diff's work folder (debugfs's relative names start there). */
type Confined = ConfineSpec & { readonly cwd: string };

/** A tool that reads the image, confined (host/confine.ts): its whole stdout (bounded by the runner). */
async function confined(command: string, args: readonly string[], confine: ConfineSpec, signal?: AbortSignal, input?: string): Promise<string> {
  return (await run({ command, args, within: confinedPrefix(confine), collect: true, signal, input }, imagingFault)).stdout;
}

async function partitionTable(device: string, confine: ConfineSpec, signal?: AbortSignal): Promise<{ table: Fields; offset: number }> {
  const table: Fields = new Map();
  let parsed: { partitiontable?: { label?: string; id?: string; firstlba?: number; lastlba?: number; sectorsize?: number; partitions?: SfdiskPartition[] } };
  try {
    parsed = JSON.parse(await confined('sfdisk', ['--json', '--', device], confine, signal)) as typeof parsed;
  } catch {
    table.set('label', 'none');
    return { table, offset: 0 };
  }
  const t = parsed.partitiontable ?? {};
  for (const k of ['label', 'id', 'firstlba', 'lastlba'] as const) if (t[k] !== undefined) table.set(k, String(t[k]));
  const parts = (t.partitions ?? []).slice(0, 128);
  parts.forEach((p, i) => {
    for (const k of ['start', 'size', 'type', 'uuid', 'name', 'attrs', 'bootable'] as const) if (p[k] !== undefined) table.set(`partition ${i + 1} ${k}`, String(p[k]));
  });
  const sector = t.sectorsize ?? 512;
  // The root filesystem: the partition labelled `root`, else the last ext one.
  let offset: number | undefined;
  for (const p of parts) {
    const at = p.start * sector;
    const sb = await superblockOf(`${device}?offset=${at}`, confine, signal);
    if (sb === undefined) continue;
    offset = at;
    if (sb.get('Filesystem volume name') === 'root') break;
  }
  return { table, offset: offset ?? 0 };
}

/** dumpe2fs -h as `field → value`; undefined when there is no ext filesystem there. */
async function superblockOf(device: string, confine: ConfineSpec, signal?: AbortSignal): Promise<Fields | undefined> {
  let out: string;
  try {
    out = await confined('dumpe2fs', ['-h', device], confine, signal);
  } catch {
    return undefined;
  }
  const fields: Fields = new Map();
  for (const line of out.split('\n')) {
    const m = /^([A-Za-z][^:]{0,60}):\s*(.*)$/.exec(line);
    if (m && !fields.has(m[1]!)) fields.set(m[1]!, m[2]!.trim());
  }
  return fields.size > 0 ? fields : undefined;
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

async function filesOf(device: string, scratch: string, confine: Confined, signal?: AbortSignal): Promise<Map<string, Fields>> {
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
