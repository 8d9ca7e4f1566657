// The EFI system partition: a FAT32 file made by dosfstools and filled by mtools (no loop device, no
// mount), then copied into the disk at its offset, its zero blocks skipped so the disk stays sparse.
// It holds Debian's signed boot chain, so one ESP boots with and without Secure Boot: shim at the
// removable-media path (\EFI\BOOT\BOOT<arch>.EFI: booted without any NVRAM entry), the signed GRUB beside
// it (shim loads it by name from its own folder), and that GRUB's config where its built-in prefix
// looks, EFI/debian/grub.cfg. Both binaries come from the host's packages, never from the tree; their
// paths are the platform's (model/platforms.ts).
import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import type { DiskIds } from './disk-ids';
import { ESP_MIB, ESP_OFFSET } from './gpt';
import { EMBEDDED_CONFIG, hostFile } from './grub';
import { runTool } from '../run';

/** Debian's shim signed by Microsoft (shim-signed) and GRUB signed by Debian (grub-efi-ARCH-signed). */
export const SIGNED_SHIM = DEFAULT_PLATFORM.efi.signedShim;
export const SIGNED_GRUB = DEFAULT_PLATFORM.efi.signedGrub;
export const EFI_BOOT_PATH = DEFAULT_PLATFORM.efi.bootPath;
export const EFI_GRUB_PATH = DEFAULT_PLATFORM.efi.grubPath;
export const EFI_CONFIG_PATH = 'EFI/debian/grub.cfg';
/** What the ESP takes from the host: checked before a disk is begun (bootdisk.ts). */
export const ESP_HOST_NEEDS = ['mkfs.fat', 'mmd', 'mcopy', SIGNED_SHIM, SIGNED_GRUB] as const;
const CHUNK = 64 * 1024;
const ZEROS = Buffer.alloc(CHUNK);

export interface EspOptions {
  readonly ids: DiskIds;
  readonly scratchDir: string;
  /** Pinned time of a reproducible build: FAT timestamps are then fixed too. */
  readonly sourceDateEpoch?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The ESP as a file of its own (it needs nothing of the disk), then placed into a disk; remove() in any case. */
export async function makeEsp({ ids, scratchDir, sourceDateEpoch, signal }: EspOptions): Promise<{ place(rawPath: string): Promise<void>; remove(): Promise<void> }> {
  const fat = join(scratchDir, 'esp.fat');
  const cfg = join(scratchDir, 'esp-grub.cfg');
  const remove = async (): Promise<void> => {
    await rm(fat, { force: true });
    await rm(cfg, { force: true });
  };
  try {
    await Promise.all([hostFile(SIGNED_SHIM), hostFile(SIGNED_GRUB)]);
    await writeFile(cfg, EMBEDDED_CONFIG);
    // --invariant: fixed times in the boot sector; mtools dates entries at SOURCE_DATE_EPOCH when given.
    const pinned = sourceDateEpoch === undefined ? undefined : { SOURCE_DATE_EPOCH: String(sourceDateEpoch) };
    const invariant = pinned ? ['--invariant'] : [];
    await runTool('mkfs.fat', [...invariant, '-C', '-F', '32', '-n', 'EFI', '-i', ids.espVolumeId, fat, String(ESP_MIB * 1024)], { signal });
    await runTool('mmd', ['-i', fat, '::/EFI', '::/EFI/BOOT', '::/EFI/debian'], { signal, env: pinned });
    for (const [from, to] of [[SIGNED_SHIM, EFI_BOOT_PATH], [SIGNED_GRUB, EFI_GRUB_PATH], [cfg, EFI_CONFIG_PATH]] as const) {
      await runTool('mcopy', ['-i', fat, from, `::/${to}`], { signal, env: pinned });
    }
  } catch (e) {
    await remove();
    throw e;
  }
  return { place: (rawPath) => copyNonZero(fat, rawPath, ESP_OFFSET), remove };
}

/** `from` written into `to` at `offset`, chunks of zeros left as the holes they already are there. */
async function copyNonZero(from: string, to: string, offset: number): Promise<void> {
  const src = await open(from, 'r');
  const dst = await open(to, 'r+');
  try {
    const buf = Buffer.alloc(CHUNK);
    for (let pos = 0; ; pos += CHUNK) {
      const { bytesRead } = await src.read(buf, 0, CHUNK, pos);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      // equals: one memcmp, not a callback per byte.
      if (!chunk.equals(ZEROS.subarray(0, bytesRead))) await dst.write(chunk, 0, bytesRead, offset + pos);
    }
  } finally {
    await src.close();
    await dst.close();
  }
}
