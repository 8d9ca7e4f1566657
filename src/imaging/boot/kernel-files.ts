// The direct-kernel path of a boot check: the image's kernel, initramfs and kernel command line, read
// out of its root filesystem, so QEMU starts the kernel itself (`-kernel/-initrd/-append`) with no
// firmware or boot loader wait. The image is hostile input: qemu-img (which QEMU's own reading of the
// image matches) makes a raw copy in a private folder; sfdisk and debugfs read that copy as root of the
// build's user namespace where there is one; link targets and sizes are checked before anything is
// copied out, and the folder is removed by the caller.
import { constants } from 'node:fs';
import { chmod, lchown, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run, type ChildFault } from '../../host/child';
import { currentSandbox, hostId, sandboxPrefix, type Sandbox } from '../../host/sandbox';
import { RULES } from '../../model/field-rules';
import { BASE_KERNEL_PARAMS } from '../bootdisk';
import { BootCheckError } from './errors';
import { QEMU_FORMAT, type ImageFormat } from './image';

export interface BootFiles {
  readonly kernel: string;
  readonly initrd: string;
  /** The kernel command line: the image's own (from its grub.cfg) when every word is plain, else the base one. */
  readonly append: string;
  /** Removes the private folder (the raw copy, kernel and initramfs). */
  dispose(): Promise<void>;
}

/** Larger files are refused: no Debian kernel or initramfs comes near. */
export const MAX_KERNEL_BYTES = 128 * 1024 * 1024;
export const MAX_INITRD_BYTES = 512 * 1024 * 1024;
const MAX_GRUB_CFG_BYTES = 64 * 1024;
const MAX_LINK_HOPS = 8;
/** What a link target may look like before it reaches a debugfs request (no quotes, spaces or escapes). */
const PLAIN_PATH = /^[A-Za-z0-9._+/-]{1,255}$/;
/** Partition types of a Linux root: MBR 0x83; GPT Linux filesystem data and x86-64 root. */
const ROOT_TYPES = new Set(['83', '0FC63DAF-8483-4772-8E79-3D69D8477DE4', '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709']);

function fault(f: ChildFault): BootCheckError {
  return new BootCheckError(f.kind === 'missing' ? 'missing-tool' : 'input', `reading the image's kernel: ${f.message}`);
}

async function tool(command: string, args: readonly string[], cwd: string, sandbox: Sandbox | undefined, signal?: AbortSignal): Promise<string> {
  const r = await run({ command, args, cwd, within: sandboxPrefix(sandbox), collect: true, signal }, fault);
  return r.stdout;
}

interface SfdiskJson {
  partitiontable?: { sectorsize?: number; partitions?: Array<{ start?: number; size?: number; type?: string }> };
}

/** Byte offset of the root partition: the last one of a Linux type (the hybrid disk's root is last). */
export function rootPartitionOffset(json: string): number {
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
  return root.start * sector;
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

/** Copies the kernel and initramfs of `image` into a new private folder. */
export async function extractBootFiles(image: string, format: ImageFormat, signal?: AbortSignal): Promise<BootFiles> {
  const dir = await mkdtemp(path.join(tmpdir(), 'af-boot-'));
  const dispose = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const sandbox = currentSandbox();
    const inner = sandbox.kind === 'userns' ? sandbox : undefined;
    // debugfs writes the files it dumps as the namespace's root.
    if (inner) await lchown(dir, hostId(inner, 0, 'uid'), hostId(inner, 0, 'gid'));
    await chmod(dir, 0o700);
    const blockdev = { driver: QEMU_FORMAT[format], ...(format === 'raw' ? {} : { backing: null }), file: { driver: 'file', filename: path.resolve(image) } };
    await tool('qemu-img', ['convert', '-O', 'raw', `json:${JSON.stringify(blockdev)}`, 'disk.raw'], dir, undefined, signal);
    if (inner) await lchown(path.join(dir, 'disk.raw'), hostId(inner, 0, 'uid'), hostId(inner, 0, 'gid'));
    const offset = rootPartitionOffset(await tool('sfdisk', ['--json', 'disk.raw'], dir, inner, signal));
    const device = `disk.raw?offset=${offset}`;
    const debugfs = (request: string): Promise<string> => tool('debugfs', ['-R', request, device], dir, inner, signal);

    const regular = async (start: string, what: string, max: number): Promise<string> => {
      let p = start;
      for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
        const st = parseDebugfsStat(await debugfs(`stat ${p}`));
        if (!st) throw new BootCheckError('input', `the image has no ${what} (${start})`);
        if (st.type === 'regular') {
          if (!(st.size > 0 && st.size <= max)) throw new BootCheckError('input', `the image's ${what} ${p} is ${st.size} bytes (at most ${max})`);
          return p;
        }
        if (st.type !== 'symlink' || st.link === undefined || !PLAIN_PATH.test(st.link)) {
          throw new BootCheckError('input', `the image's ${what} ${p} is not a regular file or a plain link`);
        }
        p = resolveLink(p, st.link);
      }
      throw new BootCheckError('input', `the image's ${what} ${start} is a chain of more than ${MAX_LINK_HOPS} links`);
    };
    const kernelPath = await regular('/vmlinuz', 'kernel', MAX_KERNEL_BYTES);
    const initrdPath = await regular('/initrd.img', 'initramfs', MAX_INITRD_BYTES);
    await debugfs(`dump ${kernelPath} vmlinuz`);
    await debugfs(`dump ${initrdPath} initrd.img`);
    let append = BASE_KERNEL_PARAMS.join(' ');
    const cfg = parseDebugfsStat(await debugfs('stat /boot/grub/grub.cfg'));
    if (cfg?.type === 'regular' && cfg.size <= MAX_GRUB_CFG_BYTES) append = commandLineOf(await debugfs('cat /boot/grub/grub.cfg')) ?? append;
    await rm(path.join(dir, 'disk.raw'), { force: true });
    const kernel = path.join(dir, 'vmlinuz');
    const initrd = path.join(dir, 'initrd.img');
    await checkSize(kernel, MAX_KERNEL_BYTES);
    await checkSize(initrd, MAX_INITRD_BYTES);
    return { kernel, initrd, append, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
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
