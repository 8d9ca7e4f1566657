// The direct-kernel path of a boot check: the image's kernel, initramfs and kernel command line, read
// out of its root filesystem, so QEMU starts the kernel itself (`-kernel/-initrd/-append`) with no
// firmware or boot loader wait. The image is hostile input, and its virtual disk is never materialised:
// - a raw image is read where it is (sfdisk, then debugfs at the root partition's offset);
// - of any other format, QEMU (qemu-img, qemu-img.ts) copies out the first and last MiB of the virtual
//   disk, where the partition table and its GPT backup are, into a sparse file of the disk's size for
//   sfdisk; then the root partition alone, once `qemu-img map` has said it holds no more data than
//   the bound (DATA_RATIO times the image file's size, at least DATA_FLOOR_BYTES), for debugfs.
// Every program that reads the image runs confined to it (read only) and this private folder
// (host/confine.ts); link targets and sizes are checked before anything is copied out, and the folder
// is removed by the caller.
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run, type ChildFault } from '../../host/child';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import { confinedPrefix, type ConfineSpec } from '../../host/confine';
import { RULES } from '../../model/field-rules';
import { BASE_KERNEL_PARAMS } from '../disk/bootdisk';
import { BootCheckError } from './errors';
import type { CheckedImage } from './image';
import { copyRange, DATA_FLOOR_BYTES, DATA_RATIO, dataBytes, dataLimit, type DiskRange } from './qemu-img';

export interface BootFiles {
  readonly kernel: string;
  readonly initrd: string;
  /** The kernel command line: the image's own (from its grub.cfg) when every word is plain, else the base one. */
  readonly append: string;
  /** The folder holding the kernel and initramfs (QEMU's confinement binds it, read only). */
  readonly dir: string;
  /** Removes the private folder (the copies, kernel and initramfs). */
  dispose(): Promise<void>;
}

/** Larger files are refused: no Debian kernel or initramfs comes near. */
export const MAX_KERNEL_BYTES = 128 * 1024 * 1024;
export const MAX_INITRD_BYTES = 512 * 1024 * 1024;
const MAX_GRUB_CFG_BYTES = 64 * 1024;
/** The bytes at each end of the virtual disk copied for sfdisk: an MBR, or a GPT (primary, and the backup at the end). */
const TABLE_BYTES = 1024 * 1024;
const MAX_LINK_HOPS = 8;
const GRUB_CFG = '/boot/grub/grub.cfg';
/** What a link target may look like before it reaches a debugfs request (no quotes, spaces or escapes). */
const PLAIN_PATH = /^[A-Za-z0-9._+/-]{1,255}$/;
/** Partition types of a Linux root: MBR 0x83; GPT Linux filesystem data and the platform's root. */
const ROOT_TYPES = new Set(['83', '0FC63DAF-8483-4772-8E79-3D69D8477DE4', DEFAULT_PLATFORM.rootPartitionType]);

function fault(f: ChildFault): BootCheckError {
  return new BootCheckError(f.kind === 'missing' ? 'missing-tool' : 'input', `reading the image's kernel: ${f.message}`);
}

async function tool(command: string, args: readonly string[], confine: ConfineSpec, signal?: AbortSignal, input?: string): Promise<string> {
  const r = await run({ command, args, within: confinedPrefix(confine), collect: true, signal, input }, fault);
  return r.stdout;
}

/**
 * What `debugfs -f -` printed for each of `requests`, in order: it echoes each as `debugfs: REQUEST`
 * before its output. Only the last request's output may hold such a line of its own (a file's `cat`).
 */
export function debugfsSections(out: string, requests: readonly string[]): string[] {
  const sections: string[][] = [];
  for (const line of out.split('\n')) {
    if (sections.length < requests.length && line === `debugfs: ${requests[sections.length]}`) sections.push([]);
    else sections[sections.length - 1]?.push(line);
  }
  const texts = sections.map((lines) => lines.join('\n'));
  // A request debugfs did not echo (it stopped): its output is empty.
  while (texts.length < requests.length) texts.push('');
  return texts;
}

interface SfdiskJson {
  partitiontable?: { sectorsize?: number; partitions?: Array<{ start?: number; size?: number; type?: string }> };
}

/** Byte offset of the root partition: the last one of a Linux type (the hybrid disk's root is last). */
export function rootPartitionOffset(json: string): number {
  return rootPartition(json).offset;
}

