import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers';

describe('smoke', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => t.close());

  it('answers status and user', async () => {
    const s = await t.raw('GET', 'status', { user: null });
    expect(s.status).toBe(200);
    const c = t.client(t.alice);
    const u = await c.user_get({ uid: 'alice' });
    expect(u.loginName).toBe('alice');
    const a = await c.appliance_create({ uid: 'alice', body: { name: 'web', version: '1', distributionUri: 'distributions/1' } });
    expect(a.uri).toMatch(/^users\/alice\/appliances\/\d+$/);
  });
});
