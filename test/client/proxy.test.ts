// HTTP_PROXY / NO_PROXY: the client reaches the reference server through a real forward proxy on
// 127.0.0.1 (the `proxy` package, which answers CONNECT and counts here what passes through it),
// NO_PROXY bypasses it, a refused proxy login is a TransportError, and the proxy's credentials
// appear neither in errors nor in the CLI's debug trace.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, TransportError } from '../../src/index';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, runCli } from '../cli/helpers/cli';

const PROXY_USER = 'proxy-user';
const PROXY_PASS = 'Proxy-Pass-s3cret';
const VARS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];

describe('client behind HTTP_PROXY', () => {
  let svc: TestService;
  let proxy: ReturnType<typeof createServer>;
  let proxyPort = 0;
  /** Requests the proxy accepted (a CONNECT tunnel or an absolute-form request), by target. */
  const passed: string[] = [];
  const saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));

  beforeAll(async () => {
    svc = await startTestService();
    const { createProxy } = await import('proxy');
    const server = createServer();
    const p = createProxy(server);
    const expected = `Basic ${Buffer.from(`${PROXY_USER}:${PROXY_PASS}`).toString('base64')}`;
    p.authenticate = (req: IncomingMessage) => {
      const ok = req.headers['proxy-authorization'] === expected;
      if (ok) passed.push(`${req.method} ${req.url}`);
      return ok;
    };
    proxy = server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    proxyPort = (server.address() as AddressInfo).port;
    cliBundle();
  });
  afterEach(() => {
    for (const k of VARS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((r) => proxy?.close(r));
    await svc?.close();
  });

  const client = () => createClient({ url: svc.server.url, auth: { login: svc.login, publicKey: svc.publicKey, secretKey: svc.secretKey }, retry: false });
  const serverHost = () => new URL(svc.server.url).host;

  it('sends the requests through the proxy named by HTTP_PROXY, with its credentials', async () => {
    for (const k of VARS) delete process.env[k];
    process.env.HTTP_PROXY = `http://${PROXY_USER}:${PROXY_PASS}@127.0.0.1:${proxyPort}`;
    const before = passed.length;
    const c = client();
    try {
      expect((await c.user_get()).loginName).toBe(svc.login);
      expect((await c.appliance_getAll()).appliances ?? []).toBeInstanceOf(Array);
    } finally {
      await c.close();
    }
    // undici tunnels through CONNECT: one tunnel per connection, at most one per request.
    const tunnels = passed.slice(before);
    expect(tunnels.length).toBeGreaterThanOrEqual(1);
    expect(tunnels.length).toBeLessThanOrEqual(2);
    expect(new Set(tunnels)).toEqual(new Set([`CONNECT ${serverHost()}`]));
  });

  it('bypasses the proxy for hosts in NO_PROXY', async () => {
    for (const k of VARS) delete process.env[k];
    process.env.HTTP_PROXY = `http://${PROXY_USER}:${PROXY_PASS}@127.0.0.1:${proxyPort}`;
    process.env.NO_PROXY = '127.0.0.1';
    const before = passed.length;
    const c = client();
    try {
      expect((await c.user_get()).loginName).toBe(svc.login);
    } finally {
      await c.close();
    }
    expect(passed.length).toBe(before);
  });

  it('a proxy that refuses the login is a TransportError naming its status, not the password', async () => {
    for (const k of VARS) delete process.env[k];
    process.env.HTTP_PROXY = `http://${PROXY_USER}:Wrong-Proxy-Pass@127.0.0.1:${proxyPort}`;
    const c = client();
    const e = await c.user_get().finally(() => c.close()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect((e as Error).message).toMatch(/proxy answered 407/);
    expect(`${(e as Error).message} ${String((e as Error).stack)}`).not.toMatch(/Wrong-Proxy-Pass/);
  });

  it('the CLI goes through the proxy; its debug trace names the proxy without the credentials', async () => {
    const before = passed.length;
    const r = await runCli(['plan', 'local.yml'], {
      cwd: examplesWorkspace(),
      env: {
        APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login,
        APPLIANCE_FORGE_API_KEY: svc.publicKey, APPLIANCE_FORGE_SECRET_KEY: svc.secretKey,
        APPLIANCE_FORGE_LOG: 'debug', HTTPS_PROXY: `http://${PROXY_USER}:${PROXY_PASS}@127.0.0.1:${proxyPort}`,
        HTTP_PROXY: `http://${PROXY_USER}:${PROXY_PASS}@127.0.0.1:${proxyPort}`,
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`debug: proxy HTTP_PROXY=http://***@127.0.0.1:${proxyPort}`);
    expect(r.stderr).toMatch(/debug: GET \/\S+ 200 \d+ms/);
    expect(`${r.stdout}${r.stderr}`).not.toContain(PROXY_PASS);
    expect(`${r.stdout}${r.stderr}`).not.toContain(PROXY_USER);
    expect(passed.length).toBeGreaterThan(before);
  });
});
