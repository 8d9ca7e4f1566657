// Who is calling (wire contract §4): an API-key signature over the raw request target, or Basic.
import { createHash, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { basicAuthorization, parseBasicAuthorization, parseSignedTarget, verifySignature } from '../../auth/signer';
import type { Clock } from '../ports';
import { GenerationMemo } from '../store/memo';
import type { Store } from '../store/port';
import { ServiceError } from '../service-error';
import { FailureLimiter } from './failure-limiter';
import { hashPassword, verifyPassword } from './passwords';
import type { SecretBox } from './secret-box';

export interface Caller {
  login: string;
  admin: boolean;
  /** How the caller proved who they are: a signed URL can be replayed, a password cannot be read from it. */
  via?: 'signature' | 'basic';
  /** Signed with a read-only key pair: GET and HEAD only. */
  readOnly?: boolean;
}

export interface AuthRules {
  clock: Clock;
  /** Above 0: a signed URL must carry `expires` at most this many seconds ahead. */
  maxAgeSeconds: number;
  /** Failed authentications one address may make per minute before a 429. */
  failuresPerMinute: number;
}

export const REALM = 'appliance-forge';

function unauthorized(message: string): ServiceError {
  return new ServiceError(401, message, { 'WWW-Authenticate': `Basic realm="${REALM}"` });
}

/** Verified Basic credentials, so that a client does not pay a scrypt per request. Bounded. */
const BASIC_CACHE_MAX = 256;

/** A public key resolved to its pair's owner and clear secret (or to nothing), for as long as no row changed. */
interface KeyHolder {
  /** Who signs with it: one frozen object handed to every request it signs. */
  caller: Readonly<Caller>;
  /** The clear secret as an HMAC key, its bytes prepared once. */
  secret: KeyObject;
}

export class Authenticator {
  private readonly basicOk = new Map<string, true>();
  private readonly limiter: FailureLimiter;
  /**
   * Per public key: who holds it and its decrypted secret, so that a signed request does not read the key
   * row, the user row and run the AES decryption each time. Filed by public key, dropped on any
   * change of the store (memo.ts): a deleted key or a changed user is seen by the next request.
   */
  readonly keys: GenerationMemo<KeyHolder | null>;
  /** A hash of no one's password: an unknown login costs the same scrypt as a known one (no timing oracle). */
  private dummyHash: Promise<string> | undefined;
  constructor(
    private readonly store: Store,
    private readonly box: SecretBox,
    private readonly servicePath: string,
    private readonly rules: AuthRules,
  ) {
    this.limiter = new FailureLimiter(rules.failuresPerMinute, 60_000, rules.clock);
    this.keys = new GenerationMemo(store, 4096);
  }

  /** Who holds the key: at once when kept, else read from the store. */
  private keyHolder(publicKey: string): KeyHolder | null | Promise<KeyHolder | null> {
    return this.keys.get(publicKey, async () => {
      const key = await this.store.byKey('apikey', publicKey);
      const user = key?.secret ? await this.store.getUser(key.owner) : undefined;
      if (!key?.secret || !user) return null;
      const caller: Caller = { login: user.login, admin: user.admin, via: 'signature', ...(key.doc.scope === 'read' ? { readOnly: true } : {}) };
      return { caller: Object.freeze(caller), secret: createSecretKey(this.box.open(key.secret), 'utf8') };
    });
  }

  /**
   * The caller, or a 401; an address past its failure limit gets a 429 whatever it sends. A signature
   * whose key is kept is checked at once (no promise: a signed GET is most of the traffic); a key read
   * from the store, and Basic (scrypt), answer a promise.
   */
  authenticate(rawUrl: string, authorization: string | undefined, address = ''): Caller | Promise<Caller> {
    this.admit(address);
    const refused = (e: unknown): never => this.refused(e, rawUrl, authorization, address);
    try {
      const signed = this.verifySigned(rawUrl);
      if (signed instanceof Promise) return signed.then((c) => c ?? this.verifyBasic(authorization)).catch(refused);
      return signed ?? this.verifyBasic(authorization).catch(refused);
    } catch (e) {
      return refused(e);
    }
  }

  /**
   * A login and password given in a form (the web console's sign-in): the same check as Basic, counted by
   * the same per-address failure limit (429 past it).
   */
  signIn(login: string, password: string, address: string): Promise<Caller> {
    return this.limited(address, () => this.verifyBasic(basicAuthorization(login, password)));
  }

  /** An API key pair given in a form (the console's other sign-in): its holder, read-only for a read-only pair. */
  signInWithKey(publicKey: string, secretKey: string, address: string): Promise<Caller> {
    return this.limited(address, async () => {
      const holder = await this.keyHolder(publicKey);
      const digest = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();
      if (!holder || !timingSafeEqual(digest(holder.secret.export()), digest(secretKey))) throw unauthorized('invalid API key pair');
      return holder.caller;
    });
  }

  /** A check counted by the per-address failure limit: 429 past it, a failure counted when `check` throws. */
  private async limited(address: string, check: () => Promise<Caller>): Promise<Caller> {
    this.admit(address);
    try {
      return await check();
    } catch (e) {
      this.limiter.fail(address);
      throw e;
    }
  }

  /** A 429 for an address past its failure limit; then the store's commits of other connections are seen (a key removed elsewhere). */
  private admit(address: string): void {
    const wait = this.limiter.retryAfter(address);
    if (wait > 0) throw new ServiceError(429, 'too many failed authentications from this address: retry later', { 'Retry-After': String(wait) });
    this.store.lookForCommits();
  }

  /** Only credentials that were presented and refused count: a first request without any is no guess. */
  private refused(e: unknown, rawUrl: string, authorization: string | undefined, address: string): never {
    if (authorization !== undefined || /[?&](apiKey|signature)=/.test(rawUrl)) this.limiter.fail(address);
    throw e;
  }

  /** The caller of a signed target; undefined when the target carries no signature. */
  private verifySigned(rawUrl: string): Caller | undefined | Promise<Caller> {
    const signed = parseSignedTarget(rawUrl, this.servicePath);
    if (signed) {
      const check = (holder: KeyHolder | null): Caller => {
        if (!holder || !verifySignature(holder.secret, signed)) throw unauthorized('invalid API key signature');
        this.checkExpiry(signed.signed);
        return holder.caller;
      };
      const holder = this.keyHolder(signed.publicKey);
      return holder instanceof Promise ? holder.then(check) : check(holder);
    }
    if (/[?&]signature=/.test(rawUrl)) throw unauthorized('malformed API key signature (apiKey, then signature last)');
    return undefined;
  }

  private async verifyBasic(authorization: string | undefined): Promise<Caller> {
    const basic = parseBasicAuthorization(authorization);
    if (basic) {
      const user = await this.store.getUser(basic.login);
      if (!user || !user.passwordHash) {
        await verifyPassword(basic.password, await (this.dummyHash ??= hashPassword(randomBytes(16).toString('base64'))));
        throw unauthorized('invalid login or password');
      }
      const memo = createHash('sha256').update(`${user.login}\0${basic.password}\0${user.passwordHash}`).digest('base64');
      if (!this.basicOk.has(memo)) {
        if (!(await verifyPassword(basic.password, user.passwordHash))) throw unauthorized('invalid login or password');
        if (this.basicOk.size >= BASIC_CACHE_MAX) this.basicOk.clear();
        this.basicOk.set(memo, true);
      }
      return { login: user.login, admin: user.admin, via: 'basic' };
    }
    throw unauthorized('authentication required (API key signature or Basic)');
  }

  /** `expires` (Unix seconds), signed with the rest of the URL: refused when past, or missing/too far when required. */
  private checkExpiry(signedPart: string): void {
    // Without `expires` written out or any percent-escape (which could spell it), the query has none.
    const all = signedPart.includes('expires') || signedPart.includes('%') ? new URLSearchParams(signedPart.slice(signedPart.indexOf('?') + 1)).getAll('expires') : [];
    const { maxAgeSeconds } = this.rules;
    if (all.length === 0) {
      if (maxAgeSeconds > 0) throw unauthorized(`this server requires signed URLs to carry expires (Unix seconds, at most ${maxAgeSeconds} s ahead) before apiKey`);
      return;
    }
    if (all.length > 1 || !/^\d{1,12}$/.test(all[0]!)) throw unauthorized('expires must be one whole number of seconds since 1970');
    const left = Number(all[0]) - Math.floor(this.rules.clock.now().getTime() / 1000);
    if (left < 0) throw unauthorized('the signed URL has expired');
    if (maxAgeSeconds > 0 && left > maxAgeSeconds) throw unauthorized(`expires is more than ${maxAgeSeconds} s ahead`);
  }
}