/** The root partition's bytes on the disk: the last partition of a Linux type (the hybrid disk's root is last). */
export function rootPartition(json: string): DiskRange {
  let parsed: SfdiskJson;
  try {
    parsed = JSON.parse(json) as SfdiskJson;
  } catch {
    throw new BootCheckError('input', 'the image has no partition table sfdisk can read');
  }
  const table = parsed.partitiontable;
  const sector = table?.sectorsize ?? 512;
  const roots = (table?.partitions ?? []).filter((p) => ROOT_TYPES.has((p.type ?? '').toUpperCase()));
  const root = roots[roots.length - 1];
  if (root?.start === undefined || !Number.isSafeInteger(root.start) || root.start <= 0) {
    throw new BootCheckError('input', 'the image has no Linux root partition (MBR type 83 or a GPT Linux type)');
  }
  const size = root.size ?? 0;
  if (!Number.isSafeInteger(size) || size <= 0 || !Number.isSafeInteger(sector) || sector <= 0 || !Number.isSafeInteger((root.start + size) * sector)) {
    throw new BootCheckError('input', 'the image\'s root partition has no size sfdisk can read');
  }
  return { offset: root.start * sector, length: size * sector };
}

interface Stat {
  readonly type: string;
  readonly size: number;
  readonly link?: string | undefined;
}

/** debugfs `stat` of one path (type, size, a fast link's target); undefined when the path does not exist. */
export function parseDebugfsStat(out: string): Stat | undefined {
  const type = /Type: (\w+)/.exec(out)?.[1];
  if (type === undefined) return undefined;
  const size = Number(/\bSize: (\d+)/.exec(out)?.[1] ?? NaN);
  const link = /Fast link dest: "([^"]*)"/.exec(out)?.[1];
  return { type, size, link };
}

/** `dir/target` inside the filesystem, `..` resolved at the root as a kernel does (never above it). */
export function resolveLink(from: string, target: string): string {
  return path.posix.resolve(target.startsWith('/') ? '/' : path.posix.dirname(from), target);
}

/** The words after the kernel path of grub.cfg's first `linux` line, if every one is a plain kernel word. */
export function commandLineOf(grubCfg: string): string | undefined {
  const line = /^\s*linux\s+(\S+)((?:[ \t]+\S+)*)\s*$/m.exec(grubCfg);
  if (!line) return undefined;
  const words = (line[2] ?? '').trim().split(/\s+/).filter(Boolean);
  return words.length > 0 && words.every((w) => RULES.kernelWord.test(w)) ? words.join(' ') : undefined;
}

/**
 * Copies the kernel and initramfs of `image` (checked by inspectImage) into a new private folder,
 * writing at most 2 MiB and the bound of data (qemu-img.ts's dataLimit) besides them.
 */
