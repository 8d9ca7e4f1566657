// The defects an outside attack on `serve` found, each replayed over real HTTP on
// 127.0.0.1 against a real server: every case fails on the code before its fix.
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatableAppliance } from './support/fixtures';
import { signTarget } from '../../src/auth/signer';
import { PASSWORDS, startHarness, whyNotClientError, XML_HEADERS, type Harness, type Res } from './support/harness';

/** A loopback HTTP endpoint that records every request it receives (a stand-in for a hostile "Keystone"). */
async function listeningTrap(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const srv: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(401, { 'content-type': 'text/plain' }).end('no');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => srv.close(() => r())) };
}

/** Two GETs of `target` pipelined on one keep-alive socket, parsed by Content-Length (as a client would). */
function twoOnOneSocket(origin: string, target: string): Promise<[Res, Res]> {
  const u = new URL(origin);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    const req = `GET ${target} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`;
    let buf = Buffer.alloc(0);
    const out: Res[] = [];
    // Status 0 and why stand in for an answer that never came.
    const pair = (why = ''): [Res, Res] => [out[0] ?? { status: 0, headers: {}, text: why }, out[1] ?? { status: 0, headers: {}, text: why }];
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(pair('no answer'));
    }, 10_000);
    sock.on('connect', () => sock.write(req + req));
    sock.on('error', reject);
    sock.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        const len = Number(headers['content-length'] ?? 0);
        if (buf.length < end + 4 + len) return;
        out.push({ status: Number(lines[0]!.split(' ')[1]), headers, text: buf.subarray(end + 4, end + 4 + len).toString('utf8') });
        buf = buf.subarray(end + 4 + len);
        if (out.length === 2) {
          clearTimeout(timer);
          sock.destroy();
          resolve(pair());
          return;
        }
      }
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(pair('closed'));
    });
  });
}

const dbIdOf = (xml: string): string => /<dbId>(\d+)<\/dbId>/.exec(xml)![1]!;

