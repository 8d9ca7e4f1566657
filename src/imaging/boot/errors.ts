// Errors of the boot check. 'missing-tool': a QEMU program is not installed (the Debian packages are
// named); 'input': a bad image or option, nothing was started; 'qemu': QEMU itself refused to start;
// 'confinement': this host cannot run QEMU's programs confined to the image (host/confine.ts), so none ran;
// 'kvm': KVM was asked for (accel 'kvm') and cannot be used here (accel.ts), so no boot ran.
// A guest that does not boot or refuses the login is not an error: it is the check's result.
import { ForgeError } from '../../errors';

export type BootCheckErrorKind = 'missing-tool' | 'input' | 'qemu' | 'confinement' | 'kvm';

export class BootCheckError extends ForgeError {
  static readonly code = 'E_BOOT_CHECK';
  constructor(
    readonly kind: BootCheckErrorKind,
    message: string,
    /** For 'missing-tool': the Debian packages that provide what is missing. */
    readonly packages: readonly string[] = [],
  ) {
    super(message);
    this.name = 'BootCheckError';
  }
}

export function isBootCheckError(e: unknown, kind?: BootCheckErrorKind): e is BootCheckError {
  return e instanceof BootCheckError && (kind === undefined || e.kind === kind);
}
