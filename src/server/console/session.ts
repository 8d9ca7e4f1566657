// The console's sessions, without a session table: the cookie holds the user, the user's session epoch, an
// expiry and a nonce, signed with HMAC-SHA256 under a key derived from the secret box's key (secret-box.ts),
// which every node of a farm holds, so any node accepts a session another one opened. The MAC also covers
// a digest of the user's password hash: a changed password ends every session. Signing out raises the
// user's epoch in the store (users' `consoleEpoch`), which every node reads on each request: every console
// session of that user ends, on every node. CSRF tokens are an HMAC of the session's nonce under a second
// key (a synchronizer token that needs no storage); the sign-in form has its own, tied to a short-lived
// pre-session cookie. A session opened with an API key pair names the pair's public key and ends when the pair
// is deleted; a read-only pair's session is read-only.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../auth/secret-box';
import type { Store } from '../store/port';

export const SESSION_COOKIE = 'forge_console';
export const PRE_SESSION_COOKIE = 'forge_console_signin';
/** How long a session lasts from sign-in (absolute, not sliding). */
export const SESSION_SECONDS = 12 * 3600;
const PRE_SESSION_SECONDS = 3600;

export interface Session {
  login: string;
  admin: boolean;
  /** Signed in with a read-only API key pair: pages only, every action refused. */
  readOnly: boolean;
  /** The token every state-changing form of this session carries. */
  csrf: string;
}

interface Claims {
  /** login */
  u: string;
  /** the user's session epoch at sign-in */
  e: number;
  /** expiry, Unix seconds */
  x: number;
  /** nonce */
  n: string;
  /** The public key of the pair the user signed in with (absent for a password): the session ends with the pair. */
  k?: string | undefined;
  /** 1: the pair is read-only. */
  r?: 1 | undefined;
}

const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const passwordDigest = (hash: string | null): string => createHash('sha256').update(hash ?? '').digest('base64url');

export class ConsoleSessions {
  private readonly sessionKey: Buffer;
  private readonly csrfKey: Buffer;
  constructor(
    private readonly store: Store,
    box: SecretBox,
    private readonly now: () => Date,
  ) {
    this.sessionKey = box.derive('console session');
    this.csrfKey = box.derive('console csrf');
  }

  private mac(payload: string, passwordHash: string | null): string {
    return b64(createHmac('sha256', this.sessionKey).update(`${payload}\0${passwordDigest(passwordHash)}`).digest());
  }

  private seconds(): number {
    return Math.floor(this.now().getTime() / 1000);
  }

  csrfOf(nonce: string): string {
    return b64(createHmac('sha256', this.csrfKey).update(`session\0${nonce}`).digest());
  }

  /** A new session's cookie value for `login` (whose password, or key pair `key`, was just checked). */
  async open(login: string, key?: { publicKey: string; readOnly: boolean }): Promise<string> {
    const user = await this.store.getUser(login);
    if (!user) throw new Error(`user ${login} vanished`);
    const claims: Claims = {
      u: login,
      e: user.doc.consoleEpoch ?? 0,
      x: this.seconds() + SESSION_SECONDS,
      n: b64(randomBytes(18)),
      k: key?.publicKey,
      r: key?.readOnly ? 1 : undefined,
    };
    const payload = b64(JSON.stringify(claims));
    return `${payload}.${this.mac(payload, user.passwordHash)}`;
  }

  private claims(cookie: string | undefined): Claims | undefined {
    if (!cookie || cookie.length > 1024) return undefined;
    const [payload, mac, extra] = cookie.split('.');
    if (!payload || !mac || extra !== undefined) return undefined;
    try {
      const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<Claims>;
      if (typeof c.u !== 'string' || typeof c.e !== 'number' || typeof c.x !== 'number' || typeof c.n !== 'string') return undefined;
      if ((c.k !== undefined && typeof c.k !== 'string') || (c.r !== undefined && c.r !== 1)) return undefined;
      return { u: c.u, e: c.e, x: c.x, n: c.n, k: c.k, r: c.r };
    } catch {
      return undefined;
    }
  }

  /** The session a cookie value stands for, or undefined (absent, forged, expired, signed out, password changed, user gone). */
  async verify(cookie: string | undefined): Promise<Session | undefined> {
    const c = this.claims(cookie);
    if (!c || c.x <= this.seconds()) return undefined;
    // Each request sees the commits of other connections and nodes (a sign-out elsewhere).
    this.store.lookForCommits();
    const user = await this.store.getUser(c.u);
    if (!user || (user.doc.consoleEpoch ?? 0) !== c.e) return undefined;
    const [payload, mac] = cookie!.split('.') as [string, string];
    if (!sameMac(mac, this.mac(payload, user.passwordHash))) return undefined;
    if (c.k !== undefined && (await this.store.byKey('apikey', c.k))?.owner !== user.login) return undefined;
    return { login: user.login, admin: user.admin, readOnly: c.r === 1, csrf: this.csrfOf(c.n) };
  }

  /** Ends every console session of `login` on every node: its epoch goes up by one. */
  async endAll(login: string): Promise<void> {
    await this.store.tx(async (t) => {
      const u = await t.getUser(login);
      if (u) await t.updateUser(login, { doc: { ...u.doc, consoleEpoch: (u.doc.consoleEpoch ?? 0) + 1 } });
    });
  }

  /** A pre-session nonce for the sign-in form (its cookie value) and the token the form carries with it. */
  preSession(): { cookie: string; token: string } {
    const cookie = `${this.seconds() + PRE_SESSION_SECONDS}.${b64(randomBytes(18))}`;
    return { cookie, token: this.preToken(cookie) };
  }

  private preToken(cookie: string): string {
    return b64(createHmac('sha256', this.csrfKey).update(`sign-in\0${cookie}`).digest());
  }

  /** The sign-in form's token matches its pre-session cookie, which has not expired. */
  preSessionOk(cookie: string | undefined, token: string | undefined): boolean {
    if (!cookie || !token || cookie.length > 200) return false;
    const expiry = Number(cookie.split('.')[0]);
    return Number.isSafeInteger(expiry) && expiry > this.seconds() && sameMac(token, this.preToken(cookie));
  }

  /** The form's token is this session's. */
  csrfOk(session: Session, token: string | undefined): boolean {
    return token !== undefined && sameMac(token, session.csrf);
  }
}

export interface CookieOptions {
  secure: boolean;
  maxAge?: number;
}

/** A Set-Cookie value: HttpOnly, SameSite=Strict, Path=/console, Secure over TLS. */
export function setCookie(name: string, value: string, o: CookieOptions): string {
  return [`${name}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict', ...(o.secure ? ['Secure'] : []), ...(o.maxAge !== undefined ? [`Max-Age=${o.maxAge}`] : [])].join('; ');
}

/** A cookie of the request's Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
