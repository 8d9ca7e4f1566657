// What a shared server needs beyond the platform's signing scheme, over
// real HTTP on 127.0.0.1 against a real server: every case fails on the code before its change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTarget } from '../../src/auth/signer';
import { createClient } from '../../src/client';
import { decode } from '../../src/codec';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { connect, type AddressInfo } from 'node:net';
import type { OpStatus } from '../../src/model/resources';
import { createUser } from '../../src/server';
import { publishToGlance } from '../../src/openstack';
import { spawnServer } from './support/child-server';
import { generatableAppliance } from './support/fixtures';
import { healthy, PASSWORDS, sendSigned, startHarness, tempDir, whyNotClientError, XML_HEADERS, type Harness, type Res } from './support/harness';

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

  it('a key pair made with scope=read signs reads only; the default pair stays read-write', async () => {
    const basic = { login: 'alice', password: PASSWORDS.alice };
    const made = await h.send('POST', 'users/alice/apikeys?scope=read', { user: null, basic, headers: XML_HEADERS, body: '<apiKeyPair><name>reader</name></apiKeyPair>' });
    expect(made.status, made.text).toBe(201);
    const reader = { login: 'alice', publicKey: /<publicKey>([^<]+)</.exec(made.text)![1]!, secretKey: /<secretKey>([^<]+)</.exec(made.text)![1]! };
    expect((await h.send('GET', 'users/alice/appliances', { user: reader })).status).toBe(200);
    expect((await h.send('HEAD', 'users/alice', { user: reader })).status).toBe(200);
    const writes = [
      await h.send('POST', 'users/alice/mysoftware', { user: reader, headers: XML_HEADERS, body: '<mySoftware><name>ro</name><version>1</version></mySoftware>' }),
      await h.send('PUT', 'users/alice', { user: reader, headers: XML_HEADERS, body: '<user><firstName>RO</firstName></user>' }),
      await h.send('DELETE', `users/alice/apikeys/${/<dbId>(\d+)</.exec(made.text)![1]}`, { user: reader }),
    ];
    for (const w of writes) expect(whyNotClientError(w, 403)).toBeUndefined();
    expect((await h.send('POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: '<mySoftware><name>rw</name><version>1</version></mySoftware>' })).status).toBe(201);
    const badScope = await h.send('POST', 'users/alice/apikeys?scope=admin', { user: null, basic, headers: XML_HEADERS, body: '<apiKeyPair><name>x</name></apiKeyPair>' });
    expect(whyNotClientError(badScope, 400)).toBeUndefined();
  });

  it('a signed expires in the past is refused; the signature covers it', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await h.send('GET', `users/alice?expires=${now + 120}`)).status).toBe(200);
    const past = await h.send('GET', `users/alice?expires=${now - 5}`);
    expect(whyNotClientError(past, 401)).toBeUndefined();
    // Moving a signed expires forward breaks the signature.
    const signed = signTarget(`users/alice?expires=${now - 5}`, h.alice).replace(`expires=${now - 5}`, `expires=${now + 500}`);
    expect(whyNotClientError(await h.sendRaw('GET', `/api/${signed}`), 401)).toBeUndefined();
  });
});

describe('a server that requires expiring signed URLs (signedUrlMaxAgeSeconds)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ limits: { signedUrlMaxAgeSeconds: 300 } });
  });
  afterAll(async () => h?.close());

  it('refuses a URL without expires or too far ahead, takes one within the bound, and the client adds it when configured', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(whyNotClientError(await h.send('GET', 'users/alice'), 401)).toBeUndefined();
    expect(whyNotClientError(await h.send('GET', `users/alice?expires=${now + 3600}`), 401)).toBeUndefined();
    expect((await h.send('GET', `users/alice?expires=${now + 60}`)).status).toBe(200);
    // `expires` spelled with a percent-escape is `expires` all the same (the check skips its parse only without one).
    expect(whyNotClientError(await h.send('GET', `users/alice?%65xpires=${now - 60}`), 401)).toBeUndefined();
    expect((await h.send('GET', `users/alice?%65xpires=${now + 60}`)).status).toBe(200);
    const c = createClient({ url: h.server.url, auth: { ...h.alice, expiresInSeconds: 60 }, retry: false });
    try {
      expect((await c.user_get({ uid: 'alice' })).loginName).toBe('alice');
    } finally {
      await c.close();
    }
    // Basic is not a URL: unaffected.
    expect((await h.send('GET', 'users/alice', { user: null, basic: { login: 'alice', password: PASSWORDS.alice } })).status).toBe(200);
  });
});

