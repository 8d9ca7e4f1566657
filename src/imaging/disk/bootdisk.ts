// Stage 3 of a real image build: the tree made into a raw disk that boots under a BIOS and under UEFI
// (docs/contracts.md "Imaging"): grub.cfg in the tree, GPT (gpt.ts), ext4 labelled `root` from the
// tree, the EFI system partition with Debian's signed shim and GRUB (esp.ts), GRUB's boot.img code over
// the protective MBR and its core.img in the BIOS boot partition (grub.ts). All from the host, never the tree.
import { open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { missingTools, toolsMissingMessage } from '../../host/tools';
import { RULES } from '../../model/field-rules';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import { diskIdsFrom } from './disk-ids';
import { ImagingError } from '../errors';
import { ESP_HOST_NEEDS, makeEsp } from './esp';
import { partitionDevice, writeExt4Disk } from './filesystem';
import { BIOS_BOOT_OFFSET, rootBytes } from './gpt';
import { BIOS_HOST_NEEDS, biosBootCode } from './grub';
import type { BuildHost } from '../build-host';
import type { Reproducible } from '../reproducible';
import { TreeWriter } from '../system/tree-writer';
import { timed } from '../stage-log';

const MiB = 1024 * 1024;
/** Words every image's kernel gets: root by label, consoles on screen and on the first serial port, eth0 naming. */
export const BASE_KERNEL_PARAMS = ['root=LABEL=root', 'ro', 'console=tty0', `console=${DEFAULT_PLATFORM.console},115200n8`, 'net.ifnames=0'];

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
  /** A private directory for GRUB's images and the EFI partition. */
  readonly scratchDir: string;
  /** A reproducible build: the disk's ids from its seed (disk-ids.ts), every time from its epoch; absent: random ids, the clock's times. */
  readonly reproducible?: Reproducible | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Fraction 0..1 of the work done (three steps: configuration, filesystem, boot loader). */
  readonly onProgress?: (fraction: number, message: string) => void;
  /** Who the tools reading the tree run as. */
  readonly host: BuildHost;
}

/** The tree's GRUB menu: straight to the one entry, no menu shown, no wait. */
export function grubConfig(kernelParams: readonly string[]): string {
  for (const p of kernelParams) {
    if (!RULES.kernelWord.test(p)) throw new ImagingError('input', `refused kernel parameter ${JSON.stringify(p)}: ${RULES.kernelWord.says}`);
  }
  const cmdline = [...BASE_KERNEL_PARAMS, ...kernelParams].join(' ');
  return `set timeout_style=hidden
set timeout=0
set default=0
search --no-floppy --label root --set=root
menuentry 'Debian GNU/Linux' {
  linux /vmlinuz ${cmdline}
  initrd /initrd.img
}
`;
}

/** The disk-full error of a system of `used` bytes (and a swap file) in a disk of `diskMiB`, `why` said after. */
export function diskTooSmall(used: number, reserveMiB: number, diskMiB: number): (why: string, cause?: unknown) => ImagingError {
  return (why, cause) =>
    new ImagingError('disk-full', `the system takes ${Math.ceil(used / MiB)} MiB${reserveMiB > 0 ? ` and its swap ${reserveMiB} MiB` : ''}: it does not fit in a ${diskMiB} MiB disk${why}`, cause);
}

/** Bytes the tree takes on disk (du), to refuse a disk too small with both sizes. */
async function treeBytes(tree: string, host: BuildHost, signal?: AbortSignal): Promise<number> {
  const out = await host.output('du', ['-s', '-x', '--block-size=1', tree], { signal });
  return Number(out.split('\t')[0]);
}

