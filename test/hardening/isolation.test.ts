// Isolation matrix (wire contract §4): for every operation of the table with `{uid}`, user B on
// user A's resources gets a 403 `uforgeError`, an administrator gets through (neither 401 nor 403,
// never a 5xx), and no response body and no server log line ever holds a password or a secret key.
// The server runs as a child process with `--log`, so every line it writes is read back.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type Operation } from '../../src/model/operations';
import { createUser, type CreatedUser } from '../../src/server';
import { spawnServer, type ChildServer } from './support/child-server';
import { CaseCounter, PASSWORDS, sendSigned, tempDir, whyNotClientError, XML_HEADERS, type Res, type Send } from './support/harness';

const ACCOUNT_PASSWORD = 'os-Pa55-secret-account';
const counter = new CaseCounter();

/** A minimal body for an operation's request root: enough to pass the parser, not necessarily valid. */
function bodyFor(op: Operation): string | undefined {
  if (op.binary === 'upload') return 'uploaded by the isolation matrix';
  if (!op.request) return undefined;
  if (op.id === 'user_update') return '<user><email>alice@example.org</email></user>';
  return `<ns0:${op.request} xmlns:ns0="http://www.usharesoft.com/uforge"/>`;
}

const ORDER: Record<string, number> = { GET: 0, PUT: 1, POST: 2, DELETE: 3 };

