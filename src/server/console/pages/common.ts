// The pages every part of the console shares: an error (its status in words), a confirmation before an
// action (GET shows it, the form POSTs it with the session's CSRF token), and the sign-in form.
import { html, type Html } from '../html';
import { BASE, page } from '../layout';
import type { Session } from '../session';

export function errorPage(status: number, message: string, session?: Session): Html {
  const title = status === 404 ? 'Not found' : status === 403 ? 'Refused' : status === 429 ? 'Too many attempts' : status >= 500 ? 'Server error' : 'Request refused';
  return page({
    title,
    session,
    body: html`<p class="error" role="alert">${message}</p><p><a href="${BASE}/images">Back to the images</a></p>`,
  });
}

export interface Confirmation {
  title: string;
  /** What will happen, in words. */
  question: string;
  /** Where the form posts. */
  action: string;
  button: string;
  /** Where "no" leads. */
  back: string;
}

export function confirmPage(session: Session, c: Confirmation): Html {
  return page({
    title: c.title,
    session,
    body: html`<p>${c.question}</p>
<form method="post" action="${c.action}"><input type="hidden" name="csrf" value="${session.csrf}">
<button type="submit" class="danger">${c.button}</button> <a class="button quiet" href="${c.back}">No, go back</a></form>`,
  });
}

export function signInPage(token: string, message?: string, login = ''): Html {
  return page({
    title: 'Sign in',
    body: html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="${BASE}/sign-in">
<input type="hidden" name="csrf" value="${token}">
<label for="login">Login</label><input type="text" id="login" name="login" autocomplete="username" required value="${login}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">The same login and password as the API's Basic authentication.</p>
<h2>Or with an API key pair</h2>
<form method="post" action="${BASE}/sign-in">
<input type="hidden" name="csrf" value="${token}">
<label for="publicKey">Public key</label><input type="text" id="publicKey" name="publicKey" autocomplete="off" required spellcheck="false">
<label for="secretKey">Secret key</label><input type="password" id="secretKey" name="secretKey" autocomplete="off" required>
<p><button type="submit">Sign in with the key pair</button></p>
</form>
<p class="muted">A read-only pair opens a read-only session; deleting the pair ends it.</p>`,
  });
}
