// Errors of the image builder. Bad input (`kind` 'input') is the caller's to fix and nothing was written;
// 'tool' is an external program (mke2fs, debugfs, qemu-img) that failed, with its own message kept;
// 'prerequisite' is a host tool that is missing, with the Debian package that provides it; 'setup' is the
// host's setup that the build cannot work with (a folder its namespace cannot reach). A ForgeError
// of the package's tree (src/errors.ts): `isForgeError(e, ImagingError)` narrows to it.
import { ForgeError, isForgeError } from '../errors';

export type ImagingErrorKind = 'input' | 'disk-full' | 'tool' | 'prerequisite' | 'setup';

export class ImagingError extends ForgeError {
  static readonly code = 'E_IMAGING';
  constructor(readonly kind: ImagingErrorKind, message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'ImagingError';
  }
}

export function isImagingError(e: unknown, kind?: ImagingErrorKind): e is ImagingError {
  return isForgeError(e, ImagingError) && (kind === undefined || e.kind === kind);
}
