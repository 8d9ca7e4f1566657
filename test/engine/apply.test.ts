// The engine against the real reference server on 127.0.0.1 (and the real Keystone + Glance for
// publication), with a counting loopback proxy in front of the server to count requests.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDeclaration, loadDeclaration, planDeclaration, type EngineEvent } from '../../src/engine';
import { AbortedError, isForgeError } from '../../src/errors';
import { startCountingProxy, type CountingProxy } from './helpers/counting-proxy';
import { examplesWorkspace, openStackEnv, startTestService, type TestService } from './helpers/service';

const osEnv = openStackEnv();
if (!osEnv) console.warn('SKIP publication: the real Keystone + Glance cannot start here (needs root on Debian 12)');

const workspace = () => examplesWorkspace();

function edit(file: string, from: string | RegExp, to: string): void {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(from, to);
  if (next === text) throw new Error(`edit of ${file} changed nothing`);
  writeFileSync(file, next);
}

async function glanceImage(env: Record<string, string>, id: string): Promise<{ status: string; name: string }> {
  const auth = await fetch(`${env.OS_AUTH_URL}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth: {
      identity: { methods: ['password'], password: { user: { name: env.OS_USERNAME, domain: { name: env.OS_USER_DOMAIN_NAME }, password: env.OS_PASSWORD } } },
      scope: { project: { name: env.OS_PROJECT_NAME, domain: { name: env.OS_PROJECT_DOMAIN_NAME } } },
    } }),
  });
  const token = auth.headers.get('x-subject-token')!;
  const r = await fetch(`${env.OPENSTACK_GLANCE_URL}/v2/images/${id}`, { headers: { 'x-auth-token': token, accept: 'application/json' } });
  return (await r.json()) as { status: string; name: string };
}

describe('apply against the reference server', () => {
  let svc: TestService;
  let proxy: CountingProxy;
  let dir: string;
  const env = { ...(osEnv ?? {}) };

  beforeAll(async () => {
    svc = await startTestService();
    proxy = await startCountingProxy(svc.server.url);
    dir = workspace();
    if (!osEnv) {
      // Without OpenStack the same file is applied without its publishing builder.
      edit(path.join(dir, 'appliance.yml'), /  - type: OpenStack QCOW2[\s\S]*?publicImage: false\n/, '');
      edit(path.join(dir, 'appliance.yml'), /accounts:[\s\S]*$/, '');
    }
  });
  afterAll(async () => {
    await proxy?.close();
    await svc?.close();
  });

  const file = () => path.join(dir, 'appliance.yml');
  const run = (mode: 'apply' | 'plan', events: EngineEvent[] = []) => {
    const { declaration } = loadDeclaration(file(), { env });
    const o = { client: svc.client(proxy.url), pollMs: 100, onEvent: (e: EngineEvent) => events.push(e) };
    return mode === 'apply' ? applyDeclaration(declaration, o) : planDeclaration(declaration, o);
  };

  it('first apply builds every image and publishes to the real Glance', async () => {
    const events: EngineEvent[] = [];
    const r = await applyDeclaration(loadDeclaration(file(), { env }).declaration, {
      client: svc.client(proxy.url), pollMs: 100, onEvent: (e) => events.push(e),
    });
    expect(r.plan.appliance.action).toBe('create');
    expect(r.images.map((i) => [i.format, i.reused])).toEqual(
      osEnv ? [['QCOW2', false], ['OpenStack QCOW2', false]] : [['QCOW2', false]],
    );
    for (const i of r.images) {
      expect(i.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(i.size).toBeGreaterThan(0);
    }
    expect(proxy.log.filter((l) => l.startsWith('POST') && l.includes('/bin/'))).toHaveLength(2);
    if (osEnv) {
      const pub = r.images[1]!.publication!;
      expect(pub.cloudId).toBeTruthy();
      expect(await glanceImage(osEnv, pub.cloudId!)).toMatchObject({ status: 'active', name: 'example-web-1.0' });
    }
    // Every secret stays out of what the engine says.
    const said = JSON.stringify(events);
    for (const s of loadDeclaration(file(), { env }).declaration.secrets) expect(said).not.toContain(s);
  });

  it('a second apply of the unchanged file reuses everything with zero POSTs', async () => {
    proxy.reset();
    const t0 = Date.now();
    const r = await run('apply');
    const ms = Date.now() - t0;
    if (!('images' in r)) throw new Error('expected an apply result');
    expect(proxy.counts.POST ?? 0).toBe(0);
    expect(proxy.counts.PUT ?? 0).toBe(0);
    expect(proxy.counts.DELETE ?? 0).toBe(0);
    expect(r.plan.hasChanges).toBe(false);
    expect(r.images.every((i) => i.reused)).toBe(true);
    if (osEnv) expect(r.images[1]!.publication).toMatchObject({ reused: true });
    console.info(`no-op apply: ${proxy.log.length} requests (all GET), ${ms} ms`);
  });

  it('plan of a changed package list changes nothing and says what apply would do', async () => {
    edit(file(), '      - nginx\n', '      - nginx\n      - htop\n');
    proxy.reset();
    const r = await run('plan');
    expect(Object.keys(proxy.counts)).toEqual(['GET']);
    expect(r.plan.packages.add.map((p) => p.label)).toEqual([expect.stringMatching(/^htop /)]);
    expect(r.plan.software[0]!.action).toBe('unchanged');
    expect(r.plan.images.every((i) => i.action === 'generate')).toBe(true);
  });

  it('apply of the changed package list updates the appliance and regenerates its images, uploading nothing', async () => {
    proxy.reset();
    const r = await run('apply');
    if (!('images' in r)) throw new Error('expected an apply result');
    expect(r.images.every((i) => !i.reused)).toBe(true);
    expect(proxy.log.filter((l) => l.includes('/mysoftware'))).not.toContainEqual(expect.stringMatching(/^(POST|PUT|DELETE)/));
    expect(proxy.log.filter((l) => l.startsWith('PUT'))).toEqual([expect.stringMatching(/\/osprofile\/\d+\/pkgs$/)]);
    expect(proxy.log.filter((l) => /^POST .*\/images$/.test(l))).toHaveLength(r.images.length);
    if (osEnv) expect(r.images[1]!.publication).toMatchObject({ reused: false });
  });

  it('a changed builder regenerates only its own image', async () => {
    edit(file(), /- type: QCOW2\n    hardwareSettings:\n      memory: 1024/, '- type: QCOW2\n    hardwareSettings:\n      memory: 2048');
    proxy.reset();
    const r = await run('apply');
    if (!('images' in r)) throw new Error('expected an apply result');
    expect(r.images.map((i) => i.reused)).toEqual(osEnv ? [false, true] : [false]);
    expect(proxy.log.filter((l) => /^POST .*\/images$/.test(l))).toHaveLength(1);
    expect(proxy.log.filter((l) => /^POST .*\/pimages$/.test(l))).toHaveLength(0);
  });

  it('an abort cancels the running generation on the service and rejects', async () => {
    edit(file(), "version: '1.0'\n  description", "version: '1.1'\n  description");
    const ac = new AbortController();
    const client = svc.client(proxy.url);
    const p = applyDeclaration(loadDeclaration(file(), { env }).declaration, {
      client, pollMs: 100, signal: ac.signal,
      onEvent: (e) => {
        if (e.type === 'step' && e.message.startsWith('generating')) ac.abort();
      },
    });
    const err = await p.then(() => undefined, (e: unknown) => e);
    expect(isForgeError(err, AbortedError)).toBe(true);
    // Every image of the new appliance version ended cancelled, none still running.
    const apps = await client.appliance_getAll({ params: { query: "version=='1.1'" } });
    const aid = apps.appliances![0]!.uri!.split('/').pop()!;
    const imgs = (await client.machineImage_getAll({ aid })).images ?? [];
    expect(imgs.length).toBeGreaterThan(0);
    const states = await Promise.all(imgs.map((i) => client.machineImageStatus_get({ aid, itid: i.uri!.split('/').pop()! })));
    for (const s of states) expect(s.cancelled || s.complete || s.error).toBe(true);
    expect(states.some((s) => s.cancelled)).toBe(true);
  });
});