describe('isolation matrix', () => {
  let srv: ChildServer;
  let dataDir: string;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;
  const bodies: Array<{ label: string; text: string }> = [];
  const secrets: string[] = [];
  let ids: Record<string, string>;

  async function as(u: CreatedUser | 'basic-admin' | 'basic-bob', method: string, rel: string, s: Send = {}): Promise<Res> {
    const who: Send =
      u === 'basic-admin' ? { user: null, basic: { login: 'admin', password: PASSWORDS.admin } } :
      u === 'basic-bob' ? { user: null, basic: { login: 'bob', password: PASSWORDS.bob } } :
      { user: u };
    const r = await sendSigned(srv.url, method, rel, { ...s, ...who });
    bodies.push({ label: `${method} ${rel}`, text: r.text });
    return r;
  }
  const dbId = (r: Res): string => /<dbId>(\d+)<\/dbId>/.exec(r.text)?.[1] ?? '1';

  beforeAll(async () => {
    dataDir = tempDir('forge-iso-');
    admin = await createUser(dataDir, { login: 'admin', password: PASSWORDS.admin, admin: true });
    alice = await createUser(dataDir, { login: 'alice', password: PASSWORDS.alice });
    bob = await createUser(dataDir, { login: 'bob', password: PASSWORDS.bob });
    secrets.push(...Object.values(PASSWORDS), admin.secretKey, alice.secretKey, bob.secretKey, ACCOUNT_PASSWORD);
    srv = await spawnServer(dataDir, { log: true });

    const app = await as(alice, 'POST', 'users/alice/appliances', { headers: XML_HEADERS, body: '<appliance><name>web</name><version>1</version><distributionUri>distributions/1</distributionUri></appliance>' });
    const aid = dbId(app);
    const prof = await as(alice, 'POST', `users/alice/appliances/${aid}/osprofile`, { headers: XML_HEADERS, body: '<linuxProfile><name>Minimal</name><standardProfileUri>distributions/1/profiles/1</standardProfileUri></linuxProfile>' });
    const sw = await as(alice, 'POST', 'users/alice/mysoftware', { headers: XML_HEADERS, body: '<mySoftware><name>tool</name><version>1</version></mySoftware>' });
    const msid = dbId(sw);
    const art = await as(alice, 'POST', `users/alice/mysoftware/${msid}/artifacts`, { headers: XML_HEADERS, body: '<softwareFile><name>tool.bin</name></softwareFile>' });
    const said = dbId(art);
    await as(alice, 'POST', `users/alice/mysoftware/${msid}/artifacts/${said}/bin/tool.bin`, { body: 'tool bytes' });
    const acc = await as(alice, 'POST', 'users/alice/accounts', {
      headers: XML_HEADERS,
      body: `<ns0:credAccount xmlns:ns0="http://www.usharesoft.com/uforge" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ns0:CredAccountOpenStack"><name>os</name><targetPlatform><name>OpenStack</name><type>openstack</type></targetPlatform><keystoneUrl>http://127.0.0.1:5000/v3</keystoneUrl><login>demo</login><password>${ACCOUNT_PASSWORD}</password></ns0:credAccount>`,
    });
    // A second key of alice's: its secret is answered once, at creation (not searched in that one body).
    // (A new key pair needs the current password, Basic, not a replayable signed URL.)
    const key = await sendSigned(srv.url, 'POST', 'users/alice/apikeys', { user: null, basic: { login: 'alice', password: PASSWORDS.alice }, headers: XML_HEADERS, body: '<apiKeyPair><name>ci</name></apiKeyPair>' });
    const second = /<secretKey>([^<]+)<\/secretKey>/.exec(key.text)?.[1];
    expect(second).toBeTruthy();
    secrets.push(second!);
    expect([app.status, prof.status, sw.status, art.status, acc.status, key.status]).toEqual([201, 201, 201, 201, 201, 201]);
    ids = { uid: 'alice', aid, osid: dbId(prof), msid, said, caid: dbId(acc), akid: dbId(key), itid: '1', pitid: '1', fileName: 'tool.bin' };
  });
  afterAll(async () => {
    console.log(counter.report('isolation'));
    await srv?.stop();
  });

  const rows = operations.filter((o) => o.path.includes('{uid}')).sort((a, b) => ORDER[a.method]! - ORDER[b.method]!);

  it(`covers every {uid} operation (${rows.length})`, () => {
    expect(rows.length).toBeGreaterThan(40);
  });

  it('user B on user A: 403 uforgeError for every operation (signed and Basic)', async () => {
    const bad: string[] = [];
    for (const op of rows) {
      const rel = op.path.replace(/^\//, '').replace(/\{(\w+)\}/g, (_, k: string) => ids[k] ?? '1');
      for (const who of [bob, 'basic-bob'] as const) {
        counter.add('user-b');
        const body = bodyFor(op);
        const r = await as(who, op.method, rel, body === undefined ? {} : { body, headers: op.binary ? {} : XML_HEADERS });
        const why = whyNotClientError(r, 403);
        if (why) bad.push(`${op.id} as ${typeof who === 'string' ? who : 'bob'}: ${why}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('an administrator gets through every operation (not 401/403, never 5xx)', async () => {
    const bad: string[] = [];
    for (const [i, op] of rows.entries()) {
      const rel = op.path.replace(/^\//, '').replace(/\{(\w+)\}/g, (_, k: string) => ids[k] ?? '1');
      const body = bodyFor(op);
      counter.add('admin');
      // Half the rows signed, half Basic: a password in an Authorization header must not reach the log.
      // Key creation needs Basic whoever signs: those rows always go as Basic.
      const r = await as(i % 2 && op.id !== 'apiKey_create' && op.id !== 'user_update' ? admin : 'basic-admin', op.method, rel, body === undefined ? {} : { body, headers: op.binary ? {} : XML_HEADERS });
      // The one deliberate exception: the reference server's target formats are fixed, for everyone.
      if (op.id === 'userTargetFormat_update' && r.status === 403 && r.text.includes('are fixed')) continue;
      if (r.status === 401 || r.status === 403 || r.status >= 500) bad.push(`${op.id}: ${r.status} ${r.text.slice(0, 160)}`);
    }
    expect(bad).toEqual([]);
  });

  it('no response body and no server log line holds a password or a secret key', async () => {
    // Wrong passwords close to the real ones must not be logged either.
    await as('basic-bob', 'GET', 'users/bob', { basic: { login: 'bob', password: `${PASSWORDS.bob}-wrong` } });
    secrets.push(`${PASSWORDS.bob}-wrong`);
    await srv.stop(); // flush: every line the server will ever write is in `lines`
    const fingerprints = secrets.map((s) => ({ s, forms: [s, Buffer.from(s).toString('base64'), encodeURIComponent(s)] }));
    const leaks: string[] = [];
    for (const { label, text } of bodies) {
      for (const { s, forms } of fingerprints) if (forms.some((f) => text.includes(f))) leaks.push(`body of ${label} holds ${hash(s)}`);
    }
    for (const line of srv.lines) {
      for (const { s, forms } of fingerprints) if (forms.some((f) => line.includes(f))) leaks.push(`log line holds ${hash(s)}: ${line.slice(0, 120)}`);
    }
    console.log(`[hardening] isolation: ${bodies.length} bodies and ${srv.lines.length} log lines searched for ${secrets.length} secrets`);
    expect(srv.lines.length).toBeGreaterThan(rows.length); // the log really was captured
    expect(leaks).toEqual([]);
  });
});

/** Name a leaked secret without printing it. */
function hash(s: string): string {
  return `secret#${createHash('sha256').update(s).digest('hex').slice(0, 8)}`;
}
