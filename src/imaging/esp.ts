// The EFI system partition: a FAT32 file made by dosfstools and filled by mtools (no loop device, no
// mount), holding GRUB at the removable-media path \EFI\BOOT\BOOTX64.EFI, which a UEFI firmware boots
// without any NVRAM entry. It is then copied into the disk at its offset, its zero blocks skipped so the
// disk stays sparse.
import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiskIds } from './disk-ids';
import { ESP_MIB, ESP_OFFSET } from './gpt';
import { runTool } from './run';

export const EFI_BOOT_PATH = 'EFI/BOOT/BOOTX64.EFI';
const CHUNK = 64 * 1024;

export interface EspOptions {
  readonly rawPath: string;
  /** GRUB for x86_64-efi. */
  readonly efiImage: Buffer;
  readonly ids: DiskIds;
  readonly scratchDir: string;
  /** Pinned time of a reproducible build: FAT timestamps are then fixed too. */
  readonly sourceDateEpoch?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Makes the ESP with `efiImage` at the removable-media path and writes it into `rawPath` at ESP_OFFSET. */
export async function writeEsp({ rawPath, efiImage, ids, scratchDir, sourceDateEpoch, signal }: EspOptions): Promise<void> {
  const fat = join(scratchDir, 'esp.fat');
  const efi = join(scratchDir, 'BOOTX64.EFI');
  try {
    await writeFile(efi, efiImage);
    // --invariant: fixed times in the boot sector; mtools dates entries at SOURCE_DATE_EPOCH when given.
    const pinned = sourceDateEpoch === undefined ? undefined : { SOURCE_DATE_EPOCH: String(sourceDateEpoch) };
    const invariant = pinned ? ['--invariant'] : [];
    await runTool('mkfs.fat', [...invariant, '-C', '-F', '32', '-n', 'EFI', '-i', ids.espVolumeId, fat, String(ESP_MIB * 1024)], { signal });
    await runTool('mmd', ['-i', fat, '::/EFI', '::/EFI/BOOT'], { signal, env: pinned });
    await runTool('mcopy', ['-i', fat, efi, `::/${EFI_BOOT_PATH}`], { signal, env: pinned });
    await copyNonZero(fat, rawPath, ESP_OFFSET);
  } finally {
    await rm(fat, { force: true });
    await rm(efi, { force: true });
  }
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
      if (chunk.some((b) => b !== 0)) await dst.write(chunk, 0, bytesRead, offset + pos);
    }
  } finally {
    await src.close();
    await dst.close();
  }
}
