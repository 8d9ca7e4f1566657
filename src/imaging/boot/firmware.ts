// The firmware a boot check starts the guest with: QEMU's SeaBIOS (bios), or OVMF from Debian's `ovmf`
// package (uefi; uefi-secure: Secure Boot on, Microsoft's keys enrolled) with a private copy of its variable store, so a guest's NVRAM writes never reach the
// host's template and two checks never share one; the copy's folder is removed when the check ends.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const FIRMWARES = ['bios', 'uefi', 'uefi-secure'] as const;
export type Firmware = (typeof FIRMWARES)[number];

export function isFirmware(s: string): s is Firmware {
  return (FIRMWARES as readonly string[]).includes(s);
}

/** OVMF's code (read only) and the template of its variable store (4 MiB builds: the ones Debian 12 and 13 ship). */
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
export const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';
/** The Secure Boot build (needs SMM) and a store with Secure Boot enabled and Microsoft's keys, which trust Debian's shim. */
export const OVMF_SECURE_CODE = '/usr/share/OVMF/OVMF_CODE_4M.secboot.fd';
export const OVMF_SECURE_VARS = '/usr/share/OVMF/OVMF_VARS_4M.ms.fd';

/** The files each firmware needs on the host. */
export const FIRMWARE_FILES = {
  bios: [],
  uefi: [OVMF_CODE, OVMF_VARS],
  'uefi-secure': [OVMF_SECURE_CODE, OVMF_SECURE_VARS],
} as const satisfies Record<Firmware, readonly string[]>;

/** What qemuArgs needs to start the firmware. */
export type FirmwareSetup = { readonly kind: 'bios' } | { readonly kind: 'uefi'; readonly code: string; readonly vars: string; readonly secure?: boolean };

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
    const [code, template] = FIRMWARE_FILES[firmware];
    const vars = path.join(dir, 'OVMF_VARS.fd');
    await copyFile(template, vars);
    return prepared({ kind: 'uefi', code, vars, secure: firmware === 'uefi-secure' }, dispose);
  } catch (e) {
    await dispose();
    throw e;
  }
}

/** QEMU options of the firmware: none for SeaBIOS (QEMU's default); for OVMF the q35 machine and two pflash drives. */
export function firmwareArgs(f: FirmwareSetup): string[] {
  if (f.kind === 'bios') return [];
  const file = (p: string): string => p.replace(/,/g, ',,');
  // Secure Boot's OVMF keeps its variables behind SMM, and its flash must be the secure kind.
  const secure = f.secure === true ? ['-global', 'driver=cfi.pflash01,property=secure,value=on'] : [];
  return [
    '-machine', f.secure === true ? 'q35,smm=on' : 'q35',
    ...secure,
    '-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${file(f.code)}`,
    '-drive', `if=pflash,format=raw,unit=1,file=${file(f.vars)}`,
  ];
}
