// Every error status of the server carries a uforgeError body (wire contract §5), and the
// documents it writes validate against the platform schema (§2).
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ForgeError, isForgeError } from '../../src/errors';
import { toServiceError } from '../../src/server/http/errors';
import { ImagingError, isImagingError } from '../../src/imaging/errors';
import { isServiceError, notFound, ServiceError } from '../../src/server/service-error';
import { decodeXml, decodeJson } from '../../src/codec';
import { startTestServer, validatesAgainstXsd, type RawResponse, type TestServer } from './helpers';

const XML = { 'content-type': 'application/xml' };

function expectError(r: RawResponse, status: number, format: 'xml' | 'json' = 'xml'): void {
  expect(r.status, r.text).toBe(status);
  const d = format === 'xml' ? decodeXml(r.text, 'uforgeError') : decodeJson(r.text, 'uforgeError');
  expect(d.value.statusCode).toBe(status);
  expect(d.value.requestUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\//);
  expect(d.value.requestUri).not.toContain('signature=');
  expect(d.value.localizedErrorMsg?.message).toBeTruthy();
  expect(d.value.timestamp).toMatch(/Z$/);
  if (format === 'xml') validatesAgainstXsd(r.text);
}

describe('error statuses', () => {
  let t: TestServer;
  let aid: string;
  beforeAll(async () => {
    t = await startTestServer({ limits: { bodyBytes: 64 * 1024, uploadBytes: 1024 } });
    const r = await t.raw('POST', 'users/alice/appliances', { headers: XML, body: '<ns0:appliance xmlns:ns0="http://www.usharesoft.com/uforge"><name>web</name><version>1</version><distributionUri>distributions/1</distributionUri></ns0:appliance>' });
    expect(r.status).toBe(201);
    expect(r.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/users\/alice\/appliances\/\d+$/);
    validatesAgainstXsd(r.text);
    aid = r.headers.location!.split('/').pop()!;
  });
  afterAll(async () => t.close());

  it('400 on a malformed document, a DTD, a bad field, a bad FIQL query (position named)', async () => {
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: XML, body: '<ns0:appliance' }), 400);
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: XML, body: '<!DOCTYPE x [<!ENTITY a "b">]><appliance/>' }), 400);
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{"appliance":{"name":"x","version":"1","distributionUri":"distributions/999"}}' }), 400, 'json');
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: XML, body: '<appliance><name>x</name></appliance>' }), 400);
    const q = await t.raw('GET', `users/alice/appliances?query=${encodeURIComponent("name=='a").replace(/'/g, '%27')}`);
    expectError(q, 400);
    expect(q.text).toMatch(/position/);
    expectError(await t.raw('GET', 'users/alice/appliances?count=-1'), 400);
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: XML }), 400);
  });

  it('401 with WWW-Authenticate, 403 across users, 404 for unknown paths and ids', async () => {
    const r = await t.raw('GET', 'users/alice', { user: null });
    expectError(r, 401);
    expect(r.headers['www-authenticate']).toBe('Basic realm="appliance-forge"');
    expectError(await t.raw('GET', 'users/alice', { user: t.bob }), 403);
    expectError(await t.raw('GET', 'users/alice/appliances/999999'), 404);
    expectError(await t.raw('GET', 'users/alice/appliances/abc'), 404);
    expectError(await t.raw('GET', 'nothing/here'), 404);
    expectError(await t.raw('GET', 'users/nobody', { user: t.admin }), 404);
  });

  it('405 with Allow for a method the path does not take', async () => {
    const r = await t.raw('PATCH', `users/alice/appliances/${aid}`);
    expectError(r, 405);
    expect(r.headers.allow).toContain('GET');
    expect(r.headers.allow).toContain('PUT');
    expect(r.headers.allow).toContain('DELETE');
    const p = await t.raw('POST', 'users/alice');
    expectError(p, 405);
    // A path of fixed words wins over one with a parameter in every method: POST …/images/statuses is a 405
    // of the statuses path, not an image id "statuses" (…/images/{itid} takes POST).
    const s = await t.raw('POST', `users/alice/appliances/${aid}/images/statuses`);
    expectError(s, 405);
    expect(s.headers.allow).toBe('GET, HEAD');
    // The upload path (its POST under a parser of its own): its other methods are 405s too.
    const u = await t.raw('DELETE', 'users/alice/mysoftware/1/artifacts/2/bin/f');
    expectError(u, 405);
    expect(u.headers.allow).toBe('GET, HEAD, POST');
    // A method no path takes is not a 405.
    expectError(await t.raw('PROPFIND', 'status'), 404);
  });

  it('409 on the same name and version; 412 on a stale If-Match; 304 on a matching If-None-Match', async () => {
    const body = '<appliance><name>web</name><version>1</version><distributionUri>distributions/1</distributionUri></appliance>';
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: XML, body }), 409);
    const g = await t.raw('GET', `users/alice/appliances/${aid}`);
    expect(g.headers.etag).toMatch(/^"[^"]+"$/);
    expect(g.headers['last-modified']).toBeTruthy();
    expect(g.headers['content-language']).toBe('en');
    expect(g.headers.version).toBeTruthy();
    expect(g.headers.server).toMatch(/appliance-forge/);
    expect(g.headers.date).toBeTruthy();
    validatesAgainstXsd(g.text);
    const nm = await t.raw('GET', `users/alice/appliances/${aid}`, { headers: { 'if-none-match': g.headers.etag! } });
    expect(nm.status).toBe(304);
    expect(nm.text).toBe('');
    const ims = await t.raw('GET', `users/alice/appliances/${aid}`, { headers: { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() } });
    expect(ims.status).toBe(304);
    const stale = await t.raw('PUT', `users/alice/appliances/${aid}`, { headers: { ...XML, 'if-match': '"not-it"' }, body: '<appliance><description>x</description></appliance>' });
    expectError(stale, 412);
    const ok = await t.raw('PUT', `users/alice/appliances/${aid}`, { headers: { ...XML, 'if-match': g.headers.etag! }, body: '<appliance><description>x</description></appliance>' });
    expect(ok.status).toBe(200);
    expect(decodeXml(ok.text, 'appliance').value.revision).toBe(1);
    expectError(await t.raw('DELETE', `users/alice/appliances/${aid}`, { headers: { 'if-match': g.headers.etag! } }), 412);
  });

  it('413 on a document or an upload over the limit', async () => {
    const big = `<appliance><name>${'x'.repeat(70 * 1024)}</name></appliance>`;
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: XML, body: big }), 413);
    const sw = await t.raw('POST', 'users/alice/mysoftware', { headers: XML, body: '<mySoftware><name>s</name><version>1</version></mySoftware>' });
    const msid = sw.headers.location!.split('/').pop()!;
    const art = await t.raw('POST', `users/alice/mysoftware/${msid}/artifacts`, { headers: XML, body: '<softwareFile><name>a.bin</name></softwareFile>' });
    const said = art.headers.location!.split('/').pop()!;
    const up = await t.raw('POST', `users/alice/mysoftware/${msid}/artifacts/${said}/bin/a.bin`, { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(4096) });
    expectError(up, 413);
    const a = await t.raw('GET', `users/alice/mysoftware/${msid}/artifacts/${said}`);
    expect(decodeXml(a.text, 'softwareArtifact').value.uploaded).toBe(false);
  });

  it('415 for a body in a format the operation does not take', async () => {
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: { 'content-type': 'text/plain' }, body: 'name=web' }), 415);
    expectError(await t.raw('POST', 'users/alice/appliances', { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: 'a=b' }), 415, 'json');
  });
});

