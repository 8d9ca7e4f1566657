// The client's fixed pipeline, composed here and nowhere else (style example 6):
//   retry → negotiate → cache → sign → transport
// Signing is innermost, so it signs exactly the target that goes out; the cache sits above it and
// keys on the unsigned target; negotiate turns bytes into documents and error statuses into typed
// errors, which is what retry classifies.
import type { Format } from '../codec/index';
import { cache, type ResponseCache } from './cache';
import { negotiate } from './negotiate';
import { retry, type RetryHooks, type RetryPolicy } from './retry';
import { sign, type Auth } from './sign';
import type { Exchange, Handler } from './wire';

export interface PipelineParts {
  transport: Exchange;
  auth: Auth;
  format: Format;
  cache: ResponseCache | undefined;
  retry: RetryPolicy;
  hooks?: RetryHooks;
}

export function pipeline(p: PipelineParts): Handler {
  const secrets = 'secretKey' in p.auth ? [p.auth.secretKey] : [p.auth.password];
  return retry(p.retry, negotiate(p.format, secrets, cache(p.cache, sign(p.auth, p.transport))), p.hooks);
}
