// The firmware a boot check starts the guest with: QEMU's SeaBIOS (bios), or OVMF from Debian's `ovmf`
// package (uefi) with a private copy of its variable store, so a guest's NVRAM writes never reach the
// host's template and two checks never share one; the copy's folder is removed when the check ends.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const FIRMWARES = ['bios', 'uefi'] as const;
export type Firmware = (typeof FIRMWARES)[number];

export function isFirmware(s: string): s is Firmware {
  return (FIRMWARES as readonly string[]).includes(s);
}

/** OVMF's code (read only) and the template of its variable store (4 MiB builds: the ones Debian 12 and 13 ship). */
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
export const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';

/** What qemuArgs needs to start the firmware. */
export type FirmwareSetup = { readonly kind: 'bios' } | { readonly kind: 'uefi'; readonly code: string; readonly vars: string };

export interface PreparedFirmware {
  readonly setup: FirmwareSetup;
  /** Removes what was made for this boot (the variable store's copy). */
  dispose(): Promise<void>;
  /** `start()`'s result; if it throws, disposes first. */
  using<T>(start: () => T): Promise<T>;
}

function prepared(setup: FirmwareSetup, dispose: () => Promise<void>): PreparedFirmware {
  return {
    setup,
    dispose,
    async using(start) {
      try {
        return start();
      } catch (e) {
        await dispose();
        throw e;
      }
    },
  };
}

export async function prepareFirmware(firmware: Firmware): Promise<PreparedFirmware> {
  if (firmware === 'bios') return prepared({ kind: 'bios' }, () => Promise.resolve());
  const dir = await mkdtemp(path.join(tmpdir(), 'appliance-forge-ovmf-'));
  const dispose = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const vars = path.join(dir, 'OVMF_VARS.fd');
    await copyFile(OVMF_VARS, vars);
    return prepared({ kind: 'uefi', code: OVMF_CODE, vars }, dispose);
  } catch (e) {
    await dispose();
    throw e;
  }
}

/** QEMU options of the firmware: none for SeaBIOS (QEMU's default); for OVMF the q35 machine and two pflash drives. */
export function firmwareArgs(f: FirmwareSetup): string[] {
  if (f.kind === 'bios') return [];
  const file = (p: string): string => p.replace(/,/g, ',,');
  return [
    '-machine', 'q35',
    '-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${file(f.code)}`,
    '-drive', `if=pflash,format=raw,unit=1,file=${file(f.vars)}`,
  ];
}
