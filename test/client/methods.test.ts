// The table-derived methods over real HTTP: targets, signing as sent, formats, bodies, typed errors.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, type Client } from '../../src/client/index';
import { decode } from '../../src/codec/index';
import { ApiError, HttpError, TransportError } from '../../src/client/errors';
import { DecodeError, isForgeError, type ForgeError } from '../../src/errors';
import { operations } from '../../src/model/operations';
import { opensslSignature } from '../signer/openssl';
import { reply, replyError, startScripted, type Double, closeAfterEach } from './http-double';

const SECRET = 'top-Secret/Key+value=';
const PASSWORD = 'hunter2-Passw0rd';
let server: Double | undefined;
let client: Client | undefined;
closeAfterEach(() => [client, server]);

describe('client methods', () => {
  it('has exactly one method per operation of the table', () => {
    const c = createClient({ url: 'http://127.0.0.1:1/api', auth: { login: 'alice', password: 'x' } });
    for (const op of operations) expect(typeof (c as unknown as Record<string, unknown>)[op.id], op.id).toBe('function');
    void c.close();
  });

  it('signs exactly the target it sends (checked with openssl), values encoded as single segments', async () => {
    server = await startScripted((_req, res) => reply(res, 200, 'appliances', { total: 0, appliances: [] }));
    client = createClient({ url: server.url, auth: { login: 'alice', publicKey: 'PUB1', secretKey: SECRET } });
    const v = await client.appliance_getAll({ uid: 'al/ice x', params: { query: "name=='web *';version=='1.0'", count: 5, descending: true } });
    expect(v).toEqual({ total: 0, appliances: [] });
    const url = server.seen[0]!.url;
    const expectedTarget =
      'users/al%2Fice%20x/appliances?query=name%3D%3D%27web%20%2A%27%3Bversion%3D%3D%271.0%27&count=5&descending=true&apiKey=PUB1';
    const at = url.lastIndexOf('&signature=');
    expect(url.slice(0, at)).toBe(`/api/${expectedTarget}`);
    expect(decodeURIComponent(url.slice(at + '&signature='.length))).toBe(opensslSignature(SECRET, expectedTarget));
    expect(server.seen[0]!.headers.accept).toBe('application/xml');
  });

  it('signs non-ASCII query values as sent', async () => {
    server = await startScripted((_req, res) => reply(res, 200, 'images', { total: 0, images: [] }));
    client = createClient({ url: `${server.url}/`, auth: { login: 'bob', publicKey: 'P', secretKey: SECRET } });
    await client.userMachineImage_getAll({ params: { img: 'café 日本' } });
    const url = server.seen[0]!.url;
    const at = url.lastIndexOf('&signature=');
    const signed = url.slice('/api/'.length, at);
    expect(signed).toBe('users/bob/images?img=caf%C3%A9%20%E6%97%A5%E6%9C%AC&apiKey=P');
    expect(decodeURIComponent(url.slice(at + 11))).toBe(opensslSignature(SECRET, signed));
  });

  it('sends Basic auth, JSON bodies and Accept, and decodes the JSON answer', async () => {
    server = await startScripted((req, res, seen) => {
      const sent = decode('json', seen.body.toString(), 'appliance').value;
      reply(res, 201, 'appliance', { ...sent, dbId: 7, uri: 'users/alice/appliances/7' }, 'json');
    });
    client = createClient({ url: server.url, format: 'json', auth: { login: 'alice', password: PASSWORD } });
    const a = await client.appliance_create({ body: { name: 'web', version: '007', distributionUri: 'distributions/1' } });
    expect(a).toEqual({ name: 'web', version: '007', distributionUri: 'distributions/1', dbId: 7, uri: 'users/alice/appliances/7' });
    const s = server.seen[0]!;
    expect(s.method).toBe('POST');
    expect(s.url).toBe('/api/users/alice/appliances');
    expect(s.headers.authorization).toBe(`Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`);
    expect(s.headers.accept).toBe('application/json');
    expect(s.headers['content-type']).toMatch(/^application\/json/);
  });

  it('returns undefined for 204, sends If-Match, and send() exposes status and headers', async () => {
    server = await startScripted((req, res) => {
      if (req.method === 'DELETE') return void res.writeHead(204).end();
      reply(res, 200, 'appliance', { name: 'web', digest: 'd1' }, 'xml', { etag: '"d1"' });
    });
    client = createClient({ url: server.url, auth: { login: 'alice', password: PASSWORD } });
    expect(await client.appliance_delete({ aid: 3, ifMatch: '"d1"', params: { force: true } })).toBeUndefined();
    expect(server.seen[0]!.headers['if-match']).toBe('"d1"');
    expect(server.seen[0]!.url).toBe('/api/users/alice/appliances/3?force=true');
    const r = await client.send('appliance_get', { aid: '3' });
    expect(r.status).toBe(200);
    expect(r.headers.etag).toBe('"d1"');
    expect(r.value.name).toBe('web');
  });

  it('rejects bad input with TypeError before sending anything', async () => {
    server = await startScripted((_req, res) => res.end());
    client = createClient({ url: server.url, auth: { login: 'alice', password: PASSWORD } });
    // @ts-expect-error -- missing path parameter aid
    await expect(client.appliance_get({})).rejects.toThrow(/missing path parameter "aid"/);
    // @ts-expect-error -- not a query parameter of this operation
    await expect(client.appliance_get({ aid: 1, params: { bogus: 1 } })).rejects.toThrow(TypeError);
    // @ts-expect-error -- body required
    await expect(client.appliance_create({})).rejects.toThrow(/body/);
    await expect(client.getByUri('appliance', 'http://evil.example/api/users/x')).rejects.toThrow(TypeError);
    await expect(client.getByUri('appliance', 'users/../../etc')).rejects.toThrow(TypeError);
    expect(server.seen).toHaveLength(0);
    expect(() => createClient({ url: 'ftp://x/api', auth: { login: 'a', password: 'b' } })).toThrow(TypeError);
    // @ts-expect-error -- neither key pair nor password
    expect(() => createClient({ url: 'http://127.0.0.1/api', auth: { login: 'a' } })).toThrow(/auth/);
  });

  it('getByUri reads relative and absolute URIs under the base URL', async () => {
    server = await startScripted((_req, res) => reply(res, 200, 'distribution', { name: 'Debian', version: '12' }));
    client = createClient({ url: server.url, auth: { login: 'alice', password: PASSWORD } });
    expect(await client.getByUri('distribution', 'distributions/1')).toEqual({ name: 'Debian', version: '12' });
    expect(await client.getByUri('distribution', `${server.url}/distributions/2`)).toEqual({ name: 'Debian', version: '12' });
    expect(server.seen.map((s) => s.url)).toEqual(['/api/distributions/1', '/api/distributions/2']);
  });
});

