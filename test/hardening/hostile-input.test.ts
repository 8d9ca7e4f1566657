// Hostile input against the running reference server (real HTTP on 127.0.0.1): malformed and
// truncated documents, DTDs and entity expansion, deep nesting, huge bodies, wrong types, unknown
// xsi:type, FIQL injection, odd ids. Every case must end in a 4xx with a `uforgeError` body (wire
// contract §5) and the server must keep serving (health check after each batch).
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTarget } from '../../src/auth/signer';
import { CaseCounter, healthy, JSON_HEADERS, LONG, NS, startHarness, whyNotClientError, XML_HEADERS, type Harness, type Res } from './support/harness';

const RUNS = LONG ? 400 : 60;
/** Percent-encode everything but unreserved characters, so that no client normalises what was signed. */
const enc = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const counter = new CaseCounter();

describe('hostile input', () => {
  let h: Harness;
  let aid: string;
  const failures: string[] = [];

  /** Send one case; collect (not throw) a failure so that a batch reports every bad case at once. */
  async function tryCase(kind: string, label: string, p: Promise<Res>, expected?: number | readonly number[]): Promise<void> {
    counter.add(kind);
    const r = await p;
    // Unknown elements are ignored (wire contract §2): a deep unknown subtree may create the record.
    if (r.status === 201 && [expected].flat().includes(201)) return;
    const why = whyNotClientError(r, expected);
    if (why) failures.push(`${kind} ${label}: ${why}`);
  }

  async function endBatch(): Promise<void> {
    expect(await healthy(h.server.url)).toBe(true);
    const seen = failures.splice(0);
    expect(seen).toEqual([]);
  }

  beforeAll(async () => {
    h = await startHarness();
    const r = await h.send('POST', 'users/alice/appliances', {
      headers: XML_HEADERS,
      body: '<ns0:appliance xmlns:ns0="http://www.usharesoft.com/uforge"><name>web</name><version>1</version><distributionUri>distributions/1</distributionUri></ns0:appliance>',
    });
    expect(r.status).toBe(201);
    aid = /<dbId>(\d+)<\/dbId>/.exec(r.text)![1]!;
    // With an OS profile, so that an image request is refused for its own fault, not for a missing profile.
    const p = await h.send('POST', `users/alice/appliances/${aid}/osprofile`, {
      headers: XML_HEADERS,
      body: '<linuxProfile><name>Minimal</name><standardProfileUri>distributions/1/profiles/1</standardProfileUri></linuxProfile>',
    });
    expect(p.status).toBe(201);
  });

  it('an install profile diskSize out of bounds is a 400 naming diskSize, and no image is created', async () => {
    for (const size of ['1', '7', String(2 ** 31), String(10 ** 12), '0', '-5', '1023', '65537']) {
      const body = `<ns0:image xmlns:ns0="http://www.usharesoft.com/uforge"><targetFormat><name>QCOW2</name></targetFormat><installProfile><diskSize>${size}</diskSize></installProfile></ns0:image>`;
      const r = await h.send('POST', `users/alice/appliances/${aid}/images`, { headers: XML_HEADERS, body });
      expect(r.status, size).toBe(400);
      expect(r.text, size).toMatch(/installProfile\.diskSize/);
      const app = `<ns0:appliance xmlns:ns0="http://www.usharesoft.com/uforge"><installProfile><diskSize>${size}</diskSize></installProfile></ns0:appliance>`;
      const u = await h.send('PUT', `users/alice/appliances/${aid}`, { headers: XML_HEADERS, body: app });
      expect(u.status, size).toBe(400);
      expect(u.text, size).toMatch(/installProfile\.diskSize/);
    }
    const list = await h.send('GET', `users/alice/appliances/${aid}/images`, { headers: { accept: 'application/json' } });
    expect(JSON.parse(list.text).images.total).toBe(0);
  });
  afterAll(async () => {
    console.log(counter.report('hostile input'));
    await h.close();
  });

  const validXml = `<ns0:mySoftware ${NS}><name>tool</name><version>1.0</version><description>a &amp; b</description></ns0:mySoftware>`;
  const validJson = JSON.stringify({ mySoftware: { name: 'tool', version: '1.0', description: 'a & b' } });

  it('every truncation of a valid XML and JSON document is a 400', async () => {
    const step = LONG ? 1 : 4;
    for (let i = 0; i < validXml.length; i += step) {
      await tryCase('truncated-xml', String(i), h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: validXml.slice(0, i) }), 400);
    }
    for (let i = 0; i < validJson.length; i += step) {
      await tryCase('truncated-json', String(i), h.send('POST', 'users/alice/mysoftware', { headers: JSON_HEADERS, body: validJson.slice(0, i) }), 400);
    }
    await endBatch();
  });

  it('malformed documents: broken tags, wrong root, wrong JSON shapes', async () => {
    const xml = [
      '<<>>', '<mySoftware>', '<mySoftware><name>x</mySoftware>', '</mySoftware>', '<mySoftware><name>x<name></mySoftware>',
      '<?xml version="1.0"?>', '<?xml version="9.9" encoding="EBCDIC"?><mySoftware/>', '<user><login>x</login></user>',
      '<appliance><name>x</name></appliance>',
      '<mySoftware><name>x</name><version>1</version></mySoftware><mySoftware/>', 'plain text', '\u0000\u0001\u0002',
      '<mySoftware><name><![CDATA[x</name>', '<mySoftware xmlns:a="x" a:b="1" a:b="2"/>', '<mySoftware><name>&bogus;</name></mySoftware>',
      '<mySoftware><name>&#0;</name><version>1</version></mySoftware>', '<mySoftware><name>&#xD800;</name><version>1</version></mySoftware>',
      '<mySoftware><name>\u0001</name><version>1</version></mySoftware>',
    ];
    const json = [
      '{', '[]', 'null', '"mySoftware"', '42', 'true', '{"mySoftware": null}', '{"mySoftware": []}', '{"mySoftware": "x"}',
      '{"mySoftware": {"name": 5, "version": "1"}}', '{"mySoftware": {"name": {"x": 1}, "version": "1"}}', '{"mySoftware": {"name": ["a"], "version": "1"}}',
      '{"user": {"login": "x"}}', '{"mySoftware": {}, "appliance": {}}', '{"__proto__": {"name": "x"}}', '{"mySoftware": {"__proto__": {"admin": true}}}',
      '{"mySoftware": {"name": "x", "version": "1"}} trailing', '\ufeff{"mySoftware": 1}', '{"mySoftware": {"name": "\\ud800", "version": 1e999}}',
      '{"mySoftware": {"name": "", "version": ""}}', '{"mySoftware": {"name": "   ", "version": "1"}}',
    ];
    for (const [i, b] of xml.entries()) await tryCase('malformed-xml', String(i), h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: b }), 400);
    for (const [i, b] of json.entries()) await tryCase('malformed-json', String(i), h.send('POST', 'users/alice/mysoftware', { headers: JSON_HEADERS, body: b }), 400);
    await endBatch();
  });

  it('DTDs, external entities and billion laughs are refused (400), fast and without expansion', async () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
      Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('') +
      ']><mySoftware><name>&lol9;</name><version>1</version></mySoftware>';
    const cases = [
      laughs,
      '<!DOCTYPE mySoftware [<!ENTITY x SYSTEM "file:///etc/passwd">]><mySoftware><name>&x;</name><version>1</version></mySoftware>',
      '<!DOCTYPE mySoftware [<!ENTITY % p SYSTEM "http://127.0.0.1:1/evil.dtd"> %p;]><mySoftware><name>x</name><version>1</version></mySoftware>',
      '<!DOCTYPE mySoftware SYSTEM "http://127.0.0.1:1/x.dtd"><mySoftware><name>x</name><version>1</version></mySoftware>',
      '<!DOCTYPE mySoftware><mySoftware><name>x</name><version>1</version></mySoftware>',
      '<!DOCTYPE mySoftware [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><mySoftware><name>&b;</name><version>1</version></mySoftware>',
      '<!DOCTYPE mySoftware [<!ELEMENT mySoftware ANY><!ATTLIST mySoftware a CDATA "x">]><mySoftware><name>x</name><version>1</version></mySoftware>',
      '<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE x [<!ENTITY y "z">]>\n<mySoftware><name>&y;</name><version>1</version></mySoftware>',
    ];
    for (const [i, b] of cases.entries()) await tryCase('dtd', String(i), h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: b }), 400);
    // Nothing was created by any of them.
    const list = await h.send('GET', 'users/alice/mysoftware', { headers: { accept: 'application/json' } });
    expect(JSON.parse(list.text).mySoftwareList.total).toBe(0);
    await endBatch();
  });

  it('deep nesting (XML and JSON, under the size limit) is a 400, never a stack overflow', async () => {
    for (const depth of [1_000, 10_000, 100_000]) {
      const xml = `<mySoftware><name>x</name><version>1</version>${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</mySoftware>`;
      if (xml.length < 1024 * 1024) await tryCase('deep-xml', String(depth), h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: xml }), [400, 201]);
      const json = `{"mySoftware":{"name":"x","version":"${depth}","x":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      if (json.length < 1024 * 1024) await tryCase('deep-json', String(depth), h.send('POST', 'users/alice/mysoftware', { headers: JSON_HEADERS, body: json }), [400, 201]);
      const name = `<ns0:appliance xmlns:ns0="http://www.usharesoft.com/uforge"><name>d${depth}</name><version>1</version><distributionUri>distributions/1</distributionUri><mySoftwareList>${'<mySoftware><mySoftwareList>'.repeat(Math.min(depth, 20_000))}</ns0:appliance>`;
      await tryCase('deep-xml-unclosed', String(depth), h.send('POST', 'users/alice/appliances', { headers: XML_HEADERS, body: name }), 400);
    }
    await endBatch();
  });

  it('bodies over the limit are a 413 (declared length and chunked), a non-document type a 415', async () => {
    const big = `<mySoftware><name>x</name><description>${'x'.repeat(2 * 1024 * 1024)}</description><version>1</version></mySoftware>`;
    await tryCase('huge', 'declared', h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: big }), 413);
    async function* chunks() {
      for (let i = 0; i < 40; i++) yield Buffer.alloc(64 * 1024, 0x61);
    }
    const { request } = await import('undici');
    const r = await request(`${h.server.url}/${signTarget('users/alice/mysoftware', h.alice)}`, { method: 'POST', headers: XML_HEADERS, body: Readable.from(chunks()) });
    await tryCase('huge', 'chunked', (async () => ({ status: r.statusCode, headers: r.headers as Record<string, string>, text: await r.body.text() }))(), 413);
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'xml', 'application/pdf+zip']) {
      await tryCase('content-type', ct, h.send('POST', 'users/alice/mysoftware', { headers: { 'content-type': ct }, body: validXml }), 415);
    }
    await tryCase('content-type', 'none', h.send('POST', 'users/alice/mysoftware', { body: validXml }), [400, 415]);
    await tryCase('content-type', 'empty body', h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: '' }), 400);
    await endBatch();
  });

  it('wrong types and out-of-range values in fields are a 400', async () => {
    const img = (inner: string) => `<ns0:image xmlns:ns0="http://www.usharesoft.com/uforge">${inner}</ns0:image>`;
    const app = (inner: string) => `<ns0:appliance xmlns:ns0="http://www.usharesoft.com/uforge">${inner}</ns0:appliance>`;
    const cases: Array<[string, string, string, Record<string, string>]> = [
      ['image compress', `users/alice/appliances/${aid}/images`, img('<compress>maybe</compress><targetFormat><name>QCOW2</name></targetFormat>'), XML_HEADERS],
      ['image diskSize text', `users/alice/appliances/${aid}/images`, img('<targetFormat><name>QCOW2</name></targetFormat><installProfile><diskSize>huge</diskSize></installProfile>'), XML_HEADERS],
      ['image diskSize negative', `users/alice/appliances/${aid}/images`, img('<targetFormat><name>QCOW2</name></targetFormat><installProfile><diskSize>-5</diskSize></installProfile>'), XML_HEADERS],
      ['image diskSize 1e12', `users/alice/appliances/${aid}/images`, img('<targetFormat><name>QCOW2</name></targetFormat><installProfile><diskSize>1000000000000</diskSize></installProfile>'), XML_HEADERS],
      ['image format unknown', `users/alice/appliances/${aid}/images`, img('<targetFormat><name>Amiga ADF</name></targetFormat>'), XML_HEADERS],
      ['image no format', `users/alice/appliances/${aid}/images`, img(''), XML_HEADERS],
      ['appliance dbId text', 'users/alice/appliances', app('<dbId>abc</dbId><name>a</name><version>1</version><distributionUri>distributions/1</distributionUri>'), XML_HEADERS],
      ['appliance dist 999', 'users/alice/appliances', app('<name>a</name><version>1</version><distributionUri>distributions/999</distributionUri>'), XML_HEADERS],
      ['appliance dist traversal', 'users/alice/appliances', app('<name>a</name><version>1</version><distributionUri>distributions/../../etc</distributionUri>'), XML_HEADERS],
      ['appliance revision huge', 'users/alice/appliances', app('<name>a</name><version>1</version><revision>99999999999999999999999</revision><distributionUri>distributions/1</distributionUri>'), XML_HEADERS],
      ['appliance no name', 'users/alice/appliances', app('<version>1</version><distributionUri>distributions/1</distributionUri>'), XML_HEADERS],
      ['json number as bool', `users/alice/appliances/${aid}/images`, JSON.stringify({ image: { compress: 1, targetFormat: { name: 'QCOW2' } } }), JSON_HEADERS],
      ['json string memory', `users/alice/appliances/${aid}/images`, JSON.stringify({ image: { targetFormat: { name: 'QCOW2' }, installProfile: { memorySize: 'lots' } } }), JSON_HEADERS],
      ['json list as object', `users/alice/appliances/${aid}`, JSON.stringify({ appliance: { mySoftwareList: { mySoftware: 'x' } } }), JSON_HEADERS],
      ['pkgs bad uri', `users/alice/appliances/${aid}/osprofile/1/pkgs`, '<packages><addedPkgUris><uri>../../etc/passwd</uri></addedPkgUris></packages>', XML_HEADERS],
      ['account no kind', 'users/alice/accounts', '<credAccount><name>x</name></credAccount>', XML_HEADERS],
      ['profile wrong uri', `users/alice/appliances/${aid}/osprofile`, '<linuxProfile><name>Minimal</name><standardProfileUri>distributions/1/profiles/99999</standardProfileUri></linuxProfile>', XML_HEADERS],
      ['user admin escalation', 'users/alice', '<user><admin>true</admin></user>', XML_HEADERS],
    ];
    for (const [label, rel, body, headers] of cases) {
      const method = rel === `users/alice/appliances/${aid}` || rel === 'users/alice' || rel.endsWith('/pkgs') ? 'PUT' : 'POST';
      await tryCase('wrong-type', label, h.send(method, rel, { headers, body }), [400, 403, 404]);
    }
    await endBatch();
  });

  it('an unknown or malformed xsi:type is a 400 (XML and JSON)', async () => {
    const acc = (t: string, ns = NS) => `<ns0:credAccount ${ns} xsi:type="${t}"><name>a</name><login>l</login><password>p</password></ns0:credAccount>`;
    const xmlCases = [
      acc('ns0:CredAccountAWS'), acc('ns0:'), acc(''), acc('zz:CredAccountOpenStack'), acc('ns0:CredAccountOpenStack:x'),
      acc('ns0:PublishImageOpenStack'), acc('ns0:LinuxProfile'), acc('ns0:__proto__'), acc('ns0:constructor'), acc('ns0:toString'),
      acc('ns0:CredAccountOpenStack', 'xmlns:ns0="http://www.usharesoft.com/uforge"'),
    ];
    for (const [i, b] of xmlCases.entries()) await tryCase('xsi-type', `xml ${i}`, h.send('POST', 'users/alice/accounts', { headers: XML_HEADERS, body: b }), [400]);
    for (const t of ['CredAccountAWS', '', 42, null, ['CredAccountOpenStack'], '__proto__', 'hasOwnProperty']) {
      const body = JSON.stringify({ credAccount: { 'xsi:type': t, name: `j${String(t)}`, login: 'l', password: 'p' } });
      await tryCase('xsi-type', `json ${JSON.stringify(t)}`, h.send('POST', 'users/alice/accounts', { headers: JSON_HEADERS, body }), [400]);
    }
    await endBatch();
  });

  it('FIQL injection and nonsense in `query`, `orderBy`, `count`, `offset` are a 400', async () => {
    const queries = [
      "name=='x');DROP TABLE records;--", "name==x' OR '1'='1", 'name==*;1=1', "name=='a'||'b'", '1==1', 'name', 'name==', '==x', 'name=x',
      'name=~=x', 'name==(x', '(name==x', 'name==x)', ';', ',', '()', "name=='unterminated", 'name=="\\', 'password==*', 'secretKey==*',
      'doc==*', '__proto__==x', 'constructor.prototype==x', 'name==x;;name==y', 'name=lt=', 'created=gt=not-a-date', 'dbId=gt=abc',
      `${'('.repeat(2000)}name==x${')'.repeat(2000)}`, `${'name==x;'.repeat(800)}name=x`,
    ];
    // Well-formed, merely odd: a list (literal value), or a 400; never anything else.
    const benign = ['name==%', 'name=gt=*;name=lt=*', 'name==\u0000', 'name==', "name=='\u202e'", 'name==*;1=1'];
    const lists = ['users/alice/appliances', 'users/alice/mysoftware', 'users/alice/accounts', 'distributions/1/pkgs', 'distributions', `users/alice/appliances/${aid}/images`];
    let n = 0;
    for (const q of queries) {
      const rel = `${lists[n++ % lists.length]}?query=${enc(q)}`;
      if (rel.length > 14_000) continue; // Node's own 16 KiB header limit answers above that (431)
      await tryCase('fiql', q.slice(0, 40), h.send('GET', rel), 400);
    }
    for (const q of benign) {
      const r = await h.send('GET', `${lists[n++ % lists.length]}?query=${enc(q)}`);
      counter.add('fiql');
      if (r.status !== 200) await tryCase('fiql', q, Promise.resolve(r), 400);
    }
    const params = [
      'orderBy=nope', 'orderBy=password', 'orderBy=__proto__', 'count=-1', 'count=abc', 'count=1e309', 'offset=-5', 'offset=NaN',
      'count=99999999999999999999', 'descending=perhaps', 'count=1.5',
    ];
    for (const p of params) await tryCase('list-params', p, h.send('GET', `users/alice/appliances?${p}`), 400);
    await endBatch();
  });

  it('FIQL via HTTP (property): any query text is either a 200 list or a 400 uforgeError, never a 5xx', async () => {
    const token = fc.constantFrom('name', 'version', 'dbId', 'created', '==', '!=', '=lt=', '=ge=', '=x=', ';', ',', '(', ')', "'", '"', '\\', '*', ' ', '1', 'web', '%', '\u0000');
    const text = fc.oneof(fc.array(token, { maxLength: 20 }).map((a) => a.join('')), fc.string({ unit: 'binary', maxLength: 30 }));
    await fc.assert(
      fc.asyncProperty(text, async (q) => {
        counter.add('fiql-property');
        const r = await h.send('GET', `users/alice/appliances?query=${enc(q)}`, { headers: { accept: 'application/json' } });
        if (r.status === 200) return JSON.parse(r.text).appliances !== undefined;
        return whyNotClientError(r, 400) === undefined;
      }),
      { numRuns: RUNS },
    );
    await endBatch();
  });

  it('arbitrary bytes as a document (property): 400/415 with a uforgeError, never a 5xx', async () => {
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.constantFrom(validXml, validJson).chain((v) => fc.nat({ max: v.length }).map((i) => v.slice(0, i) + '\u0000' + v.slice(i))),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom<Record<string, string>>(XML_HEADERS, JSON_HEADERS), async (b, headers) => {
        counter.add('bytes-property');
        const r = await h.send('POST', `users/alice/appliances/${aid}/images`, { headers, body: b });
        return whyNotClientError(r, [400, 415]) === undefined;
      }),
      { numRuns: RUNS },
    );
    await endBatch();
  });

  it('odd ids and paths: 400/404 with a uforgeError', async () => {
    const ids = ['abc', '-1', '0', '1e3', '0x10', '99999999999999999999', '%2e%2e', '..%2F..%2Fetc', '%00', '%01%7f', '%20', '1%3B', '1%27', enc('１'), '%C0%AE', '%FF'];
    for (const id of ids) {
      await tryCase('odd-id', `appliance ${id}`, h.send('GET', `users/alice/appliances/${id}`), [400, 404]);
      await tryCase('odd-id', `software ${id}`, h.send('DELETE', `users/alice/mysoftware/${id}`), [400, 404]);
      await tryCase('odd-id', `dist ${id}`, h.send('GET', `distributions/${id}/pkgs`), [400, 404]);
    }
    for (const p of ['users/..%2Fbob/appliances', 'nope', 'users', 'users/alice/appliances/1/images/1/downloads/..%2F..%2Fforge.db']) {
      await tryCase('odd-path', p, h.send('GET', p), [400, 403, 404]);
    }
    // Dot segments (also `%2e%2e`) sent as is: undici's URL parser would resolve them before sending.
    for (const p of ['users/alice/%2e%2e/bob', 'users/alice/appliances/%2E%2E/%2e%2e/bob/appliances', 'users/alice/appliances/../../bob/appliances', 'users/alice/./appliances/..', 'users/alice/mysoftware/1/artifacts/1/bin/../../../../forge.db']) {
      await tryCase('odd-path', p, h.sendRaw('GET', `/api/${signTarget(p, h.alice)}`), [400, 403, 404]);
    }
    await tryCase('method', 'PATCH', h.send('PATCH', 'users/alice/appliances'), 405);
    await endBatch();
  });
});
