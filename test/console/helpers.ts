// A browser without a browser for the console's HTTP tests: fetch with a cookie jar, no redirects followed
// (the tests read each 303), the sign-in form's token read from the page as a user's browser would.
import type { CreatedUser } from '../../src/server';
import { startReferenceServer, type ReferenceServer } from '../support/reference-server';

export const PASSWORDS = { alice: 'alice-Console-pw1', bob: 'bob-Console-pw1' } as const;

export type ConsoleServer = ReferenceServer<'alice' | 'bob'>;

export function startConsoleServer(): Promise<ConsoleServer> {
  return startReferenceServer({ alice: { password: PASSWORDS.alice }, bob: { password: PASSWORDS.bob } }, { prefix: 'forge-console-' });
}

/** The origin of a running server (its URL is `…/api`). */
export const originOf = (ref: ConsoleServer): string => new URL(ref.url).origin;

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** Bytes of the body as sent. */
  bytes: number;
}

/** The value of `name="csrf"` on a page. */
export function csrfOf(page: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(page);
  if (!m) throw new Error(`no CSRF token on the page:\n${page.slice(0, 500)}`);
  return m[1]!;
}

export class Visitor {
  readonly jar = new Map<string, string>();
  constructor(readonly origin: string) {}

  private remember(h: Headers): void {
    for (const line of h.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /max-age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  private cookie(): Record<string, string> {
    return this.jar.size ? { cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(path: string): Promise<Answer> {
    const r = await fetch(this.origin + path, { redirect: 'manual', headers: this.cookie() });
    this.remember(r.headers);
    const buf = Buffer.from(await r.arrayBuffer());
    return { status: r.status, headers: r.headers, text: buf.toString('utf8'), bytes: buf.length };
  }

  async post(path: string, form: Record<string, string>): Promise<Answer> {
    const r = await fetch(this.origin + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...this.cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    this.remember(r.headers);
    const buf = Buffer.from(await r.arrayBuffer());
    return { status: r.status, headers: r.headers, text: buf.toString('utf8'), bytes: buf.length };
  }

  /** Open the sign-in page and send the form; the answer to the POST. */
  async signIn(login: string, password: string): Promise<Answer> {
    const form = await this.get('/console/sign-in');
    return this.post('/console/sign-in', { csrf: csrfOf(form.text), login, password });
  }
}

/** A visitor signed in as `user` (the sign-in must succeed). */
export async function signedIn(ref: ConsoleServer, user: CreatedUser): Promise<Visitor> {
  const v = new Visitor(originOf(ref));
  const r = await v.signIn(user.login, PASSWORDS[user.login as keyof typeof PASSWORDS]);
  if (r.status !== 303) throw new Error(`sign-in of ${user.login} answered ${r.status}: ${r.text.slice(0, 300)}`);
  return v;
}
