// One failure, in words a user can act on, with the exit code the command line uses (2 for an
// invalid file or a builder selection that names no builder, 1 otherwise). Shared by the command line
// and the Action; always masked.
import { isForgeError } from '../errors';
import { BuilderSelectionError } from './builder-selection';
import { ConnectSettingsError } from './connect';
import { EmbeddedUnavailableError } from './embedded';
import { DeclarationError, type Problem } from './problems';
import type { SecretSet } from './secrets';

export interface Failure {
  readonly exitCode: 1 | 2;
  readonly message: string;
  /** Declaration problems, for annotations. */
  readonly problems: readonly Problem[];
  readonly interrupted: boolean;
}

/** The run's time bound: its signal (AbortSignal.timeout's, possibly combined) and how to name it. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** E.g. `30m (--timeout)`. */
  readonly bound: string;
}

export function describeFailure(e: unknown, secrets: SecretSet, deadline?: Deadline): Failure {
  const base = { problems: [] as Problem[], interrupted: false, exitCode: 1 as const };
  if (isForgeError(e, 'E_DECLARATION') && e instanceof DeclarationError) {
    return { ...base, exitCode: 2, message: secrets.mask(e.message), problems: e.problems.map((p) => ({ ...p, message: secrets.mask(p.message) })) };
  }
  if (e instanceof BuilderSelectionError) return { ...base, exitCode: 2, message: secrets.mask(e.message) };
  // The time bound ran out (AbortSignal.timeout's reason): a failure that says so, not an interruption.
  const reason: unknown = deadline?.signal.reason;
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError' ? deadline?.bound : undefined;
  let message: string;
  if (isForgeError(e, 'E_API')) {
    message = e.status === 401
      ? `the service refused the credentials (401): check the user and the API key pair or password (${e.message})`
      : e.status === 403
        ? `the service refused access (403): ${e.message}`
        : `the service answered ${e.message}`;
  } else if (isForgeError(e, 'E_TRANSPORT')) {
    message = `cannot reach the service: ${e.message}`;
  } else if (isForgeError(e, 'E_ABORTED') && timedOut === undefined) {
    return { ...base, interrupted: true, message: `interrupted: ${secrets.mask(e.message)}` };
  } else if (isForgeError(e, 'E_APPLY') || e instanceof ConnectSettingsError || e instanceof EmbeddedUnavailableError || e instanceof Error) {
    message = e.message;
  } else {
    message = String(e);
  }
  return { ...base, message: secrets.mask(timedOut === undefined ? message : `timed out after ${timedOut}: ${message}`) };
}