describe('client errors', () => {
  it('a uforgeError body becomes ApiError with its fields, in either format', async () => {
    for (const format of ['xml', 'json'] as const) {
      server = await startScripted((_req, res) => replyError(res, 409, 'appliance web 1 exists', format));
      client = createClient({ url: server.url, format, auth: { login: 'alice', password: PASSWORD } });
      const e = await client.appliance_get({ aid: 1 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect(isForgeError(e, ApiError)).toBe(true);
      // A type test (tsconfig.test.json): a class narrows to itself, no class to the tree's root.
      if (isForgeError(e, ApiError)) expectTypeOf(e).toEqualTypeOf<ApiError>();
      if (isForgeError(e)) expectTypeOf(e).toEqualTypeOf<ForgeError>();
      const a = e as ApiError;
      expect([a.status, a.statusCode, a.messageId, a.requestMethod, a.message]).toEqual([409, 409, 'test.error', 'GET', '409: appliance web 1 exists']);
      await client.close();
      await server.close();
    }
    server = undefined;
    client = undefined;
  });

  it('an HTML or garbage error body becomes HttpError with a short redacted snippet, never a SyntaxError', async () => {
    const bodies: Array<[string, string]> = [
      ['text/html', `<html><body><h1>502 Bad Gateway</h1>${'x'.repeat(5000)}</body></html>`],
      ['application/json', `{"broken": "${PASSWORD}"`],
      ['application/xml', `<password>${PASSWORD}</password><oops`],
    ];
    let i = 0;
    server = await startScripted((_req, res) => {
      const [type, body] = bodies[i++]!;
      res.writeHead(400, { 'content-type': type }).end(body);
    });
    client = createClient({ url: server.url, auth: { login: 'alice', password: PASSWORD }, retry: false });
    const snippets: string[] = [];
    for (let n = 0; n < bodies.length; n++) {
      const e = await client.appliance_get({ aid: 1 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(HttpError);
      expect(e).not.toBeInstanceOf(SyntaxError);
      const h = e as HttpError;
      expect(h.status).toBe(400);
      expect(h.snippet.length).toBeLessThanOrEqual(201);
      expect(`${h.message} ${h.snippet} ${JSON.stringify(h)} ${String(h.stack)}`).not.toContain(PASSWORD);
      snippets.push(h.snippet);
    }
    expect(snippets[0]).toMatch(/^<html><body><h1>502 Bad Gateway<\/h1>x+…$/);
    expect(snippets[1]).toBe('{"broken": "***"'); // the client's own password is masked wherever it appears
    expect(snippets[2]).toBe('<password>***</password><oops');
  });

  it('never puts the secret key or a password in error messages', async () => {
    server = await startScripted((_req, res) => replyError(res, 400, `bad password ${PASSWORD} and key ${SECRET}`));
    client = createClient({ url: server.url, auth: { login: 'alice', publicKey: 'P', secretKey: SECRET } });
    const e = (await client
      .cloudAccount_create({ body: { kind: 'CredAccountOpenStack', name: 'os', password: PASSWORD } })
      .catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    const everything = `${e.message} ${JSON.stringify(e)} ${String(e.stack)} ${JSON.stringify(e.body)}`;
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain(SECRET);
    expect(e.message).toContain('***');
  });

  it('a 2xx body that does not decode is a DecodeError', async () => {
    server = await startScripted((_req, res) => res.writeHead(200, { 'content-type': 'application/xml' }).end('<ns0:image'));
    client = createClient({ url: server.url, auth: { login: 'alice', password: PASSWORD } });
    await expect(client.appliance_get({ aid: 1 })).rejects.toBeInstanceOf(DecodeError);
  });

  it('connection refused and timeouts are TransportError without secrets', async () => {
    server = await startScripted(() => undefined);
    const url = server.url;
    await server.close();
    client = createClient({ url, auth: { login: 'alice', publicKey: 'P', secretKey: SECRET }, retry: { maxAttempts: 2, baseDelayMs: 1 } });
    const e = await client.appliance_get({ aid: 1 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect((e as Error).message).toMatch(/could not connect/);
    expect(`${(e as Error).message}${String((e as Error).stack)}`).not.toContain(SECRET);
    await client.close();
    // a server that never answers
    server = await startScripted(() => new Promise(() => undefined));
    client = createClient({ url: server.url, auth: { login: 'alice', password: PASSWORD }, timeoutMs: 200, retry: false });
    const t = await client.appliance_get({ aid: 1 }).catch((x: unknown) => x);
    expect(t).toBeInstanceOf(TransportError);
    expect((t as Error).message).toMatch(/timed out/);
  });
});