/** Makes the disk; returns the bytes the tree took (du), what the disk-size checks count. */
export async function writeBootableRaw(o: BootableRawOptions): Promise<{ treeBytes: number }> {
  const report = o.onProgress ?? (() => undefined);
  const ids = diskIdsFrom(o.reproducible?.seed);
  // Every boot loader tool at once, before any disk work: both halves run beside mke2fs and would each name only their own.
  const absent = missingTools([...ESP_HOST_NEEDS, ...BIOS_HOST_NEEDS]);
  if (absent.length > 0) throw new ImagingError('prerequisite', toolsMissingMessage(absent));
  const w = new TreeWriter(o.tree, o.host);
  for (const [path, what] of [['vmlinuz', 'a kernel (/vmlinuz)'], ['initrd.img', 'an initramfs (/initrd.img)']] as const) {
    if (!(await w.exists(path))) throw new ImagingError('input', `the OS tree has no ${what}: /${path} is missing`);
  }
  report(0, 'writing the boot configuration');
  const cfg = grubConfig(o.kernelParams);
  await w.mkdir('boot/grub');
  await w.writeText('boot/grub/grub.cfg', cfg);

  const diskBytes = o.diskMiB * MiB;
  const used = await timed('measuring the tree (du)', () => treeBytes(o.tree, o.host, o.signal));
  const reserve = (o.reserveMiB ?? 0) * MiB;
  const tooSmall = diskTooSmall(used, o.reserveMiB ?? 0, o.diskMiB);
  if (used + reserve > rootBytes(diskBytes)) throw tooSmall('');
  report(0.1, 'making the ext4 filesystem');
  // The ESP and GRUB's images need nothing of the tree or the disk: made while mke2fs runs, placed after.
  const espMade = timed('EFI system partition', () => makeEsp({ ids, scratchDir: o.scratchDir, sourceDateEpoch: o.reproducible?.sourceDateEpoch, signal: o.signal }));
  const grubMade = timed('GRUB core images', () => biosBootCode(o.scratchDir, o.signal));
  // Both awaited below; one that fails while mke2fs still runs must not be an unhandled rejection meanwhile.
  espMade.catch(() => undefined);
  grubMade.catch(() => undefined);
  try {
    await writeExt4Disk({ rawPath: o.rawPath, diskBytes, tree: o.tree, label: 'root', ids, signal: o.signal, host: o.host, reproducible: o.reproducible });
  } catch (e) {
    // The ESP's own end, not the pair's: the pair fails at its first failure while the ESP may still be writing.
    await espMade.then((esp) => esp.remove(), () => undefined);
    throw e instanceof ImagingError && e.kind === 'disk-full' ? tooSmall(` (${e.message})`, e) : e;
  }
  // Both settled before a failure is thrown: the caller removes the scratch folder the ESP is written in.
  const [espDone, grubDone] = await Promise.allSettled([espMade, grubMade]);
  if (espDone.status === 'rejected' || grubDone.status === 'rejected') {
    if (espDone.status === 'fulfilled') await espDone.value.remove();
    throw espDone.status === 'rejected' ? espDone.reason : (grubDone as PromiseRejectedResult).reason;
  }
  const esp = espDone.value;
  const bios = grubDone.value;
  try {
    if (reserve > 0) await checkFree(o.rawPath, reserve, tooSmall, o.host, o.signal);
    report(0.9, 'installing the boot loaders');
    await esp.place(o.rawPath);
  } finally {
    await esp.remove();
  }
  const fh = await open(o.rawPath, 'r+');
  try {
    await fh.write(bios.mbrCode, 0, bios.mbrCode.length, 0); // the code area only: the protective MBR's table stays
    await fh.write(bios.core, 0, bios.core.length, BIOS_BOOT_OFFSET);
  } finally {
    await fh.close();
  }
  report(1, 'disk written');
  return { treeBytes: used };
}

/** Free blocks of the new filesystem (dumpe2fs) must hold what the first boot creates. */
export async function checkFree(rawPath: string, bytes: number, tooSmall: (why: string) => ImagingError, host: BuildHost, signal?: AbortSignal): Promise<void> {
  const out = await host.output('dumpe2fs', ['-h', partitionDevice(basename(rawPath))], { cwd: dirname(rawPath), signal });
  const free = /^Free blocks:\s+(\d+)/m.exec(out);
  const size = /^Block size:\s+(\d+)/m.exec(out);
  if (!free || !size) throw new ImagingError('tool', 'dumpe2fs printed no free block count');
  const freeBytes = Number(free[1]) * Number(size[1]);
  if (freeBytes < bytes) throw tooSmall(` (${Math.floor(freeBytes / MiB)} MiB left free)`);
}
