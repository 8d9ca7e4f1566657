// Authentication, the layer next to the transport so that it signs exactly the target that is sent
// (wire contract §4; style example 6).
import { basicAuthorization, signTarget } from '../auth/signer';
import type { Exchange } from './wire';

export type Auth =
  | {
      login: string;
      publicKey: string;
      secretKey: string;
      /** Each signed URL carries a signed `expires` (Unix seconds) this far ahead: for servers that require it. */
      expiresInSeconds?: number;
    }
  | { login: string; password: string };

export function sign(auth: Auth, next: Exchange): Exchange {
  if ('secretKey' in auth) {
    const key = { publicKey: auth.publicKey, secretKey: auth.secretKey };
    const ttl = auth.expiresInSeconds;
    // `expires` goes before `apiKey`, so it is signed with the rest of the URL (docs/server.md "Signed URLs").
    const expiring = (t: string): string => (ttl === undefined ? t : `${t}${t.includes('?') ? '&' : '?'}expires=${Math.floor(Date.now() / 1000) + ttl}`);
    return (req) => next({ ...req, target: signTarget(expiring(req.target), key) });
  }
  const authorization = basicAuthorization(auth.login, auth.password);
  return (req) => next({ ...req, headers: { ...req.headers, authorization } });
}
