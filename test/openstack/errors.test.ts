// Typed failures against the real services: bad credentials, unknown project, forbidden public image,
// bad input, unreachable Keystone — each a clear OpenStackError that names the cause and no secret.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForgeError } from '../../src/errors';
import { deleteGlanceImage, publishToGlance, OpenStackError, type PublishRequest } from '../../src/server/openstack';
import { startFaultProxy } from './fault-proxy';
import { imagesNamed, openStackServices, type OpenStackEnv } from '../support/openstack';

const svc = openStackServices();
if (svc.skip) console.warn(`[openstack tests skipped] ${svc.skip}`);

describe.skipIf(!svc.env)('OpenStackError kinds against the real Keystone and Glance', () => {
  const env = svc.env as OpenStackEnv;
  let dir: string;
  let file: string;
  const size = 256 * 1024;
  /** Every secret any test handed over or saw on the wire; none may appear in any error. */
  const secrets = new Set<string>();
  const errors: unknown[] = [];

  const request = (over: Partial<PublishRequest> = {}): PublishRequest => ({
    keystoneUrl: env.keystoneUrl, login: env.user.login, password: env.user.password, domain: env.domain,
    project: env.user.project, displayName: `af-it-${randomUUID()}`, publicImage: false, diskFormat: 'raw', file, size,
    ...over,
  });
  /** Publishes, expects an OpenStackError, keeps it for the secret sweep. */
  const failing = async (req: PublishRequest): Promise<OpenStackError> => {
    if (req.password) secrets.add(req.password);
    const e = await publishToGlance(req).then(() => undefined, (x: unknown) => x);
    errors.push(e);
    expect(isForgeError(e, OpenStackError), `expected an OpenStackError, got ${String(e)}`).toBe(true);
    return e as OpenStackError;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'af-openstack-'));
    file = join(dir, 'disk.raw');
    writeFileSync(file, randomBytes(size));
    secrets.add(env.user.password).add(env.admin.password);
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('a wrong password → kind auth (401)', async () => {
    const e = await failing(request({ password: `wrong-${randomUUID()}` }));
    expect(e).toMatchObject({ kind: 'auth', service: 'keystone', status: 401 });
    expect(e.message).toMatch(/refused the credentials/);
  });

  it('an unknown domain → kind auth', async () => {
    const e = await failing(request({ domain: `nodomain-${randomUUID()}` }));
    expect(e.kind).toBe('auth');
  });

  it('an unknown project → kind project, naming the project', async () => {
    const e = await failing(request({ project: 'no-such-project' }));
    expect(e).toMatchObject({ kind: 'project', service: 'keystone' });
    expect(e.message).toMatch(/project no-such-project in domain/);
  });

  it('a project the user has no role on → kind project', async () => {
    const e = await failing(request({ project: env.admin.project }));
    expect(e.kind).toBe('project');
  });

  it('a public image as the non-admin user → kind forbidden (403), nothing created, no token in the error', async () => {
    // A recording proxy in front of Keystone lets the test see the token that was issued.
    const ks = await startFaultProxy(env.keystoneUrl, { recordBytes: 1 << 20 });
    try {
      const req = request({ keystoneUrl: `${ks.url}/v3`, publicImage: true });
      const e = await failing(req);
      expect(e).toMatchObject({ kind: 'forbidden', service: 'glance', status: 403 });
      expect(e.message).toMatch(/publicize_image/);
      const token = /x-subject-token: ([^\r\n]+)/i.exec(ks.recorded())?.[1];
      expect(token, 'the proxy saw the issued token').toBeTruthy();
      secrets.add(token as string);
      expect(await imagesNamed(env, req.displayName)).toEqual([]);
    } finally {
      await ks.close();
    }
  });

  it('a Glance error that echoes the token is scrubbed (labelled fake Glance: a real one does not echo)', async () => {
    let seen = '';
    const fake = createServer((req, res) => {
      seen = String(req.headers['x-auth-token']);
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `token ${seen} rejected` }));
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    try {
      const e = await failing(request({ glanceUrl: `http://127.0.0.1:${(fake.address() as { port: number }).port}` }));
      expect(e).toMatchObject({ kind: 'glance', status: 500 });
      expect(seen.length).toBeGreaterThan(20);
      secrets.add(seen);
      expect(e.message).toContain('token *** rejected');
    } finally {
      fake.close();
    }
  });

  it('bad input → kind input before anything is sent', async () => {
    const name = `af-it-${randomUUID()}`;
    const cases: Array<[Partial<PublishRequest>, RegExp]> = [
      [{ file: join(dir, 'missing.raw') }, /cannot be read \(ENOENT\)/],
      [{ size: size + 1 }, /has 262144 bytes, not the stated 262145/],
      [{ diskFormat: 'floppy' as PublishRequest['diskFormat'] }, /diskFormat must be one of/],
      [{ keystoneUrl: `http://${env.user.login}:${env.user.password}@127.0.0.1:5000/v3` }, /must not contain user info/],
      [{ keystoneUrl: 'ftp://127.0.0.1/v3' }, /http or https/],
      [{ glanceUrl: 'not a url' }, /glanceUrl is not a valid URL/],
      [{ password: '' }, /password is required/],
      [{ sha256: 'xyz' }, /sha256 must be 64 hex digits/],
      [{ timeouts: { pollMs: -1 } }, /timeouts.pollMs must be a positive number/],
    ];
    for (const [over, message] of cases) {
      const e = await failing(request({ displayName: name, ...over }));
      expect(e.kind).toBe('input');
      expect(e.message).toMatch(message);
    }
    expect(await imagesNamed(env, name)).toEqual([]);
    const d = await deleteGlanceImage({ ...request(), imageId: '../../v2/images' }).catch((x: unknown) => x);
    expect(d).toMatchObject({ kind: 'input' });
  });

  it('an unreachable Keystone → kind network, promptly', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const t0 = Date.now();
    const e = await failing(request({ keystoneUrl: `http://127.0.0.1:${port}` }));
    expect(e).toMatchObject({ kind: 'network', service: 'keystone' });
    expect(e.message).toMatch(/ECONNREFUSED/);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('a Keystone that never answers → kind timeout within the request bound', async () => {
    const silent = createServer(() => undefined); // accepts, never answers (labelled: a real Keystone cannot hang on cue)
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as { port: number }).port;
      const t0 = Date.now();
      const e = await failing(request({ keystoneUrl: `http://127.0.0.1:${port}/v3`, timeouts: { requestTimeoutMs: 500 } }));
      expect(e).toMatchObject({ kind: 'timeout', service: 'keystone' });
      expect(Date.now() - t0).toBeLessThan(3_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('no password or token appears in any error (message, stack, JSON, String)', () => {
    expect(errors.length).toBeGreaterThan(10);
    for (const e of errors) {
      const text = [String(e), (e as Error).stack, JSON.stringify(e), (e as Error).message].join('\n');
      for (const s of secrets) expect(text.includes(s), `a secret leaked into: ${(e as Error).message}`).toBe(false);
    }
  });
});