describe('serve --log', () => {
  it('logs the path of a signed request without apiKey and signature', async () => {
    const dataDir = tempDir();
    const alice = await createUser(dataDir, { login: 'alice', password: PASSWORDS.alice });
    const srv = await spawnServer(dataDir, { log: true });
    try {
      expect((await sendSigned(srv.url, 'GET', 'users/alice/appliances?count=3', { user: alice })).status).toBe(200);
      expect((await sendSigned(srv.url, 'GET', 'users/alice/nothing-here', { user: alice })).status).toBe(404);
    } finally {
      await srv.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    const requestLines = srv.lines.filter((l) => l.includes('users/alice/appliances'));
    expect(requestLines.length).toBeGreaterThan(0); // the log really was captured
    const leaks = srv.lines.filter((l) => /apiKey|signature=/.test(l) || l.includes(alice.publicKey) || l.includes(encodeURIComponent(alice.publicKey)));
    expect(leaks).toEqual([]);
    expect(requestLines.some((l) => l.includes('/api/users/alice/appliances?count=3'))).toBe(true);
  });
});

/**
 * Send a request head and the first bytes of a longer declared body, then wait (bounded guard) for an answer
 * while the rest of the body is never sent: what a slow or hostile client does.
 */
function answerBeforeBody(origin: string, head: string, firstBytes: string): Promise<Res | 'no answer'> {
  const u = new URL(origin);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    let got = '';
    const guard = setTimeout(() => {
      sock.destroy();
      resolve('no answer');
    }, 10_000);
    sock.on('connect', () => sock.write(head + firstBytes));
    sock.on('error', reject);
    sock.on('data', (c: Buffer) => {
      got += c.toString('utf8');
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = got.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const len = Number(headers['content-length'] ?? -1);
      if (len >= 0 && got.length - end - 4 >= len) {
        clearTimeout(guard);
        sock.destroy();
        resolve({ status: Number(lines[0]!.split(' ')[1]), headers, text: got.slice(end + 4, end + 4 + len) });
      }
    });
  });
}

describe('slow and unauthenticated clients', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('an unauthenticated request is answered 401 before its body is read (document and upload)', async () => {
    const host = new URL(h.origin).host;
    for (const [path, type] of [
      ['/api/users/alice/mysoftware', 'application/xml'],
      ['/api/users/alice/mysoftware/1/artifacts/1/bin/x.bin', 'application/octet-stream'],
    ] as const) {
      const head = `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${type}\r\nContent-Length: 900000\r\n\r\n`;
      const r = await answerBeforeBody(h.origin, head, '<mySoftware>');
      expect(r, path).not.toBe('no answer');
      expect(whyNotClientError(r as Res, 401), path).toBeUndefined();
    }
  });
});

describe('timeouts (limits.headersTimeoutMs, idleTimeoutMs)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ limits: { headersTimeoutMs: 1_000, idleTimeoutMs: 1_500 } });
  });
  afterAll(async () => h?.close());

  it('a request head that never ends gets a 408 uforgeError', async () => {
    const r = await answerBeforeBody(h.origin, `GET /api/status HTTP/1.1\r\nHost: ${new URL(h.origin).host}\r\nX-Slow: `, 'a');
    expect(r).not.toBe('no answer');
    expect(whyNotClientError(r as Res, 408)).toBeUndefined();
  });

  it('an authenticated body that stops arriving gets a 408 uforgeError', async () => {
    const auth = `Basic ${Buffer.from(`alice:${PASSWORDS.alice}`).toString('base64')}`;
    const head = `POST /api/users/alice/mysoftware HTTP/1.1\r\nHost: ${new URL(h.origin).host}\r\nAuthorization: ${auth}\r\nContent-Type: application/xml\r\nContent-Length: 5000\r\n\r\n`;
    const r = await answerBeforeBody(h.origin, head, '<mySoftware><name>');
    expect(r).not.toBe('no answer');
    expect(whyNotClientError(r as Res, 408)).toBeUndefined();
    expect(await healthy(h.server.url)).toBe(true);
  });
});

