// The client's errors: answers of the service, transport failures, jobs that end badly, downloads that
// do not match. ForgeErrors of the package's tree (src/errors.ts), typed from the resource model.
import { ForgeError } from '../errors';
import type { OpStatus, UForgeError } from '../model/resources';

/** The service answered with an error status and a `uforgeError` body. */
export class ApiError extends ForgeError {
  static readonly code = 'E_API';
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
  static readonly code = 'E_HTTP';
  constructor(readonly status: number, readonly snippet: string, readonly headers: Readonly<Record<string, string>> = {}) {
    super(`HTTP ${status}${snippet ? `: ${snippet}` : ''}`);
    this.name = 'HttpError';
  }
}

/** The request never got an answer: connection refused or reset, timeout. */
export class TransportError extends ForgeError {
  static readonly code = 'E_TRANSPORT';
  constructor(message: string, override readonly cause?: unknown, readonly retryable = true) {
    super(message);
    this.name = 'TransportError';
  }
}

/** A generation or publication ended with `error=true`; carries the last status. */
export class JobFailedError extends ForgeError {
  static readonly code = 'E_JOB_FAILED';
  constructor(readonly status: OpStatus) {
    super(`job failed: ${status.errorMessage ?? status.message ?? 'unknown error'}`);
    this.name = 'JobFailedError';
  }
}

/** A job ended with `cancelled=true`. */
export class JobCancelledError extends ForgeError {
  static readonly code = 'E_JOB_CANCELLED';
  constructor(readonly status: OpStatus) {
    super('job cancelled');
    this.name = 'JobCancelledError';
  }
}

export class WaitTimeoutError extends ForgeError {
  static readonly code = 'E_WAIT_TIMEOUT';
  constructor(readonly timeoutMs: number, readonly lastStatus?: OpStatus) {
    super(`job did not finish within ${timeoutMs} ms (last: ${lastStatus?.percentage ?? 0}% ${lastStatus?.message ?? ''})`);
    this.name = 'WaitTimeoutError';
  }
}

/** Downloaded bytes whose sha256 is not the one the service announced: nothing was kept. */
export class ChecksumError extends ForgeError {
  static readonly code = 'E_CHECKSUM';
  constructor(readonly target: string, readonly expected: string, readonly actual: string) {
    super(`download of ${target}: sha256 ${actual} differs from the expected ${expected}; nothing was kept`);
    this.name = 'ChecksumError';
  }
}
