// A small tree of errors with stable codes. Each class carries a literal `code` and a brand under a
// global symbol, so `isForgeError(e, 'E_API')` holds across duplicate copies of the package where
// `instanceof` would not (style example 5).
import type { UForgeError } from './model/resources';
import type { UsageError } from './cli/command';
import type { ApplyError } from './engine/apply';
import type { ImagingError } from './imaging/errors';
import type { ServiceError } from './server/service-error';
import type { DataFolderError } from './server/data-folder';

const BRAND = Symbol.for('appliance-forge.error');

export type ErrorCode =
  | 'E_DECODE'
  | 'E_API'
  | 'E_HTTP'
  | 'E_TRANSPORT'
  | 'E_JOB_FAILED'
  | 'E_JOB_CANCELLED'
  | 'E_WAIT_TIMEOUT'
  | 'E_ABORTED'
  | 'E_CHECKSUM'
  | 'E_FIQL'
  | 'E_OPENSTACK'
  | 'E_DECLARATION'
  | 'E_SERVICE'
  | 'E_IMAGING'
  | 'E_DATA_FOLDER'
  // The engine's and the command line's: ApplyError (engine/apply.ts), ConnectSettingsError
  // (engine/connect.ts), UsageError (cli/command.ts).
  | 'E_APPLY'
  | 'E_SETTINGS'
  | 'E_USAGE';

export abstract class ForgeError extends Error {
  abstract readonly code: ErrorCode;
  readonly [BRAND] = true;
}

/** The message of any thrown value (an `Error`'s message, anything else as a string), for wrapping and logs. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The classes `isForgeError` narrows to: this module's, the server's (ServiceError, ImagingError, DataFolderError), the engine's
 * and the command line's (ApplyError, UsageError); a code whose class is not listed (E_OPENSTACK, E_DECLARATION)
 * narrows to `ForgeError`.
 */
type CoreError =
  | DecodeError | FiqlError | ApiError | HttpError | TransportError | JobFailedError | JobCancelledError | WaitTimeoutError | AbortedError | ChecksumError
  | ServiceError | ImagingError | DataFolderError
  | ApplyError | UsageError;
/** The error `isForgeError(e, code)` narrows to: the class of that code where it is defined here. */
export type ForgeErrorOf<C extends ErrorCode> = C extends ErrorCode
  ? [Extract<CoreError, { code: C }>] extends [never] ? ForgeError & { code: C } : Extract<CoreError, { code: C }>
  : never;

export function isForgeError<C extends ErrorCode = ErrorCode>(e: unknown, code?: C): e is ForgeErrorOf<C> {
  return (
    typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true &&
    (code === undefined || (e as ForgeError).code === code)
  );
}

/** A document that does not decode: bad syntax, a DTD, a wrong type, an unknown `xsi:type`. */
export class DecodeError extends ForgeError {
  readonly code = 'E_DECODE' as const;
  constructor(
    message: string,
    /** Field path inside the document, e.g. `appliance.installProfile.diskSize`. */
    readonly path?: string,
  ) {
    super(path ? `${path}: ${message}` : message);
    this.name = 'DecodeError';
  }
}

/** A FIQL query that does not parse; `position` is the 0-based offset of the problem. */
export class FiqlError extends ForgeError {
  readonly code = 'E_FIQL' as const;
  constructor(message: string, readonly position: number) {
    super(`invalid query at position ${position}: ${message}`);
    this.name = 'FiqlError';
  }
}

/** The service answered with an error status and a `uforgeError` body. */
export class ApiError extends ForgeError {
  readonly code = 'E_API' as const;
  readonly statusCode: number;
  readonly messageId: string | undefined;
  readonly requestMethod: string | undefined;
  readonly requestUri: string | undefined;
  readonly timestamp: string | undefined;
  constructor(readonly status: number, readonly body: UForgeError, readonly headers: Readonly<Record<string, string>> = {}) {
    super(`${status}: ${body.localizedErrorMsg?.message ?? 'error'}`);
    this.name = 'ApiError';
    this.statusCode = body.statusCode ?? status;
    this.messageId = body.localizedErrorMsg?.messageId;
    this.requestMethod = body.requestMethod;
    this.requestUri = body.requestUri;
    this.timestamp = body.timestamp;
  }
}

/** An error status whose body is not a `uforgeError` (a proxy's HTML 503, say); keeps a redacted snippet. */
export class HttpError extends ForgeError {
  readonly code = 'E_HTTP' as const;
  constructor(readonly status: number, readonly snippet: string, readonly headers: Readonly<Record<string, string>> = {}) {
    super(`HTTP ${status}${snippet ? `: ${snippet}` : ''}`);
    this.name = 'HttpError';
  }
}

/** The request never got an answer: connection refused or reset, timeout. */
export class TransportError extends ForgeError {
  readonly code = 'E_TRANSPORT' as const;
  constructor(message: string, override readonly cause?: unknown, readonly retryable = true) {
    super(message);
    this.name = 'TransportError';
  }
}

/** A generation or publication ended with `error=true`; carries the last status. */
export class JobFailedError extends ForgeError {
  readonly code = 'E_JOB_FAILED' as const;
  constructor(readonly status: import('./model/resources').OpStatus) {
    super(`job failed: ${status.errorMessage ?? status.message ?? 'unknown error'}`);
    this.name = 'JobFailedError';
  }
}

/** A job ended with `cancelled=true`. */
export class JobCancelledError extends ForgeError {
  readonly code = 'E_JOB_CANCELLED' as const;
  constructor(readonly status: import('./model/resources').OpStatus) {
    super('job cancelled');
    this.name = 'JobCancelledError';
  }
}

export class WaitTimeoutError extends ForgeError {
  readonly code = 'E_WAIT_TIMEOUT' as const;
  constructor(readonly timeoutMs: number, readonly lastStatus?: import('./model/resources').OpStatus) {
    super(`job did not finish within ${timeoutMs} ms (last: ${lastStatus?.percentage ?? 0}% ${lastStatus?.message ?? ''})`);
    this.name = 'WaitTimeoutError';
  }
}

export class AbortedError extends ForgeError {
  readonly code = 'E_ABORTED' as const;
  constructor(message = 'aborted') {
    super(message);
    this.name = 'AbortError';
  }
}

/** Downloaded bytes whose sha256 is not the one the service announced: nothing was kept. */
export class ChecksumError extends ForgeError {
  readonly code = 'E_CHECKSUM' as const;
  constructor(readonly target: string, readonly expected: string, readonly actual: string) {
    super(`download of ${target}: sha256 ${actual} differs from the expected ${expected}; nothing was kept`);
    this.name = 'ChecksumError';
  }
}