describe('job caps (limits.jobsPerUser, jobsTotal)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ limits: { jobsPerUser: 2, jobsTotal: 3 } });
  });
  afterAll(async () => h?.close());

  it('a user past the cap gets 429, the server past its cap 503, both with Retry-After; a cancelled job frees its place', async () => {
    const alice = h.client(h.alice);
    const bob = h.client(h.bob);
    const aAid = await generatableAppliance(alice, 'capped');
    const bAid = await generatableAppliance(bob, 'capped');
    const gen = (uid: string, aid: string, format: string) =>
      h.send('POST', `users/${uid}/appliances/${aid}/images`, { user: uid === 'alice' ? h.alice : h.bob, headers: XML_HEADERS, body: `<image><targetFormat><name>${format}</name></targetFormat><installProfile><diskSize>1024</diskSize></installProfile></image>` });
    const started: Array<[string, string, string]> = [];
    const take = (uid: string, aid: string, r: Res) => started.push([uid, aid, /<dbId>(\d+)</.exec(r.text)![1]!]);
    try {
      for (const f of ['QCOW2', 'Raw Virtual Disk']) {
        const r = await gen('alice', aAid, f);
        expect(r.status, r.text).toBe(201);
        take('alice', aAid, r);
      }
      const third = await gen('alice', aAid, 'VMware');
      expect(whyNotClientError(third, 429)).toBeUndefined();
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      const b1 = await gen('bob', bAid, 'QCOW2');
      expect(b1.status, b1.text).toBe(201);
      take('bob', bAid, b1);
      const b2 = await gen('bob', bAid, 'Raw Virtual Disk');
      // 503 is the server's state, not the request's: a uforgeError all the same.
      expect(b2.status).toBe(503);
      expect(decode('xml', b2.text, 'uforgeError').value.statusCode).toBe(503);
      expect(Number(b2.headers['retry-after'])).toBeGreaterThan(0);
      // A cancelled generation is terminal: its place is free again.
      const [uid, aid, itid] = started.shift()!;
      expect((await h.send('DELETE', `users/${uid}/appliances/${aid}/images/${itid}/status`)).status).toBe(200);
      const again = await gen('bob', bAid, 'Raw Virtual Disk');
      expect(again.status, again.text).toBe(201);
      take('bob', bAid, again);
    } finally {
      for (const [uid, aid, itid] of started) await h.send('DELETE', `users/${uid}/appliances/${aid}/images/${itid}/status`, { user: uid === 'alice' ? h.alice : h.bob });
    }
  });
});

/** Bytes a process has read so far (Linux /proc/<pid>/io `rchar`): a count, not a timing. */
function bytesRead(pid: number): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
}

