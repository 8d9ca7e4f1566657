// Authentication (wire contract §4): API-key signatures and Basic, 401/403, admin across users,
// and secrets never in answers (the API secret key only once, at its creation).
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { decodeXml } from '../../src/codec';
import { startTestServer, type TestServer } from './helpers';

describe('authentication', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => t.close());

  it('accepts a signature computed independently of the signer', async () => {
    const rel = `users/alice?apiKey=${encodeURIComponent(t.alice.publicKey)}`;
    const sig = createHmac('sha1', t.alice.secretKey).update(rel).digest('base64');
    const r = await t.raw('GET', `${rel}&signature=${encodeURIComponent(sig)}`, { user: null });
    expect(r.status).toBe(200);
  });

  it('refuses a bad signature, a tampered target and an unknown key with 401', async () => {
    const rel = `users/alice?apiKey=${encodeURIComponent(t.alice.publicKey)}`;
    const sig = createHmac('sha1', 'wrong').update(rel).digest('base64');
    expect((await t.raw('GET', `${rel}&signature=${encodeURIComponent(sig)}`, { user: null })).status).toBe(401);
    const good = createHmac('sha1', t.alice.secretKey).update(rel).digest('base64');
    expect((await t.raw('GET', `users/bob?apiKey=${encodeURIComponent(t.alice.publicKey)}&signature=${encodeURIComponent(good)}`, { user: null })).status).toBe(401);
    const unknown = `users/alice?apiKey=nope`;
    expect((await t.raw('GET', `${unknown}&signature=${encodeURIComponent(createHmac('sha1', 'x').update(unknown).digest('base64'))}`, { user: null })).status).toBe(401);
    expect((await t.raw('GET', `users/alice?signature=abc`, { user: null })).status).toBe(401);
  });

  it('accepts Basic with the right password only; a user without a password cannot use Basic', async () => {
    expect((await t.raw('GET', 'users/alice', { user: null, basic: { login: 'alice', password: 'alice-pass' } })).status).toBe(200);
    expect((await t.raw('GET', 'users/alice', { user: null, basic: { login: 'alice', password: 'nope' } })).status).toBe(401);
    expect((await t.raw('GET', 'users/bob', { user: null, basic: { login: 'bob', password: '' } })).status).toBe(401);
  });

  it('403 across users, admin passes', async () => {
    expect((await t.raw('GET', 'users/alice/appliances', { user: t.bob })).status).toBe(403);
    expect((await t.raw('GET', 'users/alice/appliances', { user: t.admin })).status).toBe(200);
    expect((await t.raw('GET', 'users/alice/appliances', { user: null, basic: { login: 'admin', password: 'admin-pass' } })).status).toBe(200);
  });

  it('returns the secret key once, at creation; the new pair signs; a deleted pair no longer does', async () => {
    // A new key pair needs the current password (Basic), not a replayable signed URL.
    const c = createClient({ url: t.server.url, auth: { login: 'alice', password: 'alice-pass' }, retry: false });
    const created = await c.send('apiKey_create', { uid: 'alice', body: { name: 'ci' } });
    expect(created.status).toBe(201);
    const k = created.value as { publicKey: string; secretKey: string; uri: string };
    expect(k.secretKey).toBeTruthy();
    const list = await t.raw('GET', 'users/alice/apikeys');
    expect(list.text).not.toContain(k.secretKey);
    expect(list.text).not.toContain(t.alice.secretKey);
    const other = { login: 'alice', publicKey: k.publicKey, secretKey: k.secretKey };
    expect((await t.raw('GET', 'users/alice', { user: other })).status).toBe(200);
    const id = k.uri.split('/').pop()!;
    expect((await t.raw('DELETE', `users/alice/apikeys/${id}`)).status).toBe(204);
    expect((await t.raw('GET', 'users/alice', { user: other })).status).toBe(401);
    await c.close();
  });

  it('never hands out a key that a command line would read as an option', async () => {
    // Key creation needs Basic.
    const c = createClient({ url: t.server.url, auth: { login: 'alice', password: 'alice-pass' }, retry: false });
    // 2 × 40 keys: without the guard, one of them starts with "-" or "_" with probability 1 - (62/64)^80 ≈ 92 %.
    for (let i = 0; i < 40; i++) {
      const k = (await c.send('apiKey_create', { uid: 'alice', body: { name: `k${i}` } })).value as { publicKey: string; secretKey: string };
      expect(k.publicKey).toMatch(/^[A-Za-z0-9]/);
      expect(k.secretKey).toMatch(/^[A-Za-z0-9]/);
    }
    await c.close();
  });

  it('never answers a password: user update, cloud account (secretsMissing)', async () => {
    const u = await t.raw('PUT', 'users/alice', { user: null, basic: { login: 'alice', password: 'alice-pass' }, headers: { 'content-type': 'application/xml' }, body: '<user><email>a@example.org</email><password>new-pass-123</password></user>' });
    expect(u.status).toBe(200);
    expect(u.text).not.toContain('new-pass-123');
    expect((await t.raw('GET', 'users/alice', { user: null, basic: { login: 'alice', password: 'new-pass-123' } })).status).toBe(200);
    expect((await t.raw('PUT', 'users/alice', { headers: { 'content-type': 'application/xml' }, body: '<user><admin>true</admin></user>' })).status).toBe(403);
    const body =
      '<ns0:credAccount xmlns:ns0="http://www.usharesoft.com/uforge" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ns0:CredAccountOpenStack">' +
      '<name>os</name><targetPlatform><name>OpenStack</name><type>openstack</type></targetPlatform><keystoneUrl>http://127.0.0.1:5000/v3</keystoneUrl><login>demo</login><password>s3cret-pw</password></ns0:credAccount>';
    const a = await t.raw('POST', 'users/alice/accounts', { headers: { 'content-type': 'application/xml' }, body });
    expect(a.status).toBe(201);
    expect(a.text).not.toContain('s3cret-pw');
    expect(decodeXml(a.text, 'credAccount').value.secretsMissing).toBe(true);
    expect((await t.raw('POST', 'users/alice/accounts', { headers: { 'content-type': 'application/xml' }, body })).status).toBe(409);
    const all = await t.raw('GET', 'users/alice/accounts', { headers: { accept: 'application/json' } });
    expect(all.text).not.toContain('s3cret-pw');
    expect(JSON.parse(all.text).credAccounts.total).toBe(1);
  });
});