describe('the defects an outside attack found', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('defect 1: a stored cloud password never goes to a URL other than the stored one', async () => {
    const trap = await listeningTrap();
    try {
      const secret = 'stored-Secret-9f3a';
      const acc = await h.send('POST', 'users/alice/accounts', {
        headers: XML_HEADERS,
        body: `<credAccount><name>stored</name><keystoneUrl>http://127.0.0.1:9/v3</keystoneUrl><login>u</login><password>${secret}</password></credAccount>`,
      });
      expect(acc.status).toBe(201);
      const caid = dbIdOf(acc.text);
      // A real image record (its build is cancelled at once: the check comes before the image's state).
      const c = h.client(h.alice);
      const aid = await generatableAppliance(c, 'pub1');
      const img = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'OpenStack QCOW2' }, installProfile: { diskSize: 1024 } } });
      await c.machineImageGeneration_cancel({ uid: 'alice', aid, itid: String(img.dbId) });
      for (const [field, ref] of [
        ['keystoneUrl', `<dbId>${caid}</dbId>`],
        ['glanceUrl', `<uri>users/alice/accounts/${caid}</uri>`],
      ] as const) {
        const r = await h.send('POST', `users/alice/appliances/${aid}/pimages`, {
          headers: XML_HEADERS,
          body: `<publishImage><imageUri>users/alice/appliances/${aid}/images/${img.dbId}</imageUri><credAccount>${ref}<${field}>${trap.url}/v3</${field}></credAccount><keystoneProject>p</keystoneProject></publishImage>`,
        });
        expect(whyNotClientError(r, 400)).toBeUndefined();
        expect(r.text).toContain(field);
      }
      expect(trap.seen.join('\n')).not.toContain(secret);
      expect(trap.seen).toEqual([]);
    } finally {
      await trap.close();
    }
  });

  it('defect 2: a file name above U+00FF downloads with an RFC 6266 Content-Disposition, and the connection stays in step', async () => {
    const sw = await h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: '<mySoftware><name>names</name><version>1</version></mySoftware>' });
    const msid = dbIdOf(sw.text);
    const payload = Buffer.from('twelve bytes');
    for (const name of ['prix-€.bin', '文件.tar', 'x\u202Egpj.exe', 'smile-😀.txt']) {
      const art = await h.send('POST', `users/alice/mysoftware/${msid}/artifacts`, { headers: XML_HEADERS, body: `<softwareFile><name>${name}</name></softwareFile>` });
      const said = dbIdOf(art.text);
      const up = await h.send('POST', `users/alice/mysoftware/${msid}/artifacts/${said}/bin/${encodeURIComponent(name)}`, { body: payload, headers: { 'content-type': 'application/octet-stream' } });
      expect(up.status, up.text).toBe(200);
      // Two requests on one keep-alive socket: the first answer's length must match its body.
      const target = signTarget(`users/alice/mysoftware/${msid}/artifacts/${said}/bin`, h.alice);
      const [first, second] = await twoOnOneSocket(h.origin, `/api/${target}`);
      expect(first.status, first.text).toBe(200);
      expect(first.text).toBe(payload.toString());
      const cd = first.headers['content-disposition'] ?? '';
      expect(cd).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''/);
      expect(decodeURIComponent(cd.split("UTF-8''")[1]!)).toBe(name);
      expect(second.status).toBe(200);
      expect(second.text).toBe(payload.toString());
    }
  });

  it('defect 3: If-Match holds on PUT users/<uid> with a password: of 10 concurrent writers with one ETag, one wins', async () => {
    const admin = { login: 'admin', password: PASSWORDS.admin };
    const cur = await h.send('GET', 'users/bob', { user: null, basic: admin });
    const etag = cur.headers.etag!;
    expect(etag).toBeTruthy();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.send('PUT', 'users/bob', { user: null, basic: admin, headers: { ...XML_HEADERS, 'if-match': etag }, body: `<user><firstName>w${i}</firstName><password>bob-new-${i}</password></user>` }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(412)]);
    for (const a of answers.filter((x) => x.status === 412)) expect(whyNotClientError(a, 412)).toBeUndefined();
    // The winner's password is the one that works.
    const winner = answers.findIndex((a) => a.status === 200);
    expect((await h.send('GET', 'users/bob', { user: null, basic: { login: 'bob', password: `bob-new-${winner}` } })).status).toBe(200);
  });

  it('defect 4: deleting a component and adding it to a template cannot both succeed', async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round++) {
      const sw = await h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: `<mySoftware><name>race${round}</name><version>1</version></mySoftware>` });
      const msid = dbIdOf(sw.text);
      // Files to remove give the delete something to wait on, as a real component would.
      for (let i = 0; i < 30; i++) {
        const art = await h.send('POST', `users/alice/mysoftware/${msid}/artifacts`, { headers: XML_HEADERS, body: `<softwareFile><name>f${i}.bin</name></softwareFile>` });
        await h.send('POST', `users/alice/mysoftware/${msid}/artifacts/${dbIdOf(art.text)}/bin/f${i}.bin`, { body: 'x', headers: { 'content-type': 'application/octet-stream' } });
      }
      const app = await h.send('POST', 'users/alice/appliances', { headers: XML_HEADERS, body: `<appliance><name>race${round}</name><version>1</version><distributionUri>distributions/1</distributionUri></appliance>` });
      const aid = dbIdOf(app.text);
      const [del, put] = await Promise.all([
        h.send('DELETE', `users/alice/mysoftware/${msid}`),
        h.send('PUT', `users/alice/appliances/${aid}`, { headers: XML_HEADERS, body: `<appliance><mySoftwareList><mySoftware><uri>users/alice/mysoftware/${msid}</uri></mySoftware></mySoftwareList></appliance>` }),
      ]);
      outcomes.push(`${del.status}/${put.status}`);
      const swNow = await h.send('GET', `users/alice/mysoftware/${msid}`);
      const appNow = await h.send('GET', `users/alice/appliances/${aid}`);
      const referenced = appNow.text.includes(`users/alice/mysoftware/${msid}<`);
      // Never both: a template that names a deleted component.
      expect(del.status === 204 && put.status === 200, `round ${round}: ${outcomes.at(-1)}`).toBe(false);
      expect(referenced && swNow.status === 404, `round ${round}: template names a deleted component`).toBe(false);
      if (del.status !== 204) expect(whyNotClientError(del, 409)).toBeUndefined();
      if (put.status !== 200) expect(whyNotClientError(put, 400)).toBeUndefined();
    }
    console.log(`[hardening] delete vs reference race outcomes (delete/put): ${outcomes.join(' ')}`);
  });

  it('defect 6: a character XML cannot carry is refused in an upload file name; the artifact views stay well-formed', async () => {
    const sw = await h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: '<mySoftware><name>nonchars</name><version>1</version></mySoftware>' });
    const msid = dbIdOf(sw.text);
    const art = await h.send('POST', `users/alice/mysoftware/${msid}/artifacts`, { headers: XML_HEADERS, body: '<softwareFile><name>plain.bin</name></softwareFile>' });
    const said = dbIdOf(art.text);
    for (const bad of ['a%EF%BF%BE.bin', 'a%EF%BF%BF.bin', '%EF%BF%BE']) {
      const up = await h.send('POST', `users/alice/mysoftware/${msid}/artifacts/${said}/bin/${bad}`, { body: 'x', headers: { 'content-type': 'application/octet-stream' } });
      expect(whyNotClientError(up, 400), bad).toBeUndefined();
    }
    for (const rel of [`users/alice/mysoftware/${msid}/artifacts/${said}`, `users/alice/mysoftware/${msid}/artifacts`]) {
      const r = await h.send('GET', rel);
      expect(r.status).toBe(200);
      // xmllint, an independent XML parser, must accept every view.
      expect(() => execFileSync('xmllint', ['--noout', '-'], { input: r.text, stdio: 'pipe' }), rel).not.toThrow();
    }
  });

  it('defect 7: a secret field sent with the wrong JSON type is never echoed in the 400', async () => {
    const cases: Array<[string, string, string, string]> = [
      ['PUT', 'users/alice', '{"user":{"password":73915482067}}', '73915482067'],
      ['PUT', 'users/alice', '{"user":{"password":true}}', 'true'],
      ['POST', 'users/alice/accounts', '{"credAccount":{"name":"n","keystoneUrl":"http://127.0.0.1:9/v3","password":88123456789}}', '88123456789'],
      ['POST', 'users/alice/apikeys', '{"apiKeyPair":{"name":"k","secretKey":55512345678}}', '55512345678'],
    ];
    for (const [method, rel, body, secret] of cases) {
      const r = await h.send(method, rel, { user: null, basic: { login: 'alice', password: PASSWORDS.alice }, headers: { 'content-type': 'application/json', accept: 'application/json' }, body });
      expect(whyNotClientError(r, 400), body).toBeUndefined();
      expect(r.text, body).not.toContain(secret);
    }
  });

  it('defect 4, same shape: a generation started while its template is deleted leaves no orphan image', async () => {
    const c = h.client(h.alice);
    const outcomes: string[] = [];
    for (let round = 0; round < 3; round++) {
      const aid = await generatableAppliance(c, `orphan${round}`);
      // A running generation: the delete has to stop it, which takes real waiting.
      await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'QCOW2' }, installProfile: { diskSize: 1024 } } });
      const [del, gen] = await Promise.all([
        h.send('DELETE', `users/alice/appliances/${aid}`),
        h.send('POST', `users/alice/appliances/${aid}/images`, { headers: XML_HEADERS, body: '<image><targetFormat><name>Raw Virtual Disk</name></targetFormat><installProfile><diskSize>1024</diskSize></installProfile></image>' }),
      ]);
      outcomes.push(`${del.status}/${gen.status}`);
      const all = await h.send('GET', 'users/alice/images', { headers: { accept: 'application/json' } });
      expect(all.status).toBe(200);
      const appExists = (await h.send('GET', `users/alice/appliances/${aid}`)).status === 200;
      const orphans = all.text.includes(`users/alice/appliances/${aid}/images/`) && !appExists;
      expect(orphans, `round ${round}: ${outcomes.at(-1)}: an image of a deleted template is left`).toBe(false);
      if (gen.status === 201 && appExists) await h.send('DELETE', `users/alice/appliances/${aid}`);
    }
    console.log(`[hardening] delete template vs generate outcomes (delete/generate): ${outcomes.join(' ')}`);
  });
});