export async function extractBootFiles(image: CheckedImage, signal?: AbortSignal): Promise<BootFiles> {
  const dir = await mkdtemp(path.join(tmpdir(), 'af-boot-'));
  const dispose = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const root = path.join(dir, 'root');
    const files = path.join(dir, 'files');
    await mkdir(root);
    await mkdir(files);
    const confine: ConfineSpec = { root, paths: [{ path: image.path }, { path: files, writable: true }], cwd: files };
    // debugfs and sfdisk are given names of ours: nothing in the image's path is read as an option.
    await symlink(image.path, path.join(files, 'disk'));
    const device = await rootDevice(image, files, confine, signal);
    // The requests of each step in one run of debugfs (each run is a confinement of its own).
    const debugfs = async (requests: readonly string[]): Promise<string[]> =>
      debugfsSections(await tool('debugfs', ['-f', '-', device], confine, signal, `${requests.join('\n')}\n`), requests);

    // The kernel's and initramfs's links followed, both a hop per run; grub.cfg looked at in the first.
    const wanted = [
      { what: 'kernel', start: '/vmlinuz', max: MAX_KERNEL_BYTES, at: '/vmlinuz', found: false },
      { what: 'initramfs', start: '/initrd.img', max: MAX_INITRD_BYTES, at: '/initrd.img', found: false },
    ];
    let cfg: Stat | undefined;
    for (let hop = 0; wanted.some((w) => !w.found); hop++) {
      const pending = wanted.filter((w) => !w.found);
      for (const w of pending) if (hop > MAX_LINK_HOPS) throw new BootCheckError('input', `the image's ${w.what} ${w.start} is a chain of more than ${MAX_LINK_HOPS} links`);
      const requests = [...pending.map((w) => `stat ${w.at}`), ...(hop === 0 ? [`stat ${GRUB_CFG}`] : [])];
      const outs = await debugfs(requests);
      if (hop === 0) cfg = parseDebugfsStat(outs[pending.length] ?? '');
      pending.forEach((w, i) => {
        const st = parseDebugfsStat(outs[i] ?? '');
        if (!st) throw new BootCheckError('input', `the image has no ${w.what} (${w.start})`);
        if (st.type === 'regular') {
          if (!(st.size > 0 && st.size <= w.max)) throw new BootCheckError('input', `the image's ${w.what} ${w.at} is ${st.size} bytes (at most ${w.max})`);
          w.found = true;
        } else if (st.type !== 'symlink' || st.link === undefined || !PLAIN_PATH.test(st.link)) {
          throw new BootCheckError('input', `the image's ${w.what} ${w.at} is not a regular file or a plain link`);
        } else {
          w.at = resolveLink(w.at, st.link);
        }
      });
    }
    const [kernelFile, initrdFile] = wanted;
    const readCfg = cfg?.type === 'regular' && cfg.size <= MAX_GRUB_CFG_BYTES;
    const outs = await debugfs([`dump ${kernelFile!.at} vmlinuz`, `dump ${initrdFile!.at} initrd.img`, ...(readCfg ? [`cat ${GRUB_CFG}`] : [])]);
    const append = (readCfg ? commandLineOf(outs[2] ?? '') : undefined) ?? BASE_KERNEL_PARAMS.join(' ');
    for (const copy of ['disk', 'table.raw', 'root.raw']) await rm(path.join(files, copy), { force: true });
    const kernel = path.join(files, 'vmlinuz');
    const initrd = path.join(files, 'initrd.img');
    await checkSize(kernel, MAX_KERNEL_BYTES);
    await checkSize(initrd, MAX_INITRD_BYTES);
    return { kernel, initrd, append, dir: files, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/**
 * The device debugfs reads the root filesystem from: a raw image in place (`disk?offset=N`), any other
 * format's root partition copied out by QEMU once its data is known to be within the bound.
 */
async function rootDevice(image: CheckedImage, files: string, confine: ConfineSpec, signal?: AbortSignal): Promise<string> {
  if (image.format === 'raw') {
    return `disk?offset=${rootPartition(await tool('sfdisk', ['--json', 'disk'], confine, signal)).offset}`;
  }
  const size = image.virtualSize;
  const table = path.join(files, 'table.raw');
  const head = Math.min(TABLE_BYTES, size);
  await copyRange(image.path, image.format, { offset: 0, length: head }, table, confine, signal);
  if (size > head) {
    const at = Math.max(head, size - TABLE_BYTES);
    const tail = path.join(files, 'tail.raw');
    await copyRange(image.path, image.format, { offset: at, length: size - at }, tail, confine, signal);
    const bytes = await readFile(tail);
    await rm(tail);
    // The table's copy is a sparse file of the disk's size: its two ends written, nothing between.
    const fh = await open(table, 'r+');
    try {
      await fh.write(bytes, 0, bytes.length, at);
    } catch (e) {
      throw new BootCheckError('input', `the image's virtual disk (${size} bytes) is larger than a file can be here: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      await fh.close();
    }
  }
  const part = rootPartition(await tool('sfdisk', ['--json', 'table.raw'], confine, signal));
  await rm(table);
  if (part.offset + part.length > size) throw new BootCheckError('input', `the image's root partition ends past its virtual disk (byte ${part.offset + part.length} of ${size})`);
  const limit = dataLimit(image.fileSize);
  const data = await dataBytes(image.path, image.format, part, limit, confine, signal);
  if (data === undefined) {
    throw new BootCheckError('input', `${image.name}: its root partition holds more than ${limit} bytes of data (QEMU's map of it), more than the direct-kernel path copies out of a ${image.fileSize}-byte image file (its size times ${DATA_RATIO}, at least ${DATA_FLOOR_BYTES}); boot it without --direct-kernel`);
  }
  await copyRange(image.path, image.format, part, path.join(files, 'root.raw'), confine, signal);
  return 'root.raw';
}

/** The dumped file is what stat announced: a regular file of at most `max` bytes (no link planted in its place). */
async function checkSize(file: string, max: number): Promise<void> {
  const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!fh) throw new BootCheckError('input', `debugfs wrote no ${path.basename(file)}`);
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size === 0 || st.size > max) throw new BootCheckError('input', `${path.basename(file)} read from the image is not a file of at most ${max} bytes`);
  } finally {
    await fh.close();
  }
}
