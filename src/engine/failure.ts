// One failure, in words a user can act on, with the exit code the command line uses (2 for an
// invalid file or a usage error (a flag, a setting, a variable, a builder selection), 1 otherwise): the one error formatter of the command line and the
// Action. The message is built from the error's code (a system error's code in words, never a
// class's prefix or code), bounded in length, and always masked.
import { systemErrorText } from '../error-text';
import { ApiError, HttpError, TransportError } from '../client/errors';
import { AbortedError, isForgeError } from '../errors';
import { ApplyError, UsageError } from './errors';
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

/** A failure's message is one screen at most (a usage error's text included); declaration problems are bounded by count (problems.ts). */
const MESSAGE_CHARS = 4000;

/** `service.url`: the base URL the run was given, for a hint when the service answers 404 at its root. */
export function describeFailure(e: unknown, secrets: Pick<SecretSet, 'mask'>, deadline?: Deadline, service?: { readonly url?: string | undefined }): Failure {
  const base = { problems: [] as Problem[], interrupted: false, exitCode: 1 as const };
  if (isForgeError(e, DeclarationError)) {
    return { ...base, exitCode: 2, message: secrets.mask(e.message), problems: e.problems.map((p) => ({ ...p, message: secrets.mask(p.message) })) };
  }
  // The time bound ran out (AbortSignal.timeout's reason): a failure that says so, not an interruption.
  const reason: unknown = deadline?.signal.reason;
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError' ? deadline?.bound : undefined;
  if (isForgeError(e, AbortedError) && timedOut === undefined) return { ...base, interrupted: true, message: `interrupted: ${secrets.mask(e.message)}` };
  const usage = isForgeError(e, UsageError) || /^ERR_PARSE_ARGS/.test(codeOf(e) ?? '');
  const text = `${messageFor(e)}${baseUrlHint(e, service?.url) ?? ''}`;
  const message = secrets.mask(timedOut === undefined ? text : `timed out after ${timedOut}: ${text}`);
  return { ...base, exitCode: usage ? 2 : 1, message: message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS - 1)}…` : message };
}

/**
 * A 404 from a base URL whose path does not end in /api (the reference server's and the platform's API both live
 * there): most likely the URL is the site's root, not the API's, so the hint names the URL to try.
 */
function baseUrlHint(e: unknown, url: string | undefined): string | undefined {
  const status = isForgeError(e, ApiError) || isForgeError(e, HttpError) ? e.status : undefined;
  if (status !== 404 || url === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(u.protocol) || /\/api\/?$/.test(u.pathname)) return undefined;
  u.username = '';
  u.password = '';
  const base = u.href.replace(/\/+$/, '');
  return `; is ${base} the service's base URL? The API is usually under /api (${base}/api)`;
}

function messageFor(e: unknown): string {
  if (isForgeError(e, ApiError)) {
    return e.status === 401
      ? `the service refused the credentials (401): check the user and the API key pair or password (${e.message})`
      : e.status === 403
        ? `the service refused access (403): ${e.message}`
        : `the service answered ${e.message}`;
  }
  if (isForgeError(e, TransportError)) return `cannot reach the service: ${e.message}`;
  // Each failed step in these words, without ApplyError's own "apply failed:" (the adapters say what failed).
  if (isForgeError(e, ApplyError)) {
    const steps = e.failures.map((f) => `${f.what}: ${messageFor(f.error)}`);
    return steps.length === 1 ? steps[0]! : `${steps.length} steps failed:\n${steps.map((s) => `  ${s}`).join('\n')}`;
  }
  if (isForgeError(e)) return e.message;
  // Node's own errors (a folder that cannot be made, a port in use) by their code, in words.
  return systemErrorText(e) ?? (e instanceof Error ? e.message : String(e));
}

function codeOf(e: unknown): string | undefined {
  const c = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof c === 'string' ? c : undefined;
}
