// The hybrid disk's partition table: GPT with a 1 MiB BIOS boot partition (GRUB's core.img for a BIOS),
// an EFI system partition (FAT, GRUB for UEFI at the removable-media path) and the root filesystem to
// the end, the last MiB left to the backup table. Written by sfdisk on the image file: no device.
import { DEFAULT_PLATFORM } from '../../model/platforms';
import type { DiskIds } from './disk-ids';
import { ImagingError } from '../errors';
import { runTool } from '../run';

export const SECTOR = 512;
const MiB = 1024 * 1024;
/** GRUB's BIOS core.img goes here, read by boot.img from the MBR by its sector number. */
export const BIOS_BOOT_OFFSET = 1 * MiB;
export const BIOS_BOOT_BYTES = 1 * MiB;
/** Room for GRUB's EFI image (about 2 MiB) many times over; FAT32 needs at least 33 MiB with 512-byte clusters. */
export const ESP_MIB = 64;
export const ESP_OFFSET = BIOS_BOOT_OFFSET + BIOS_BOOT_BYTES;
/** The root filesystem's first byte: e2fsprogs (`-E offset=`, `file?offset=`) reach it there. */
export const ROOT_OFFSET = ESP_OFFSET + ESP_MIB * MiB;
/** The backup GPT takes the disk's last 33 sectors: the root stops a whole MiB before the end. */
const TAIL_BYTES = 1 * MiB;

/** Partition type GUIDs (the root one is the Discoverable Partitions' "Linux root" of the platform). */
export const GPT_TYPE = {
  biosBoot: '21686148-6449-6E6F-744E-656564454649',
  esp: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  root: DEFAULT_PLATFORM.rootPartitionType,
} as const;

/** Bytes of the root partition on a disk of `diskBytes`. */
export function rootBytes(diskBytes: number): number {
  return diskBytes - ROOT_OFFSET - TAIL_BYTES;
}

/** sfdisk's input for the three partitions, every GUID given (so a seed gives the same table). */
export function sfdiskScript(diskBytes: number, ids: DiskIds): string {
  const root = rootBytes(diskBytes);
  if (root <= 0) throw new ImagingError('input', `a disk of ${diskBytes} bytes cannot hold the boot partitions and a root partition`);
  const s = (bytes: number): number => bytes / SECTOR;
  return [
    'label: gpt',
    `label-id: ${ids.diskGuid}`,
    'unit: sectors',
    `start=${s(BIOS_BOOT_OFFSET)}, size=${s(BIOS_BOOT_BYTES)}, type=${GPT_TYPE.biosBoot}, uuid=${ids.biosPartGuid}, name="BIOS boot"`,
    `start=${s(ESP_OFFSET)}, size=${s(ESP_MIB * MiB)}, type=${GPT_TYPE.esp}, uuid=${ids.espPartGuid}, name="EFI system"`,
    `start=${s(ROOT_OFFSET)}, size=${s(root)}, type=${GPT_TYPE.root}, uuid=${ids.rootPartGuid}, name="root"`,
    '',
  ].join('\n');
}

/** Writes the protective MBR, both GPT headers and their entries into an existing file of `diskBytes`. */
export async function writeGpt(rawPath: string, diskBytes: number, ids: DiskIds, signal?: AbortSignal): Promise<void> {
  await runTool('sfdisk', ['--quiet', '--no-reread', '--no-tell-kernel', '--wipe', 'never', rawPath], { input: sfdiskScript(diskBytes, ids), signal });
}
