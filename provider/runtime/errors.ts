// The provider's one error class, with the package's others (src/errors.ts): its `code` (`E_PROVIDER`) and
// `kind` say what went wrong, so that a program calling the provider's code (or a test) tells them apart
// without reading messages. The message is what Pulumi shows: it names the property, or the endpoint.
import { ForgeError } from '../../src/errors';
import type { CheckFailure } from './inputs';

/**
 * `input`: a value the service does not know (a distribution, a package, a format), each in `failures` by
 * property; `exists`: a create met an object of that name (409; `adopt` takes it over); `auth`: the service
 * refused the credentials (401), with `url`, `user` and where they came from (`credentials`); `job`: a
 * generation or publication failed or timed out (the record was discarded); `service`: an answer the provider
 * cannot use (no URI), or a kind this release does not know.
 */
export type ProviderErrorKind = 'input' | 'exists' | 'auth' | 'job' | 'service';

export interface ProviderErrorDetails {
  /** `input`: one failure per property, as `check` reports them. */
  readonly failures?: readonly CheckFailure[];
  /** `auth`: the service's base URL, the user, and where the credentials came from. */
  readonly url?: string | undefined;
  readonly user?: string | undefined;
  readonly credentials?: string;
}

export class ProviderError extends ForgeError {
  static readonly code = 'E_PROVIDER';
  readonly failures: readonly CheckFailure[];
  readonly url?: string | undefined;
  readonly user?: string | undefined;
  readonly credentials?: string;
  constructor(readonly kind: ProviderErrorKind, message: string, details: ProviderErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProviderError';
    this.failures = details.failures ?? [];
    if (details.url !== undefined) this.url = details.url;
    if (details.user !== undefined) this.user = details.user;
    if (details.credentials !== undefined) this.credentials = details.credentials;
  }
}

/** The failures `check` would report, as one error for a create or update that meets them. */
export function inputError(failures: readonly CheckFailure[]): ProviderError {
  const lines = failures.map((f) => f.reason);
  return new ProviderError('input', lines.length === 1 ? lines[0]! : `${lines.length} inputs the service does not accept:\n${lines.map((l) => `  ${l}`).join('\n')}`, { failures });
}