describe('the server errors join the package error tree', () => {
  it('ServiceError and ImagingError are ForgeErrors that isForgeError narrows to their class', () => {
    const service: unknown = notFound('no appliance 7');
    const imaging: unknown = new ImagingError('disk-full', 'no space left on the image');
    expect(service).toBeInstanceOf(ForgeError);
    expect(imaging).toBeInstanceOf(ForgeError);
    expect(isForgeError(service, ServiceError)).toBe(true);
    expect(isForgeError(service, ImagingError)).toBe(false);
    expect(isForgeError(imaging, ImagingError)).toBe(true);
    expect(isServiceError(imaging)).toBe(false);
    expect(isImagingError(imaging, 'disk-full')).toBe(true);
    if (isForgeError(service, ServiceError)) {
      expectTypeOf(service).toEqualTypeOf<ServiceError>();
      expect(service.statusCode).toBe(404);
    }
    if (isForgeError(imaging, ImagingError)) {
      expectTypeOf(imaging).toEqualTypeOf<ImagingError>();
      expect(imaging.kind).toBe('disk-full');
    }
    // The answer is made from the same error as before: status and message, nothing of the tree's code.
    expect(toServiceError(service)).toBe(service);
    expect(toServiceError(imaging)).toMatchObject({ statusCode: 500, message: 'internal error' });
  });
});
