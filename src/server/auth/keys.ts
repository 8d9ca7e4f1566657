// Users and API key pairs as the command line and `POST /users/<uid>/apikeys` create them.
import { randomBytes } from 'node:crypto';
import type { ApiKeyDoc } from '../store/docs';
import type { Row, Store, StoreOps } from '../store/port';
import { badRequest } from '../service-error';
import { hashPassword } from './passwords';
import type { SecretBox } from './secret-box';

/** Logins are path segments (`users/<uid>`): keep them plain. */
const LOGIN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface NewKeyPair {
  row: Row<'apikey'>;
  publicKey: string;
  /** In clear only here: the 201 answer to the creation returns it once. */
  secretKey: string;
}

/** base64url that starts with a letter or digit: a key that begins with "-" reads as an option on every command line. */
function token(bytes: number): string {
  for (;;) {
    const t = randomBytes(bytes).toString('base64url');
    if (/^[A-Za-z0-9]/.test(t)) return t;
  }
}

export async function newApiKey(store: StoreOps, box: SecretBox, login: string, meta: Omit<ApiKeyDoc, 'publicKey'> = {}): Promise<NewKeyPair> {
  const publicKey = token(24);
  const secretKey = token(30);
  const row = await store.insert('apikey', {
    owner: login,
    uniqueKey: publicKey,
    // An empty name or description is none.
    doc: { publicKey, name: meta.name || undefined, description: meta.description || undefined, scope: meta.scope },
    secret: box.seal(secretKey),
  });
  return { row, publicKey, secretKey };
}

export interface CreatedUser {
  login: string;
  publicKey: string;
  secretKey: string;
}

export async function addUser(store: Store, box: SecretBox, o: { login: string; password?: string | undefined; admin?: boolean }): Promise<CreatedUser> {
  if (!LOGIN.test(o.login)) throw badRequest(`invalid login ${JSON.stringify(o.login)}: letters, digits, ".", "_" and "-" only`);
  const hash = o.password ? await hashPassword(o.password) : null;
  return store.tx(async (t) => {
    await t.insertUser(o.login, !!o.admin, hash, { name: o.login });
    const k = await newApiKey(t, box, o.login, { name: 'initial' });
    return { login: o.login, publicKey: k.publicKey, secretKey: k.secretKey };
  });
}
