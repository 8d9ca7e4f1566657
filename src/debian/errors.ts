// The one error type of the Debian index module: `kind` says which fault, the message names the
// suite, the file or the missing tool.
import { ForgeError } from '../errors';

export type DebianIndexFault =
  /** A tool or keyring this module needs is not installed. */
  | 'missing-tool'
  /** The mirror did not answer, or answered with an HTTP error. */
  | 'unreachable'
  /** InRelease's signature is not a good one from the Debian archive keyring. */
  | 'bad-signature'
  /** A file's size or SHA-256 is not what InRelease says. */
  | 'checksum'
  /** The content is not what a Debian archive holds (missing field, oversized file, bad stanza). */
  | 'malformed';

export class DebianIndexError extends ForgeError {
  static readonly code = 'E_DEBIAN_INDEX';
  override readonly name = 'DebianIndexError';
  constructor(
    readonly kind: DebianIndexFault,
    message: string,
  ) {
    super(message);
  }
}
