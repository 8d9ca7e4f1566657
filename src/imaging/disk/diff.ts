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
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfineSpec } from '../../host/confine';
import { BootCheckError } from '../boot/errors';
import { inspectImage, type CheckedImage } from '../boot/image';
import { copyRange, DATA_FLOOR_BYTES, DATA_RATIO, dataBytes, dataLimit } from '../boot/qemu-img';
import { ImagingError } from '../errors';
import { confined, filesOf, type Confined } from './diff-files';
import { compareFields, compareFiles, type DiffOptions, type Fields, type ImageDiff } from './diff-report';

export type { Difference, DiffOptions, ImageDiff } from './diff-report';
export { diffText, shownValue } from './diff-report';

interface ImageView {
  readonly table: Fields;
  readonly superblock: Fields;
  readonly files: Map<string, Fields>;
}

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