describe('HEAD on a download', () => {
  it.skipIf(!existsSync('/proc/self/io'))('is answered from the record: the file is not read', async () => {
    const dataDir = tempDir();
    const alice = await createUser(dataDir, { login: 'alice', password: PASSWORDS.alice });
    const srv = await spawnServer(dataDir);
    try {
      const sw = await sendSigned(srv.url, 'POST', 'users/alice/mysoftware', { user: alice, headers: XML_HEADERS, body: '<mySoftware><name>big</name><version>1</version></mySoftware>' });
      const msid = /<dbId>(\d+)</.exec(sw.text)![1]!;
      const art = await sendSigned(srv.url, 'POST', `users/alice/mysoftware/${msid}/artifacts`, { user: alice, headers: XML_HEADERS, body: '<softwareFile><name>big.bin</name></softwareFile>' });
      const said = /<dbId>(\d+)</.exec(art.text)![1]!;
      const size = 48 * 1024 * 1024;
      const up = await sendSigned(srv.url, 'POST', `users/alice/mysoftware/${msid}/artifacts/${said}/bin/big.bin`, { user: alice, body: Buffer.alloc(size, 7), headers: { 'content-type': 'application/octet-stream' } });
      expect(up.status, up.text).toBe(200);
      const before = bytesRead(srv.proc.pid!);
      const heads = [];
      for (let i = 0; i < 3; i++) heads.push(await sendSigned(srv.url, 'HEAD', `users/alice/mysoftware/${msid}/artifacts/${said}/bin`, { user: alice }));
      // Fastify drains a HEAD's stream after answering: let any such reading end (bounded) before counting.
      let last = -1;
      for (let i = 0; i < 50 && bytesRead(srv.proc.pid!) !== last; i++) {
        last = bytesRead(srv.proc.pid!);
        await new Promise((r) => setTimeout(r, 100));
      }
      const read = bytesRead(srv.proc.pid!) - before;
      for (const hd of heads) {
        expect(hd.status).toBe(200);
        expect(hd.headers['content-length']).toBe(String(size));
        expect(hd.headers.etag).toBeTruthy();
      }
      expect(read, `bytes read by the server for 3 HEADs of a ${size}-byte file`).toBeLessThan(1024 * 1024);
    } finally {
      await srv.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** CPU time a process has used (utime + stime, in clock ticks, /proc/<pid>/stat): an amount of work, not a timing. */
function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const after = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return Number(after[11]) + Number(after[12]);
}

describe('Basic authentication failures', () => {
  it.skipIf(!existsSync('/proc/self/stat'))('an unknown login costs the server the same password hash as a known one', async () => {
    const dataDir = tempDir();
    await createUser(dataDir, { login: 'alice', password: PASSWORDS.alice });
    const srv = await spawnServer(dataDir);
    try {
      // Interleaved, after a warm-up: work the server does in the background (its start-up sweep, the JIT)
      // falls on both logins alike instead of on whichever is measured first.
      const once = async (login: string, i: number): Promise<number> => {
        const before = cpuTicks(srv.proc.pid!);
        const r = await sendSigned(srv.url, 'GET', 'users/alice', { user: null, basic: { login, password: `wrong-${i}` } });
        expect(r.status).toBe(401);
        return cpuTicks(srv.proc.pid!) - before;
      };
      await once('alice', -1);
      await once('nobody-here', -1);
      let known = 0;
      let unknown = 0;
      for (let i = 0; i < 8; i++) {
        known += await once('alice', i);
        unknown += await once('nobody-here', i);
      }
      console.log(`[hardening] CPU ticks for 8 failed Basic logins: known login ${known}, unknown login ${unknown}`);
      expect(known).toBeGreaterThan(0);
      expect(unknown).toBeGreaterThanOrEqual(known / 2);
    } finally {
      await srv.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('an address past its failure limit gets 429 with Retry-After, even with good credentials', async () => {
    const h = await startHarness({ limits: { authFailuresPerMinute: 5 } });
    try {
      // A request without credentials is no failed guess.
      expect((await h.send('GET', 'users/alice', { user: null })).status).toBe(401);
      for (let i = 0; i < 5; i++) {
        expect((await h.send('GET', 'users/alice', { user: null, basic: { login: 'alice', password: `guess-${i}` } })).status).toBe(401);
      }
      const limited = await h.send('GET', 'users/alice', { user: null, basic: { login: 'alice', password: 'guess-6' } });
      expect(whyNotClientError(limited, 429)).toBeUndefined();
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(whyNotClientError(await h.send('GET', 'users/alice'), 429)).toBeUndefined();
      expect(await healthy(h.server.url)).toBe(true);
    } finally {
      await h.close();
    }
  });
});

describe('a configured public base URL (publicUrl)', () => {
  let h: Harness;
  const PUBLIC = 'https://forge.example.test/api';
  beforeAll(async () => {
    h = await startHarness({ publicUrl: PUBLIC });
  });
  afterAll(async () => h?.close());

  it('Location and requestUri use it; a hostile Host header is never reflected', async () => {
    const body = '<mySoftware><name>hosted</name><version>1</version></mySoftware>';
    const created = await answerBeforeBody(
      h.origin,
      `POST /api/${signTarget('users/alice/mysoftware', h.alice)} HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/xml\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expect(created).not.toBe('no answer');
    const c = created as Res;
    expect(c.status).toBe(201);
    expect(c.headers.location).toMatch(new RegExp(`^${PUBLIC}/users/alice/mysoftware/\\d+$`));
    const missing = await answerBeforeBody(h.origin, `GET /api/${signTarget('users/alice/mysoftware/999999', h.alice)} HTTP/1.1\r\nHost: evil.example\r\n\r\n`, '');
    expect(whyNotClientError(missing as Res, 404)).toBeUndefined();
    expect((missing as Res).text).toContain(`<requestUri>${PUBLIC}/users/alice/mysoftware/999999</requestUri>`);
    expect(JSON.stringify([c, missing])).not.toContain('evil.example');
  });
});

describe('cloud endpoints (SSRF through keystoneUrl/glanceUrl)', () => {
  it('with cloudEndpoints set, an account or publication naming another endpoint is a 400', async () => {
    const h = await startHarness({ cloudEndpoints: ['http://127.0.0.1:5000/v3', 'https://glance.example.test'] });
    try {
      const acc = (name: string, ks: string, glance = '') =>
        h.send('POST', 'users/alice/accounts', { headers: XML_HEADERS, body: `<credAccount><name>${name}</name><keystoneUrl>${ks}</keystoneUrl>${glance}<login>u</login><password>p</password></credAccount>` });
      expect((await acc('ok', 'http://127.0.0.1:5000/v3')).status).toBe(201);
      expect((await acc('ok2', 'http://127.0.0.1:5000/v3/', '<glanceUrl>https://glance.example.test/v2</glanceUrl>')).status).toBe(201);
      for (const [name, ks, glance] of [
        ['port', 'http://127.0.0.1:6379/v3', ''],
        ['meta', 'http://169.254.169.254/latest', ''],
        ['sibling', 'http://127.0.0.1:5000/v30', ''],
        ['glance', 'http://127.0.0.1:5000/v3', '<glanceUrl>http://127.0.0.1:22/</glanceUrl>'],
      ] as const) {
        expect(whyNotClientError(await acc(name, ks, glance), 400), name).toBeUndefined();
      }
      const c = h.client(h.alice);
      const aid = await generatableAppliance(c, 'ssrf');
      const img = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'OpenStack QCOW2' }, installProfile: { diskSize: 1024 } } });
      await c.machineImageGeneration_cancel({ uid: 'alice', aid, itid: String(img.dbId) });
      const pub = await h.send('POST', `users/alice/appliances/${aid}/images/${img.dbId}/pimages`, {
        headers: XML_HEADERS,
        body: '<publishImage><credAccount><keystoneUrl>http://127.0.0.1:6379/v3</keystoneUrl><login>u</login><password>p</password></credAccount><keystoneProject>p</keystoneProject></publishImage>',
      });
      expect(whyNotClientError(pub, 400)).toBeUndefined();
      expect(pub.text).toContain('keystoneUrl');
    } finally {
      await h.close();
    }
  });

  it("a foreign service's answer is not echoed in the publication error", async () => {
    const marker = 'INTERNAL-ADMIN-PAGE-7d1c';
    const foreign = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end(`<html><body>${marker} redis config dump</body></html>`));
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
    const dir = tempDir();
    try {
      const file = join(dir, 'disk.raw');
      writeFileSync(file, Buffer.alloc(4096));
      const url = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/v3`;
      const e = await publishToGlance({ keystoneUrl: url, login: 'u', password: 'p', domain: 'Default', project: 'p', displayName: 'x', publicImage: false, diskFormat: 'raw', file, size: 4096 }).then(
        () => undefined,
        (x: unknown) => x as Error,
      );
      expect(e).toBeInstanceOf(Error);
      expect(e!.message).toMatch(/HTTP 404/);
      expect(e!.message).not.toContain(marker);
    } finally {
      foreign.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the open GET /status', () => {
  it('tells health and version only, not how many jobs run', async () => {
    const h = await startHarness();
    try {
      const c = h.client(h.alice);
      const aid = await generatableAppliance(c, 'busy');
      const img = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'QCOW2' }, installProfile: { diskSize: 1024 } } });
      try {
        for (const accept of ['application/xml', 'application/json']) {
          const st = await h.send('GET', 'status', { user: null, headers: { accept } });
          expect(st.status).toBe(200);
          expect(st.text).toMatch(/alive/);
          expect(st.text).toMatch(/version/);
          expect(st.text, accept).not.toMatch(/serviceLoad/);
        }
      } finally {
        await c.machineImageGeneration_cancel({ uid: 'alice', aid, itid: String(img.dbId) });
      }
    } finally {
      await h.close();
    }
  });
});

describe('requests Node would answer itself', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('no Host, an unknown Expect and CONNECT each get a uforgeError answer', async () => {
    const host = new URL(h.origin).host;
    const cases: Array<[string, string, number]> = [
      ['no Host', 'GET /api/status HTTP/1.1\r\nConnection: close\r\n\r\n', 400],
      ['Expect: teapot', `POST /api/users/alice/mysoftware HTTP/1.1\r\nHost: ${host}\r\nExpect: teapot\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, 417],
      ['CONNECT', `CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n`, 405],
    ];
    for (const [label, head, status] of cases) {
      const r = await answerBeforeBody(h.origin, head, '');
      expect(r, label).not.toBe('no answer');
      expect(whyNotClientError(r as Res, status), label).toBeUndefined();
    }
    expect(await healthy(h.server.url)).toBe(true);
  });
});

/** A "mirror" on 127.0.0.1 that accepts connections and never answers: a build waits on it until stopped. */
async function silentMirror(): Promise<{ url: string; close(): Promise<void> }> {
  const held: Array<import('node:net').Socket> = [];
  const srv = (await import('node:net')).createServer((s) => void held.push(s));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/debian`,
    close: () => {
      for (const s of held) s.destroy();
      return new Promise((resolve) => srv.close(() => resolve()));
    },
  };
}

const imageBody = (format: string, diskSize = 1024): string =>
  `<image><targetFormat><name>${format}</name></targetFormat><installProfile><diskSize>${diskSize}</diskSize></installProfile></image>`;

async function finalStatus(h: Harness, uid: string, aid: string, itid: string, boundMs = 20_000): Promise<OpStatus> {
  const end = Date.now() + boundMs;
  const client = h.client(uid === 'alice' ? h.alice : h.bob, 'json');
  for (;;) {
    const s = await client.machineImageStatus_get({ uid, aid, itid });
    if (s.complete || s.error || s.cancelled || Date.now() > end) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('build limits: time, images per user, free space (limits.buildTimeoutMs, imagesPerUser)', () => {
  let h: Harness;
  let mirror: Awaited<ReturnType<typeof silentMirror>>;
  const cacheDir = tempDir('forge-bounds-cache-');
  beforeAll(async () => {
    mirror = await silentMirror();
    h = await startHarness({ limits: { buildTimeoutMs: 2000, imagesPerUser: 2 }, mirror: { archive: mirror.url }, cacheDir });
  });
  afterAll(async () => {
    await h?.close();
    await mirror?.close();
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('a build past the time limit is stopped: error status in words, nothing left in the data or cache folder', async () => {
    const aid = await generatableAppliance(h.client(h.alice), 'slow');
    const r = await h.send('POST', `users/alice/appliances/${aid}/images`, { headers: XML_HEADERS, body: imageBody('QCOW2') });
    expect(r.status, r.text).toBe(201);
    const itid = /<dbId>(\d+)</.exec(r.text)![1]!;
    // The mirror never answers: without the limit the build waits on it (30 s per index, then fails otherwise).
    const s = await finalStatus(h, 'alice', aid, itid, 15_000);
    expect(s.error, JSON.stringify(s)).toBe(true);
    expect(s.cancelled).toBe(false);
    expect(s.errorMessage).toMatch(/^the build ran longer than this server's limit of 2 seconds and was stopped/);
    expect(readdirSync(join(h.dataDir, 'images'))).toEqual([]);
    expect(readdirSync(join(h.dataDir, 'tmp'))).toEqual([]);
    expect(readdirSync(join(cacheDir, 'os', 'tmp'))).toEqual([]);
  });

  it('one image past the per-user quota is a 403 uforgeError; deleting one makes room', async () => {
    const aid = await generatableAppliance(h.client(h.bob), 'many');
    const gen = (format: string) => h.send('POST', `users/bob/appliances/${aid}/images`, { user: h.bob, headers: XML_HEADERS, body: imageBody(format) });
    const made: string[] = [];
    for (const f of ['QCOW2', 'Raw Virtual Disk']) {
      const r = await gen(f);
      expect(r.status, r.text).toBe(201);
      made.push(/<dbId>(\d+)</.exec(r.text)![1]!);
    }
    const over = await gen('VMware');
    expect(whyNotClientError(over, 403)).toBeUndefined();
    expect(decode('xml', over.text, 'uforgeError').value.localizedErrorMsg?.message).toMatch(/already has 2 images.*delete images you no longer need/);
    expect((await h.send('DELETE', `users/bob/appliances/${aid}/images/${made[0]!}`, { user: h.bob })).status).toBe(204);
    const again = await gen('VMware');
    expect(again.status, again.text).toBe(201);
    for (const itid of [made[1]!, /<dbId>(\d+)</.exec(again.text)![1]!]) await h.send('DELETE', `users/bob/appliances/${aid}/images/${itid}`, { user: h.bob });
  });
});

describe('free space for a build (a real 64 MiB tmpfs as the data folder)', () => {
  it.skipIf(process.getuid?.() !== 0)('a generation whose disk cannot fit is a 507 uforgeError before anything is written', async () => {
    const dataDir = tempDir('forge-small-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dataDir]);
    const cacheDir = tempDir('forge-small-cache-');
    const mirror = await silentMirror();
    let h: Harness | undefined;
    try {
      h = await startHarness({ dataDir, mirror: { archive: mirror.url }, cacheDir });
      const aid = await generatableAppliance(h.client(h.alice), 'big');
      const r = await h.send('POST', `users/alice/appliances/${aid}/images`, { headers: XML_HEADERS, body: imageBody('QCOW2', 1024) });
      expect(whyNotClientError(r, [])).toMatch(/^status 507 is not a 4xx/);
      expect(decode('xml', r.text, 'uforgeError').value.localizedErrorMsg?.message).toMatch(/MiB of disk space free and an image of 1024 MiB needs up to that much/);
      expect((await h.client(h.alice).machineImage_getAll({ uid: 'alice', aid })).total).toBe(0);
      expect(readdirSync(join(dataDir, 'images'))).toEqual([]);
    } finally {
      await h?.close().catch(() => undefined);
      await mirror.close();
      execFileSync('umount', [dataDir]);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});

describe('a failed job in words, the whole error in the server log (serve, no --log)', () => {
  it('the status names what failed and what to do without the server paths; the log has them', async () => {
    const dataDir = tempDir();
    const alice = await createUser(dataDir, { login: 'alice', password: PASSWORDS.alice });
    // A cache folder that cannot be made (under a regular file): a real fault carrying a host path.
    writeFileSync(join(dataDir, 'not-a-dir'), '');
    const cacheDir = join(dataDir, 'not-a-dir', 'cache');
    const srv = await spawnServer(dataDir, { extra: ['--cache-dir', cacheDir] });
    let status: Partial<OpStatus> = {};
    try {
      const client = createClient({ url: srv.url, auth: { login: 'alice', publicKey: alice.publicKey, secretKey: alice.secretKey }, retry: false });
      const aid = await generatableAppliance(client, 'broken-cache');
      const r = await sendSigned(srv.url, 'POST', `users/alice/appliances/${aid}/images`, { user: alice, headers: XML_HEADERS, body: imageBody('QCOW2') });
      expect(r.status, r.text).toBe(201);
      const itid = /<dbId>(\d+)</.exec(r.text)![1]!;
      for (let i = 0; i < 100 && !status.error; i++) {
        status = await client.machineImageStatus_get({ uid: 'alice', aid, itid });
        await new Promise((res) => setTimeout(res, 100));
      }
      await client.close();
    } finally {
      await srv.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(status.error, JSON.stringify(status)).toBe(true);
    expect(status.errorMessage).toBe("building the OS layer (the Debian packages) failed: the server could not read or write its own files; tell the server's operator (the server log has the details)");
    // The operator's line: the job, and the error with its path.
    const logged = srv.lines.filter((l) => l.includes('"job":"image:') && l.includes(cacheDir));
    expect(logged.length, srv.lines.join('\n')).toBeGreaterThan(0);
  });
});
