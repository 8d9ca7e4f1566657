// GRUB for both firmwares, from the host's GRUB packages (grub-pc-bin, grub-efi-amd64-bin), never from
// the tree: a host tool must not read what a template can write (a hostile kernel.img or moddep.lst in
// the tree would otherwise reach grub-mkimage). Each image carries its modules and the same small
// config, which finds the root filesystem by label and hands over to the tree's /boot/grub/grub.cfg.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toolsMissingMessage } from '../host/tools';
import { ImagingError } from './errors';
import { BIOS_BOOT_BYTES, BIOS_BOOT_OFFSET, SECTOR } from './gpt';
import { runTool } from './run';

export type GrubTarget = 'i386-pc' | 'x86_64-efi';

/** The host's module folder of each target. */
export const HOST_GRUB_DIR: Readonly<Record<GrubTarget, string>> = { 'i386-pc': '/usr/lib/grub/i386-pc', 'x86_64-efi': '/usr/lib/grub/x86_64-efi' };

const COMMON_MODULES = ['part_gpt', 'ext2', 'normal', 'linux', 'search', 'search_label', 'configfile', 'echo', 'serial', 'terminal', 'gzio'];
/** Modules built into each image: GPT, ext4 and what grub.cfg uses; the disk driver or the EFI console per firmware. */
export const GRUB_MODULES: Readonly<Record<GrubTarget, readonly string[]>> = {
  'i386-pc': ['biosdisk', ...COMMON_MODULES],
  'x86_64-efi': [...COMMON_MODULES, 'fat', 'all_video', 'efi_gop'],
};

/** The config built into both images. */
export const EMBEDDED_CONFIG = 'search --no-floppy --label --set=root root\nconfigfile ($root)/boot/grub/grub.cfg\n';

// boot.img and diskboot.img (core.img's first sector) fields, as grub-bios-setup fills them.
const KERNEL_SECTOR = 0x5c;
const DRIVE_CHECK = 0x66;
const BLOCKLIST_START = 0x1f4;
const BLOCKLIST_LENGTH = 0x1fc;
/** The MBR's code area: boot.img goes there, the partition table after it stays. */
export const MBR_CODE_BYTES = 440;

/** A missing GRUB folder is a missing host package, said the host's one way. */
async function hostFile(path: string): Promise<Buffer> {
  return readFile(path).catch((e: NodeJS.ErrnoException) => {
    throw new ImagingError('prerequisite', toolsMissingMessage([path]), e);
  });
}

/** `grub-mkimage` for one target, with the embedded config; the image's bytes. */
export async function grubImage(target: GrubTarget, scratchDir: string, signal?: AbortSignal): Promise<Buffer> {
  const dir = HOST_GRUB_DIR[target];
  await hostFile(join(dir, 'kernel.img'));
  const cfg = join(scratchDir, `grub-${target}.cfg`);
  const out = join(scratchDir, `grub-${target}.img`);
  await writeFile(cfg, EMBEDDED_CONFIG);
  try {
    await runTool('grub-mkimage', ['-d', dir, '-O', target, '-c', cfg, '-p', '/boot/grub', '-o', out, ...GRUB_MODULES[target]], { signal });
    return await readFile(out);
  } finally {
    await rm(cfg, { force: true });
    await rm(out, { force: true });
  }
}

/**
 * BIOS boot code: boot.img's code area for the MBR, told to load core.img's first sector from the BIOS
 * boot partition whatever drive the BIOS names; core.img with its blocklist pointing at the rest of it.
 */
export async function biosBootCode(scratchDir: string, signal?: AbortSignal): Promise<{ mbrCode: Buffer; core: Buffer }> {
  const [boot, core] = await Promise.all([hostFile(join(HOST_GRUB_DIR['i386-pc'], 'boot.img')), grubImage('i386-pc', scratchDir, signal)]);
  if (boot.length !== SECTOR) throw new ImagingError('tool', `GRUB's boot.img is ${boot.length} bytes, expected ${SECTOR}`);
  if (core.length > BIOS_BOOT_BYTES) throw new ImagingError('tool', `GRUB's core.img (${core.length} bytes) does not fit in the BIOS boot partition`);
  const first = BIOS_BOOT_OFFSET / SECTOR;
  boot.writeBigUInt64LE(BigInt(first), KERNEL_SECTOR);
  boot.writeUInt16LE(0x9090, DRIVE_CHECK); // two NOPs: a disk, not a floppy, whatever the BIOS passes
  core.writeBigUInt64LE(BigInt(first + 1), BLOCKLIST_START);
  core.writeUInt16LE(Math.ceil(core.length / SECTOR) - 1, BLOCKLIST_LENGTH);
  return { mbrCode: boot.subarray(0, MBR_CODE_BYTES), core };
}
