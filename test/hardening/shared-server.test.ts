// What a shared server needs beyond the platform's signing scheme (issue 12, weaknesses), over
// real HTTP on 127.0.0.1 against a real server: every case fails on the code before its change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTarget } from '../../src/auth/signer';
import { PASSWORDS, startHarness, whyNotClientError, XML_HEADERS, type Harness } from './support/harness';

describe('signed URLs on a shared server', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('a read URL replayed as PUT with a password or as POST on apikeys is refused; Basic does both', async () => {
    const readUrl = signTarget('users/alice', h.alice);
    expect((await h.sendRaw('GET', `/api/${readUrl}`)).status).toBe(200);
    const setPw = await h.sendRaw('PUT', `/api/${readUrl}`, { headers: XML_HEADERS, body: '<user><password>taken-over-1</password></user>' });
    expect(whyNotClientError(setPw, 403)).toBeUndefined();
    const keysUrl = signTarget('users/alice/apikeys', h.alice);
    const mint = await h.sendRaw('POST', `/api/${keysUrl}`, { headers: XML_HEADERS, body: '<apiKeyPair><name>stolen</name></apiKeyPair>' });
    expect(whyNotClientError(mint, 403)).toBeUndefined();
    // The password did not change; the current one still works, and with it both writes are allowed.
    const basic = { login: 'alice', password: PASSWORDS.alice };
    expect((await h.send('GET', 'users/alice', { user: null, basic: { login: 'alice', password: 'taken-over-1' } })).status).toBe(401);
    expect((await h.send('POST', 'users/alice/apikeys', { user: null, basic, headers: XML_HEADERS, body: '<apiKeyPair><name>mine</name></apiKeyPair>' })).status).toBe(201);
    const next = 'alice-Next-pw-2';
    expect((await h.send('PUT', 'users/alice', { user: null, basic, headers: XML_HEADERS, body: `<user><password>${next}</password></user>` })).status).toBe(200);
    expect((await h.send('PUT', 'users/alice', { user: null, basic: { login: 'alice', password: next }, headers: XML_HEADERS, body: `<user><password>${PASSWORDS.alice}</password></user>` })).status).toBe(200);
  });
});
