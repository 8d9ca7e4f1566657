// API-key request signing, exactly as the wire contract §4 states it (the platform's Python client):
// append apiKey last, HMAC-SHA1 over the URL relative to {base_url} (no leading slash, as sent),
// base64, percent-encode, append as `signature`. The client signs and the server verifies with
// these same functions.
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

export interface ApiKeyPair {
  publicKey: string;
  secretKey: string;
}

/** base64(HMAC-SHA1(secret, stringToSign)): 28 characters. The secret as text (UTF-8), or as a KeyObject of those bytes made once. */
export function signature(secretKey: string | KeyObject, stringToSign: string): string {
  return createHmac('sha1', secretKey).update(stringToSign, 'utf8').digest('base64');
}

/**
 * Sign a request target relative to the base URL (`users/alice/appliances?query=…`, already
 * percent-encoded, with or without a leading `/`). Returns the relative target to send, with
 * `apiKey` and `signature` appended.
 */
export function signTarget(relativeTarget: string, key: ApiKeyPair): string {
  const rel = relativeTarget.startsWith('/') ? relativeTarget.slice(1) : relativeTarget;
  const withKey = `${rel}${rel.includes('?') ? '&' : '?'}apiKey=${encodeURIComponent(key.publicKey)}`;
  return `${withKey}&signature=${encodeURIComponent(signature(key.secretKey, withKey))}`;
}

export interface SignedTarget {
  /** The string that was signed: the target relative to the base URL, up to `&signature=`. */
  signed: string;
  publicKey: string;
  /** The signature as sent, percent-decoded (base64). */
  signature: string;
}

/**
 * Split a received request target (`/api/users/alice?apiKey=K&signature=S`) into what was signed,
 * the public key and the signature. `servicePath` is the base URL's path (`/api`). Returns undefined
 * when the request carries no signature.
 */
export function parseSignedTarget(target: string, servicePath: string): SignedTarget | undefined {
  const prefix = servicePath.replace(/\/+$/, '');
  if (!target.startsWith(`${prefix}/`)) return undefined;
  const rel = target.slice(prefix.length + 1);
  const at = rel.lastIndexOf('&signature=');
  if (at < 0) return undefined;
  const signed = rel.slice(0, at);
  const rawSig = rel.slice(at + '&signature='.length);
  if (rawSig.includes('&')) return undefined; // the signature must be the last parameter
  const q = signed.indexOf('?');
  if (q < 0) return undefined;
  const params = new URLSearchParams(signed.slice(q + 1));
  const keys = params.getAll('apiKey');
  if (keys.length !== 1) return undefined;
  let sig: string;
  try {
    sig = decodeURIComponent(rawSig);
  } catch {
    return undefined;
  }
  return { signed, publicKey: keys[0]!, signature: sig };
}

/** Constant-time check of a received signature against the secret key. */
export function verifySignature(secretKey: string | KeyObject, t: SignedTarget): boolean {
  const expected = Buffer.from(signature(secretKey, t.signed), 'utf8');
  const got = Buffer.from(t.signature, 'utf8');
  // Compare equal lengths only; a different length is a mismatch, still without an early exit on content.
  const same = expected.length === got.length;
  return timingSafeEqual(expected, same ? got : expected) && same;
}

/** `Authorization: Basic base64(login:password)`. */
export function basicAuthorization(login: string, password: string): string {
  return `Basic ${Buffer.from(`${login}:${password}`, 'utf8').toString('base64')}`;
}

/** Parse a Basic `Authorization` header; undefined when it is not one. */
export function parseBasicAuthorization(header: string | undefined): { login: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) return undefined;
  return { login: decoded.slice(0, i), password: decoded.slice(i + 1) };
}
