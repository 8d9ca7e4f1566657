// Authentication, the layer next to the transport so that it signs exactly the target that is sent
// (wire contract §4; style example 6).
import { basicAuthorization, signTarget } from '../auth/signer';
import type { Exchange } from './wire';

export type Auth = { login: string; publicKey: string; secretKey: string } | { login: string; password: string };

export function sign(auth: Auth, next: Exchange): Exchange {
  if ('secretKey' in auth) {
    const key = { publicKey: auth.publicKey, secretKey: auth.secretKey };
    return (req) => next({ ...req, target: signTarget(req.target, key) });
  }
  const authorization = basicAuthorization(auth.login, auth.password);
  return (req) => next({ ...req, headers: { ...req.headers, authorization } });
}
