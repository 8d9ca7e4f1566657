// GRUB for a BIOS, from the host's grub-pc-bin, never from the tree: a host tool must not read what a
// template can write (a hostile kernel.img or moddep.lst in the tree would otherwise reach
// grub-mkimage). core.img carries its modules and the config that UEFI's signed GRUB reads from the
// ESP too (esp.ts): find the root filesystem by label, hand over to the tree's /boot/grub/grub.cfg.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toolsMissingMessage } from '../../host/tools';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import { ImagingError } from '../errors';
import { BIOS_BOOT_BYTES, BIOS_BOOT_OFFSET, SECTOR } from './gpt';
import { runTool } from '../run';

/** The host's GRUB for BIOS (Debian grub-pc-bin): modules, kernel.img and boot.img. */
export const HOST_GRUB_DIR = DEFAULT_PLATFORM.bios.grubDir;
/** What the BIOS boot code takes from the host: checked before a disk is begun (bootdisk.ts). */
export const BIOS_HOST_NEEDS = ['grub-mkimage', join(HOST_GRUB_DIR, 'kernel.img'), join(HOST_GRUB_DIR, 'boot.img')] as const;

/** Modules built into core.img: the BIOS disk, GPT, ext4 and what grub.cfg uses. */
export const GRUB_MODULES = ['biosdisk', 'part_gpt', 'ext2', 'normal', 'linux', 'search', 'search_label', 'configfile', 'echo', 'serial', 'terminal', 'gzio'];

/** The config of both firmwares' GRUB. */
export const EMBEDDED_CONFIG = 'search --no-floppy --label --set=root root\nconfigfile ($root)/boot/grub/grub.cfg\n';

// boot.img and diskboot.img (core.img's first sector) fields, as grub-bios-setup fills them.
const KERNEL_SECTOR = 0x5c;
const DRIVE_CHECK = 0x66;
const BLOCKLIST_START = 0x1f4;
const BLOCKLIST_LENGTH = 0x1fc;
/** The MBR's code area: boot.img goes there, the partition table after it stays. */
export const MBR_CODE_BYTES = 440;

/** A missing GRUB or shim file is a missing host package, said the host's one way. */
export async function hostFile(path: string): Promise<Buffer> {
  return readFile(path).catch((e: NodeJS.ErrnoException) => {
    throw new ImagingError('prerequisite', toolsMissingMessage([path]), e);
  });
}

/** `grub-mkimage` for the BIOS with the embedded config: core.img's bytes. */
async function coreImage(scratchDir: string, signal?: AbortSignal): Promise<Buffer> {
  await hostFile(join(HOST_GRUB_DIR, 'kernel.img'));
  const cfg = join(scratchDir, 'grub-core.cfg');
  const out = join(scratchDir, 'core.img');
  await writeFile(cfg, EMBEDDED_CONFIG);
  try {
    await runTool('grub-mkimage', ['-d', HOST_GRUB_DIR, '-O', DEFAULT_PLATFORM.bios.grubFormat, '-c', cfg, '-p', '/boot/grub', '-o', out, ...GRUB_MODULES], { signal });
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
  const [boot, core] = await Promise.all([hostFile(join(HOST_GRUB_DIR, 'boot.img')), coreImage(scratchDir, signal)]);
  if (boot.length !== SECTOR) throw new ImagingError('tool', `GRUB's boot.img is ${boot.length} bytes, expected ${SECTOR}`);
  if (core.length > BIOS_BOOT_BYTES) throw new ImagingError('tool', `GRUB's core.img (${core.length} bytes) does not fit in the BIOS boot partition`);
  const first = BIOS_BOOT_OFFSET / SECTOR;
  boot.writeBigUInt64LE(BigInt(first), KERNEL_SECTOR);
  boot.writeUInt16LE(0x9090, DRIVE_CHECK); // two NOPs: a disk, not a floppy, whatever the BIOS passes
  core.writeBigUInt64LE(BigInt(first + 1), BLOCKLIST_START);
  core.writeUInt16LE(Math.ceil(core.length / SECTOR) - 1, BLOCKLIST_LENGTH);
  return { mbrCode: boot.subarray(0, MBR_CODE_BYTES), core };
}
