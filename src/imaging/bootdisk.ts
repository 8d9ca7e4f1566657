// Stage 3 of a real image build: the tree made into a raw disk that a BIOS boots (docs/contracts.md
// "Imaging"): grub.cfg in the tree, MBR with partition 1 active, ext4 labelled `root` from the tree,
// GRUB's boot.img code over the MBR's first 440 bytes and its core.img from sector 1 up to the
// partition's start. GRUB comes from the host's grub-pc-bin, never from the tree: the tree holds the
// template's files, and a host tool must not read what a template can write (a hostile kernel.img or
// moddep.lst in the tree would otherwise reach grub-mkimage running on the host).
import { open, readFile, rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { join } from 'node:path';
import type { Sandbox } from '../host/sandbox';
import { toolsMissingMessage } from '../host/tools';
import { RULES } from '../model/field-rules';
import { ImagingError } from './errors';
import { partitionDevice, writeExt4Disk } from './filesystem';
import { PARTITION_OFFSET, SECTOR } from './mbr';
import type { Reproducible } from './reproducible';
import { runTool, runToolOutput } from './run';
import { TreeWriter } from './tree-writer';

/** The host's GRUB for BIOS (Debian grub-pc-bin): modules and boot.img. */
export const HOST_GRUB_DIR = '/usr/lib/grub/i386-pc';

const MiB = 1024 * 1024;
/** Modules embedded in core.img: enough to read ext4 on an MBR disk and run grub.cfg. */
export const GRUB_MODULES = ['biosdisk', 'part_msdos', 'ext2', 'normal', 'linux', 'search', 'search_label', 'configfile', 'echo'];
/** Words every image's kernel gets: root by label, consoles on screen and on the first serial port, eth0 naming. */
export const BASE_KERNEL_PARAMS = ['root=LABEL=root', 'ro', 'console=tty0', 'console=ttyS0,115200n8', 'net.ifnames=0'];

export interface BootableRawOptions {
  /** The image tree (a private copy: grub.cfg is written into it). */
  readonly tree: string;
  /** New file to create. */
  readonly rawPath: string;
  readonly diskMiB: number;
  /** Extra kernel command-line words (settings.kernelParams). */
  readonly kernelParams: readonly string[];
  /** Space the first boot needs free (the swap file, in MiB). */
  readonly reserveMiB?: number;
  /** A private directory for core.img. */
  readonly scratchDir: string;
  readonly signal?: AbortSignal | undefined;
  /** Fraction 0..1 of the work done (three steps: configuration, filesystem, boot loader). */
  readonly onProgress?: (fraction: number, message: string) => void;
  /** Who the tools reading the tree run as. */
  readonly sandbox: Sandbox;
  readonly reproducible?: Reproducible | undefined;
}

export function grubConfig(kernelParams: readonly string[]): string {
  for (const p of kernelParams) {
    if (!RULES.kernelWord.test(p)) throw new ImagingError('input', `refused kernel parameter ${JSON.stringify(p)}: ${RULES.kernelWord.says}`);
  }
  const cmdline = [...BASE_KERNEL_PARAMS, ...kernelParams].join(' ');
  return `set timeout=1
set default=0
search --no-floppy --label root --set=root
menuentry 'Debian GNU/Linux' {
  linux /vmlinuz ${cmdline}
  initrd /initrd.img
}
`;
}

/** Bytes the tree takes on disk (du), to refuse a disk too small with both sizes. */
async function treeBytes(tree: string, sandbox: Sandbox, signal?: AbortSignal): Promise<number> {
  const out = await runToolOutput('du', ['-s', '-x', '--block-size=1', tree], { signal, sandbox });
  return Number(out.split('\t')[0]);
}

export async function writeBootableRaw(o: BootableRawOptions): Promise<void> {
  const report = o.onProgress ?? (() => undefined);
  const w = new TreeWriter(o.tree, o.sandbox);
  for (const [path, what] of [['vmlinuz', 'a kernel (/vmlinuz)'], ['initrd.img', 'an initramfs (/initrd.img)']] as const) {
    if (!(await w.exists(path))) throw new ImagingError('input', `the OS tree has no ${what}: /${path} is missing`);
  }
  report(0, 'writing the boot configuration');
  const cfg = grubConfig(o.kernelParams);
  await w.mkdir('boot/grub');
  await w.writeText('boot/grub/grub.cfg', cfg);

  const diskBytes = o.diskMiB * MiB;
  const used = await treeBytes(o.tree, o.sandbox, o.signal);
  const reserve = (o.reserveMiB ?? 0) * MiB;
  const tooSmall = (why: string, cause?: unknown): ImagingError =>
    new ImagingError('disk-full', `the system takes ${Math.ceil(used / MiB)} MiB${reserve > 0 ? ` and its swap ${o.reserveMiB} MiB` : ''}: it does not fit in a ${o.diskMiB} MiB disk${why}`, cause);
  if (used + reserve > diskBytes - PARTITION_OFFSET) throw tooSmall('');
  report(0.1, 'making the ext4 filesystem');
  try {
    await writeExt4Disk({ rawPath: o.rawPath, diskBytes, tree: o.tree, label: 'root', bootable: true, signal: o.signal, sandbox: o.sandbox, reproducible: o.reproducible });
  } catch (e) {
    throw e instanceof ImagingError && e.kind === 'disk-full' ? tooSmall(` (${e.message})`, e) : e;
  }
  if (reserve > 0) await checkFree(o.rawPath, reserve, tooSmall, o.sandbox, o.signal);

  report(0.9, 'installing the boot loader');
  const core = join(o.scratchDir, 'core.img');
  await runTool('grub-mkimage', ['-d', HOST_GRUB_DIR, '-O', 'i386-pc', '-p', '(hd0,msdos1)/boot/grub', '-o', core, ...GRUB_MODULES], { signal: o.signal });
  const [bootImg, coreImg] = await Promise.all([readHostBootImg(), readFile(core)]);
  await rm(core, { force: true });
  if (bootImg.length !== SECTOR) throw new ImagingError('tool', `GRUB's boot.img is ${bootImg.length} bytes, expected ${SECTOR}`);
  if (coreImg.length > PARTITION_OFFSET - SECTOR) throw new ImagingError('tool', `GRUB's core.img (${coreImg.length} bytes) does not fit before the partition`);
  const fh = await open(o.rawPath, 'r+');
  try {
    await fh.write(bootImg, 0, 440, 0); // the code area only: disk signature and partition table stay
    await fh.write(coreImg, 0, coreImg.length, SECTOR);
  } finally {
    await fh.close();
  }
  report(1, 'disk written');
}

/** Free blocks of the new filesystem (dumpe2fs) must hold what the first boot creates. */
async function checkFree(rawPath: string, bytes: number, tooSmall: (why: string) => ImagingError, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
  const out = await runToolOutput('dumpe2fs', ['-h', partitionDevice(basename(rawPath))], { cwd: dirname(rawPath), signal, sandbox });
  const free = /^Free blocks:\s+(\d+)/m.exec(out);
  const size = /^Block size:\s+(\d+)/m.exec(out);
  if (!free || !size) throw new ImagingError('tool', 'dumpe2fs printed no free block count');
  const freeBytes = Number(free[1]) * Number(size[1]);
  if (freeBytes < bytes) throw tooSmall(` (${Math.floor(freeBytes / MiB)} MiB left free)`);
}

function readHostBootImg(): Promise<Buffer> {
  return readFile(join(HOST_GRUB_DIR, 'boot.img')).catch((e: NodeJS.ErrnoException) => {
    throw new ImagingError('prerequisite', toolsMissingMessage([join(HOST_GRUB_DIR, 'boot.img')]), e);
  });
}
