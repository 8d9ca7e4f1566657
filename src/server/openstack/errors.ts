// The one error type of the publication backend (docs/contracts.md, OpenStack). It joins the
// ForgeError tree under code E_OPENSTACK; `kind` says what went wrong so callers can branch on it.
import { maskSecrets } from '../../model/redact';
import { ForgeError } from '../../errors';

/**
 * - `auth`: Keystone refused the login/password (401 on an unscoped request too).
 * - `project`: credentials are good but the project scope fails (unknown project, no role on it).
 * - `forbidden`: a 403, e.g. a non-admin asking Glance for a public image.
 * - `glance`: any other Glance failure (error status, image in a bad state, upload rejected).
 * - `keystone`: Keystone failed for another reason (5xx, no image endpoint in the catalog).
 * - `checksum`: the data Glance stored does not match what was streamed (or the caller's sha256).
 * - `timeout`: a request or the wait for `active` outlived its bound.
 * - `network`: no HTTP answer at all (refused, reset, dropped mid-upload).
 * - `input`: the arguments are wrong (bad URL, missing file, size mismatch); nothing was sent.
 */
export type OpenStackErrorKind =
  | 'auth'
  | 'project'
  | 'forbidden'
  | 'glance'
  | 'keystone'
  | 'checksum'
  | 'timeout'
  | 'network'
  | 'input';

export interface OpenStackErrorDetails {
  readonly service?: 'keystone' | 'glance';
  /** HTTP status of the failing answer, when there was one. */
  readonly status?: number;
  /** The Glance image concerned (already deleted again when the publication failed). */
  readonly imageId?: string | undefined;
}

export class OpenStackError extends ForgeError {
  static readonly code = 'E_OPENSTACK';
  readonly service: 'keystone' | 'glance' | undefined;
  readonly status: number | undefined;
  imageId: string | undefined;
  /** Set when a failed publication could not delete its half-created image. */
  orphanImageId: string | undefined;
  constructor(readonly kind: OpenStackErrorKind, message: string, details: OpenStackErrorDetails = {}) {
    super(message);
    this.name = 'OpenStackError';
    this.service = details.service;
    this.status = details.status;
    this.imageId = details.imageId;
  }
}

/**
 * Replaces every known secret (password, tokens) in a text by `***`. Every message built from a
 * remote answer or a low-level error goes through here, so a service that echoes a credential
 * cannot leak it into our errors or logs.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  return maskSecrets(text, secrets);
}
