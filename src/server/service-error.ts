// The one error type of the server: every 4xx/5xx leaves through it and becomes a `uforgeError`
// body in one place (app.ts error handler; wire contract §5, style example 5). It is a ForgeError
// of the package's tree (src/errors.ts): `isForgeError(e, ServiceError)` narrows to it.
import { ForgeError, isForgeError } from '../errors';

export class ServiceError extends ForgeError {
  static readonly code = 'E_SERVICE';
  constructor(
    readonly statusCode: number,
    message: string,
    /** Extra response headers (Allow on 405, WWW-Authenticate on 401, Retry-After…). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const badRequest = (m: string): ServiceError => new ServiceError(400, m);
export const forbidden = (m = 'not allowed for this user'): ServiceError => new ServiceError(403, m);
export const notFound = (m: string): ServiceError => new ServiceError(404, m);
export const conflict = (m: string): ServiceError => new ServiceError(409, m);

export function isServiceError(e: unknown): e is ServiceError {
  return isForgeError(e, ServiceError);
}
