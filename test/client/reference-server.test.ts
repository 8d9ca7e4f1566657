// The client against the project's reference server (src/server) on 127.0.0.1:0: signing, Basic,
// JSON, FIQL queries, typed errors, the conditional-GET cache and If-Match, end to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, fiql, type Client } from '../../src/index';
import { startReferenceServer, type ReferenceServer } from '../support/reference-server';

let ref: ReferenceServer<'carol'>;
let keys: { login: string; publicKey: string; secretKey: string };
const make = (o: Partial<Parameters<typeof createClient>[0]> = {}): Client => ref.client(keys, { retry: false, ...o });

beforeAll(async () => {
  ref = await startReferenceServer({ carol: { password: 'carol-Pass-1' } }, { prefix: 'forge-client-ref-' });
  keys = ref.users.carol;
});
afterAll(async () => {
  await ref?.close();
});

describe('client against the reference server', () => {
  it('creates and finds appliances with a signed FIQL query, in XML and JSON', async () => {
    const c = make();
    const a = await c.appliance_create({ body: { name: "it's web *", version: '1.0', distributionUri: 'distributions/1' } });
    expect(a.uri).toBe(`users/carol/appliances/${a.dbId}`);
    await c.appliance_create({ body: { name: 'other', version: '1.0', distributionUri: 'distributions/1' } });
    const query = fiql.and(fiql.eq('name', "it's web *"), fiql.eq('version', '1.0'));
    const found = await c.appliance_getAll({ params: { query } });
    expect(found.appliances?.map((x) => x.name)).toEqual(["it's web *"]);
    const j = make({ format: 'json' });
    const byJson = await j.appliance_getAll({ params: { query: fiql.eq('name', 'oth*'), count: 10 } });
    expect([byJson.total, byJson.appliances?.[0]?.name]).toEqual([1, 'other']);
    expect(await j.getByUri('appliance', a.uri!)).toMatchObject({ name: "it's web *", version: '1.0' });
  });

  it('Basic auth works; a wrong secret is a 401 ApiError that does not carry the secret', async () => {
    const basic = make({ auth: { login: 'carol', password: 'carol-Pass-1' } });
    expect((await basic.user_get()).loginName).toBe('carol');
    const wrong = make({ auth: { ...keys, secretKey: 'Wrong-Secret-Value' } });
    const e = await wrong.user_get().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(401);
    expect(`${(e as Error).message} ${JSON.stringify(e)}`).not.toMatch(/Wrong-Secret-Value|carol-Pass-1/);
    const missing = await make().appliance_get({ aid: 999999 }).catch((x: unknown) => x);
    expect(missing).toMatchObject({ code: 'E_API', status: 404 });
  });

  it('revalidates with the server ETag (304 → cached value) and honours If-Match', async () => {
    const c = make({ cache: true });
    const a = await c.appliance_create({ body: { name: 'cached', version: '2', distributionUri: 'distributions/1' } });
    const first = await c.send('appliance_get', { aid: a.dbId! });
    expect(first.headers.etag).toBeTruthy();
    const second = await c.send('appliance_get', { aid: a.dbId! });
    expect(second.fromCache).toBe(true);
    expect(second.value).toEqual(first.value);
    const stale = await c
      .appliance_update({ aid: a.dbId!, ifMatch: '"not-the-etag"', body: { ...first.value, description: 'x' } })
      .catch((x: unknown) => x);
    expect(stale).toMatchObject({ code: 'E_API', status: 412 });
    const updated = await c.appliance_update({ aid: a.dbId!, ifMatch: first.headers.etag!, body: { ...first.value, description: 'new' } });
    expect(updated.description).toBe('new');
    const third = await c.send('appliance_get', { aid: a.dbId! });
    expect([third.fromCache, third.value.description]).toEqual([false, 'new']);
  });
});
