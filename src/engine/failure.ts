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
import type { ConnectionSetting } from './settings-env';

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

/**
 * The service a run talks to, as a failure names it: its URL (a hint when it answers 404 at its root), and on a
 * 401 the user and where the credentials came from (which of them were given, never their values).
 */
export type FailureService = { readonly [K in ConnectionSetting]?: string | undefined } & {
  /** Where each setting came from, in words (connect.ts's ConnectSettings.sources). */
  readonly sources?: { readonly [K in ConnectionSetting]?: string } | undefined;
};

export function describeFailure(e: unknown, secrets: Pick<SecretSet, 'mask'>, deadline?: Deadline, service?: FailureService): Failure {
  const base = { problems: [] as Problem[], interrupted: false, exitCode: 1 as const };
  if (isForgeError(e, DeclarationError)) {
    return { ...base, exitCode: 2, message: secrets.mask(e.message), problems: e.problems.map((p) => ({ ...p, message: secrets.mask(p.message) })) };
  }
  // The time bound ran out (AbortSignal.timeout's reason): a failure that says so, not an interruption.
  const reason: unknown = deadline?.signal.reason;
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError' ? deadline?.bound : undefined;
  if (isForgeError(e, AbortedError) && timedOut === undefined) return { ...base, interrupted: true, message: `interrupted: ${secrets.mask(e.message)}` };
  const usage = isForgeError(e, UsageError) || /^ERR_PARSE_ARGS/.test(codeOf(e) ?? '');
  const text = `${messageFor(e, service)}${baseUrlHint(e, service?.url) ?? ''}`;
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

/**
 * Which credentials a 401 refused, and from where: `the password from --password`, `the API key pair from
 * the environment (APPLIANCE_FORGE_API_KEY, APPLIANCE_FORGE_SECRET_KEY)`, `... from the credentials file F (--credentials)`.
 */
export function credentialsText(s: FailureService): string {
  const keys: ConnectionSetting[] = s.apiKey && s.secretKey ? ['apiKey', 'secretKey'] : s.password ? ['password'] : [];
  if (keys.length === 0) return 'no API key pair or password';
  const given = keys.map((k) => s.sources?.[k]).filter((x): x is string => x !== undefined);
  const env = [...new Set(given.filter((x) => /^[A-Z][A-Z0-9_]*$/.test(x)))];
  const others = [...new Set(given.filter((x) => !env.includes(x)))].map((x) => {
    const file = /^--credentials (.*)$/.exec(x)?.[1];
    return file === undefined ? x : `the credentials file ${file} (--credentials)`;
  });
  const from = [...others, ...(env.length > 0 ? [`the environment (${env.join(', ')})`] : [])];
  return `the ${keys.length === 2 ? 'API key pair' : 'password'}${from.length > 0 ? ` from ${from.join(' and ')}` : ''}`;
}

function messageFor(e: unknown, service?: FailureService): string {
  if (isForgeError(e, ApiError)) {
    return e.status === 401
      ? service?.url !== undefined
        ? `the service refused the credentials (401): the service at ${withoutUserinfo(service.url)} refused user "${service.user ?? ''}" with ${credentialsText(service)}; check them (${e.message})`
        : `the service refused the credentials (401): check the user and the API key pair or password (${e.message})`
      : e.status === 403
        ? `the service refused access (403): ${e.message}`
        : `the service answered ${e.message}`;
  }
  if (isForgeError(e, TransportError)) return `cannot reach the service: ${e.message}`;
  // Each failed step in these words, without ApplyError's own "apply failed:" (the adapters say what failed).
  if (isForgeError(e, ApplyError)) {
    const steps = e.failures.map((f) => `${f.what}: ${messageFor(f.error, service)}`);
    return steps.length === 1 ? steps[0]! : `${steps.length} steps failed:\n${steps.map((s) => `  ${s}`).join('\n')}`;
  }
  if (isForgeError(e)) return e.message;
  // Node's own errors (a folder that cannot be made, a port in use) by their code, in words.
  return systemErrorText(e) ?? (e instanceof Error ? e.message : String(e));
}

/** The URL without a user or password in it (connect.ts's publicTarget, without importing the connection code). */
function withoutUserinfo(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}

function codeOf(e: unknown): string | undefined {
  const c = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof c === 'string' ? c : undefined;
}
